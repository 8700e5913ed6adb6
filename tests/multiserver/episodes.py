"""One episode of a multiserver baseline on the single env, the reference of the action-mode tests."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import baselines
import schedenv  # noqa: F401 - registers the env ids

ENV_ID = "schedenv/MultiserverJob-v0"


def baseline_metrics(name: str, seed: int, **kwargs: Any) -> dict[str, float]:
    """The ``episode_metrics`` of baseline ``name`` over one episode of ``gym.make(ENV_ID, **kwargs)`` reset
    with ``seed`` (the baseline acts in the env's action mode through ``action_from_service_set``)."""
    env = gym.make(ENV_ID, **kwargs)
    policy = baselines.make(name)
    observation, _ = env.reset(seed=seed)
    policy.reset(env)
    terminated = False
    while not terminated:
        observation, _, terminated, _, info = env.step(policy.act(observation, env))
    return info["episode_metrics"]
