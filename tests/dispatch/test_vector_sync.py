"""The native batched Dispatch-v0 equals Gymnasium's SyncVectorEnv over the single env, bit for bit.

Both are built by ``gym.make_vec`` (``vector_entry_point`` vs ``sync``) on the same seeds and driven with
the same actions: a mix of masked-valid actions and uniform samples from the action space (which hit
the masks, so the fallback and the penalty are compared too), through several episodes per copy.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import schedenv  # noqa: F401 - registers the env ids
from schedenv.dispatch.vector import DispatchVectorEnv
from schedenv.workloads import BoundedPareto

ENV_ID = "schedenv/Dispatch-v0"
LADDER: dict[str, Any] = {"size_dist": BoundedPareto(1.0, 1e4, 0.8), "time_limits": [2.0, 8.0, 32.0, 128.0, 512.0]}
"""A ladder spanning the sizes, so that random limits kill jobs and uniform actions then hit masks."""
CONFIGS: dict[str, dict[str, Any]] = {
    "3hosts-fallback": {"n_arrivals": 25, "n_hosts": 3, "max_jobs": 2, **LADDER},
    "size-known-penalty-params": {
        "n_arrivals": 25,
        "size_known": True,
        "objective": "waiting_slowdown",
        "load": 0.9,
        "invalid_action": "penalty",
        "invalid_action_penalty": 0.25,
        "observe_params": True,
        **LADDER,
    },
    "jobs-response-time": {
        "jobs": [(0.0, 5.0), (0.5, 1.0), (0.7, 30.0), (0.8, 1e-6), (2.0, 2.0)],
        "time_limits": [0.5, 3.0, 10.0],
        "objective": "response_time",
    },
}
NOT_BATCHED = {"completed", "_completed"}
"""Single-env info keys the batched env does not carry (per-job records)."""


def assert_same_info(ours: dict[str, Any], theirs: dict[str, Any], path: str = "info") -> None:
    """Every entry SyncVectorEnv reports (but the records) is in ``ours`` with the same dtype and values."""
    missing = set(theirs) - set(ours) - NOT_BATCHED
    assert not missing, f"{path} lacks {sorted(missing)}"
    for key, expected in theirs.items():
        if key in NOT_BATCHED:
            continue
        got, where = ours[key], f"{path}[{key!r}]"
        if isinstance(expected, dict):
            assert isinstance(got, dict), where
            assert_same_info(got, expected, where)
        elif key == "final_obs":
            assert got.dtype == expected.dtype == object and got.shape == expected.shape, where
            for a, b in zip(got, expected, strict=True):
                assert (a is None) == (b is None), where
                if b is not None:
                    assert a.dtype == b.dtype and a.shape == b.shape, where
                    np.testing.assert_array_equal(a, b, err_msg=where)
        else:
            assert isinstance(got, np.ndarray) and got.dtype == expected.dtype, (where, got, expected)
            np.testing.assert_array_equal(got, expected, err_msg=where)


def assert_same_step(ours: tuple, theirs: tuple, mode: AutoresetMode) -> None:
    for name, a, b in zip(("obs", "rewards", "terminated", "truncated"), ours[:4], theirs[:4], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    extra = set(ours[4]) - set(theirs[4])
    # SameStep: the batched env also keeps the ended copies' metrics at the top level.
    allowed = {"episode_metrics", "_episode_metrics"} if mode == AutoresetMode.SAME_STEP else set()
    assert extra <= allowed, extra
    assert_same_info(ours[4], theirs[4])


def assert_same_reset(ours: tuple, theirs: tuple) -> None:
    assert ours[0].dtype == theirs[0].dtype
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert set(ours[1]) - set(theirs[1]) == set()
    assert_same_info(ours[1], theirs[1])


def mixed_actions(rng: np.random.Generator, venv: gym.vector.VectorEnv, masks: np.ndarray) -> np.ndarray:
    """Per copy, a uniform sample from the action space (may be masked) or a random allowed action."""
    sampled = venv.action_space.sample()
    allowed = np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)
    return np.where(rng.random(masks.shape[0]) < 0.5, sampled, allowed)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["NextStep", "SameStep"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_vector_entry_point_equals_sync_vector_env(config: str, mode: AutoresetMode) -> None:
    kwargs, num_envs = CONFIGS[config], 3
    ours = gym.make_vec(
        ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kwargs
    )
    theirs = gym.make_vec(
        ENV_ID, num_envs=num_envs, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs
    )
    assert isinstance(ours, DispatchVectorEnv) and isinstance(theirs, SyncVectorEnv)
    assert ours.action_space == theirs.action_space
    assert ours.observation_space == theirs.observation_space
    assert_same_reset(ours.reset(seed=31), theirs.reset(seed=31))
    ours.action_space.seed(5)
    rng = np.random.default_rng(5)
    endings = invalid = 0
    for step in range(160):
        masks = ours.action_masks()
        assert masks.shape == (num_envs, ours.single_action_space.n) and masks.dtype == np.int8
        np.testing.assert_array_equal(masks, np.stack(theirs.call("action_masks")))
        actions = mixed_actions(rng, ours, masks)
        result_ours, result_theirs = ours.step(actions), theirs.step(actions)
        assert_same_step(result_ours, result_theirs, mode)
        endings += int(result_theirs[2].sum())
        invalid += int(result_theirs[4]["invalid_action"].sum())
        if step == 80:  # a partial reset with a new seed for copy 1 only
            mask = np.array([False, True, False])
            assert_same_reset(
                ours.reset(seed=[None, 99, None], options={"reset_mask": mask.copy()}),
                theirs.reset(seed=[None, 99, None], options={"reset_mask": mask.copy()}),
            )
    assert endings >= 2 * num_envs and invalid > 0


def test_a_pickled_batch_keeps_draws_not_arrivals_and_continues_identically() -> None:
    """A checkpoint of the batched env stores each copy's generator state at its last draw instead of the drawn
    arrivals, and draws them again on load: later steps equal the original's, bit for bit."""
    import pickle

    venv = DispatchVectorEnv(num_envs=6, n_arrivals=2_000)
    venv.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(5_000):  # copies end episodes and draw new ones (from generators already advanced)
        venv.step(rng.integers(venv.n_actions, size=6))
    blob = pickle.dumps(venv)
    whole = len(pickle.dumps(venv.__dict__))  # everything, the arrivals included
    assert whole - len(blob) >= 0.99 * (venv._arrival_times.nbytes + venv._sizes.nbytes)
    clone = pickle.loads(blob)
    np.testing.assert_array_equal(clone._arrival_times, venv._arrival_times)
    np.testing.assert_array_equal(clone._sizes, venv._sizes)
    for _ in range(3_000):
        actions = rng.integers(venv.n_actions, size=6)
        mine, theirs = venv.step(actions), clone.step(actions)
        for a, b in zip(mine[:4], theirs[:4], strict=True):
            np.testing.assert_array_equal(a, b)
