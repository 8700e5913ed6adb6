"""Shared helpers of the agent tests: tiny training configs that finish in about a second."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

from agents.algorithms import has_action_masks

for _module in ("torch", "stable_baselines3", "sb3_contrib"):
    pytest.importorskip(_module, reason="the agent tests need the rl extra: pip install -e '.[rl]'")

TINY_PPO = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}
"""On-policy settings for smoke runs: one update per 128 steps with two envs."""


def natural_algo(env_id: str, **env_kwargs: Any) -> str:
    """maskable_ppo where the env masks actions, else ppo (what a user would pick)."""
    env = gym.make(env_id, **env_kwargs)
    try:
        return "maskable_ppo" if has_action_masks(env) else "ppo"
    finally:
        env.close()


@pytest.fixture
def tiny() -> dict[str, Any]:
    """TrainConfig fields for a smoke run (no TensorBoard, one evaluation episode)."""
    return {
        "n_envs": 2,
        "algo_kwargs": dict(TINY_PPO),
        "eval_every": 0,
        "eval_episodes": 1,
        "checkpoint_every": 64,
        "tensorboard": False,
        "progress_bar": False,
    }
