"""The env's compiled core equals the pure simulator step by step (docs/architecture.md:
"Simulator, env, baseline, fast path").

``Reference`` is the env's logic written on the specification: ``sim.advance``, the numpy packings
of ``packing.py``, a stable argsort for the window and the observation table of the env's
docstring in numpy. The env (``FastCore`` inside) and the reference take the same random valid
actions; observations, rewards, records, busy servers, times and states must agree.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from schedenv.multiserver import kernel
from schedenv.multiserver.fast import FastCore
from schedenv.multiserver.packing import pack
from schedenv.multiserver.sim import MultiserverParams, MultiserverState, StepOutcome, advance, initial_state, is_done
from schedenv.workloads import Exponential, Pareto

ENV_ID = "schedenv/MultiserverJob-v0"


class Reference:
    """Window, observation, service set and transition of the env, on the pure simulator."""

    def __init__(self, params: MultiserverParams, max_jobs: int, scale: float, size_known: bool, packing: str) -> None:
        self.params, self.max_jobs, self.scale, self.size_known, self.packing = (
            params, max_jobs, scale, size_known, packing,
        )  # fmt: skip
        self.state: MultiserverState = initial_state(params)
        self._open()

    def _open(self) -> None:
        state = self.state
        if self.size_known:
            order = np.argsort(state.remaining_duration * state.server_need, kind="stable")
        else:
            order = np.arange(state.n_jobs)
        self.window = order[: self.max_jobs]
        self.obs = self.observation(self.params.n_servers)

    def observation(self, free: int) -> np.ndarray:
        """The table of the env's docstring, in numpy."""
        state, k, scale, w = self.state, self.params.n_servers, self.scale, self.window
        slots = np.zeros((self.max_jobs, 7))
        need, remaining, duration = state.server_need[w], state.remaining_duration[w], state.duration[w]
        slots[: w.size, 0] = 1.0
        slots[: w.size, 1] = need / k
        if self.size_known:
            slots[: w.size, 2] = np.log1p(need / (k * scale) * remaining)
        slots[: w.size, 3] = np.log1p(need / (k * scale) * (duration - remaining))
        slots[: w.size, 4] = np.log1p((state.time - state.arrival[w]) / scale)
        slots[: w.size, 6] = state.in_service[w]
        outside = np.ones(state.n_jobs, dtype=bool)
        outside[w] = False
        n_out = int(outside.sum())
        summary = [free / k, np.log1p(state.n_jobs), 0.0, 0.0, 0.0]
        if n_out:
            summary[2] = np.log1p(n_out)
            summary[3] = np.log1p(state.server_need[outside].sum() / k)
            if self.size_known:
                work = (state.server_need[outside] * state.remaining_duration[outside]).sum()
                summary[4] = np.log1p(work / (k * scale))
        return np.concatenate([slots.ravel(), summary]).astype(np.float32)

    def serve_scores(self, scores: np.ndarray) -> StepOutcome:
        occupied = scores[: self.window.size]
        slots = np.flatnonzero(occupied >= 0.0)
        if slots.size == 0:
            slots = np.arange(self.window.size)
        ordered = self.window[slots[np.argsort(-occupied[slots], kind="stable")]]
        chosen = ordered[pack(self.packing, self.state.server_need[ordered], self.params.n_servers)]
        return self._advance(chosen)

    def serve_slots(self, slots: list[int]) -> StepOutcome:
        return self._advance(self.window[slots])

    def _advance(self, positions: np.ndarray) -> StepOutcome:
        serve = np.zeros(self.state.n_jobs, dtype=bool)
        serve[positions] = True
        self.state, outcome = advance(self.params, self.state, serve)
        self._open()
        return outcome


def assert_same_state(env: Any, reference: Reference) -> None:
    ours, theirs = env.state, reference.state
    for name in ("job_id", "arrival", "server_need", "duration", "remaining_duration", "in_service"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name), err_msg=name)
    assert (ours.time, ours.next_arrival, ours.n_completed) == (theirs.time, theirs.next_arrival, theirs.n_completed)
    assert ours.busy_server_time == theirs.busy_server_time
    np.testing.assert_array_equal(env.window, reference.window)


def assert_same_outcome(info: dict, reward: float, outcome: StepOutcome) -> None:
    assert reward == -outcome.accrued_objective
    assert info["completed"] == outcome.completed  # dataclass equality: every field exactly
    assert info["busy_servers"] == outcome.busy_servers
    assert info["elapsed"] == outcome.elapsed


CASES = [
    {},
    {"n_arrivals": 300, "load": 0.95, "max_jobs": 6},
    {"n_arrivals": 200, "packing": "firstfit", "size_known": False, "max_jobs": 10},
    {"n_arrivals": 200, "packing": "greedy", "size_dist": Pareto(1.5), "load": 0.8},
    {"n_arrivals": 200, "n_servers": 7, "server_needs": (1, 2, 3, 5), "duration_dist": Exponential(1.0)},
    {"jobs": [(4, 1.0), (8, 2.0), (4, 0.5), (1, 0.5), (2, 0.25), (1, 1.0)], "max_jobs": 3},
    {"jobs": [(0.0, 2, 1.0), (0.0, 2, 1.0), (1.0, 4, 1.0), (5.0, 8, 0.5), (5.0, 1, 0.5)], "packing": "greedy"},
    # Windows and ServerFilling prefixes longer than kernel.INSERTION_LIMIT.
    {"n_arrivals": 300, "n_servers": 64, "server_needs": (1, 2, 64), "max_jobs": 40, "load": 0.97},
]


