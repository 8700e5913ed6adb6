"""Run a multiserver policy on the simulator without the Gymnasium shell (docs/baselines/index.md).

The env's workload is drawn by ``env.reset(seed)`` exactly as in ``evaluate``; the policy then
chooses the service set over *all* jobs present (no window). Policies that are an order plus a
packing (``KernelSpec``) run compiled: a numba loop of the policy's rule
(``baselines.kernels.multiserver.decide``) and the family's one transition
(``schedenv.multiserver.kernel.advance``, the env's own) on the family's state layout
(``kernel.MultiserverArrays``). The others (DivisorFilling) drive the pure core ``sim.advance`` from
Python. When no job ever falls outside the env's window, both give the same completion times as
the Gymnasium loop on the same seed (tests check it). A run returns a ``MultiserverFastRun``, the
``FastRun`` of the other families' fast paths with the multiserver totals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from numba import njit

from baselines.kernels.multiserver import ORDERS, KernelSpec, decide
from schedenv.deprecation import warn_deprecated
from schedenv.fastpath.result import FastRun
from schedenv.multiserver import kernel
from schedenv.multiserver.kernel import EVENT, N_DONE, N_JOBS, advance, borrowed, ended
from schedenv.multiserver.metrics import metrics_of_completions
from schedenv.multiserver.sim import MultiserverJobRecord, MultiserverParams, MultiserverState, is_done
from schedenv.multiserver.sim import advance as advance_reference


class ServiceSetPolicy(Protocol):
    """A policy that can pick a service set from the full state (the multiserver baselines)."""

    name: str

    def reset(self, env: gym.Env) -> None: ...

    def service_set(self, state: MultiserverState, candidates: np.ndarray | None = None) -> np.ndarray: ...

    def kernel_spec(self) -> KernelSpec | None: ...


@dataclass(repr=False, kw_only=True)
class MultiserverFastRun(FastRun):
    """One multiserver fast-path episode: a ``FastRun`` (completion times always kept, ``n_steps`` the
    decision epochs) with the multiserver totals and records.

    This path serves every job present, outside the env's window, so its numbers are the paper's
    policy rather than ``evaluate``'s (docs/families.md); ``episode_return`` is minus the total flow
    time, the return of the env's reward were its decisions these.
    """

    params: MultiserverParams
    total_flow_time: float
    busy_server_time: float
    stopped_early: bool = False
    """True when the run was cut because more than ``max_in_system`` jobs were present (a sign of
    instability); unfinished jobs then have completion time inf and the means are inf."""

    @property
    def response_times(self) -> np.ndarray:
        """T_j = completion - arrival, in stream (job id) order."""
        assert self.completion is not None
        return self.completion - self.params.arrival_times

    def records(self) -> list[MultiserverJobRecord]:  # type: ignore[override]
        """One record per job, in job-id order (built on demand: long runs rarely need them)."""
        params, k = self.params, self.params.n_servers
        assert self.completion is not None
        columns = (params.arrival_times, params.server_needs, params.durations, self.completion)
        return [
            MultiserverJobRecord(j, a, n * d / k, c, (c - a) / d, n, d)
            for j, (a, n, d, c) in enumerate(zip(*(column.tolist() for column in columns), strict=True))
        ]


def __getattr__(name: str) -> Any:
    if name == "FastResult":
        warn_deprecated("schedenv.fastpath.multiserver.FastResult", "MultiserverFastRun (a FastRun)")
        return MultiserverFastRun
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@njit(cache=True)
def _episode(
    order, packing, class_of, table, rank_ages, rank_values, counts, cap, completion,
    jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k,
):  # fmt: skip
    """Decide and advance until the episode ends; returns (stopped early, decision epochs).

    ``_loop`` on ``kernel.borrowed`` views of the arrays (they outlive it)."""
    b = borrowed
    return _loop(
        order, packing, b(class_of), b(table), b(rank_ages), b(rank_values), b(counts), cap, b(completion), b(jobs_i),
        b(jobs_f), b(in_service), b(ints), b(floats), b(served), b(done), b(times), b(needs), b(durations), b(keys),
        b(work), k,
    )  # fmt: skip


@njit(cache=True, inline="always")
def _loop(
    order, packing, class_of, table, rank_ages, rank_values, counts, cap, completion,
    jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k,
):  # fmt: skip
    """``_episode``'s loop."""
    steps = 0
    ordered, scratch = work[: times.size], work[work.size - k :]  # decide's scratch space
    while not ended(ints, times):
        if 0 < cap < ints[N_JOBS]:
            return True, steps
        n_served = decide(
            order, packing, class_of, table, rank_ages, rank_values, counts, jobs_i, jobs_f, ints, served, keys,
            ordered, scratch, k,
        )  # fmt: skip
        advance(
            n_served, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k
        )
        steps += 1
        for d in range(ints[N_DONE]):
            completion[done[d]] = floats[EVENT]
    return False, steps


