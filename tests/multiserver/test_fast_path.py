"""The multiserver family's one transition (``kernel.advance``) and the fast path that loops it.

The env, the batched env and the fast path all step ``kernel.advance`` on ``kernel.MultiserverArrays``;
``test_fast_core`` and ``test_vector`` check the env and the batch against the reference, these tests
the transition itself (a hand-worked episode) and the fast path's ``FastRun``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import baselines
import schedenv  # noqa: F401  (registers the env ids)
from schedenv.fastpath import multiserver as fastpath
from schedenv.fastpath.multiserver import MultiserverFastRun, run_fast
from schedenv.fastpath.result import FastRun
from schedenv.multiserver import kernel
from schedenv.multiserver.sim import MultiserverParams, advance, initial_state

ENV_ID = "schedenv/MultiserverJob-v0"


def _step(arrays: kernel.MultiserverArrays, served: list[int]) -> tuple[int, list[int]]:
    """``advance`` serving the positions ``served`` (k = 4); (status, completed stream ids)."""
    arrays.served[: len(served)] = served
    status = kernel.advance(len(served), *arrays, 4)
    return status, arrays.done[: arrays.ints[kernel.N_DONE]].tolist()


def test_advance_hand_worked_episode_and_reference() -> None:
    # k = 4; jobs (arrival, need, duration): (0, 2, 1), (0, 2, 3), (0.5, 4, 1).
    times, needs, durations = np.array([0.0, 0.0, 0.5]), np.array([2, 2, 4]), np.array([1.0, 3.0, 1.0])
    state = kernel.MultiserverArrays.zeros(1, 3, 4)
    state.times[0], state.needs[0], state.durations[0] = times, needs, durations
    arrays = state.views(0)
    kernel.start(*arrays)
    ints, floats = arrays.ints, arrays.floats
    assert (ints[kernel.N_JOBS], ints[kernel.NEXT_ARRIVAL], floats[kernel.TIME]) == (2, 2, 0.0)
    params = MultiserverParams(4, times, needs, durations)
    reference = initial_state(params)
    # Serve jobs 0 and 1 (4 servers): the arrival at 0.5 ends the interval; then job 0 completes at 1.0;
    # then job 2 alone (4 servers) completes at 2.0; then job 1 (2.5 - 0.5 = 2.0 left) at 4.0.
    for served, event, accrued, done in (([0, 1], 0.5, 1.0, []), ([0, 1], 1.0, 1.5, [0]), ([1], 2.0, 2.0, [2])):
        serve = np.zeros(reference.n_jobs, dtype=bool)
        serve[served] = True
        reference, outcome = advance(params, reference, serve)
        assert _step(arrays, served) == (kernel.OK, done)
        assert (floats[kernel.EVENT], floats[kernel.ACCRUED], ints[kernel.BUSY]) == (event, accrued, 4)
        assert [r.job_id for r in outcome.completed] == done and outcome.accrued_objective == accrued
        np.testing.assert_array_equal(
            arrays.jobs_f[kernel.REMAINING, : ints[kernel.N_JOBS]], reference.remaining_duration
        )
    assert _step(arrays, [0]) == (kernel.OK, [1])
    assert kernel.ended(ints, arrays.times)
    # Flow time = sum of response times 1 + 4 + 1.5; busy server-time = sum of needs x durations.
    assert (floats[kernel.TOTAL_FLOW], floats[kernel.BUSY_TIME], ints[kernel.N_COMPLETED]) == (6.5, 12.0, 3)


def test_advance_refuses_overfull_and_idle_service_sets_without_change() -> None:
    state = kernel.MultiserverArrays.zeros(1, 2, 4)
    state.times[0], state.needs[0], state.durations[0] = [0.0, 0.0], [4, 2], [1.0, 1.0]
    arrays = state.views(0)
    kernel.start(*arrays)
    before = [array.copy() for array in (arrays.jobs_f, arrays.in_service, arrays.ints[:3], arrays.floats[:3])]
    assert _step(arrays, [0, 1])[0] == kernel.OVER_CAPACITY and arrays.ints[kernel.BUSY] == 6
    assert _step(arrays, [])[0] == kernel.IDLE_FOREVER  # nothing served, no arrival pending
    after = (arrays.jobs_f, arrays.in_service, arrays.ints[:3], arrays.floats[:3])
    for old, new in zip(before, after, strict=True):
        np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize(
    ("name", "total_flow", "mean_response"),
    [
        ("serverfilling-srpt", 2325.9065589354213, 4.651813117870845),
        ("maxweight", 3311.0267867303146, 6.622053573460629),
        ("serverfilling-gittins", 2490.9452472518624, 4.981890494503722),
        ("firstfit-srpt", 3340.581079733335, 6.681162159466669),
        ("greedy-srpt", 7765.347950034567, 15.530695900069182),
        ("fcfs", 87812.5149180593, 175.62502983611856),
    ],
)
def test_fast_path_golden_numbers(name: str, total_flow: float, mean_response: float) -> None:
    """The compiled loop's numbers on the default env, seed 0: those of the loop it replaced, to the bit."""
    run = run_fast(gym.make(ENV_ID), baselines.make(name), seed=0)
    assert run.total_flow_time == total_flow and run.metrics["mean_response_time"] == mean_response
    assert run.episode_return == -total_flow and run.n_events == 2 * 500


@pytest.mark.parametrize("name", ["serverfilling-srpt", "maxweight", "serverfilling-gittins"])
def test_compiled_and_python_fast_paths_agree_on_every_field(name: str) -> None:
    env = gym.make(ENV_ID, n_arrivals=300, load=0.9)
    compiled = run_fast(env, baselines.make(name), seed=2)
    python = run_fast(env, baselines.make(name), seed=2, compiled=False)
    np.testing.assert_array_equal(compiled.completion, python.completion)
    assert compiled.metrics == python.metrics and compiled.n_steps == python.n_steps > 300
    assert (compiled.episode_return, compiled.n_events) == (python.episode_return, python.n_events)
    assert compiled.episode_result().records == compiled.records()


def test_fast_run_is_a_fast_run_and_the_old_name_warns() -> None:
    run = run_fast(gym.make(ENV_ID, n_arrivals=50), baselines.make("serverfilling-srpt"), seed=1)
    assert isinstance(run, FastRun) and isinstance(run, MultiserverFastRun)
    np.testing.assert_array_equal(run.response_times, run.completion - run.params.arrival_times)
    with pytest.warns(DeprecationWarning, match="FastResult is deprecated"):
        assert fastpath.FastResult is MultiserverFastRun
    with pytest.raises(AttributeError, match="no attribute 'FastResults'"):
        _ = fastpath.FastResults


def test_stopped_run_counts_only_the_events_simulated() -> None:
    env = gym.make(ENV_ID, load=0.85, n_arrivals=20000)
    run = run_fast(env, baselines.make("fcfs"), seed=0, max_in_system=2000)
    assert run.stopped_early and run.metrics["mean_response_time"] == np.inf
    completed = int(np.isfinite(run.completion).sum())
    assert run.metrics["n_completed"] == completed and completed + 2000 < run.n_events < 2 * 20000
