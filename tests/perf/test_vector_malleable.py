"""The native batched Malleable env equals B single envs stepped in a loop (same seeds)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from schedenv.malleable.vector import MalleableVectorEnv
from schedenv.workloads import Speedup

ENV = "schedenv/Malleable-v0"
CONFIGS: list[dict[str, Any]] = [
    {"n_jobs": 6, "max_jobs": 4},
    {"mode": "online", "n_arrivals": 40, "load": 0.9, "max_jobs": 3, "speedup": 0.3, "objective": "flow_time"},
]


def random_actions(rng: np.random.Generator, num_envs: int, width: int) -> np.ndarray:
    # Exact zeros and whole-group weights exercise every allocation branch.
    return (rng.random((num_envs, width)) * (rng.random((num_envs, width)) < 0.7)).astype(np.float32)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=["offline", "online"])
def test_next_step_autoreset_equals_single_envs(kwargs: dict[str, Any]) -> None:
    num_envs, seed = 5, 20
    venv = gym.make_vec(ENV, num_envs=num_envs, **kwargs)
    assert isinstance(venv, MalleableVectorEnv)
    envs = [gym.make(ENV, **kwargs) for _ in range(num_envs)]
    obs, info = venv.reset(seed=seed)
    singles = [env.reset(seed=seed + i) for i, env in enumerate(envs)]
    np.testing.assert_array_equal(obs, np.stack([o for o, _ in singles]))
    np.testing.assert_array_equal(info["n_jobs"], [i["n_jobs"] for _, i in singles])
    rng = np.random.default_rng(0)
    ended = np.zeros(num_envs, dtype=bool)
    episodes = 0
    for _ in range(300):
        actions = random_actions(rng, num_envs, venv.single_action_space.shape[0])
        obs, rewards, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i, env in enumerate(envs):
            if ended[i]:
                single_obs, _ = env.reset()
                single_reward, single_terminated, single_info = 0.0, False, None
            else:
                single_obs, single_reward, single_terminated, _, single_info = env.step(actions[i])
            np.testing.assert_array_equal(obs[i], single_obs)
            assert rewards[i] == single_reward
            assert terminated[i] == single_terminated
            if single_info is not None:
                assert info["time"][i] == single_info["time"]
                assert info["n_outside"][i] == single_info["n_outside"]
            if single_terminated:
                assert single_info is not None and info["_episode_metrics"][i]
                for name, value in single_info["episode_metrics"].items():
                    assert info["episode_metrics"][name][i] == pytest.approx(value, rel=1e-9), name
                episodes += 1
        ended = terminated
    assert episodes >= 2 * num_envs


def test_same_step_autoreset_reports_the_final_observation() -> None:
    kwargs = CONFIGS[0]
    venv = MalleableVectorEnv(num_envs=3, autoreset_mode="SameStep", **kwargs)
    envs = [gym.make(ENV, **kwargs) for _ in range(3)]
    venv.reset(seed=[4, 9, 1])
    for env, seed in zip(envs, [4, 9, 1], strict=True):
        env.reset(seed=seed)
    rng = np.random.default_rng(1)
    finals = 0
    for _ in range(40):
        actions = random_actions(rng, 3, kwargs["max_jobs"] + 1)
        obs, rewards, terminated, _, info = venv.step(actions)
        for i, env in enumerate(envs):
            single_obs, single_reward, single_terminated, _, single_info = env.step(actions[i])
            assert rewards[i] == single_reward and terminated[i] == single_terminated
            if single_terminated:
                assert info["_final_obs"][i]
                np.testing.assert_array_equal(info["final_obs"][i], single_obs)
                expected = single_info["episode_metrics"]["mean_slowdown"]
                assert info["final_info"]["episode_metrics"]["mean_slowdown"][i] == pytest.approx(expected)
                single_obs, _ = env.reset()
                finals += 1
            np.testing.assert_array_equal(obs[i], single_obs)
    assert finals >= 6


def test_reset_mask_resets_only_the_masked_copies() -> None:
    venv = MalleableVectorEnv(num_envs=3, n_jobs=5)
    obs, _ = venv.reset(seed=0)
    stepped, _, _, _, _ = venv.step(np.full((3, 17), 0.5, dtype=np.float32))
    again, _ = venv.reset(seed=0, options={"reset_mask": np.array([True, False, True])})
    np.testing.assert_array_equal(again[[0, 2]], obs[[0, 2]])
    np.testing.assert_array_equal(again[1], stepped[1])


def test_invalid_actions_raise_and_change_nothing() -> None:
    venv, twin = MalleableVectorEnv(num_envs=2, n_jobs=5), MalleableVectorEnv(num_envs=2, n_jobs=5)
    venv.reset(seed=3)
    twin.reset(seed=3)
    bad = np.full((2, 17), 0.5)
    bad[1, 4] = np.nan
    with pytest.raises(ValueError, match=r"copies \[1\]"):
        venv.step(bad)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.full((3, 17), 0.5))
    good = np.full((2, 17), 0.25, dtype=np.float32)
    for a, b in zip(venv.step(good)[:3], twin.step(good)[:3], strict=True):
        np.testing.assert_array_equal(a, b)


class Linear(Speedup):
    def __call__(self, servers: Any) -> Any:
        return np.asarray(servers, dtype=float)

    def derivative(self, servers: Any) -> Any:
        return np.ones_like(np.asarray(servers, dtype=float))


def test_bad_construction_arguments() -> None:
    with pytest.raises(ValueError, match="autoreset_mode"):
        MalleableVectorEnv(num_envs=2, autoreset_mode="Never")
    with pytest.raises(ValueError, match="speedup"):
        MalleableVectorEnv(num_envs=2, speedup=Linear())
    with pytest.raises(ValueError, match="render_mode"):
        MalleableVectorEnv(num_envs=2, render_mode="ansi")
    with pytest.raises(ValueError, match="n_jobs"):
        MalleableVectorEnv(num_envs=2, n_jobs=0)
