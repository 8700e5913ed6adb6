"""The native batched MultiserverJob env equals ``gym.make_vec(..., vectorization_mode="sync")`` bit for bit."""

from __future__ import annotations

import pickle
import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import schedenv  # noqa: F401 - registers the env ids
from schedenv.multiserver.vector import MultiserverJobVectorEnv
from schedenv.workloads import Exponential

ENV_ID = "schedenv/MultiserverJob-v0"
CONFIGS: dict[str, dict[str, Any]] = {
    "select": {"action_mode": "select", "n_arrivals": 25, "max_jobs": 8},
    "select-penalty-hidden": {
        "action_mode": "select", "n_arrivals": 25, "invalid_action": "penalty", "invalid_action_penalty": 0.5,
        "size_known": False, "max_jobs": 4, "load": 0.9,
    },
    "priority": {"n_arrivals": 25, "max_jobs": 4, "load": 0.9},
    "priority-firstfit-durations": {
        "n_arrivals": 25, "packing": "firstfit", "n_servers": 6, "server_needs": (1, 2, 3, 6), "max_jobs": 8,
        "duration_dist": Exponential(2.0),
    },
    "select-jobs": {"action_mode": "select", "jobs": [(0.0, 4, 1.0), (0.0, 8, 2.0), (0.3, 2, 0.5), (0.3, 1, 0.2)]},
    "ranked": {"action_mode": "ranked", "n_arrivals": 25, "max_jobs": 8},
    "ranked-penalty-hidden-odd-needs": {
        "action_mode": "ranked", "n_arrivals": 25, "invalid_action": "penalty", "invalid_action_penalty": 0.5,
        "size_known": False, "max_jobs": 4, "load": 0.9, "n_servers": 6, "server_needs": (1, 2, 3, 6),
    },
}  # fmt: skip
INFO_KEYS = ("time", "n_jobs", "n_outside", "invalid_action", "action_mask")
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]


