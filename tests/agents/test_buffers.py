"""The env-major rollout buffers train bit for bit as SB3's own (agents.buffers)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from stable_baselines3 import A2C, PPO
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.env_util import make_vec_env

import schedenv  # noqa: F401 - registers the env ids
from agents.buffers import (
    EnvMajorMaskableRolloutBuffer,
    EnvMajorRolloutBuffer,
    env_major,
    rollout_buffer_class,
)

MULTISERVER = ("schedenv/MultiserverJob-v0", {"n_arrivals": 40, "max_jobs": 8})
MOLDABLE = ("schedenv/Moldable-v0", {"n_jobs": 12, "n_procs": 16, "max_jobs": 4})


def trained_parameters(cls: Any, buffer: Any, env_id: str, kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The parameters of ``cls`` after two rollouts of 3 copies x 16 steps, two passes of minibatches of 12
    (A2C: one update a rollout); the first is the policy's initial first layer."""
    torch.manual_seed(0)
    venv = make_vec_env(env_id, n_envs=3, seed=0, env_kwargs=kwargs)
    options: dict[str, Any] = {"n_steps": 16, "seed": 0, "device": "cpu", "rollout_buffer_class": buffer}
    if cls is not A2C:
        options |= {"batch_size": 12, "n_epochs": 2}
    model = cls("MlpPolicy", venv, **options)
    initial = next(model.policy.parameters()).detach().clone()
    model.learn(96)
    return [initial, *(parameter.detach().clone() for parameter in model.policy.parameters())]


@pytest.mark.parametrize(
    ("cls", "theirs", "ours", "case"),
    [
        (PPO, RolloutBuffer, EnvMajorRolloutBuffer, MULTISERVER),
        (A2C, RolloutBuffer, EnvMajorRolloutBuffer, MULTISERVER),
        (MaskablePPO, MaskableRolloutBuffer, EnvMajorMaskableRolloutBuffer, MOLDABLE),
    ],
)
def test_training_is_bit_for_bit_that_of_sb3s_buffer(cls: Any, theirs: Any, ours: Any, case: Any) -> None:
    expected = trained_parameters(cls, theirs, *case)
    got = trained_parameters(cls, ours, *case)
    assert len(got) == len(expected)
    assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True))
    assert not torch.equal(got[0], got[1])  # the first layer was trained: the comparison covers the updates


def test_env_major_starts_as_sb3_and_flattens_env_major_without_a_copy() -> None:
    step_major = np.ones((2, 3, 4), dtype=np.float32)  # (n_steps, n_envs, features), as MaskableRolloutBuffer's masks
    kept = env_major(step_major, 1.0)
    assert kept.shape == (2, 3, 4) and kept.dtype == np.float32 and np.array_equal(kept, step_major)
    assert not env_major(step_major, 0.0).any()
    kept[...] = np.arange(24, dtype=np.float32).reshape(2, 3, 4)  # what add() writes, step by step
    flat = RolloutBuffer.swap_and_flatten(kept)
    assert np.shares_memory(flat, kept)  # a view: the swap cost nothing
    assert np.array_equal(flat, RolloutBuffer.swap_and_flatten(np.array(kept)))  # env 0's steps, then env 1's


def test_the_buffer_is_chosen_for_on_policy_algorithms_on_box_observations() -> None:
    box = gym.spaces.Box(0.0, 1.0, (3,))
    assert rollout_buffer_class("ppo", box) is EnvMajorRolloutBuffer
    assert rollout_buffer_class("a2c", box) is EnvMajorRolloutBuffer
    assert rollout_buffer_class("maskable_ppo", box) is EnvMajorMaskableRolloutBuffer
    assert rollout_buffer_class("sac", box) is None  # off-policy: a replay buffer
    assert rollout_buffer_class("ppo", gym.spaces.Dict({"x": box})) is None  # SB3's Dict buffer
