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


@pytest.mark.parametrize("uniform", [0.0, 1.0 - 2.0**-24])
def test_the_extreme_uniforms_still_draw_an_allowed_choice(monkeypatch: pytest.MonkeyPatch, uniform: float) -> None:
    """torch.rand draws 0 with probability 2^-24 per choice: with only one allowed choice in a row, a noise of
    -log(-log 0) = -inf on it would hand the argmax to a masked choice. Both ends of the uniform's grid, for
    every choice at once, leave each row on an allowed choice (the most likely one, the noise being equal)."""
    logits = torch.tensor([[0.0, 1.0, -1.0, 2.0], [5.0, 0.0, 9.0, 1.0]])
    masks = torch.tensor([[False, True, False, False], [True, False, False, True]])
    head = fused_distribution(spaces.Discrete(4))
    head.proba_distribution(logits)
    head.apply_masking(masks)
    monkeypatch.setattr(torch, "rand_like", lambda tensor: torch.full_like(tensor, uniform))
    assert head.sample().tolist() == [1, 0]


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


def test_kl_divergence_is_the_hand_worked_sum_over_the_valid_choices() -> None:
    """Under the mask [1, 1, 0]: p = (2/3, 1/3) from logits log(.5, .25, .25), q = (1/2, 1/2) from zeros."""
    head, other = fused_distribution(spaces.Discrete(3)), fused_distribution(spaces.Discrete(3))
    head.proba_distribution(torch.log(torch.tensor([[0.5, 0.25, 0.25]])))
    other.proba_distribution(torch.zeros(1, 3))
    mask = torch.tensor([[True, True, False]])
    head.apply_masking(mask)
    other.apply_masking(mask)
    expected = 2 / 3 * np.log(4 / 3) + 1 / 3 * np.log(2 / 3)
    assert head.kl_divergence(other).item() == pytest.approx(expected, rel=1e-6)
    assert head.kl_divergence(head).item() == 0.0


@pytest.mark.parametrize("space", SPACES, ids=["discrete", "multidiscrete"])
def test_kl_divergence_sums_the_components_and_vanishes_only_where_the_distributions_agree(space: spaces.Space) -> None:
    logits, masks = _logits_and_masks(space, 32)
    head, other = fused_distribution(space), fused_distribution(space)
    head.proba_distribution(logits)
    other.proba_distribution(logits + torch.randn(logits.shape, generator=torch.Generator().manual_seed(5)))
    head.apply_masking(masks)
    other.apply_masking(masks)
    dims = [int(space.n)] if isinstance(space, spaces.Discrete) else [int(n) for n in space.nvec]
    expected = torch.zeros(32)
    for mine, theirs, mask in zip(
        torch.split(logits, dims, 1),
        torch.split(other._require_logits(), dims, 1),
        torch.split(masks, dims, 1),
        strict=True,
    ):
        p = torch.distributions.Categorical(logits=mine.masked_fill(~mask, -torch.inf))
        q = torch.distributions.Categorical(logits=theirs.masked_fill(~mask, -torch.inf))
        expected += (p.probs * (p.logits - q.logits).masked_fill(~mask, 0.0)).sum(dim=1)
    kl = head.kl_divergence(other)
    torch.testing.assert_close(kl, expected, rtol=1e-5, atol=1e-6)
    choices = torch.stack([part.sum(dim=1) > 1 for part in torch.split(masks, dims, 1)], dim=1).any(dim=1)
    assert (kl[choices] > 0).all() and (kl[~choices] == 0).all()  # one valid choice per component: equal


def test_an_anchored_policy_gives_minus_the_kl_to_its_anchor_as_the_entropy() -> None:
    """PPO's ``ent_coef * -mean(entropy)`` becomes ``ent_coef * mean(KL(π ‖ anchor))``; the anchor is frozen and
    is no parameter of the policy (not saved, not optimised)."""
    observation, action = spaces.Box(-1.0, 1.0, (5,), dtype=np.float32), spaces.Discrete(6)
    torch.manual_seed(0)
    policy = FusedMaskablePolicy(observation, action, lambda _: 3e-4)
    keys, n_parameters = set(policy.state_dict()), len(list(policy.parameters()))
    obs, actions = torch.randn(16, 5), torch.zeros(16, dtype=torch.long)
    masks = np.ones((16, 6), dtype=bool)
    masks[:, 3] = False
    policy.set_anchor()
    _, _, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
    assert entropy is not None and torch.equal(entropy, torch.zeros(16))  # KL of a policy to itself

    with torch.no_grad():
        policy.action_net.weight.add_(torch.randn(policy.action_net.weight.shape))
    _, _, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
    assert entropy is not None
    mine = policy.get_distribution(obs, masks)
    anchor = policy.anchor
    assert anchor is not None
    theirs = anchor.get_distribution(obs, masks)
    torch.testing.assert_close(-entropy, mine.kl_divergence(theirs))
    assert (entropy < 0).all()

    (-entropy.mean()).backward()
    assert policy.action_net.weight.grad is not None and policy.action_net.weight.grad.abs().sum() > 0
    assert all(parameter.grad is None and not parameter.requires_grad for parameter in anchor.parameters())
    assert set(policy.state_dict()) == keys and len(list(policy.parameters())) == n_parameters