def make_pair(kwargs: dict[str, Any], num_envs: int, mode: AutoresetMode) -> tuple[gym.vector.VectorEnv, Any]:
    ours = gym.make_vec(ENV_ID, num_envs, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kwargs)
    theirs = gym.make_vec(ENV_ID, num_envs, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    assert isinstance(ours, MultiserverJobVectorEnv)
    return ours, theirs


def assert_same_info(ours: dict[str, Any], theirs: dict[str, Any], copies: np.ndarray) -> None:
    """Every key both report agrees on ``copies`` where the reference marks it present."""
    for key in INFO_KEYS:
        if key not in theirs:
            assert key not in ours, key
            continue
        present = theirs[f"_{key}"][copies]
        assert ours[f"_{key}"][copies][present].all(), key
        np.testing.assert_array_equal(ours[key][copies][present], theirs[key][copies][present], err_msg=key)
        assert ours[key].dtype == theirs[key].dtype, key
    if "episode_metrics" in theirs:
        ended = copies[theirs["_episode_metrics"][copies]]
        assert ours["_episode_metrics"][ended].all()
        for name, values in theirs["episode_metrics"].items():
            if not name.startswith("_"):
                np.testing.assert_array_equal(ours["episode_metrics"][name][ended], values[ended], err_msg=name)


@pytest.mark.filterwarnings("ignore:max_jobs=")  # the small windows are deliberate: jobs fall outside
@pytest.mark.parametrize("mode", MODES, ids=["next-step", "same-step"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_equals_the_sync_vector_env_on_random_actions(config: str, mode: AutoresetMode) -> None:
    kwargs, num_envs = CONFIGS[config], 4
    ours, theirs = make_pair(kwargs, num_envs, mode)
    everyone = np.arange(num_envs)
    obs_a, info_a = ours.reset(seed=11)
    obs_b, info_b = theirs.reset(seed=11)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert obs_a.dtype == obs_b.dtype == np.float32
    assert_same_info(info_a, info_b, everyone)
    ours.action_space.seed(5)
    select = kwargs.get("action_mode") in ("select", "ranked")  # the modes with masks
    episodes = invalid = 0
    for _ in range(400):
        actions = ours.action_space.sample()  # masked actions included: the fallback takes them
        if select:
            np.testing.assert_array_equal(ours.action_masks(), np.stack(theirs.call("action_masks")))
        obs_a, rewards_a, terminated_a, truncated_a, info_a = ours.step(actions)
        obs_b, rewards_b, terminated_b, truncated_b, info_b = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rewards_a, rewards_b)
        assert rewards_a.dtype == rewards_b.dtype
        np.testing.assert_array_equal(terminated_a, terminated_b)
        np.testing.assert_array_equal(truncated_a, truncated_b)
        assert_same_info(info_a, info_b, everyone)
        invalid += int(info_b["invalid_action"].sum())
        if terminated_b.any():
            episodes += int(terminated_b.sum())
            ended = np.flatnonzero(terminated_b)
            if mode == AutoresetMode.SAME_STEP:
                assert info_a["final_obs"].dtype == info_b["final_obs"].dtype == object
                assert info_a["final_obs"].shape == info_b["final_obs"].shape == (num_envs,)
                np.testing.assert_array_equal(info_a["_final_obs"], info_b["_final_obs"])
                for i in ended:
                    assert info_a["final_obs"][i].dtype == info_b["final_obs"][i].dtype == np.float32
                    np.testing.assert_array_equal(info_a["final_obs"][i], info_b["final_obs"][i])
                assert_same_info(info_a["final_info"], info_b["final_info"], ended)
                if select:  # the last step's mask is all ones (nothing is left to decide)
                    assert (info_a["final_info"]["action_mask"][ended] == 1).all()
            elif select:
                assert (ours.action_masks()[ended] == 1).all()
    assert episodes >= num_envs
    assert invalid > 0 if select else invalid == 0


def test_masked_actions_raise_in_raise_mode_and_change_nothing() -> None:
    kwargs = {"action_mode": "select", "n_arrivals": 20, "invalid_action": "raise"}
    venv, twin = MultiserverJobVectorEnv(num_envs=3, **kwargs), MultiserverJobVectorEnv(num_envs=3, **kwargs)
    venv.reset(seed=3)
    twin.reset(seed=3)
    masks = venv.action_masks()
    bad = masks.argmax(axis=1)
    bad[1] = venv.max_jobs  # commit with nothing selected
    with pytest.raises(ValueError, match=re.escape("actions of copies [1] are masked")):
        venv.step(bad)
    with pytest.raises(ValueError, match=re.escape("copies [2] are out of range")):
        venv.step(np.array([0, 0, venv.max_jobs + 1]))
    with pytest.raises(ValueError, match="dtype"):
        venv.step(np.zeros(3))
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(2, dtype=np.int64))
    np.testing.assert_array_equal(venv.action_masks(), masks)
    good = masks.argmax(axis=1)
    for a, b in zip(venv.step(good)[:3], twin.step(good)[:3], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("invalid_action", ["fallback", "penalty", "raise"])
def test_priority_actions_outside_the_space_raise_in_every_mode(invalid_action: str) -> None:
    venv = MultiserverJobVectorEnv(num_envs=2, n_arrivals=10, invalid_action=invalid_action)
    venv.reset(seed=0)
    scores = np.zeros((2, 16), dtype=np.float32)
    scores[1, 3] = np.nan
    with pytest.raises(ValueError, match=re.escape("copies [1] have scores NaN or outside [-1, 1]")):
        venv.step(scores)
    scores[1, 3] = 1.5
    with pytest.raises(ValueError, match=re.escape("copies [1]")):
        venv.step(scores)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros((2, 15)))
    with pytest.raises(ValueError, match="only for action_mode='select'"):
        venv.action_masks()
    _, _, _, _, info = venv.step(venv.action_space.sample())
    assert not info["invalid_action"].any()


def test_reset_mask_resets_only_the_masked_copies() -> None:
    venv = MultiserverJobVectorEnv(num_envs=3, n_arrivals=20)
    obs, _ = venv.reset(seed=0)
    stepped, *_ = venv.step(np.ones((3, 16), dtype=np.float32))
    again, _ = venv.reset(seed=0, options={"reset_mask": np.array([True, False, True])})
    np.testing.assert_array_equal(again[[0, 2]], obs[[0, 2]])
    np.testing.assert_array_equal(again[1], stepped[1])
    assert not np.array_equal(stepped[1], obs[1])


def test_pickles_and_bad_construction_arguments() -> None:
    venv = MultiserverJobVectorEnv(num_envs=2, n_arrivals=10, action_mode="select")
    venv.reset(seed=1)
    clone = pickle.loads(pickle.dumps(venv))
    actions = np.array([0, 16])
    for a, b in zip(venv.step(actions)[:3], clone.step(actions)[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="autoreset_mode"):
        MultiserverJobVectorEnv(num_envs=2, autoreset_mode="Never")
    with pytest.raises(ValueError, match="render_mode"):
        MultiserverJobVectorEnv(num_envs=2, render_mode="ansi")
    with pytest.raises(ValueError, match="num_envs"):
        MultiserverJobVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="invalid_action"):
        MultiserverJobVectorEnv(num_envs=2, invalid_action="ignore")
    with pytest.raises(RuntimeError, match="reset"):
        MultiserverJobVectorEnv(num_envs=2).step(np.zeros((2, 16)))


def test_sb3_adapter_equals_dummy_vec_env_in_select_mode() -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.vec_adapter import BatchedVecEnv

    kwargs = CONFIGS["select"]
    ours = BatchedVecEnv.make(ENV_ID, num_envs=3, **kwargs)
    theirs = DummyVecEnv([lambda: gym.make(ENV_ID, **kwargs) for _ in range(3)])
    ours.seed(7)
    theirs.seed(7)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        actions = rng.integers(0, 9, size=3)
        obs_a, rew_a, done_a, info_a = ours.step(actions)
        obs_b, rew_b, done_b, info_b = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(done_a, done_b)
        for i in np.flatnonzero(done_a):
            np.testing.assert_array_equal(info_a[i]["terminal_observation"], info_b[i]["terminal_observation"])
            finished += 1
    assert finished >= 3
