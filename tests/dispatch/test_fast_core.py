"""The env's compiled core equals the pure simulator step by step (docs/architecture.md:
"Simulator, env, baseline, fast path").

``DispatchEnv`` runs ``FastCore`` (the numba kernels); ``ReferenceCore`` runs ``DispatchSim`` and builds the
observation in Python. Both are driven with the same decisions, chosen to exercise kills, the central
queue, full windows and every objective; everything the env reports must be equal, exactly.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from schedenv.dispatch.core import ReferenceCore
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.render import render_text
from schedenv.dispatch.sim import DispatchSim, StateView
from schedenv.workloads import BoundedPareto, Exponential

CASES: dict[str, dict[str, Any]] = {
    "slowdown-3hosts": {"n_hosts": 3, "n_arrivals": 150, "load": 0.8, "max_jobs": 2},
    "response-known": {"objective": "response_time", "size_known": True, "n_arrivals": 120, "load": 0.9},
    "waiting-time-4hosts-nowindow": {"objective": "waiting_time", "n_hosts": 4, "n_arrivals": 150, "max_jobs": 0},
    "waiting-slowdown-params": {
        "objective": "waiting_slowdown",
        "n_arrivals": 150,
        "load": 0.95,
        "observe_params": True,
        "size_known": True,
    },
    "one-host-exponential": {"n_hosts": 1, "n_arrivals": 100, "size_dist": Exponential(1.0), "max_jobs": 3},
    "heavy-overload": {"n_arrivals": 200, "load": 1.6, "objective": "response_time", "max_jobs": 1},
    "explicit-jobs": {
        # Ties, a size far below the others (the weight's exact re-summation), kills on every limit.
        "jobs": [(0.0, 5.0), (0.0, 1e-7), (0.5, 30.0), (0.5, 1.0), (0.7, 2.0), (3.0, 12.0), (3.0, 0.4), (9.0, 1e3)],
        "time_limits": [0.5, 3.0, 10.0, 100.0],
        "n_hosts": 2,
        "max_jobs": 2,
    },
}
LADDER: dict[str, Any] = {"size_dist": BoundedPareto(1.0, 1e4, 0.8), "time_limits": [2.0, 8.0, 32.0, 128.0, 512.0]}
"""For the cases without their own sizes: random limits then kill often."""


def build(case: str) -> DispatchEnv:
    kwargs = dict(CASES[case])
    if "jobs" not in kwargs and "size_dist" not in kwargs:
        kwargs |= LADDER
    return DispatchEnv(**kwargs)


def assert_same_view(a: StateView, b: StateView) -> None:
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(y, np.ndarray):
            assert isinstance(x, np.ndarray) and x.dtype == y.dtype and not x.flags.writeable, field.name
            np.testing.assert_array_equal(x, y, err_msg=field.name)
        elif isinstance(y, float) and math.isnan(y):
            assert math.isnan(x), field.name
        else:
            assert type(x) is type(y) and x == y, field.name


def assert_same_sim(a: DispatchSim, b: DispatchSim) -> None:
    """Two simulators in the same state (jobs compared field by field, host sequences included)."""
    assert (a.time, a.next_arrival, a.weight) == (b.time, b.next_arrival, b.weight)
    assert list(a.present.values()) == list(b.present.values())
    assert a.running == b.running and a.pending == b.pending
    assert [list(q) for q in a.queues] == [list(q) for q in b.queues] and list(a.central) == list(b.central)
    assert (a.run_start, a.run_end, a.queued_work) == (b.run_start, b.run_end, b.queued_work)
    assert a.tally == b.tally
    assert render_text(a) == render_text(b)
    assert_same_view(a.view(), b.view())


def decide(rng: np.random.Generator, env: DispatchEnv, central_bias: float) -> tuple[int, int]:
    """A random destination (the central queue with probability ``central_bias``) and allowed limit."""
    exceeded = env.pending_job.exceeded
    destination = env.central if rng.random() < central_bias else int(rng.integers(env.n_hosts))
    return destination, int(rng.integers(exceeded + 1, env.n_limits))


@pytest.mark.filterwarnings("ignore:load=1.6 >= 1")
@pytest.mark.parametrize("central_bias", [0.0, 0.4])
@pytest.mark.parametrize("case", list(CASES))
def test_env_equals_the_reference_core_step_by_step(case: str, central_bias: float) -> None:
    env = build(case)
    obs, info = env.reset(seed=7)
    core = env._require_core()
    reference = ReferenceCore(core.params, env.layout)
    rng = np.random.default_rng(3)
    steps = kills = completions = 0
    terminated = False
    while True:
        np.testing.assert_array_equal(obs, reference.observation())
        assert (info["time"], info["n_jobs"], info["killed"], info["n_outside"]) == (
            reference.time, reference.n_jobs, reference.killed, reference.n_outside,
        )  # fmt: skip
        np.testing.assert_array_equal(info["action_mask"], env._masks[reference.exceeded + 1])
        assert terminated == reference.done
        assert_same_view(env.state, reference.state)
        if steps % 25 == 0 or terminated:
            assert_same_sim(env.sim, reference.sim)
        if terminated:
            break
        assert env.pending_job == reference.pending_view()
        destination, limit = decide(rng, env, central_bias)
        obs, reward, terminated, _, info = env.step(env.encode_action(destination, limit))
        outcome = reference.step(destination, limit)
        assert reward == -outcome.accrued
        assert info["completed"] == outcome.completed  # records: times, hosts, wasted work, queueing
        steps, kills, completions = steps + 1, kills + outcome.killed, completions + len(outcome.completed)
    metrics, expected = info["episode_metrics"], reference.metrics()
    assert metrics.keys() == expected.keys()
    for name, value in expected.items():
        assert metrics[name] == value or (math.isnan(value) and math.isnan(metrics[name])), name
    assert completions == core.params.n_jobs
    assert kills > 0 or case == "one-host-exponential"


def test_a_rebuilt_simulator_continues_like_the_env() -> None:
    """``env.sim`` is a full ``DispatchSim``: advanced on its own, it follows the env exactly."""
    env = build("slowdown-3hosts")
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):
        env.step(env.encode_action(*decide(rng, env, 0.3)))
    sim = env.sim
    for _ in range(60):
        destination, limit = decide(rng, env, 0.3)
        _, reward, *_, info = env.step(env.encode_action(destination, limit))
        sim.dispatch(destination, limit)
        outcome = sim.advance()
        assert reward == -outcome.accrued and info["completed"] == outcome.completed
    assert_same_sim(env.sim, sim)


@pytest.mark.filterwarnings("ignore:load=1.5 >= 1")
def test_the_job_pool_grows_past_its_first_capacity() -> None:
    env = DispatchEnv(n_arrivals=300, load=1.5, objective="response_time", time_limits=[1e3])
    env.reset(seed=0)
    reference = ReferenceCore(env._require_core().params, env.layout)
    most = 0
    for _ in range(300):  # everything to host 0: the queue outgrows the 64 first slots
        obs, reward, *_, info = env.step(env.encode_action(0, 1))
        outcome = reference.step(0, 1)
        np.testing.assert_array_equal(obs, reference.observation())
        assert reward == -outcome.accrued and info["completed"] == outcome.completed
        most = max(most, info["n_jobs"])
    assert most > 64
