"""observe_params: the scenario's parameters at the end of the observation, hand-computed per scenario."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import baselines
import schedenv  # noqa: F401 - registers the env ids
from schedenv.workloads import Choice, Exponential, Pareto

ENV_ID = "schedenv/MultiserverJob-v0"
BASE = 7 * 16 + 5
"""The default observation's length (max_jobs = 16)."""


def test_default_scenario_parameters_by_hand() -> None:
    env = gym.make(ENV_ID, observe_params=True)
    observation, _ = env.reset(seed=0)
    assert observation.shape == (BASE + 7,) == env.observation_space.shape
    # k = 8; rho = 0.7; K uniform on {1, 2, 4, 8}: E[K] = 3.75, E[K^2] = 21.25; exponential S: SCV 1.
    expected = [0.3, 0.7, 3.75 / 8, math.sqrt(21.25 - 3.75**2) / 8, 1.0, math.log(2.0), 1.0]
    np.testing.assert_allclose(observation[BASE:], expected, rtol=1e-6)
    assert observation.dtype == np.float32


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        # S = K D / k with K in {1, 8} equally likely, D ~ Exp(mean 2): E[S^2] / E[S]^2 = 32.5 * 8 / 9^2.
        (
            {"duration_dist": Exponential(2.0), "server_needs": Choice([1, 8], [0.5, 0.5]), "size_known": False},
            [0.3, 0.7, 4.5 / 8, 3.5 / 8, 1.0, math.log1p(32.5 * 8 / 81 - 1), 0.0],
        ),
        # Infinite variance shows as the cap; k = 16 with needs up to 4.
        (
            {"size_dist": Pareto(1.5), "n_servers": 16, "server_needs": (1, 4), "load": 0.5},
            [0.4, 0.5, 2.5 / 16, 1.5 / 16, 0.25, math.log1p(100.0), 1.0],
        ),
    ],
)
def test_workload_parameters_by_hand(kwargs: dict, expected: list[float]) -> None:
    observation, _ = gym.make(ENV_ID, observe_params=True, **kwargs).reset(seed=1)
    np.testing.assert_allclose(observation[BASE:], expected, rtol=1e-6)


def test_job_set_parameters_come_from_its_jobs() -> None:
    jobs = [(4, 1.0), (8, 2.0), (4, 0.5)]
    observation, _ = gym.make(ENV_ID, jobs=jobs, observe_params=True).reset(seed=0)
    sizes = np.array([4 * 1.0, 8 * 2.0, 4 * 0.5]) / 8
    mean_need, second_need = (4 + 8 + 4) / 3, (16 + 64 + 16) / 3
    expected = [0.3, 0.0, mean_need / 8, math.sqrt(second_need - mean_need**2) / 8, 1.0]
    expected += [math.log1p(sizes.var() / sizes.mean() ** 2), 1.0]
    np.testing.assert_allclose(observation[BASE:], expected, rtol=1e-6)


@pytest.mark.parametrize("mode", ["priority", "select"])
def test_parameters_append_to_an_unchanged_observation_and_stay_constant(mode: str) -> None:
    plain = gym.make(ENV_ID, action_mode=mode, n_arrivals=60)
    extended = gym.make(ENV_ID, action_mode=mode, n_arrivals=60, observe_params=True)
    policy = baselines.make("serverfilling-srpt")
    observation, _ = plain.reset(seed=4)
    wide, _ = extended.reset(seed=4)
    tail = wide[BASE:].copy()
    policy.reset(plain)
    steps = 0
    while True:
        np.testing.assert_array_equal(wide[:BASE], observation)
        np.testing.assert_array_equal(wide[BASE:], tail)
        assert extended.observation_space.contains(wide)
        action = policy.act(observation, plain)
        observation, reward, terminated, _, _ = plain.step(action)
        wide, wide_reward, wide_terminated, _, _ = extended.step(action)
        assert (reward, terminated) == (wide_reward, wide_terminated)
        steps += 1
        if terminated:
            break
    assert steps >= 100


def test_bounds_and_bad_value() -> None:
    env = gym.make(ENV_ID, observe_params=True)
    high = env.observation_space.high[BASE:]
    np.testing.assert_allclose(high, [np.inf, np.inf, 1, 1, 1, math.log1p(100.0), 1], rtol=1e-6)
    assert (env.observation_space.low[BASE:] == 0).all()
    assert gym.make(ENV_ID).observation_space.shape == (BASE,)
    with pytest.raises(ValueError, match="observe_params='yes' is not allowed"):
        gym.make(ENV_ID, observe_params="yes")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Box observation space maximum value is infinity")
        check_env(gym.make(ENV_ID, observe_params=True, action_mode="select").unwrapped, skip_render_check=True)


def test_batched_env_appends_the_same_parameters() -> None:
    kwargs = {"observe_params": True, "action_mode": "select", "n_arrivals": 20, "server_needs": (1, 2)}
    ours = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    theirs = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="sync", **kwargs)
    np.testing.assert_array_equal(ours.reset(seed=2)[0], theirs.reset(seed=2)[0])
    ours.action_space.seed(0)
    for _ in range(150):
        actions = ours.action_space.sample()
        obs_a, rewards_a, terminated_a, _, _ = ours.step(actions)
        obs_b, rewards_b, terminated_b, _, _ = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rewards_a, rewards_b)
        np.testing.assert_array_equal(terminated_a, terminated_b)
    np.testing.assert_allclose(obs_a[:, BASE:], np.tile([0.3, 0.7, 1.5 / 8, 0.5 / 8, 0.25, math.log(2), 1], (3, 1)),
                               rtol=1e-6)  # fmt: skip