def _run_compiled(
    params: MultiserverParams, spec: KernelSpec, cap: int
) -> tuple[np.ndarray, float, float, bool, int, int]:
    """Completion times, total flow time, busy server-time, stopped early (more than ``cap`` jobs
    present), decision epochs and events of the episode in the compiled loop."""
    n, k = params.arrival_times.size, params.n_servers
    state = kernel.MultiserverArrays.zeros(1, n, k).views(0)
    state.times[:], state.needs[:], state.durations[:] = params.arrival_times, params.server_needs, params.durations
    kernel.start(*state)
    class_of = np.zeros(max(int(params.server_needs.max()), int(spec.need_values.max()), k) + 1, dtype=np.int64)
    class_of[spec.need_values] = np.arange(spec.need_values.size)
    counts = np.zeros(spec.need_values.size, dtype=np.int64)
    completion = np.full(n, np.inf)
    stopped, steps = _episode(
        ORDERS[spec.order], kernel.PACKINGS[spec.packing], class_of, spec.table, spec.rank_ages, spec.rank_values,
        counts, cap, completion, *state, k,
    )  # fmt: skip
    ints, floats = state.ints, state.floats
    events = int(ints[kernel.NEXT_ARRIVAL] + ints[kernel.N_COMPLETED])
    return completion, float(floats[kernel.TOTAL_FLOW]), float(floats[kernel.BUSY_TIME]), bool(stopped), steps, events


def _run_reference(inner: Any, policy: ServiceSetPolicy) -> tuple[np.ndarray, float, float, bool, int, int]:
    """``_run_compiled``'s numbers from the pure core, the policy choosing in Python."""
    params: MultiserverParams = inner.params
    state = inner.state
    completion = np.empty(params.arrival_times.size)
    total_flow, steps = 0.0, 0
    while not is_done(params, state):
        serve = np.zeros(state.n_jobs, dtype=bool)
        serve[policy.service_set(state)] = True
        state, outcome = advance_reference(params, state, serve)
        for record in outcome.completed:
            completion[record.job_id] = record.completion
        total_flow += outcome.accrued_objective
        steps += 1
    return completion, total_flow, state.busy_server_time, False, steps, 2 * completion.size


def _metrics(params: MultiserverParams, completion: np.ndarray, total_flow: float, busy: float, stopped: bool) -> dict:
    """The env's ``episode_metrics`` keys (overflow_fraction aside: there is no window)."""
    if stopped:
        names = ("mean_response_time", "mean_slowdown", "mean_waiting_time", "mean_number_in_system")
        return {"n_completed": float(np.isfinite(completion).sum())} | {name: np.inf for name in names}
    response = completion - params.arrival_times
    start, end = float(params.arrival_times[0]), float(completion.max())
    slowdown = response / params.durations
    return metrics_of_completions(response, slowdown, params.durations, params.n_servers, start, end, busy, total_flow)


def run_fast(
    env: gym.Env, policy: ServiceSetPolicy, seed: int, *, compiled: bool = True, max_in_system: int = 0
) -> MultiserverFastRun:
    """One episode of ``policy`` on ``env``'s workload for ``seed``, straight on the simulator.

    ``compiled=False`` forces the Python loop over ``sim.advance`` even when a kernel exists.
    ``max_in_system`` > 0 stops the compiled loop once more jobs than that are present (unstable
    policies otherwise make long runs quadratic); the Python loop ignores it.
    """
    started = time.perf_counter()
    inner: Any = env.unwrapped
    inner.reset(seed=int(seed))
    policy.reset(env)
    params: MultiserverParams = inner.params
    spec = policy.kernel_spec() if compiled else None
    if spec is not None:
        completion, total_flow, busy, stopped, steps, events = _run_compiled(params, spec, max_in_system)
    else:
        completion, total_flow, busy, stopped, steps, events = _run_reference(inner, policy)
    return MultiserverFastRun(
        int(seed), _metrics(params, completion, total_flow, busy, stopped), -total_flow, steps, events,
        time.perf_counter() - started, params.arrival_times, params.sizes, completion, params=params,
        total_flow_time=total_flow, busy_server_time=busy, stopped_early=stopped,
    )  # fmt: skip
