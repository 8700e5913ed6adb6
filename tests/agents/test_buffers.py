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


def trained_parameters(
    cls: Any, buffer: Any, env_id: str, kwargs: dict[str, Any], learn: dict[str, Any] | None = None
) -> list[torch.Tensor]:
    """The parameters of ``cls`` after three rollouts of 3 copies x 16 steps (the buffer's memory reused
    twice), two passes of minibatches of 12 (A2C: one update a rollout), ``learn`` passed to ``learn``; the
    first is the policy's initial first layer."""
    torch.manual_seed(0)
    venv = make_vec_env(env_id, n_envs=3, seed=0, env_kwargs=kwargs)
    options: dict[str, Any] = {"n_steps": 16, "seed": 0, "device": "cpu", "rollout_buffer_class": buffer}
    if cls is not A2C:
        options |= {"batch_size": 12, "n_epochs": 2}
    model = cls("MlpPolicy", venv, **options)
    initial = next(model.policy.parameters()).detach().clone()
    model.learn(144, **(learn or {}))
    return [initial, *(parameter.detach().clone() for parameter in model.policy.parameters())]


@pytest.mark.parametrize(
    ("cls", "theirs", "ours", "case"),
    [
        (PPO, RolloutBuffer, EnvMajorRolloutBuffer, MULTISERVER),
        (A2C, RolloutBuffer, EnvMajorRolloutBuffer, MULTISERVER),
        (MaskablePPO, MaskableRolloutBuffer, EnvMajorMaskableRolloutBuffer, MOLDABLE),
        (MaskablePPO, MaskableRolloutBuffer, EnvMajorMaskableRolloutBuffer, (*MOLDABLE, {"use_masking": False})),
    ],
)
def test_training_is_bit_for_bit_that_of_sb3s_buffer(cls: Any, theirs: Any, ours: Any, case: Any) -> None:
    expected = trained_parameters(cls, theirs, *case)
    got = trained_parameters(cls, ours, *case)
    assert len(got) == len(expected)
    assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True))
    assert not torch.equal(got[0], got[1])  # the first layer was trained: the comparison covers the updates


def test_the_memory_is_kept_across_rollouts_and_unmasked_steps_are_all_allowed() -> None:
    space = gym.spaces.Box(0.0, 1.0, (3,))
    buffer = EnvMajorMaskableRolloutBuffer(2, space, gym.spaces.Discrete(4), device="cpu", n_envs=2)
    observations, masks = buffer.observations, buffer.action_masks
    for step in range(2):  # a rollout with masks: no entry allowed
        buffer.add(
            np.ones((2, 3), np.float32), np.zeros(2), np.zeros(2), np.zeros(2), torch.zeros(2), torch.zeros(2),
            action_masks=np.zeros((2, 4)),
        )  # fmt: skip
        assert not buffer.action_masks[step].any()
    buffer.compute_returns_and_advantage(torch.zeros(2), np.zeros(2))
    next(buffer.get(4))  # leaves flattened views in place
    buffer.reset()
    assert np.shares_memory(buffer.observations, observations) and np.shares_memory(buffer.action_masks, masks)
    assert buffer.observations.shape == (2, 2, 3) and buffer.action_masks.shape == (2, 2, 4)
    buffer.add(np.zeros((2, 3), np.float32), np.zeros(2), np.zeros(2), np.zeros(2), torch.zeros(2), torch.zeros(2))
    assert buffer.action_masks[0].all()  # no masks given: all allowed, as in a new buffer
    assert not buffer.action_masks[1].any()  # the row before: written again before any get()


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
