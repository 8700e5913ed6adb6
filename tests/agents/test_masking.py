"""The fused masked head gives sb3-contrib's log-probabilities and entropies, and never samples a masked choice."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import make_masked_proba_distribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.masking import FusedMaskablePolicy, fused_distribution

SPACES = [spaces.Discrete(7), spaces.MultiDiscrete([5, 3, 4])]


def _logits_and_masks(space: spaces.Space, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    width = int(space.n) if isinstance(space, spaces.Discrete) else int(sum(space.nvec))
    logits = 3 * torch.randn(batch, width, generator=generator)
    masks = torch.rand(batch, width, generator=generator) > 0.4
    dims = [int(space.n)] if isinstance(space, spaces.Discrete) else [int(n) for n in space.nvec]
    for part in torch.split(masks, dims, dim=1):  # at least one valid choice per component
        part[:, 0] = True
    return logits, masks


@pytest.mark.parametrize("space", SPACES, ids=["discrete", "multidiscrete"])
@pytest.mark.parametrize("masked", [True, False])
def test_log_prob_entropy_and_mode_equal_sb3_contrib(space: spaces.Space, masked: bool) -> None:
    logits, masks = _logits_and_masks(space, 64)
    ours, theirs = fused_distribution(space), make_masked_proba_distribution(space)
    ours.proba_distribution(logits)
    theirs.proba_distribution(logits)
    if masked:
        ours.apply_masking(masks)
        theirs.apply_masking(masks)
    actions = theirs.sample()
    torch.testing.assert_close(ours.log_prob(actions), theirs.log_prob(actions), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours.entropy(), theirs.entropy(), rtol=1e-5, atol=1e-5)
    assert torch.equal(ours.mode(), theirs.mode())
    assert ours.sample().shape == actions.shape


def test_sampling_never_picks_a_masked_choice_and_follows_the_probabilities() -> None:
    space = spaces.Discrete(6)
    logits = torch.tensor([[0.0, 1.0, -1.0, 2.0, 0.5, 3.0]]).repeat(40_000, 1)
    masks = torch.tensor([[True, True, False, True, True, False]]).repeat(40_000, 1)
    head = fused_distribution(space)
    head.proba_distribution(logits)
    head.apply_masking(masks)
    torch.manual_seed(0)
    counts = np.bincount(head.sample().numpy(), minlength=6) / 40_000
    valid = np.array([0.0, 1.0, 2.0, 0.5])
    expected = np.zeros(6)
    expected[[0, 1, 3, 4]] = np.exp(valid) / np.exp(valid).sum()
    assert counts[2] == 0 and counts[5] == 0
    np.testing.assert_allclose(counts, expected, atol=0.01)  # 4 standard errors at 40,000 draws


def test_a_model_of_either_policy_class_loads_into_the_other() -> None:
    observation = spaces.Box(-1.0, 1.0, (5,), dtype=np.float32)
    action = spaces.MultiDiscrete([4, 3])
    torch.manual_seed(0)
    fused = FusedMaskablePolicy(observation, action, lambda _: 3e-4)
    plain = MaskableActorCriticPolicy(observation, action, lambda _: 3e-4)
    plain.load_state_dict(fused.state_dict())
    obs = torch.randn(8, 5)
    masks = np.ones((8, 7), dtype=bool)
    masks[:, 1] = False
    actions = torch.tensor([[0, 2]] * 8)
    with torch.no_grad():
        ours = fused.evaluate_actions(obs, actions, action_masks=masks)
        theirs = plain.evaluate_actions(obs, actions, action_masks=masks)
    for mine, reference in zip(ours, theirs, strict=True):
        torch.testing.assert_close(mine, reference, rtol=1e-5, atol=1e-5)


def test_other_action_spaces_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"action_space=.*Discrete or MultiDiscrete"):
        fused_distribution(spaces.Box(0.0, 1.0, (2,)))
