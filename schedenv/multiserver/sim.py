"""Pure event core of the multiserver-job queue (Grosof, Scully, Harchol-Balter, Scheller-Wolf,
"Optimal Scheduling in the Multiserver-job Model under Heavy Traffic", POMACS 6(3) 2022, §3.1).

k servers; job j needs k_j servers at once for a duration d_j; its size is s_j = k_j d_j / k and
its service rate k_j / k (the rate at which its remaining size falls while it is served).
Preemption loses no work. The state only changes at arrivals and completions, so the simulator
jumps from one decision epoch to the next:

    state, outcome = advance(params, state, serve)

``serve`` is a boolean mask over the jobs present (aligned with the state's arrays) whose total
server need is at most k. ``advance`` holds that service set until the next arrival or
completion and returns a new state; it never mutates its inputs. The objective is the flow time,
accrued as (jobs in system) x (elapsed time), so its total over an episode is exactly the sum of
the jobs' response times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from schedenv.records import JobRecord
from schedenv.validation import read_only

COMPLETION_TOLERANCE = 1e-12
"""A served job whose remaining duration falls below this fraction of its duration completes now."""


@dataclass(frozen=True, slots=True)
class MultiserverJobRecord(JobRecord):
    """A finished multiserver job. ``size`` is s = k_j d_j / k; ``slowdown`` is T / d_j
    (response time over the time the job needs in service, so 1 means it never waited)."""

    server_need: int
    duration: float


@dataclass(frozen=True)
class MultiserverParams:
    """Everything fixed for an episode: the servers and the job stream (arrival order)."""

    n_servers: int
    arrival_times: np.ndarray
    """Nondecreasing arrival times of every job of the episode (all 0 for a job set at t = 0)."""
    server_needs: np.ndarray
    """Server need k_j of every job (int64, 1 <= k_j <= k)."""
    durations: np.ndarray
    """Duration d_j of every job (time in service to complete)."""

    @property
    def sizes(self) -> np.ndarray:
        """Sizes s_j = k_j d_j / k (§3.1)."""
        return self.server_needs * self.durations / self.n_servers


@dataclass(frozen=True)
class MultiserverState:
    """The jobs present at ``time`` (read-only arrays in arrival order) and the stream position."""

    time: float
    job_id: np.ndarray
    """Index of each job present in the stream (so arrival order is job_id order)."""
    arrival: np.ndarray
    server_need: np.ndarray
    duration: np.ndarray
    remaining_duration: np.ndarray
    in_service: np.ndarray
    """Which jobs the last committed decision served (all False at the first epoch)."""
    next_arrival: int
    """Index in the stream of the next job to arrive (== number arrived so far)."""
    n_completed: int
    busy_server_time: float
    """Integral of the number of busy servers over time so far (server-time units)."""
    n_servers: int

    @property
    def n_jobs(self) -> int:
        """Jobs in the system."""
        return int(self.job_id.size)

    @property
    def size(self) -> np.ndarray:
        """Sizes s_j = k_j d_j / k of the jobs present."""
        return self.server_need * self.duration / self.n_servers

    @property
    def remaining_size(self) -> np.ndarray:
        """Remaining sizes r_j = k_j (remaining duration) / k (§3.1)."""
        return self.server_need * self.remaining_duration / self.n_servers

    @property
    def age(self) -> np.ndarray:
        """Ages a_j = s_j - r_j: the size already served (§3.1)."""
        return self.server_need * (self.duration - self.remaining_duration) / self.n_servers


@dataclass(frozen=True)
class StepOutcome:
    """What happened during one ``advance``."""

    elapsed: float
    """Time from this epoch to the next (idle time of an emptied system included)."""
    accrued_objective: float
    """Flow time accrued: the integral of the number of jobs in system over ``elapsed``."""
    completed: list[MultiserverJobRecord]
    busy_servers: int
    """Servers in use during the service interval (0 while an emptied system waits)."""
    work_done: float
    """Size units served: busy servers x service interval / k."""


_Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _admit(params: MultiserverParams, arrays: _Arrays, start: int, time: float) -> tuple[_Arrays, int]:
    """Append the jobs of the stream arriving at or before ``time`` from index ``start`` on."""
    stop = int(np.searchsorted(params.arrival_times, time, side="right"))
    if stop == start:
        return arrays, start
    new = np.arange(start, stop)
    job_id, arrival, need, duration, remaining, in_service = arrays
    durations = params.durations[start:stop]
    return (
        np.concatenate([job_id, new]),
        np.concatenate([arrival, params.arrival_times[start:stop]]),
        np.concatenate([need, params.server_needs[start:stop]]),
        np.concatenate([duration, durations]),
        np.concatenate([remaining, durations]),
        np.concatenate([in_service, np.zeros(new.size, dtype=bool)]),
    ), stop


def _new_state(
    time: float, arrays: _Arrays, next_arrival: int, n_completed: int, busy_server_time: float, n_servers: int
) -> MultiserverState:
    job_id, arrival, need, duration, remaining, in_service = (read_only(a) for a in arrays)
    return MultiserverState(
        time,
        job_id,
        arrival,
        need,
        duration,
        remaining,
        in_service,
        next_arrival,
        n_completed,
        busy_server_time,
        n_servers,
    )


def initial_state(params: MultiserverParams) -> MultiserverState:
    """The state at the first arrival instant (t = 0 for a job set; the first arrival online)."""
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    time = float(params.arrival_times[0])
    arrays, next_arrival = _admit(
        params, (empty_i, empty_f, empty_i, empty_f, empty_f, np.empty(0, dtype=bool)), 0, time
    )
    return _new_state(time, arrays, next_arrival, 0, 0.0, params.n_servers)


def is_done(params: MultiserverParams, state: MultiserverState) -> bool:
    """True when every job of the stream has arrived and completed."""
    return state.n_jobs == 0 and state.next_arrival >= params.arrival_times.size


def check_service_set(state: MultiserverState, serve: np.ndarray) -> int:
    """The servers ``serve`` uses, or ``ValueError`` if it is not a boolean mask over the jobs
    present whose needs fit in the k servers."""
    if not isinstance(serve, np.ndarray) or serve.dtype != bool or serve.shape != state.job_id.shape:
        shape = getattr(serve, "shape", None)
        raise ValueError(
            f"serve must be a boolean numpy mask of shape ({state.n_jobs},); got {type(serve).__name__} {shape}"
        )
    used = int(state.server_need @ serve)
    if used > state.n_servers:
        raise ValueError(f"the service set needs {used} servers; only n_servers={state.n_servers} exist")
    return used


def advance(
    params: MultiserverParams, state: MultiserverState, serve: np.ndarray
) -> tuple[MultiserverState, StepOutcome]:
    """Serve the jobs in ``serve`` until the next arrival or completion (§3.1 dynamics).

    ``serve`` must fit in the k servers (``check_service_set``). If it is empty and nothing is
    due to arrive, the system would idle forever: that is a ``ValueError``.
    """
    busy = check_service_set(state, serve)
    remaining = state.remaining_duration
    pending = state.next_arrival < params.arrival_times.size
    until_arrival = float(params.arrival_times[state.next_arrival]) - state.time if pending else math.inf
    until_completion = float(remaining[serve].min()) if busy else math.inf
    elapsed = min(until_completion, until_arrival)
    if math.isinf(elapsed):
        raise ValueError("the service set is empty and no arrival is pending: the system would idle forever")
    accrued = state.n_jobs * elapsed
    new_remaining = remaining - serve * elapsed
    departure = until_completion <= until_arrival
    if departure:
        done = serve & ((new_remaining <= COMPLETION_TOLERANCE * state.duration) | (remaining == until_completion))
        time = state.time + elapsed
    else:
        done = serve & (new_remaining <= COMPLETION_TOLERANCE * state.duration)
        time = float(params.arrival_times[state.next_arrival])
    completed = _records(state, done, time) if done.any() else []
    arrays: _Arrays
    if completed:
        keep = ~done
        arrays = (
            state.job_id[keep],
            state.arrival[keep],
            state.server_need[keep],
            state.duration[keep],
            new_remaining[keep],
            serve[keep],
        )
    else:  # an arrival: the read-only arrays carry over unchanged
        arrays = (state.job_id, state.arrival, state.server_need, state.duration, new_remaining, serve.copy())
    arrays, next_arrival = _admit(params, arrays, state.next_arrival, time)
    if arrays[0].size == 0 and next_arrival < params.arrival_times.size:
        # An empty system has no decision to make: idle until the next arrival (docs/envs/index.md).
        time = float(params.arrival_times[next_arrival])
        arrays, next_arrival = _admit(params, arrays, next_arrival, time)
    new_state = _new_state(
        time,
        arrays,
        next_arrival,
        state.n_completed + len(completed),
        state.busy_server_time + busy * elapsed,
        state.n_servers,
    )
    work = busy * elapsed / state.n_servers
    return new_state, StepOutcome(time - state.time, accrued, completed, busy, work)


def _records(state: MultiserverState, done: np.ndarray, time: float) -> list[MultiserverJobRecord]:
    k = state.n_servers
    return [
        MultiserverJobRecord(
            int(j), float(a), float(n) * float(d) / k, time, (time - float(a)) / float(d), int(n), float(d)
        )
        for j, a, n, d in zip(
            state.job_id[done].tolist(),
            state.arrival[done].tolist(),
            state.server_need[done].tolist(),
            state.duration[done].tolist(),
            strict=True,
        )
    ]
