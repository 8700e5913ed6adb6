"""The native batched Moldable env equals ``gym.make_vec(..., vectorization_mode="sync")`` on the same seeds."""

from __future__ import annotations

import math
import pickle
import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import schedenv  # noqa: F401 - registers the env ids
from schedenv.moldable.core import factored_mask
from schedenv.moldable.env import MoldableEnv
from schedenv.moldable.kernel import arrival_arrays, arrival_rows, initial_queue_rows
from schedenv.moldable.vector import BATCH_QUEUE_ROWS, MoldableVectorEnv
from schedenv.moldable.workload import CirneWorkload, MoldableJobSet, downey_jobs

ENV = "schedenv/Moldable-v0"
TABLES = [
    {"submit": 0.0, "runtimes": {1: 10, 2: 5}},
    {"submit": 0.0, "runtimes": {1: 10, 2: 7}},
    {"submit": 0.0, "runtimes": {1: 10, 2: 9}},
    {"submit": 3.0, "runtimes": {2: 8, 3: 6}, "requested": 3},
    {"submit": 3.0, "L": 20.0, "A": 2.5, "sigma": 1.5},
]
CONFIGS: list[dict[str, Any]] = [
    {"n_procs": 16, "n_jobs": 12, "arrival_interval": 150.0, "max_jobs": 4, "max_running": 3},
    {"jobs": TABLES, "n_procs": 3, "max_jobs": 2, "invalid_action": "penalty", "invalid_action_penalty": 3.0},
    {"n_procs": 8, "n_jobs": 10, "max_jobs": 3, "action_mode": "factored", "observe_params": True},
    # more queued jobs than the queue's first capacity: the kernel stops, the queue grows, it resumes
    {"n_procs": 16, "n_jobs": 90, "arrival_interval": 20.0, "max_jobs": 8},
    {"jobs": TABLES, "n_procs": 3, "max_jobs": 2, "action_mode": "ranked", "invalid_action": "penalty"},
    {"n_procs": 16, "n_jobs": 90, "arrival_interval": 20.0, "max_jobs": 8, "action_mode": "ranked", "max_running": 2},
    # the ranked observation is the first part of each copy's row, the scenario parameters after it
    {"n_procs": 8, "n_jobs": 20, "max_jobs": 3, "action_mode": "ranked", "observe_params": True},
]
IDS = [
    "cirne",
    "tables-penalty",
    "factored-params",
    "queue-grows",
    "ranked-tables-penalty",
    "ranked-queue-grows",
    "ranked-params",
]
INFO_KEYS = ("time", "n_jobs", "n_queued", "n_running", "free_procs", "n_outside", "action_mask", "invalid_action")


def mixed_actions(rng: np.random.Generator, venv: MoldableVectorEnv) -> np.ndarray:
    """Per copy, half the time a uniform sample of the space (mostly masked), else one that respects the
    mask (flat) or each component's mask (factored: the pair may still be masked)."""
    actions = venv.action_space.sample()
    masks = venv.action_masks()
    k = venv.max_jobs
    for i in np.flatnonzero(rng.random(venv.num_envs) < 0.5):
        if actions.ndim == 1:
            actions[i] = rng.choice(np.flatnonzero(masks[i]))
        else:
            actions[i] = rng.choice(np.flatnonzero(masks[i, : k + 1])), rng.choice(np.flatnonzero(masks[i, k + 1 :]))
    return actions


