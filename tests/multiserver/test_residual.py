"""Residual mode: priority scores relative to ServerFilling-SRPT's, the base computed by the env
(docs/envs/multiserver.md).

The action 0 is the paper policy bit for bit, in the single and the batched env, with sizes known
(ServerFilling-SRPT) or not (ServerFilling); a nonzero action reorders or holds back jobs as the
hand-worked example below says; every baseline gives the same episode as in priority mode.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from schedenv.multiserver.env import residual_base, residual_scores
from tests.multiserver.episodes import ENV_ID, baseline_metrics

HAND_JOBS = [(4, 1.0), (1, 2.0), (8, 0.5), (2, 3.0), (1, 10.0)]
"""A (need 4, d 1), B (1, 2), C (8, 0.5), D (2, 3), E (1, 10), all at t = 0; k = 8. SRPT keys k_j d_j:
A 4, B 2, C 4, D 6, E 10, so the window is B, A, C, D, E (slots 0..4)."""


def test_the_base_halves_a_decreasing_ladder() -> None:
    assert residual_base(4).tolist() == [0.5, 0.375, 0.25, 0.125]
    scores = residual_scores(np.array([0.0, 0.9, -1.0, 1.0]), residual_base(4))
    assert scores.tolist() == [0.5, 1.0, -0.75, 1.0]  # 0.375 + 0.9 clipped to 1


@pytest.mark.parametrize(
    ("policy", "kwargs"),
    [
        ("serverfilling-srpt", {"load": 0.9, "n_arrivals": 300}),
        ("serverfilling-srpt", {"load": 0.95, "n_arrivals": 300, "max_jobs": 8}),  # jobs outside the window
        ("serverfilling", {"load": 0.8, "n_arrivals": 300, "size_known": False}),
        ("firstfit-srpt", {"load": 0.9, "n_arrivals": 300, "packing": "firstfit"}),  # the env's packing of the order
        ("greedy-srpt", {"load": 0.9, "n_arrivals": 300, "packing": "greedy"}),
    ],
)
def test_the_zero_action_is_the_paper_policy_bit_for_bit(policy: str, kwargs: dict[str, Any]) -> None:
    expected = [baseline_metrics(policy, seed, **kwargs) for seed in range(3)]
    env = gym.make(ENV_ID, action_mode="residual", **kwargs)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    for seed, metrics in zip(range(3), expected, strict=True):
        env.reset(seed=seed)
        terminated, steps = False, 0
        while not terminated:
            _, _, terminated, _, info = env.step(zero)
            steps += 1
        assert info["episode_metrics"] == metrics
        assert steps > 300  # one step per epoch: the comparison covers every decision


def test_the_zero_action_in_the_batched_env_is_serverfilling_srpt_bit_for_bit() -> None:
    kwargs = {"load": 0.9, "n_arrivals": 150}
    expected = [baseline_metrics("serverfilling-srpt", seed, **kwargs) for seed in range(3)]
    venv = gym.make_vec(ENV_ID, 3, vectorization_mode="vector_entry_point", action_mode="residual", **kwargs)
    venv.reset(seed=0)
    zero, ended = np.zeros((3, venv.single_action_space.shape[0])), [None, None, None]
    while any(metrics is None for metrics in ended):
        _, _, terminated, _, info = venv.step(zero)
        for i in np.flatnonzero(terminated):
            if ended[i] is None:
                metrics = info["episode_metrics"]
                ended[i] = {key: values[i] for key, values in metrics.items() if not key.startswith("_")}
    for got, want in zip(ended, expected, strict=True):
        assert got is not None and set(got) == set(want)
        assert all(got[key] == want[key] for key in want)


def test_hand_worked_reordering_and_holding_back() -> None:
    """At t = 0 the window is B, A, C, D, E. ServerFilling over it: the prefix B, A, C needs 13 >= 8, and by
    decreasing need C (8) fits alone: the action 0 serves {C}. Raising E (slot 4) above all: the order E, B, A, C
    has prefix E, B, A, C (1 + 1 + 4 + 8 >= 8) whose packing by decreasing need is C alone again; holding back C
    (slot 2) as well: E, B, A, D needs 8, all fit: {E, B, A, D}."""
    env = gym.make(ENV_ID, jobs=HAND_JOBS, action_mode="residual", max_jobs=8)
    unwrapped = env.unwrapped
    env.reset(seed=0)
    window = unwrapped.window.tolist()
    assert [int(unwrapped.state.server_need[j]) for j in window] == [1, 4, 8, 2, 1]  # B, A, C, D, E
    served = unwrapped.service_set_from_scores(np.zeros(8, dtype=np.float32))
    assert np.flatnonzero(served).tolist() == [window[2]]
    raise_e = np.zeros(8, dtype=np.float32)
    raise_e[4] = 1.0
    assert np.flatnonzero(unwrapped.service_set_from_scores(raise_e)).tolist() == [window[2]]
    raise_e[2] = -1.0  # C's score 0.375 - 1 < 0: held back
    served = unwrapped.service_set_from_scores(raise_e)
    assert sorted(np.flatnonzero(served).tolist()) == sorted([window[0], window[1], window[3], window[4]])


@pytest.mark.parametrize("name", ["fcfs", "greedy-srpt", "maxweight", "serverfilling-srpt", "firstfit-srpt"])
def test_every_baseline_gives_the_same_episode_in_residual_and_priority_mode(name: str) -> None:
    kwargs = {"n_arrivals": 120, "load": 0.9}
    assert baseline_metrics(name, 4, action_mode="residual", **kwargs) == baseline_metrics(name, 4, **kwargs)


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.full(16, 1.5, dtype=np.float32), r"\[-1, 1\]"),  # out of the space, though the sum would clip
        (np.full(16, np.nan, dtype=np.float32), "NaN"),
        (np.zeros(5, dtype=np.float32), "shape"),
    ],
)
def test_actions_outside_the_space_are_refused_in_single_and_batched_env(action: np.ndarray, match: str) -> None:
    env = gym.make(ENV_ID, action_mode="residual", n_arrivals=20)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(action)
    venv = gym.make_vec(ENV_ID, 2, vectorization_mode="vector_entry_point", action_mode="residual", n_arrivals=20)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"scores|shape"):
        venv.step(np.stack([action, action]))
    with pytest.raises(ValueError, match="residual mode takes any scores"):
        env.unwrapped.action_masks()
