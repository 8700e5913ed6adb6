"""``observe_params=True``: the scenario's parameters (rho / (1 + rho), 1 / h, min(log10(1 + C²), 10))
appended to Dispatch-v0's observation, which is otherwise unchanged."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import schedenv  # noqa: F401 - registers the env ids
from schedenv.dispatch.env import DispatchEnv
from schedenv.workloads import BoundedPareto, Deterministic, Exponential, Pareto

ENV_ID = "schedenv/Dispatch-v0"


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"size_dist": Exponential(1.0), "load": 0.8, "n_hosts": 4}, (0.8 / 1.8, 0.25, math.log10(2.0))),
        ({"size_dist": Deterministic(2.0), "load": 0.5, "n_hosts": 1}, (1 / 3, 1.0, 0.0)),
        ({"size_dist": Pareto(1.5, 1.0), "load": 0.25}, (0.2, 0.5, 10.0)),  # infinite C²
        # rho = (1 + 3) / (4 hosts x span 2) = 0.5; sizes 1 and 3: C² = 1 / 2² = 0.25.
        ({"jobs": [(0.0, 1.0), (2.0, 3.0)], "n_hosts": 4}, (1 / 3, 0.25, math.log10(1.25))),
        ({"jobs": [(0.0, 1.0), (0.0, 3.0)]}, (1.0, 0.5, math.log10(1.25))),  # a batch: rho = inf
    ],
)
def test_hand_worked_parameters(kwargs: dict[str, Any], expected: tuple[float, ...]) -> None:
    env = DispatchEnv(observe_params=True, **kwargs)
    assert env.scenario_params == pytest.approx(expected, rel=1e-12)
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs[-3:], np.asarray(expected, dtype=np.float32))


def test_default_workload_parameters() -> None:
    env = DispatchEnv(observe_params=True)
    dist = BoundedPareto.with_mean(3000.0, alpha=1.1, upper=1e10)
    scv = (dist.second_moment() - dist.mean**2) / dist.mean**2
    assert env.scenario_params == pytest.approx((1 / 3, 0.5, math.log10(1 + scv)), rel=1e-9)
    assert 4.5 < env.scenario_params[2] < 5.5  # C² ≈ 8 10^4


@pytest.mark.parametrize("size_known", [False, True])
def test_the_rest_of_the_observation_is_unchanged(size_known: bool) -> None:
    kwargs = {"n_arrivals": 80, "n_hosts": 3, "load": 0.9, "size_known": size_known, "time_limits": [1e3, 1e4]}
    plain, extended = DispatchEnv(**kwargs), DispatchEnv(observe_params=True, **kwargs)
    n = plain.observation_space.shape[0]
    assert extended.observation_space.shape == (n + 3,)
    np.testing.assert_array_equal(extended.observation_space.high[:n], plain.observation_space.high)
    np.testing.assert_array_equal(extended.observation_space.high[n:], [1.0, 1.0, 10.0])
    np.testing.assert_array_equal(extended.observation_space.low, 0.0)
    obs_a, _ = plain.reset(seed=2)
    obs_b, _ = extended.reset(seed=2)
    rng = np.random.default_rng(0)
    params = np.asarray(extended.scenario_params, dtype=np.float32)
    terminated = False
    while not terminated:
        np.testing.assert_array_equal(obs_b[:n], obs_a)
        np.testing.assert_array_equal(obs_b[n:], params)
        assert extended.observation_space.contains(obs_b)
        action = int(rng.integers(plain.n_actions))
        obs_a, reward_a, terminated, _, _ = plain.step(action)
        obs_b, reward_b, terminated_b, _, _ = extended.step(action)
        assert reward_a == reward_b and terminated == terminated_b


def test_the_batched_env_appends_the_same_parameters() -> None:
    kwargs = {"n_arrivals": 30, "observe_params": True, "load": 0.7, "n_hosts": 3}
    venv = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    env = gym.make(ENV_ID, **kwargs)
    obs, _ = venv.reset(seed=4)
    single, _ = env.reset(seed=5)
    np.testing.assert_array_equal(obs[1], single)
    actions = np.array([3, 5])
    obs, *_ = venv.step(actions)
    single, *_ = env.step(actions[1])
    np.testing.assert_array_equal(obs[1], single)
    assert venv.single_observation_space == env.observation_space


def test_check_env_passes_with_parameters() -> None:
    with pytest.warns(UserWarning, match="maximum value is infinity"):
        check_env(gym.make(ENV_ID, observe_params=True, n_arrivals=50).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_observe_params_must_be_a_bool(value: object) -> None:
    with pytest.raises(ValueError, match=f"observe_params={value!r} is not allowed"):
        DispatchEnv(observe_params=value)  # type: ignore[arg-type]
