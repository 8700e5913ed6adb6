"""The slot-set extractor: one network for every slot, so reordering slots only reorders its output."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import schedenv  # noqa: F401 - registers the env ids
from agents.extractors import SlotLayout, SlotSetExtractor, slot_layout


def _extractor(start: int, n_slots: int, features: int, n_global: int) -> SlotSetExtractor:
    torch.manual_seed(0)
    length = start + n_slots * features + n_global
    space = gym.spaces.Box(-np.inf, np.inf, (length,), dtype=np.float32)
    return SlotSetExtractor(space, start=start, n_slots=n_slots, slot_features=features, embed_dim=8, hidden=16)


@pytest.mark.parametrize("start", [0, 2])
def test_permuting_slots_permutes_slot_outputs_and_keeps_the_context(start: int) -> None:
    n_slots, features, n_global, embed = 5, 3, 4, 8
    extractor = _extractor(start, n_slots, features, n_global)
    obs = torch.randn(7, start + n_slots * features + n_global)
    order = torch.tensor([3, 0, 4, 1, 2])
    permuted = obs.clone()
    slots = obs[:, start : start + n_slots * features].reshape(7, n_slots, features)
    permuted[:, start : start + n_slots * features] = slots[:, order].reshape(7, -1)
    with torch.no_grad():
        out, out_permuted = extractor(obs), extractor(permuted)
    assert out.shape == (7, (n_slots + 3) * embed)
    per_slot = out[:, : n_slots * embed].reshape(7, n_slots, embed)
    per_slot_permuted = out_permuted[:, : n_slots * embed].reshape(7, n_slots, embed)
    torch.testing.assert_close(per_slot_permuted, per_slot[:, order])
    torch.testing.assert_close(out_permuted[:, n_slots * embed :], out[:, n_slots * embed :])


def test_refinement_equals_the_network_on_the_concatenated_slot_and_context() -> None:
    """The split first layer of ``refine`` computes exactly refine([slot | pooled mean | max | global])."""
    start, n_slots, features, n_global, embed = 1, 6, 3, 2, 8
    extractor = _extractor(start, n_slots, features, n_global)
    obs = torch.randn(5, start + n_slots * features + n_global)
    with torch.no_grad():
        out = extractor(obs)
        slots = obs[:, start : start + n_slots * features].reshape(5, n_slots, features)
        rest = torch.cat([obs[:, :start], obs[:, start + n_slots * features :]], dim=1)
        embedded = extractor.encode(slots)
        context = torch.cat([embedded.mean(dim=1), embedded.amax(dim=1), extractor.encode_global(rest)], dim=1)
        joined = torch.cat([embedded, context.unsqueeze(1).expand(5, n_slots, 3 * embed)], dim=2)
        expected = torch.cat([extractor.refine(joined).flatten(start_dim=1), context], dim=1)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)


def test_changing_the_global_features_changes_the_context() -> None:
    extractor = _extractor(0, 4, 3, 2)
    obs = torch.zeros(1, 14)
    other = obs.clone()
    other[0, -1] = 5.0
    with torch.no_grad():
        assert not torch.allclose(extractor(obs)[:, -8:], extractor(other)[:, -8:])


def test_layout_of_the_malleable_env_follows_max_jobs() -> None:
    env = gym.make("schedenv/Malleable-v0", max_jobs=5)
    assert slot_layout(env) == SlotLayout(0, 5, 3)
    assert slot_layout(env).stop + 3 == env.observation_space.shape[0]  # type: ignore[union-attr]


class _LayoutEnv(gym.Env):
    """A stand-in env that describes its layout with attributes (2 prefix features, 3 slots of 2)."""

    slot_features = 2
    n_slots = 3
    slots_start = 2

    def __init__(self, length: int = 9) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (length,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)


def test_layout_from_attributes_and_refusal_of_layouts_that_do_not_fit() -> None:
    assert slot_layout(_LayoutEnv()) == SlotLayout(2, 3, 2)
    assert slot_layout(_LayoutEnv(length=7)) is None


def test_an_env_without_a_layout_has_none() -> None:
    assert slot_layout(gym.make("CartPole-v1")) is None


def test_a_layout_that_does_not_fit_the_observation_is_an_error() -> None:
    space = gym.spaces.Box(0.0, 1.0, (5,), dtype=np.float32)
    with pytest.raises(ValueError, match="does not fit"):
        SlotSetExtractor(space, start=0, n_slots=3, slot_features=2)