def assert_same_info(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    for key in INFO_KEYS:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
    assert ours["invalid_action"].dtype == np.bool_


def assert_same_metrics(ours: dict[str, Any], theirs: dict[str, Any], ended: np.ndarray) -> None:
    """Sums per completion against numpy means over the records: equal to rounding."""
    np.testing.assert_array_equal(ours["_episode_metrics"], ended)
    for name, values in theirs["episode_metrics"].items():
        if name.startswith("_"):
            continue
        for i in np.flatnonzero(ended):
            assert ours["episode_metrics"][name][i] == pytest.approx(values[i], rel=1e-9, abs=1e-12), name
        assert np.isnan(ours["episode_metrics"][name][~ended]).all()


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next", "same"])
@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_equals_the_sync_vector_env(kwargs: dict[str, Any], mode: AutoresetMode) -> None:
    num_envs = 4
    # autoreset_mode: a kwarg of the vector entry point, a vector_kwargs entry of SyncVectorEnv
    ours = gym.make_vec(ENV, num_envs, "vector_entry_point", autoreset_mode=mode, **kwargs)
    theirs = gym.make_vec(ENV, num_envs, "sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    assert ours.metadata["autoreset_mode"] == theirs.metadata["autoreset_mode"] == mode
    assert isinstance(ours, MoldableVectorEnv)
    assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
    obs_a, info_a = ours.reset(seed=11)
    obs_b, info_b = theirs.reset(seed=11)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert_same_info(info_a, info_b)
    rng = np.random.default_rng(0)
    ours.action_space.seed(1)
    episodes = invalid = most_queued = 0
    for _ in range(400):
        actions = mixed_actions(rng, ours)
        np.testing.assert_array_equal(ours.action_masks(), np.stack(theirs.call("action_masks")))
        obs_a, rew_a, term_a, trunc_a, info_a = ours.step(actions)
        obs_b, rew_b, term_b, trunc_b, info_b = theirs.step(actions)
        assert obs_a.dtype == obs_b.dtype == np.float32
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(term_a, term_b)
        np.testing.assert_array_equal(trunc_a, trunc_b)
        assert_same_info(info_a, info_b)
        if term_a.any():
            final_a = info_a["final_info"] if mode == AutoresetMode.SAME_STEP else info_a
            final_b = info_b["final_info"] if mode == AutoresetMode.SAME_STEP else info_b
            assert_same_metrics(final_a, final_b, term_a)
            if mode == AutoresetMode.SAME_STEP:
                for key in ("final_obs", "_final_obs", "_final_info"):
                    assert info_a[key].dtype == info_b[key].dtype and info_a[key].shape == info_b[key].shape, key
                for i in range(num_envs):
                    if term_a[i]:
                        np.testing.assert_array_equal(info_a["final_obs"][i], info_b["final_obs"][i])
                        assert info_a["final_obs"][i].dtype == np.float32
                        assert (final_a["action_mask"][i] == 1).all()
                    else:
                        assert info_a["final_obs"][i] is None and info_b["final_obs"][i] is None
            else:
                assert (ours.action_masks()[term_a] == 1).all()
        episodes += int(term_a.sum())
        invalid += int(info_a["invalid_action"].sum())
        most_queued = max(most_queued, int(info_a["n_queued"].max()))
    assert episodes >= num_envs and invalid > 50
    if "n_jobs" in kwargs and kwargs["n_jobs"] == 90:
        assert most_queued > initial_queue_rows(90)


@pytest.mark.parametrize("action_mode", ["flat", "factored", "ranked"])
def test_masks_are_written_once_per_state(action_mode: str) -> None:
    """A step's ``info["action_mask"]`` is the array ``action_masks()`` returns until the next step or reset;
    each step gives a new array, equal to the state's masks written afresh."""
    venv = MoldableVectorEnv(3, action_mode=action_mode, n_procs=8, n_jobs=10, max_jobs=3)
    _, info = venv.reset(seed=5)
    np.testing.assert_array_equal(info["action_mask"], venv.action_masks())
    kept = []
    for step in range(30):
        masks = venv.action_masks()
        assert venv.action_masks() is masks and (step == 0 or masks is info["action_mask"])
        np.testing.assert_array_equal(masks, venv._write_masks())
        kept.append((masks, masks.copy()))
        actions = masks.argmax(axis=1) if action_mode != "factored" else np.zeros((3, 2), dtype=np.int64)
        _, _, _, _, info = venv.step(actions)
        assert info["action_mask"] is not masks
    assert all(np.array_equal(masks, copy) for masks, copy in kept)  # a later step changes no earlier array
    assert len({masks.tobytes() for masks, _ in kept}) > 5


@pytest.mark.parametrize("kwargs", [CONFIGS[0], CONFIGS[1], CONFIGS[3]], ids=["cirne", "tables", "queue-grows"])
def test_factored_masks_are_the_flat_masks_reduced(kwargs: dict[str, Any]) -> None:
    """The kernel writes the factored masks off each copy's state: ``factored_mask`` of the flat masks, in
    the batched and the single env, over states where some slot or count is masked, where the wait is masked
    and where the episode has ended (all ones; a decision epoch always lets some window job start)."""
    kwargs = {key: value for key, value in kwargs.items() if key != "invalid_action_penalty"}
    flat = gym.make_vec(ENV, 8, "vector_entry_point", **kwargs)
    factored = gym.make_vec(ENV, 8, "vector_entry_point", action_mode="factored", **kwargs)
    singles = [MoldableEnv(action_mode=mode, **kwargs) for mode in ("flat", "factored")]
    k, m = factored.max_jobs, factored.n_procs
    flat.reset(seed=3), factored.reset(seed=3), singles[0].reset(seed=3), singles[1].reset(seed=3)
    rng = np.random.default_rng(0)
    seen = {"slot masked": 0, "count masked": 0, "wait masked": 0, "ended": 0}
    for _ in range(300):
        want = factored_mask(flat.action_masks(), k, m)
        got = factored.action_masks()
        assert got.dtype == np.int8 and got.shape == (8, k + 1 + m)
        np.testing.assert_array_equal(got, want)
        single = singles[1].action_masks()
        np.testing.assert_array_equal(single, factored_mask(singles[0].action_masks(), k, m))
        ended = (got == 1).all(axis=1)
        seen["ended"] += int(ended.sum())
        live = got[~ended]
        seen["slot masked"] += int((live[:, :k] == 0).any(axis=1).sum())
        seen["count masked"] += int((live[:, k + 1 :] == 0).any(axis=1).sum())
        seen["wait masked"] += int((live[:, k] == 0).sum())
        pairs = np.stack([rng.integers(0, k + 1, 8), rng.integers(0, m, 8)], axis=1)
        actions = np.where(pairs[:, 0] == k, k * m, pairs[:, 0] * m + pairs[:, 1])
        factored.step(pairs), flat.step(actions)
        for env, action in zip(singles, (actions[0], pairs[0]), strict=True):
            if env.step(action)[2]:
                env.reset()
    assert min(seen.values()) > 0, seen


@pytest.mark.parametrize("action_mode", ["flat", "ranked"])
def test_a_queue_longer_than_the_batchs_first_rows_grows_and_stays_equal_to_the_single_env(action_mode: str) -> None:
    """Always waiting queues every job (nothing starts until all have arrived): the batch's queue doubles.
    (Ranked: the last candidate waits; when it is masked, HRF-EASY waits too and candidate 0 is that wait.)"""
    kwargs = {"n_procs": 4, "n_jobs": BATCH_QUEUE_ROWS + 40, "max_jobs": 4, "action_mode": action_mode}
    ours = gym.make_vec(ENV, 2, "vector_entry_point", **kwargs)
    theirs = gym.make_vec(ENV, 2, "sync", **kwargs)
    np.testing.assert_array_equal(ours.reset(seed=3)[0], theirs.reset(seed=3)[0])
    wait = np.full(2, ours.unwrapped.n_actions - 1)
    most_queued = 0
    for _ in range(BATCH_QUEUE_ROWS + 80):
        a, b = ours.step(wait), theirs.step(wait)
        for x, y in zip(a[:3], b[:3], strict=True):
            np.testing.assert_array_equal(x, y)
        most_queued = max(most_queued, int(a[4]["n_queued"].max()))
    assert most_queued == BATCH_QUEUE_ROWS + 40 and ours.unwrapped._queue.shape[1] == 2 * BATCH_QUEUE_ROWS


def test_reset_mask_resets_only_the_masked_copies() -> None:
    venv = MoldableVectorEnv(num_envs=3, **CONFIGS[0])
    obs, _ = venv.reset(seed=0)
    stepped, *_ = venv.step(venv.action_masks().argmax(axis=1))
    again, _ = venv.reset(seed=0, options={"reset_mask": np.array([True, False, True])})
    np.testing.assert_array_equal(again[[0, 2]], obs[[0, 2]])
    np.testing.assert_array_equal(again[1], stepped[1])
    assert not np.array_equal(stepped[1], obs[1])


def test_raise_mode_names_the_copies_and_changes_nothing() -> None:
    kwargs = {**CONFIGS[0], "invalid_action": "raise"}
    venv, twin = MoldableVectorEnv(num_envs=3, **kwargs), MoldableVectorEnv(num_envs=3, **kwargs)
    venv.reset(seed=5)
    twin.reset(seed=5)
    masks = venv.action_masks()
    good = masks.argmax(axis=1)
    bad = good.copy()
    bad[1] = int(np.flatnonzero(masks[1] == 0)[0])
    with pytest.raises(ValueError, match=re.escape("copies [1] are masked")):
        venv.step(bad)
    for a, b in zip(venv.step(good)[:3], twin.step(good)[:3], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("invalid_action", ["raise", "fallback", "penalty"])
def test_actions_outside_the_space_raise_in_every_mode(invalid_action: str) -> None:
    venv = MoldableVectorEnv(num_envs=2, invalid_action=invalid_action, **CONFIGS[0])
    factored = MoldableVectorEnv(num_envs=2, invalid_action=invalid_action, **CONFIGS[2])
    venv.reset(seed=0)
    factored.reset(seed=0)
    n = venv.n_actions
    for bad, message in [
        (np.array([0, n]), r"copies \[1\] are out of range"),
        (np.array([-1, 0]), r"copies \[0\] are out of range"),
        (np.zeros(3, dtype=np.int64), "shape"),
        (np.array([0.0, 1.0]), "dtype"),
    ]:
        with pytest.raises(ValueError, match=message):
            venv.step(bad)
    for bad, message in [(np.array([[4, 0], [0, 0]]), r"copies \[0\]"), (np.array([0, 0]), "shape")]:
        with pytest.raises(ValueError, match=message):
            factored.step(bad)


def test_pickles_and_bad_construction_arguments() -> None:
    venv = MoldableVectorEnv(num_envs=2, **CONFIGS[0])
    venv.reset(seed=1)
    clone = pickle.loads(pickle.dumps(venv))
    actions = venv.action_masks().argmax(axis=1)
    for a, b in zip(venv.step(actions)[:3], clone.step(actions)[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="autoreset_mode"):
        MoldableVectorEnv(num_envs=2, autoreset_mode="Never")
    with pytest.raises(ValueError, match="render_mode"):
        MoldableVectorEnv(num_envs=2, render_mode="ansi")
    with pytest.raises(ValueError, match="num_envs"):
        MoldableVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="invalid_action"):
        MoldableVectorEnv(num_envs=2, invalid_action="skip")
    with pytest.raises(RuntimeError, match="reset"):
        MoldableVectorEnv(num_envs=2).step(np.zeros(2, dtype=np.int64))


def test_sb3_adapter_gives_maskable_ppo_one_mask_row_per_copy() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.vec_adapter import BatchedVecEnv

    ours = BatchedVecEnv.make(ENV, num_envs=3, **CONFIGS[0])
    theirs = DummyVecEnv([lambda: gym.make(ENV, **CONFIGS[0]) for _ in range(3)])
    ours.seed(7)
    theirs.seed(7)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng, finished = np.random.default_rng(0), 0
    for _ in range(150):
        masks = get_action_masks(ours)
        assert masks.shape == (3, ours.action_space.n)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
        obs_a, rew_a, done_a, info_a = ours.step(actions)
        obs_b, rew_b, done_b, info_b = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(done_a, done_b)
        for i in np.flatnonzero(done_a):
            np.testing.assert_array_equal(info_a[i]["terminal_observation"], info_b[i]["terminal_observation"])
            expected = info_b[i]["episode_metrics"]["ATT"]
            assert math.isclose(info_a[i]["episode_metrics"]["ATT"], expected, rel_tol=1e-9)
            finished += 1
    assert finished >= 3


def test_scenario_parameters_end_every_copys_observation() -> None:
    kwargs = {"n_procs": 32, "n_jobs": 8, "arrival_interval": "heavy", "observe_params": True}
    venv = MoldableVectorEnv(num_envs=3, autoreset_mode="SameStep", **kwargs)
    params = venv.template.scenario_params
    assert params.size == 4 and venv.single_observation_space.shape == (8 * 32 + 7 + 2 * 16 + 4,)
    obs, _ = venv.reset(seed=0)
    ended = 0
    for _ in range(60):
        np.testing.assert_array_equal(obs[:, -4:], np.broadcast_to(params, (3, 4)))
        obs, _, terminated, _, info = venv.step(venv.action_space.sample())
        for i in np.flatnonzero(terminated):
            np.testing.assert_array_equal(info["final_obs"][i][-4:], params)
            ended += 1
    assert ended >= 3


class HalvedWorks(CirneWorkload):
    """A generator whose own ``sample`` the batched env must call per copy (it cannot draw the batch at once)."""

    def sample(self, rng: np.random.Generator, n_jobs: int, n_procs: int) -> MoldableJobSet:
        jobs = super().sample(rng, n_jobs, n_procs)
        return downey_jobs(jobs.submit, jobs.L / 2, jobs.A, jobs.sigma, n_procs)


@pytest.mark.parametrize("workload", [CirneWorkload(arrival_interval=300.0), HalvedWorks(arrival_interval=300.0)])
def test_each_copys_arrival_rows_are_its_single_envs_drawn_jobs(workload: CirneWorkload) -> None:
    """The batch draws CirneWorkload's jobs for all resetting copies at once (a subclass's own sample per copy):
    each copy's arrival rows equal, bit for bit, those of a single env reset with the copy's seed."""
    kwargs = {"n_procs": 32, "n_jobs": 40, "max_jobs": 4, "workload": workload}
    venv = gym.make_vec(ENV, num_envs=5, vectorization_mode="vector_entry_point", **kwargs)
    venv.reset(seed=11)
    venv.reset(options={"reset_mask": np.array([False, True, False, True, True])})  # a second draw, 3 copies
    ours = venv.unwrapped
    for i in range(5):
        env = gym.make(ENV, **kwargs)
        env.reset(seed=11 + i)
        if i in (1, 3, 4):
            env.reset()
        arrivals_f, arrivals_i, _ = arrival_arrays(env.unwrapped.job_set)
        np.testing.assert_array_equal(ours._arrivals_f[i], arrivals_f)
        np.testing.assert_array_equal(ours._arrivals_i[i], arrivals_i)
    venv.close()


def test_arrival_rows_order_jobs_by_submit_time_ties_by_index() -> None:
    """Jobs given out of submit order go in arrival order (stable: equal submit times keep their index order)."""
    submit = np.array([[5.0, 1.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
    index = np.broadcast_to(np.arange(4.0), submit.shape)
    arrivals_f, arrivals_i = arrival_rows(
        submit, index, index, index, index, -np.ones((2, 4), int), 10 + submit.astype(int)
    )
    np.testing.assert_array_equal(arrivals_i[0], [[3, -1, 10], [1, -1, 11], [2, -1, 11], [0, -1, 15]])
    np.testing.assert_array_equal(arrivals_f[0, :, 0], [0.0, 1.0, 1.0, 5.0])
    np.testing.assert_array_equal(arrivals_f[0, :, 1], [3.0, 1.0, 2.0, 0.0])
    np.testing.assert_array_equal(arrivals_i[1, :, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(arrivals_f[1, :, 0], [0.0, 1.0, 2.0, 3.0])
