"""Every native batched env equals ``SyncVectorEnv`` over its single env, step by step, in both autoreset modes.

The contract is :class:`schedenv.vector.NativeVectorEnv`'s (``docs/architecture.md``, "The batched envs"):
on the same seeds and actions the two give the same observations, rewards, terminations and
truncations, and every ``info`` key both carry has the same ``_key`` mask and the same values where
the mask is set (``final_obs`` and ``final_info`` included). Episodes are short, so that every copy
ends and autoresets several times, and a partial reset with a new seed is taken midway.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import schedenv
from schedenv.vector import NativeVectorEnv

SMALL_MULTISERVER: dict[str, Any] = {"n_arrivals": 6, "n_servers": 4, "max_jobs": 4, "server_needs": [1.0, 2.0, 4.0]}
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "Malleable": ("schedenv/Malleable-v0", {"mode": "online", "n_arrivals": 6, "max_jobs": 3}),
    "Malleable-ranges-residual": (
        "schedenv/Malleable-v0",
        {
            "mode": "online",
            "n_arrivals": 6,
            "max_jobs": 3,
            "load_range": (0.4, 0.9),
            "p_range": (0.3, 0.8),
            "observe_params": True,
            "action_mode": "residual",
        },
    ),
    "Dispatch": ("schedenv/Dispatch-v0", {"n_arrivals": 6, "n_hosts": 2, "max_jobs": 2}),
    "MultiserverJob": ("schedenv/MultiserverJob-v0", SMALL_MULTISERVER),
    "MultiserverJob-select": ("schedenv/MultiserverJob-v0", {**SMALL_MULTISERVER, "action_mode": "select"}),
    "MultiserverJob-ranked": ("schedenv/MultiserverJob-v0", {**SMALL_MULTISERVER, "action_mode": "ranked"}),
    "MultiserverJob-residual": ("schedenv/MultiserverJob-v0", {**SMALL_MULTISERVER, "action_mode": "residual"}),
    "Moldable": ("schedenv/Moldable-v0", {"n_procs": 8, "n_jobs": 5, "max_jobs": 3}),
    "Moldable-ranked": ("schedenv/Moldable-v0", {"n_procs": 8, "n_jobs": 5, "max_jobs": 3, "action_mode": "ranked"}),
}
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]
NOT_BATCHED = {"completed", "busy_servers", "elapsed"}
"""Single-env info keys the batched envs do not carry (per-job records, per-step diagnostics)."""
NUM_ENVS, STEPS = 3, 90


def test_every_registered_id_is_covered() -> None:
    assert {env_id for env_id, _ in CASES.values()} == set(schedenv.ENV_IDS)


def make_pair(case: str, mode: AutoresetMode) -> tuple[NativeVectorEnv, SyncVectorEnv]:
    env_id, kwargs = CASES[case]
    ours = gym.make_vec(env_id, NUM_ENVS, "vector_entry_point", autoreset_mode=mode, **kwargs)
    theirs = gym.make_vec(env_id, NUM_ENVS, "sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    assert isinstance(ours, NativeVectorEnv) and isinstance(theirs, SyncVectorEnv)
    return ours, theirs


def valid_actions(rng: np.random.Generator, venv: NativeVectorEnv) -> Any:
    """A sample of the action space; with masks, a uniformly drawn allowed action per copy."""
    if not isinstance(venv.single_action_space, gym.spaces.Discrete):
        return venv.action_space.sample()
    masks = venv.call("action_masks")
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks], dtype=np.int64)


def assert_same_info(ours: dict[str, Any], theirs: dict[str, Any], extra: set[str], path: str = "info") -> None:
    """Same masks for every key both carry, same values under them; keys only one carries are the documented ones."""
    keys = {key for key in theirs if not key.startswith("_")}
    assert keys - set(ours) <= NOT_BATCHED, (path, keys - set(ours))
    assert {key for key in ours if not key.startswith("_")} - keys <= extra, path
    for key in sorted(keys & set(ours)):
        where, mask = f"{path}[{key!r}]", theirs[f"_{key}"]
        np.testing.assert_array_equal(ours[f"_{key}"], mask, err_msg=f"mask of {where}")
        got, expected = ours[key], theirs[key]
        if isinstance(expected, dict):
            assert_same_info(got, expected, set(), where)
        elif key == "final_obs":
            for i in range(NUM_ENVS):
                assert (got[i] is None) == (expected[i] is None) == (not mask[i]), where
                if mask[i]:
                    assert got[i].dtype == expected[i].dtype, where
                    np.testing.assert_array_equal(got[i], expected[i], err_msg=where)
        elif path.endswith("['episode_metrics']"):
            # Moldable accumulates its metrics per completion (numpy means in the single env): equal to rounding.
            np.testing.assert_allclose(got[mask], expected[mask], rtol=1e-9, atol=1e-12, err_msg=where)
        else:
            assert got.dtype == expected.dtype, where
            np.testing.assert_array_equal(got[mask], expected[mask], err_msg=where)


def assert_same_step(ours: tuple, theirs: tuple, mode: AutoresetMode) -> None:
    for name, a, b in zip(("obs", "rewards", "terminated", "truncated"), ours[:4], theirs[:4], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    # SameStep: the ended copies' episode_metrics is kept at the top level too (documented)
    assert_same_info(ours[4], theirs[4], {"episode_metrics"} if mode == AutoresetMode.SAME_STEP else set())


@pytest.mark.parametrize("mode", MODES, ids=["NextStep", "SameStep"])
@pytest.mark.parametrize("case", list(CASES))
def test_native_batch_equals_sync_vector_env_step_by_step(case: str, mode: AutoresetMode) -> None:
    ours, theirs = make_pair(case, mode)
    assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
    (obs_a, info_a), (obs_b, info_b) = ours.reset(seed=7), theirs.reset(seed=7)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert_same_info(info_a, info_b, set())
    ours.action_space.seed(3)
    rng = np.random.default_rng(3)
    endings = np.zeros(NUM_ENVS, dtype=np.int64)
    for step in range(STEPS):
        actions = valid_actions(rng, ours)
        result = ours.step(actions)
        expected = theirs.step(actions)
        assert_same_step(result, expected, mode)
        endings += expected[2]
        if step == STEPS // 2:  # a partial reset, copy 1 with a new seed
            mask = np.array([False, True, False])
            (obs_a, info_a) = ours.reset(seed=[None, 99, None], options={"reset_mask": mask.copy()})
            (obs_b, info_b) = theirs.reset(seed=[None, 99, None], options={"reset_mask": mask.copy()})
            np.testing.assert_array_equal(obs_a, obs_b)
            assert_same_info(info_a, info_b, set())
            np.testing.assert_array_equal(info_a["_time"], mask)
    assert (endings >= 2).all(), endings  # every copy autoreset at least twice


@pytest.mark.parametrize("case", list(CASES))
def test_call_and_get_attr_answer_per_copy_as_sync_vector_env(case: str) -> None:
    ours, theirs = make_pair(case, AutoresetMode.NEXT_STEP)
    ours.reset(seed=1)
    theirs.reset(seed=1)
    assert ours.get_attr("max_jobs") == theirs.get_attr("max_jobs") == (CASES[case][1]["max_jobs"],) * NUM_ENVS
    if hasattr(ours, "action_masks") and isinstance(ours.single_action_space, gym.spaces.Discrete):
        for a, b in zip(ours.call("action_masks"), theirs.call("action_masks"), strict=True):
            np.testing.assert_array_equal(a, b)
    generators = ours.get_attr("np_random")
    assert [g.bit_generator.state for g in generators] == [g.bit_generator.state for g in theirs.get_attr("np_random")]
    with pytest.raises(AttributeError, match="share one configuration"):
        ours.set_attr("max_jobs", 5)
    with pytest.raises(AttributeError, match="no per-copy attribute 'reset'"):
        ours.get_attr("reset")


@pytest.mark.parametrize("case", list(CASES))
def test_a_step_needs_every_copy_reset_once(case: str) -> None:
    """Issue 23: a step before any reset, or after a first reset with a partial mask, names the copies."""
    ours, theirs = make_pair(case, AutoresetMode.NEXT_STEP)
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match=r"copies \[0, 1, 2\] have never been reset; call reset\(\)"):
        ours.step(ours.action_space.sample())
    options = {"reset_mask": np.array([True, False, True])}
    ours.reset(seed=[4, None, 6], options=options)
    assert "reset_mask" in options  # the caller's options are left as they were
    with pytest.raises(RuntimeError, match=r"copies \[1\] have never been reset"):
        ours.step(ours.action_space.sample())
    # resetting the missing copy completes the batch: it then equals a full reset with seeds 4, 5, 6
    ours.reset(seed=[None, 5, None], options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(ours._obs, theirs.reset(seed=4)[0])
    for _ in range(5):
        actions = valid_actions(rng, ours)
        assert_same_step(ours.step(actions), theirs.step(actions), AutoresetMode.NEXT_STEP)


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (np.zeros(NUM_ENVS, dtype=np.bool_), "all False, which would reset nothing"),
        (np.array([1, 0, 1]), r"dtype int64; expected a \(3,\) boolean array"),
        (np.ones(2, dtype=np.bool_), r"shape \(2,\) and dtype bool; expected a \(3,\) boolean array"),
    ],
)
@pytest.mark.parametrize("case", list(CASES))
def test_bad_reset_masks_are_refused_and_change_nothing(case: str, mask: np.ndarray, message: str) -> None:
    ours, _ = make_pair(case, AutoresetMode.NEXT_STEP)
    before, _ = ours.reset(seed=2)
    with pytest.raises(ValueError, match=message):
        ours.reset(seed=9, options={"reset_mask": mask})
    np.testing.assert_array_equal(ours._obs, before)


@pytest.mark.parametrize("case", list(CASES))
def test_an_action_outside_the_space_is_refused_naming_the_copy_and_changes_nothing(case: str) -> None:
    ours, theirs = make_pair(case, AutoresetMode.NEXT_STEP)
    ours.reset(seed=5)
    theirs.reset(seed=5)
    ours.action_space.seed(5)
    good = valid_actions(np.random.default_rng(5), ours)
    bad = np.array(good, copy=True)
    space = ours.single_action_space
    if isinstance(space, gym.spaces.Discrete):
        bad[1] = space.n
    else:
        bad[1, 0] = 2.0
    with pytest.raises(ValueError, match=r"actions of copies \[1\] (are out of range|have \w+ NaN or outside)"):
        ours.step(bad)
    assert_same_step(ours.step(good), theirs.step(good), AutoresetMode.NEXT_STEP)
