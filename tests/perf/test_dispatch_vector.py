"""The native batched Dispatch env equals B single envs stepped in a loop (same seeds)."""

from __future__ import annotations

import math
import pickle
import re
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from schedenv.dispatch.vector import INITIAL_CAPACITY, DispatchVectorEnv

ENV = "schedenv/Dispatch-v0"
CONFIGS: list[dict[str, Any]] = [
    {"n_arrivals": 30, "n_hosts": 3, "max_jobs": 2},
    {"n_arrivals": 40, "max_jobs": 3, "size_known": True, "objective": "waiting_slowdown", "load": 0.9},
    {"n_arrivals": 40, "n_hosts": 4, "objective": "waiting_time", "load": 0.7, "max_jobs": 0},
    {"jobs": [(0.0, 5.0), (0.5, 1.0), (0.7, 30.0), (0.8, 1e-6), (2.0, 2.0)], "time_limits": [0.5, 3.0, 10.0]},
]


def masked_random_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


def assert_same_metrics(batched: dict[str, np.ndarray], single: dict[str, float], i: int) -> None:
    for name, value in single.items():
        got = batched[name][i]
        assert got == value or (math.isnan(value) and math.isnan(got)), name


def assert_same_info(info: dict[str, Any], single: dict[str, Any], i: int) -> None:
    for key in ("time", "n_jobs", "killed", "n_outside"):
        assert info[key][i] == single[key], key
    np.testing.assert_array_equal(info["action_mask"][i], single["action_mask"])


@pytest.mark.parametrize("kwargs", CONFIGS, ids=["3hosts", "size-known", "4hosts-nowindow", "jobs"])
def test_next_step_autoreset_equals_single_envs(kwargs: dict[str, Any]) -> None:
    num_envs, seed = 4, 20
    venv = gym.make_vec(ENV, num_envs=num_envs, **kwargs)
    assert isinstance(venv, DispatchVectorEnv)
    envs = [gym.make(ENV, **kwargs) for _ in range(num_envs)]
    obs, info = venv.reset(seed=seed)
    singles = [env.reset(seed=seed + i) for i, env in enumerate(envs)]
    np.testing.assert_array_equal(obs, np.stack([o for o, _ in singles]))
    for i, (_, single_info) in enumerate(singles):
        assert_same_info(info, single_info, i)
    rng = np.random.default_rng(0)
    ended = np.zeros(num_envs, dtype=bool)
    episodes = kills = 0
    for _ in range(250):
        masks = venv.action_masks()
        assert masks.shape == (num_envs, venv.single_action_space.n) and masks.dtype == np.int8
        actions = masked_random_actions(rng, masks)
        obs, rewards, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i, env in enumerate(envs):
            if ended[i]:
                single_obs, single_info = env.reset()
                single_reward, single_terminated = 0.0, False
            else:
                np.testing.assert_array_equal(masks[i], env.unwrapped.action_masks())
                single_obs, single_reward, single_terminated, _, single_info = env.step(actions[i])
            np.testing.assert_array_equal(obs[i], single_obs)
            assert rewards[i] == single_reward
            assert terminated[i] == single_terminated
            assert_same_info(info, single_info, i)
            kills += bool(single_info["killed"])
            if single_terminated:
                assert info["_episode_metrics"][i]
                assert_same_metrics(info["episode_metrics"], single_info["episode_metrics"], i)
                episodes += 1
        ended = terminated
    assert episodes >= num_envs and kills > 0


def test_same_step_autoreset_reports_the_final_observation() -> None:
    kwargs = CONFIGS[0]
    seeds = [4, 9, 1]
    venv = DispatchVectorEnv(num_envs=3, autoreset_mode="SameStep", **kwargs)
    envs = [gym.make(ENV, **kwargs) for _ in range(3)]
    venv.reset(seed=seeds)
    for env, seed in zip(envs, seeds, strict=True):
        env.reset(seed=seed)
    rng = np.random.default_rng(1)
    finals = 0
    for _ in range(150):
        actions = masked_random_actions(rng, venv.action_masks())
        obs, rewards, terminated, _, info = venv.step(actions)
        for i, env in enumerate(envs):
            single_obs, single_reward, single_terminated, _, single_info = env.step(actions[i])
            assert rewards[i] == single_reward and terminated[i] == single_terminated
            if single_terminated:
                assert info["_final_obs"][i] and info["_final_info"][i]
                np.testing.assert_array_equal(info["final_obs"][i], single_obs)
                assert_same_metrics(info["final_info"]["episode_metrics"], single_info["episode_metrics"], i)
                single_obs, single_info = env.reset()
                finals += 1
            np.testing.assert_array_equal(obs[i], single_obs)
            assert_same_info(info, single_info, i)
    assert finals >= 6


