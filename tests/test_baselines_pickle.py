"""Every registered baseline pickles (Ray and multiprocessing ship policies to workers) and acts the same after."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import baselines

SMALL_ENVS: dict[str, dict[str, Any]] = {
    "schedenv/Malleable-v0": {"n_jobs": 6},
    "schedenv/Dispatch-v0": {"n_arrivals": 150, "size_known": True},  # LWR and SITA-E read sizes
    "schedenv/MultiserverJob-v0": {"n_arrivals": 150},
    "schedenv/Moldable-v0": {"n_jobs": 15},
}
PLANNER_ENVS: dict[str, dict[str, Any]] = {"hrf-easy-rollout": {"n_jobs": 15, "action_mode": "ranked"}}
"""The planners' envs (``baselines.available(planners=True)``), where they differ from ``SMALL_ENVS``."""
CASES = [(env_id, name) for env_id in SMALL_ENVS for name in baselines.available(env_id, planners=True)]


def test_every_family_is_covered() -> None:
    assert {baselines.env_id_of(name) for name in baselines.available()} == set(SMALL_ENVS)
    assert len(CASES) == len(baselines.available(planners=True))


@pytest.mark.parametrize(("env_id", "name"), CASES)
def test_a_pickled_baseline_acts_like_the_original(env_id: str, name: str) -> None:
    original = baselines.make(name)
    copy = pickle.loads(pickle.dumps(original))
    assert type(copy) is type(original) and copy.name == name
    envs = [gym.make(env_id, **PLANNER_ENVS.get(name, SMALL_ENVS[env_id])) for _ in range(2)]
    observations = [env.reset(seed=3)[0] for env in envs]
    for policy, env in zip((original, copy), envs, strict=True):
        policy.reset(env)
    steps = 0
    while True:
        actions = [policy.act(obs, env) for policy, obs, env in zip((original, copy), observations, envs, strict=True)]
        np.testing.assert_array_equal(np.asarray(actions[0]), np.asarray(actions[1]))
        results = [env.step(action) for env, action in zip(envs, actions, strict=True)]
        observations = [result[0] for result in results]
        steps += 1
        if results[0][2] or results[0][3]:
            assert results[1][2] or results[1][3]
            break
    assert steps > 1
    # A copy taken mid-episode (after the run) also pickles.
    assert type(pickle.loads(pickle.dumps(original))) is type(original)
