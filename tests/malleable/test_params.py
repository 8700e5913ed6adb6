"""``observe_params`` (scenario slots at the end of the observation) and ``p_range`` (p drawn per episode)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from schedenv.workloads import Amdahl, Pareto

ENV_ID = "schedenv/Malleable-v0"
BASE = 3 * 16 + 3  # the default observation's length with the default window


def rollout_observations(env: gym.Env, seed: int, steps: int = 30) -> list[np.ndarray]:
    observation, _ = env.reset(seed=seed)
    observations = [observation]
    for _ in range(steps):
        observation, _, terminated, _, _ = env.step(np.linspace(0.1, 1.0, 17, dtype=np.float32))
        observations.append(observation)
        if terminated:
            break
    return observations


@pytest.mark.parametrize("kwargs", [{}, {"mode": "online", "n_arrivals": 50, "load": 0.7}])
def test_observe_params_appends_four_slots_and_leaves_the_rest_unchanged(kwargs: dict[str, Any]) -> None:
    plain, observed = gym.make(ENV_ID, **kwargs), gym.make(ENV_ID, observe_params=True, **kwargs)
    assert plain.observation_space.shape == (BASE,)
    assert observed.observation_space.shape == (BASE + 4,)
    np.testing.assert_array_equal(observed.observation_space.high[-4:], [1.0, np.inf, 1.0, np.inf])
    for a, b in zip(rollout_observations(plain, 4), rollout_observations(observed, 4), strict=True):
        np.testing.assert_array_equal(b[:BASE], a)
        np.testing.assert_array_equal(b[BASE:], observed.unwrapped.scenario_params)
        assert observed.observation_space.contains(b)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"speedup": 0.3}, [0.3, 0.0, 1.0, math.log10(1001.0) / 6]),
        ({"mode": "online", "load": 0.7, "objective": "flow_time", "n_servers": 1e6}, [0.5, 0.7, 0.0, 1.0]),
        ({"mode": "online", "jobs": [[0.0, 1.0], [2.0, 1.0]]}, [0.5, 0.0, 1.0, math.log10(1001.0) / 6]),
        # Amdahl above one server: N s'(N) / s(N) = f / (N (1 - f) + f) = 0.9 / 1.9.
        ({"speedup": Amdahl(0.9), "n_servers": 10.0}, [0.9 / 1.9, 0.0, 1.0, math.log10(11.0) / 6]),
    ],
    ids=["offline", "online-poisson", "online-explicit-jobs", "amdahl"],
)
def test_scenario_slots_hold_p_load_objective_and_log_servers(kwargs: dict[str, Any], expected: list[float]) -> None:
    env = gym.make(ENV_ID, observe_params=True, **kwargs)
    observation, _ = env.reset(seed=0)
    np.testing.assert_allclose(observation[-4:], expected, rtol=1e-5)


def test_p_range_draws_p_per_episode_from_the_seed() -> None:
    kwargs = {"mode": "online", "n_arrivals": 40, "load": 0.8, "p_range": (0.2, 0.9), "observe_params": True}
    env, twin = gym.make(ENV_ID, **kwargs), gym.make(ENV_ID, **kwargs)
    drawn = []
    for seed in range(12):
        observation, _ = env.reset(seed=seed)
        inner = env.unwrapped
        p = inner.params.speedup.p
        assert 0.2 <= p < 0.9 and observation[-4] == np.float32(p)
        # The online arrival rate follows the episode's p: lambda = load s(N) / E[X] (docs/envs/malleable.md).
        assert inner.arrival_process.rate == pytest.approx(0.8 * 1000.0**p / Pareto(1.5).mean, rel=1e-12)
        twin_observation, _ = twin.reset(seed=seed)
        np.testing.assert_array_equal(twin_observation, observation)
        np.testing.assert_array_equal(twin.unwrapped.params.sizes, inner.params.sizes)
        drawn.append(p)
    assert len(set(drawn)) == 12 and max(drawn) - min(drawn) > 0.3


def test_p_range_reaches_the_dynamics() -> None:
    """Same seed, two draws of p: the completion times are those of a fixed-p env with the drawn p."""
    ranged = gym.make(ENV_ID, jobs=[1.0, 2.0, 3.0], p_range=(0.1, 1.0), observe_params=True)
    ranged.reset(seed=5)
    p = ranged.unwrapped.params.speedup.p
    fixed = gym.make(ENV_ID, jobs=[1.0, 2.0, 3.0], speedup=p)
    fixed.reset(seed=5)
    action = np.full(17, 0.5, np.float32)
    for _ in range(3):
        a, b = ranged.step(action), fixed.step(action)
        assert a[1] == b[1] and a[4]["time"] == b[4]["time"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p_range": (0.0, 0.5)}, r"p_range\[0\]=0.0"),
        ({"p_range": (0.6, 0.5)}, "lo <= hi"),
        ({"p_range": (0.5, 1.5)}, r"p_range\[1\]=1.5"),
        ({"p_range": "wide"}, "p_range='wide'"),
        ({"p_range": (0.2, 0.5), "speedup": Amdahl(0.9)}, "leave speedup as a number"),
        ({"p_range": (0.2, 1.0), "mode": "online", "load": 1.2}, "load=1.2"),
        ({"observe_params": "yes"}, "observe_params='yes'"),
        ({"allocation": "fraction"}, "did you mean 'fractions'"),
    ],
)
def test_bad_scenario_arguments_fail_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError), match=message):
            gym.make(ENV_ID, **{"observe_params": True, **kwargs})


def test_p_range_without_observe_params_warns() -> None:
    with pytest.warns(UserWarning, match="observe_params=True"):
        gym.make(ENV_ID, p_range=(0.2, 0.8))


def test_vector_env_copies_draw_their_own_p() -> None:
    kwargs = {"n_jobs": 5, "p_range": (0.1, 0.9), "observe_params": True}
    venv = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", **kwargs)
    observations, _ = venv.reset(seed=3)
    for i in range(4):
        single = gym.make(ENV_ID, **kwargs)
        observation, _ = single.reset(seed=3 + i)
        np.testing.assert_array_equal(observations[i], observation)
    assert len(set(observations[:, -4].tolist())) == 4


def test_load_range_draws_one_load_per_episode_that_the_agent_sees_and_the_arrivals_follow() -> None:
    """With ``load_range`` each reset draws rho ~ U[lo, hi) (after p), shown in the load slot; the
    Poisson rate lambda = rho s(N) / E[X] follows it (heSRPT paper §5.3's definition of load)."""
    kwargs = {"mode": "online", "n_arrivals": 4000, "load_range": (0.3, 0.9), "observe_params": True}
    env = gym.make(ENV_ID, **kwargs)
    inner = env.unwrapped
    loads = []
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        load = float(obs[-3])
        assert 0.3 <= load < 0.9 and load == pytest.approx(inner.load, rel=1e-6)
        params = inner.params
        rate = params.arrival_times.size / (params.arrival_times[-1] - params.arrival_times[0])
        expected = inner.load * float(inner.speedup(inner.n_servers)) / inner.size_dist.mean
        assert rate == pytest.approx(expected, rel=0.1)
        loads.append(load)
    assert len(set(loads)) == 6
    again, _ = env.reset(seed=3)
    assert float(again[-3]) == loads[3]  # the same seed, the same load and jobs


def test_load_range_keeps_the_draws_of_environments_without_it() -> None:
    """Without ``load_range`` nothing extra is drawn: the episode equals that of the plain env."""
    plain = gym.make(ENV_ID, mode="online", n_arrivals=50, p_range=(0.2, 0.8), observe_params=True)
    same = gym.make(ENV_ID, mode="online", n_arrivals=50, p_range=(0.2, 0.8), observe_params=True, load_range=None)
    plain.reset(seed=5)
    same.reset(seed=5)
    np.testing.assert_array_equal(plain.unwrapped.params.arrival_times, same.unwrapped.params.arrival_times)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"load_range": (0.9, 0.3), "mode": "online"}, "lo <= hi"),
        ({"load_range": (0.0, 0.5), "mode": "online"}, r"load_range\[0\]"),
        ({"load_range": 0.5, "mode": "online"}, "a pair"),
        ({"load_range": (0.3, 0.9)}, "mode='online'"),
        ({"load_range": (0.3, 0.9), "mode": "online", "jobs": [[0.0, 1.0]]}, "without explicit jobs"),
    ],
)
def test_bad_load_ranges_are_refused_by_name(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(ENV_ID, **kwargs)


def test_a_hidden_load_range_warns() -> None:
    with pytest.warns(UserWarning, match="observe_params=False hides it"):
        gym.make(ENV_ID, mode="online", load_range=(0.3, 0.9))