def make(mode: str, kwargs: dict) -> tuple[gym.Env, Any, Reference]:
    env = gym.make(ENV_ID, action_mode=mode, **kwargs)
    obs, _ = env.reset(seed=5)
    inner = env.unwrapped
    reference = Reference(inner.params, inner.max_jobs, inner.scale, inner.size_known, inner.packing)
    np.testing.assert_allclose(obs, reference.obs, rtol=1e-6)
    return env, inner, reference


@pytest.mark.filterwarnings("ignore:max_jobs=")  # the small windows are deliberate
@pytest.mark.parametrize("kwargs", CASES)
def test_priority_mode_matches_the_pure_simulator(kwargs: dict) -> None:
    env, inner, reference = make("priority", kwargs)
    rng = np.random.default_rng(1)
    finished = 0
    while True:
        # Scores on a coarse grid: ties, exact zeros and all-negative vectors all occur.
        scores = np.round(rng.uniform(-1.0, 1.0, inner.max_jobs) * rng.integers(1, 4), 1).clip(-1, 1)
        if rng.random() < 0.1:
            scores = -np.abs(scores).clip(0.05, 1.0)
        scores = scores.astype(np.float32)
        obs, reward, terminated, _, info = env.step(scores)
        outcome = reference.serve_scores(scores.astype(np.float64))
        assert_same_outcome(info, reward, outcome)
        np.testing.assert_allclose(obs, reference.obs, rtol=1e-6)
        assert terminated == is_done(reference.params, reference.state)
        assert info["n_outside"] == reference.state.n_jobs - reference.window.size
        assert_same_state(inner, reference)
        finished += len(info["completed"])
        if terminated:
            break
    assert finished == len(inner.params.arrival_times)


@pytest.mark.filterwarnings("ignore:max_jobs=")  # the small windows are deliberate
@pytest.mark.parametrize("kwargs", CASES)
def test_select_mode_matches_the_pure_simulator(kwargs: dict) -> None:
    env, inner, reference = make("select", kwargs)
    rng = np.random.default_rng(2)
    k = inner.n_servers
    chosen: list[int] = []
    while True:
        mask = inner.action_masks()
        legal = np.flatnonzero(mask)
        # Commit with probability 0.3 once allowed, else a random legal slot.
        commit = mask[-1] and rng.random() < 0.3
        action = inner.commit_action if commit else int(rng.choice(legal[legal < inner.max_jobs]))
        obs, reward, terminated, _, info = env.step(action)
        if "busy_servers" not in info:
            chosen.append(action)
            assert reward == 0.0 and info["completed"] == []
            selected = reference.observation(k - int(reference.state.server_need[reference.window[chosen]].sum()))
            selected[[7 * slot + 5 for slot in chosen]] = 1.0
            np.testing.assert_allclose(obs, selected, rtol=1e-6)
            continue
        if not commit:
            chosen.append(action)
        outcome = reference.serve_slots(chosen)
        chosen = []
        assert_same_outcome(info, reward, outcome)
        np.testing.assert_allclose(obs, reference.obs, rtol=1e-6)
        assert terminated == is_done(reference.params, reference.state)
        assert_same_state(inner, reference)
        if terminated:
            break


def test_fast_core_refuses_bad_service_sets_without_changing_state() -> None:
    env = gym.make(ENV_ID, jobs=[(8, 1.0), (8, 2.0)])
    env.reset(seed=0)
    inner = env.unwrapped
    core = FastCore(inner.params, inner.max_jobs, inner.scale, True, "serverfilling", np.zeros(7 * 16 + 5, np.float32))
    before, obs = core.state, core.obs.copy()
    with pytest.raises(ValueError, match="needs 16 servers"):
        core.step(None, np.array([True, True]))
    scores = np.zeros(inner.max_jobs)
    scores[1] = np.nan
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        core.step(scores)
    assert core.state is before and core.time == 0.0
    np.testing.assert_array_equal(core.obs, obs)
    np.testing.assert_array_equal(core.state.remaining_duration, [1.0, 2.0])


@pytest.mark.parametrize("n", [0, 1, 5, kernel.INSERTION_LIMIT, kernel.INSERTION_LIMIT + 7, 120])
def test_smallest_first_is_a_prefix_of_the_stable_argsort(n: int) -> None:
    rng = np.random.default_rng(n)
    keys = np.round(rng.exponential(size=n + 3), 1)  # ties on purpose; entries beyond n are ignored
    for count in sorted({0, min(n, 1), n // 2, n}):
        order = np.full(count + 2, -1, dtype=np.int64)
        kernel.smallest_first(keys, n, count, order)
        np.testing.assert_array_equal(order[:count], np.argsort(keys[:n], kind="mergesort")[:count])
        assert (order[count:] == -1).all()
