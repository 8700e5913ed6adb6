"""Every element of Malleable-v0's Box is a legal action (docs/envs/index.md, "Masks and invalid_action"),
and RL libraries run on the defaults."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import schedenv  # noqa: F401

ENV_ID = "schedenv/Malleable-v0"
MODES: list[dict[str, Any]] = [{}, {"mode": "online", "n_arrivals": 60}]

# Exact bounds, subnormals and all-zero rows are the corners a sampler rarely hits.
box_elements = arrays(
    np.float32,
    17,
    elements=st.one_of(
        st.sampled_from([0.0, 1.0, 1e-45, 1e-38, 0.5]),
        st.floats(0.0, 1.0, width=32),
    ),
)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), actions=st.lists(box_elements, min_size=1, max_size=40))
@pytest.mark.parametrize("kwargs", MODES, ids=["offline", "online"])
def test_every_box_element_is_accepted(kwargs: dict[str, Any], seed: int, actions: list[np.ndarray]) -> None:
    env = gym.make(ENV_ID, **kwargs)
    _, info = env.reset(seed=seed)
    assert info["invalid_action"] is False
    for action in actions:
        assert env.action_space.contains(action)
        observation, reward, terminated, _, info = env.step(action)
        assert info["invalid_action"] is False
        assert env.observation_space.contains(observation)
        assert np.isfinite(reward) and reward <= 0.0
        theta_sum = float(env.unwrapped.allocation_from_action(action).sum()) if not terminated else 1.0
        assert theta_sum == pytest.approx(1.0, abs=1e-12)  # the default mode allocates every server
        if terminated:
            break


@pytest.mark.parametrize("kwargs", MODES, ids=["offline", "online"])
def test_all_zero_action_is_equi_and_finishes_the_episode(kwargs: dict[str, Any]) -> None:
    """The documented all-zero action (EQUI) runs a whole episode; its return is minus the total slowdown."""
    env = gym.make(ENV_ID, **kwargs)
    env.reset(seed=3)
    total, terminated, info = 0.0, False, {}
    while not terminated:
        np.testing.assert_allclose(
            env.unwrapped.allocation_from_action(np.zeros(17, np.float32)), 1.0 / env.unwrapped.state.n_jobs
        )
        _, reward, terminated, _, info = env.step(np.zeros(17, np.float32))
        total += reward
    assert -total == pytest.approx(info["episode_metrics"]["total_slowdown"], rel=1e-9)


@pytest.mark.parametrize("kwargs", MODES, ids=["offline", "online"])
def test_gymnasium_and_sb3_check_env_pass_on_defaults(kwargs: dict[str, Any]) -> None:
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env

    sb3_check_env = pytest.importorskip("stable_baselines3.common.env_checker").check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gymnasium_check_env(gym.make(ENV_ID, **kwargs).unwrapped, skip_render_check=True)
        sb3_check_env(gym.make(ENV_ID, **kwargs))
    messages = [str(w.message) for w in caught]
    # The only advice left is SB3's preference for [-1, 1] Boxes and the checkers' note on infinite bounds.
    assert all("symmetric and normalized Box" in m or "infinity" in m for m in messages), messages


class RecordSteps(gym.Wrapper):
    """Counts steps and episodes and checks each step's action and info as the learner drives the env."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps, self.returns, self.totals, self._return = 0, [], [], 0.0

    def step(self, action: Any) -> Any:
        assert self.env.action_space.contains(np.asarray(action, dtype=np.float32))
        observation, reward, terminated, truncated, info = self.env.step(action)
        assert info["invalid_action"] is False and np.isfinite(reward) and reward <= 0.0
        self.steps += 1
        self._return += float(reward)
        if terminated:
            self.returns.append(self._return)
            self.totals.append(info["episode_metrics"]["total_slowdown"])
            self._return = 0.0
        return observation, reward, terminated, truncated, info

    def reset(self, **kwargs: Any) -> Any:
        self._return = 0.0
        return self.env.reset(**kwargs)


@pytest.mark.parametrize("mode", ["offline", "online"])
@pytest.mark.parametrize("algorithm", ["PPO", "A2C", "SAC"])
def test_sb3_algorithms_train_on_defaults(algorithm: str, mode: str) -> None:
    stable_baselines3 = pytest.importorskip("stable_baselines3")

    env = RecordSteps(gym.make(ENV_ID, mode=mode))
    options: dict[str, dict[str, Any]] = {
        "PPO": {"n_steps": 64, "batch_size": 64},
        "A2C": {},
        "SAC": {"learning_starts": 100, "batch_size": 64},
    }
    model = getattr(stable_baselines3, algorithm)("MlpPolicy", env, seed=0, device="cpu", **options[algorithm])
    model.learn(256 if algorithm != "SAC" else 160)
    assert env.steps >= 160
    if mode == "offline":  # 8 jobs: an episode is 8 steps (an online episode of 1000 arrivals is longer)
        assert len(env.returns) >= 10
    np.testing.assert_allclose(env.returns, -np.asarray(env.totals), rtol=1e-9)
    action, _ = model.predict(env.reset(seed=0)[0], deterministic=True)
    assert env.action_space.contains(np.asarray(action, dtype=np.float32))