def test_job_pool_grows_and_stays_equal() -> None:
    """Everything to host 0 at load 1.5 keeps far more jobs than the initial pool in the system."""
    kwargs = {"n_arrivals": 300, "load": 1.5, "objective": "response_time"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        venv = DispatchVectorEnv(num_envs=2, **kwargs)
        envs = [gym.make(ENV, **kwargs) for _ in range(2)]
    venv.reset(seed=0)
    for i, env in enumerate(envs):
        env.reset(seed=i)
    n_limits = venv.template.n_limits
    most = 0
    for _ in range(300):
        actions = np.full(2, n_limits - 1)  # host 0, run to completion
        obs, rewards, terminated, _, info = venv.step(actions)
        for i, env in enumerate(envs):
            single_obs, single_reward, single_terminated, _, _ = env.step(actions[i])
            np.testing.assert_array_equal(obs[i], single_obs)
            assert rewards[i] == single_reward and terminated[i] == single_terminated
        most = max(most, int(info["n_jobs"].max()))
    assert most > INITIAL_CAPACITY


def test_reset_mask_resets_only_the_masked_copies() -> None:
    venv = DispatchVectorEnv(num_envs=3, n_arrivals=20)
    obs, _ = venv.reset(seed=0)
    stepped, *_ = venv.step(np.zeros(3, dtype=np.int64))
    again, _ = venv.reset(seed=0, options={"reset_mask": np.array([True, False, True])})
    np.testing.assert_array_equal(again[[0, 2]], obs[[0, 2]])
    np.testing.assert_array_equal(again[1], stepped[1])


def test_invalid_actions_raise_and_change_nothing() -> None:
    kwargs = {"n_arrivals": 20, "time_limits": [1.0, 100.0], "invalid_action": "raise"}
    venv, twin = DispatchVectorEnv(num_envs=2, **kwargs), DispatchVectorEnv(num_envs=2, **kwargs)
    venv.reset(seed=3)
    twin.reset(seed=3)
    n = venv.single_action_space.n
    with pytest.raises(ValueError, match=r"copies \[1\] are out of range"):
        venv.step(np.array([0, n]))
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="dtype"):
        venv.step(np.array([0.0, 1.0]))
    for _ in range(50):  # drive to a kill: the killed job's limit 0 becomes masked
        _, _, _, _, info = venv.step(np.zeros(2, dtype=np.int64))
        twin.step(np.zeros(2, dtype=np.int64))
        if info["killed"].any():
            break
    killed = np.flatnonzero(info["killed"]).tolist()
    assert killed
    with pytest.raises(ValueError, match=re.escape(f"copies {killed} are masked")):
        venv.step(np.zeros(2, dtype=np.int64))
    good = venv.action_masks().argmax(axis=1)
    for a, b in zip(venv.step(good)[:3], twin.step(good)[:3], strict=True):
        np.testing.assert_array_equal(a, b)


def test_pickles_and_bad_construction_arguments() -> None:
    venv = DispatchVectorEnv(num_envs=2, n_arrivals=10)
    venv.reset(seed=1)
    clone = pickle.loads(pickle.dumps(venv))
    actions = np.array([1, 2])
    for a, b in zip(venv.step(actions)[:3], clone.step(actions)[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="autoreset_mode"):
        DispatchVectorEnv(num_envs=2, autoreset_mode="Never")
    with pytest.raises(ValueError, match="render_mode"):
        DispatchVectorEnv(num_envs=2, render_mode="ansi")
    with pytest.raises(ValueError, match="num_envs"):
        DispatchVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="n_hosts"):
        DispatchVectorEnv(num_envs=2, n_hosts=0)
    with pytest.raises(RuntimeError, match="reset"):
        DispatchVectorEnv(num_envs=2).step(np.zeros(2, dtype=np.int64))


def test_sb3_adapter_equals_dummy_vec_env() -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.vec_adapter import BatchedVecEnv

    kwargs = CONFIGS[0]
    ours = BatchedVecEnv.make(ENV, num_envs=3, **kwargs)
    theirs = DummyVecEnv([lambda: gym.make(ENV, **kwargs) for _ in range(3)])
    ours.seed(7)
    theirs.seed(7)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(120):
        masks = ours.vector_env.action_masks()
        np.testing.assert_array_equal(masks, np.stack(theirs.env_method("action_masks")))
        actions = masked_random_actions(rng, masks)
        obs_a, rew_a, done_a, info_a = ours.step(actions)
        obs_b, rew_b, done_b, info_b = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(done_a, done_b)
        for i in np.flatnonzero(done_a):
            np.testing.assert_array_equal(info_a[i]["terminal_observation"], info_b[i]["terminal_observation"])
            finished += 1
    assert finished >= 6


def test_maskable_ppo_reads_one_mask_row_per_copy_through_the_sb3_adapter() -> None:
    # Regression: env_method("action_masks") returned the whole (B, n) array for every copy, which
    # sb3-contrib stacks into (B, B, n).
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks

    from agents.vec_adapter import BatchedVecEnv

    ours = BatchedVecEnv.make(ENV, num_envs=3, **CONFIGS[0])
    ours.seed(7)
    ours.reset()
    masks = get_action_masks(ours)
    assert masks.shape == (3, ours.action_space.n)
    np.testing.assert_array_equal(masks, ours.vector_env.action_masks().astype(bool))
