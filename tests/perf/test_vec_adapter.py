"""The SB3 adapter over the batched Malleable env behaves as SB3's own DummyVecEnv of single envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import schedenv  # noqa: F401
from agents.vec_adapter import BatchedVecEnv

ENV = "schedenv/Malleable-v0"
KWARGS = {"n_jobs": 5, "max_jobs": 4}


def test_adapter_equals_dummy_vec_env() -> None:
    ours = BatchedVecEnv.make(ENV, num_envs=3, **KWARGS)
    theirs = DummyVecEnv([lambda: gym.make(ENV, **KWARGS) for _ in range(3)])
    ours.seed(7)
    theirs.seed(7)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(30):
        actions = rng.random((3, 5)).astype(np.float32)
        obs_a, rew_a, done_a, info_a = ours.step(actions)
        obs_b, rew_b, done_b, info_b = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_allclose(rew_a, rew_b, rtol=1e-6)
        np.testing.assert_array_equal(done_a, done_b)
        for i in np.flatnonzero(done_a):
            np.testing.assert_array_equal(info_a[i]["terminal_observation"], info_b[i]["terminal_observation"])
            expected = info_b[i]["episode_metrics"]["mean_slowdown"]
            assert info_a[i]["episode_metrics"]["mean_slowdown"] == pytest.approx(expected)
            finished += 1
    assert finished >= 6


def test_ppo_learns_on_the_adapter() -> None:
    venv = VecMonitor(BatchedVecEnv.make(ENV, num_envs=8, **KWARGS))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw finished episodes through the adapter


def test_adapter_needs_same_step_autoreset() -> None:
    with pytest.raises(ValueError, match="SameStep"):
        BatchedVecEnv(gym.make_vec(ENV, num_envs=2, **KWARGS))
