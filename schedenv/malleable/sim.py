"""Pure event core for malleable jobs (Berg, Vesilo, Harchol-Balter, heSRPT, §2).

N identical, continuously divisible servers; job i has size x_i and runs at rate s(theta_i N)
while it holds the fraction theta_i of the servers. The state only changes at arrivals and
departures, and between them an optimal allocation is constant (the paper's Theorem 1), so the
simulator jumps from one decision epoch to the next:

    state, outcome = advance(params, state, theta)

``theta`` holds one fraction per job present (aligned with the state's arrays, summing to at
most 1). ``advance`` runs the allocation until the next arrival or departure and returns a new
state; it never mutates its inputs. The objective accrues as the integral of the sum of the jobs'
weights (1 for flow time, s(N)/x_i for slowdown), so its total over an episode is exactly the
total flow time or total slowdown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from schedenv.records import JobRecord
from schedenv.workloads import Power, Speedup

COMPLETION_TOLERANCE = 1e-12
"""A job whose remaining size falls below this fraction of its size completes now (ties)."""

MIN_ALLOCATION = 2.2250738585072014e-308
"""Smallest total allocation used as given: float64's smallest normal number (``sys.float_info.min``).
A total below it (subnormal weights) counts as all-zero, i.e. EQUI: with ``allocation="fractions"``
a subnormal share would make a job's finish time x / s(theta N) overflow to inf."""


@dataclass(frozen=True)
class MalleableParams:
    """Everything fixed for an episode: servers, speedup, objective and the job stream."""

    n_servers: float
    speedup: Speedup
    objective: str
    """"slowdown" (weights s(N)/x_i) or "flow_time" (weights 1)."""
    arrival_times: np.ndarray
    """Nondecreasing arrival times of every job of the episode (all 0 offline)."""
    sizes: np.ndarray
    """Sizes x_i, aligned with ``arrival_times``."""
    speedup_at_n: float = field(init=False)
    """s(N), the rate of a job holding every server."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "speedup_at_n", float(self.speedup(self.n_servers)))

    def weight(self, sizes: np.ndarray) -> np.ndarray:
        """The objective's per-job weights (heSRPT Corollary 1)."""
        if self.objective == "slowdown":
            return self.speedup_at_n / sizes
        return np.ones_like(sizes)

    def rates(self, theta: np.ndarray) -> np.ndarray:
        """Service rates s(theta_i N) of the jobs holding the fractions ``theta``."""
        if isinstance(self.speedup, Power):
            return np.power(theta * self.n_servers, self.speedup.p)
        return np.asarray(self.speedup(theta * self.n_servers), dtype=np.float64)


@dataclass(frozen=True)
class MalleableState:
    """The jobs present at ``time`` (read-only arrays, in arrival order) and the stream position."""

    time: float
    job_id: np.ndarray
    arrival: np.ndarray
    size: np.ndarray
    remaining: np.ndarray
    weight: np.ndarray
    next_arrival: int
    """Index in the stream of the next job to arrive (== number arrived so far)."""
    n_completed: int
    work_done: float
    """Total work (size units) served so far, completed jobs and partial progress included."""

    @property
    def n_jobs(self) -> int:
        """Jobs in the system."""
        return int(self.job_id.size)


@dataclass(frozen=True)
class StepOutcome:
    """What happened during one ``advance``."""

    elapsed: float
    """Time from this epoch to the next (idle time of an emptied system included)."""
    accrued_objective: float
    completed: list[JobRecord]
    work_done: float


class _Jobs(NamedTuple):
    """The per-job arrays of a state, in arrival order."""

    job_id: np.ndarray
    arrival: np.ndarray
    size: np.ndarray
    remaining: np.ndarray
    weight: np.ndarray


def _admit(params: MalleableParams, jobs: _Jobs, start: int, time: float) -> tuple[_Jobs, int]:
    """Append the jobs of the stream arriving at or before ``time`` from index ``start`` on."""
    stop = int(np.searchsorted(params.arrival_times, time, side="right"))
    if stop == start:
        return jobs, start
    new = np.arange(start, stop)
    sizes = params.sizes[new]
    added = _Jobs(new, params.arrival_times[new], sizes, sizes, params.weight(sizes))
    return _Jobs(*(np.concatenate([old, extra]) for old, extra in zip(jobs, added, strict=True))), stop


def _state(time: float, jobs: _Jobs, next_arrival: int, n_completed: int, work_done: float) -> MalleableState:
    for array in jobs:
        array.flags.writeable = False
    return MalleableState(time, *jobs, next_arrival=next_arrival, n_completed=n_completed, work_done=work_done)


def initial_state(params: MalleableParams) -> MalleableState:
    """The state at the first arrival instant (t = 0 offline; the first arrival online)."""
    empty = np.empty(0)
    time = float(params.arrival_times[0]) if params.arrival_times.size else 0.0
    jobs, next_arrival = _admit(params, _Jobs(np.empty(0, dtype=np.int64), empty, empty, empty, empty), 0, time)
    return _state(time, jobs, next_arrival, 0, 0.0)


def is_done(params: MalleableParams, state: MalleableState) -> bool:
    """True when every job of the stream has arrived and completed."""
    return state.n_jobs == 0 and state.next_arrival >= params.arrival_times.size


def advance(params: MalleableParams, state: MalleableState, theta: np.ndarray) -> tuple[MalleableState, StepOutcome]:
    """Hold the allocation ``theta`` until the next arrival or departure.

    ``theta`` must be nonnegative with sum <= 1 (the env guarantees it). If no job gets servers
    and nothing is due to arrive, the system would idle forever: that is a ``ValueError``.
    """
    rates = params.rates(theta)
    with np.errstate(divide="ignore", over="ignore"):  # a vanishing rate means "never finishes"
        finish = np.where(rates > 0, state.remaining / rates, np.inf)
    first = int(np.argmin(finish)) if finish.size else -1
    until_departure = float(finish[first]) if first >= 0 else math.inf
    pending = state.next_arrival < params.arrival_times.size
    until_arrival = float(params.arrival_times[state.next_arrival]) - state.time if pending else math.inf
    elapsed = min(until_departure, until_arrival)
    if math.isinf(elapsed):
        raise ValueError("the allocation gives no job any servers and no arrival is pending: the system would idle")
    time = state.time + elapsed
    accrued = float(state.weight.sum()) * elapsed
    served = rates * elapsed
    remaining = state.remaining - served
    done = remaining <= COMPLETION_TOLERANCE * state.size
    if until_departure <= until_arrival:
        done[first] = True
    remaining[done] = 0.0
    work = float(np.minimum(served, state.remaining).sum())
    completed = [
        JobRecord(int(j), float(a), float(x), time, (time - float(a)) * params.speedup_at_n / float(x))
        for j, a, x in zip(state.job_id[done], state.arrival[done], state.size[done], strict=True)
    ]
    keep = ~done
    jobs = _Jobs(state.job_id[keep], state.arrival[keep], state.size[keep], remaining[keep], state.weight[keep])
    jobs, next_arrival = _admit(params, jobs, state.next_arrival, time)
    if jobs.job_id.size == 0 and next_arrival < params.arrival_times.size:
        # An empty system has no decision to make: idle until the next arrival (docs/envs/index.md).
        time = float(params.arrival_times[next_arrival])
        jobs, next_arrival = _admit(params, jobs, next_arrival, time)
    new_state = _state(time, jobs, next_arrival, state.n_completed + len(completed), state.work_done + work)
    return new_state, StepOutcome(time - state.time, accrued, completed, work)
