"""``agents.contender.AgentContender.act_batch``: the forward pass called directly acts as SB3's ``predict``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO

from agents.assess import batch_masks, make_vector
from agents.contender import AgentContender


def _batch(env_id: str, n: int, **env_kwargs: Any) -> tuple[gym.vector.VectorEnv, np.ndarray, np.ndarray | None]:
    venv = make_vector(env_id, n, AutoresetMode.NEXT_STEP, **env_kwargs)
    observations, _ = venv.reset(seed=list(range(n)))
    for _ in range(3):  # a few random steps: states away from the start
        masks = batch_masks(venv)
        actions = (
            np.array([np.flatnonzero(row)[-1] for row in masks]) if masks is not None else venv.action_space.sample()
        )
        observations, *_ = venv.step(actions)
    return venv, np.asarray(observations, dtype=np.float32), batch_masks(venv)


@pytest.mark.parametrize("deterministic", [True, False])
def test_box_actions_are_predicts_clipped_to_the_box(deterministic: bool) -> None:
    venv, observations, _ = _batch("schedenv/Malleable-v0", 16, n_jobs=6)
    env = gym.make("schedenv/Malleable-v0", n_jobs=6)
    model = PPO("MlpPolicy", env, seed=3, policy_kwargs={"log_std_init": 1.0})  # wide: samples leave the box
    contender = AgentContender("ppo", model, deterministic=deterministic)
    torch.manual_seed(7)
    expected, _ = model.predict(observations, deterministic=deterministic)
    torch.manual_seed(7)
    found = contender.act_batch(observations, None)
    assert found.dtype == expected.dtype and np.array_equal(found, expected)
    low, high = env.action_space.low, env.action_space.high
    assert np.all((found >= low) & (found <= high))
    if not deterministic:
        assert np.any((found == low) | (found == high))  # the clip did something
    venv.close()
    env.close()


@pytest.mark.parametrize("deterministic", [True, False])
def test_masked_actions_are_predicts_and_respect_the_masks(deterministic: bool) -> None:
    venv, observations, masks = _batch("schedenv/Dispatch-v0", 16)
    assert masks is not None
    masks = masks & (np.random.default_rng(0).random(masks.shape) < 0.3)  # forbid about 70% of the pairs
    masks[:, -1] = True  # run to completion on the central queue: always allowed
    env = gym.make("schedenv/Dispatch-v0")
    model = MaskablePPO("MlpPolicy", env, seed=3)
    contender = AgentContender("maskable_ppo", model, uses_masks=True, deterministic=deterministic)
    torch.manual_seed(7)
    expected, _ = model.predict(observations, deterministic=deterministic, action_masks=masks)
    torch.manual_seed(7)
    found = contender.act_batch(observations, masks)
    assert np.array_equal(found, expected)
    assert masks[np.arange(len(found)), found].all()
    with pytest.raises(ValueError, match="acts with action masks; the batched env gave none"):
        contender.act_batch(observations, None)
    venv.close()
    env.close()


def test_a_model_left_in_training_mode_acts_in_evaluation_mode() -> None:
    env = gym.make("schedenv/Malleable-v0", n_jobs=6)
    model = PPO("MlpPolicy", env, seed=3)
    model.policy.set_training_mode(True)
    AgentContender("ppo", model).act_batch(np.zeros((2, *env.observation_space.shape), dtype=np.float32), None)
    assert not model.policy.training
    env.close()
