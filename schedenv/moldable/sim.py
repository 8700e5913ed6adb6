"""Pure event core for moldable jobs (Wu et al., "HRF: a resource allocation scheme for moldable
jobs", CF'15; docs/envs/moldable.md).

m identical processors. A job waits in one FCFS-ordered queue until it is started on some count n
of processors, which it then holds for its whole runtime T(n) (no preemption, no change of n).
Decision epochs are the instants at which jobs wait and one of the first ``max_jobs`` queued jobs
(the window) fits in the free processors. A decision is either

- ``start(slot, procs)``: start the queued job in window slot ``slot`` on ``procs`` processors.
  Time does not move: several jobs may start at the same instant, so the simulator asks again
  at once unless nothing in the window fits any more (then it advances as after a wait); or
- ``wait()``: advance to the next arrival or completion, then on to the next decision epoch.
  Waiting is refused when nothing runs and no job is still to arrive (time could not move).

Jobs outside the window cannot be started until earlier jobs leave; the window plays the role
of a real scheduler's backfilling depth. The objective is the turnaround time: it accrues as the
number of jobs in the system times the elapsed time, so its episode total is the sum of the jobs'
turnaround times. ``start`` and ``wait`` validate first and change nothing when they refuse; on
success they update the :class:`MoldableState` in place (copying it per step would cost more than
the rest of the step) and return an :class:`Outcome`. Randomness: none (the job set is drawn
before the episode from the env's generator).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from schedenv.moldable.workload import MoldableJobSet
from schedenv.records import JobRecord

ARRIVAL_BLOCK = 256
"""Arrivals whose runtime rows are computed together (bounded memory for long traces)."""
N_QUEUE_FEATURES = 5
"""Static per-queued-job features: size, fastest runtime, smallest count of fastest runtime, n_min, requested."""


@dataclass(frozen=True, slots=True)
class MoldableJobRecord(JobRecord):
    """A finished moldable job: ``arrival`` is its submit time, ``size`` its work (see
    :class:`MoldableJobSet`), ``slowdown`` = turnaround / runtime (the HRF paper's §6.1.4 slowdown)."""

    start: float
    procs: int

    @property
    def waiting_time(self) -> float:
        """start - submit."""
        return self.start - self.arrival

    @property
    def runtime(self) -> float:
        """completion - start = T(procs)."""
        return self.completion - self.start


@dataclass
class Outcome:
    """What one decision led to: elapsed time, finished jobs and the turnaround time accrued."""

    elapsed: float = 0.0
    accrued_objective: float = 0.0
    completed: list[MoldableJobRecord] = field(default_factory=list)


@dataclass
class MoldableState:
    """The jobs present. Queue arrays are in arrival (FCFS) order and valid up to ``n_queued``;
    running arrays are unordered and valid up to ``n_running``."""

    time: float
    n_procs: int
    free: int
    next_arrival: int
    """Position in the arrival order of the next job still to arrive."""
    n_queued: int
    queue_job: np.ndarray
    queue_submit: np.ndarray
    queue_runtime: np.ndarray
    """(capacity, m): T(n) of each queued job for n = 1..m (``inf`` where not allowed)."""
    queue_features: np.ndarray
    """(capacity, N_QUEUE_FEATURES) static features, see ``N_QUEUE_FEATURES``."""
    n_running: int
    running_job: np.ndarray
    running_start: np.ndarray
    running_end: np.ndarray
    running_procs: np.ndarray
    n_completed: int = 0
    total_objective: float = 0.0

    @property
    def n_jobs(self) -> int:
        """Jobs in the system (queued + running)."""
        return self.n_queued + self.n_running


class MoldableSim:
    """The event core for one episode's job set (see the module docstring)."""

    def __init__(self, jobs: MoldableJobSet, max_jobs: int) -> None:
        self.jobs = jobs
        self.max_jobs = max_jobs
        self.order = jobs.arrival_order()
        self.arrival_times = jobs.submit[self.order]
        m = jobs.n_procs
        capacity = max(16, min(jobs.n_jobs, 64))
        self.state = MoldableState(
            time=float(self.arrival_times[0]),
            n_procs=m,
            free=m,
            next_arrival=0,
            n_queued=0,
            queue_job=np.zeros(capacity, dtype=np.int64),
            queue_submit=np.zeros(capacity),
            queue_runtime=np.zeros((capacity, m)),
            queue_features=np.zeros((capacity, N_QUEUE_FEATURES)),
            n_running=0,
            running_job=np.zeros(m, dtype=np.int64),
            running_start=np.zeros(m),
            running_end=np.zeros(m),
            running_procs=np.zeros(m, dtype=np.int64),
        )
        self._first_fit = np.full(capacity, m + 1, dtype=np.int64)
        self._block_start = 0
        self._block_jobs = np.zeros(0, dtype=np.int64)
        self._block_rows = np.zeros((0, m))
        self._block_features = np.zeros((0, N_QUEUE_FEATURES))
        self._arrive_due(self.state.time)
        self._advance_to_decision(Outcome())

    # ----------------------------------------------------------------- queries
    @property
    def done(self) -> bool:
        """Every job has arrived and completed."""
        s = self.state
        return s.next_arrival == self.jobs.n_jobs and s.n_jobs == 0

    @property
    def window_size(self) -> int:
        return min(self.state.n_queued, self.max_jobs)

    def can_wait(self) -> bool:
        """Waiting moves time: something runs or a job is still to arrive."""
        return self.state.n_running > 0 or self.state.next_arrival < self.jobs.n_jobs

    def has_decision(self) -> bool:
        """Some window job fits in the free processors."""
        w = self.window_size
        return w > 0 and bool(self._first_fit[:w].min() <= self.state.free)

    def fits(self, slot: int, procs: int) -> bool:
        """Whether window slot ``slot`` may start on ``procs`` processors now."""
        s = self.state
        return 0 <= slot < self.window_size and 1 <= procs <= s.free and bool(s.queue_runtime[slot, procs - 1] < np.inf)

    # ----------------------------------------------------------------- decisions
    def start(self, slot: int, procs: int) -> Outcome:
        """Start window slot ``slot`` on ``procs`` processors; then advance if nothing else fits."""
        if not self.fits(slot, procs):
            raise ValueError(
                f"cannot start slot {slot} on {procs} processors: window holds {self.window_size} jobs, "
                f"{self.state.free} processors are free"
                + (
                    f", and the job's runtime on {procs} is {self.state.queue_runtime[slot, procs - 1]!r}"
                    if 0 <= slot < self.window_size and 1 <= procs <= self.state.n_procs
                    else ""
                )
            )
        s = self.state
        r = s.n_running
        s.running_job[r] = s.queue_job[slot]
        s.running_start[r] = s.time
        s.running_end[r] = s.time + s.queue_runtime[slot, procs - 1]
        s.running_procs[r] = procs
        s.n_running = r + 1
        s.free -= procs
        self._remove_queued(slot)
        return self._advance_to_decision(Outcome())

    def wait(self) -> Outcome:
        """Advance to the next arrival or completion, then to the next decision epoch."""
        if not self.can_wait():
            raise ValueError("cannot wait: nothing runs and no job is still to arrive, so time could not advance")
        outcome = Outcome()
        self._next_event(outcome)
        return self._advance_to_decision(outcome)

    # ----------------------------------------------------------------- internals
    def _advance_to_decision(self, outcome: Outcome) -> Outcome:
        while not self.has_decision() and not self.done:
            self._next_event(outcome)
        return outcome

    def _next_event(self, outcome: Outcome) -> None:
        s = self.state
        t = np.inf
        if s.n_running:
            t = float(s.running_end[: s.n_running].min())
        if s.next_arrival < self.jobs.n_jobs:
            t = min(t, float(self.arrival_times[s.next_arrival]))
        dt = t - s.time
        accrued = s.n_jobs * dt
        outcome.elapsed += dt
        outcome.accrued_objective += accrued
        s.total_objective += accrued
        s.time = t
        if s.n_running:
            self._complete_due(t, outcome)
        self._arrive_due(t)

    def _complete_due(self, t: float, outcome: Outcome) -> None:
        s = self.state
        n = s.n_running
        finished = s.running_end[:n] <= t
        jobs = self.jobs
        for index in np.flatnonzero(finished).tolist():
            job = int(s.running_job[index])
            start = float(s.running_start[index])
            end = float(s.running_end[index])
            submit = float(jobs.submit[job])
            procs = int(s.running_procs[index])
            record = MoldableJobRecord(
                job, submit, float(jobs.size[job]), end, (end - submit) / (end - start), start, procs
            )
            outcome.completed.append(record)
            s.free += procs
            s.n_completed += 1
        keep = ~finished
        k = n - int(finished.sum())
        for array in (s.running_job, s.running_start, s.running_end, s.running_procs):
            array[:k] = array[:n][keep]
        s.n_running = k

    def _arrive_due(self, t: float) -> None:
        s = self.state
        n_jobs = self.jobs.n_jobs
        while s.next_arrival < n_jobs and self.arrival_times[s.next_arrival] <= t:
            position = s.next_arrival - self._block_start
            if not 0 <= position < self._block_rows.shape[0]:
                self._load_block(s.next_arrival)
                position = 0
            s.next_arrival += 1
            self._ensure_capacity(s.n_queued + 1)
            q = s.n_queued
            s.queue_job[q] = self._block_jobs[position]
            s.queue_submit[q] = self.arrival_times[s.next_arrival - 1]
            s.queue_runtime[q] = self._block_rows[position]
            s.queue_features[q] = self._block_features[position]
            self._first_fit[q] = self._block_features[position, 3]
            s.n_queued = q + 1

    def _load_block(self, first: int) -> None:
        """Runtime rows and static features of the next ``ARRIVAL_BLOCK`` arrivals, computed at once."""
        jobs = self.order[first : first + ARRIVAL_BLOCK]
        rows = self.jobs.runtime_rows(jobs)
        allowed = rows < np.inf
        fastest = rows.min(axis=1)
        features = np.empty((jobs.size, N_QUEUE_FEATURES))
        features[:, 0] = self.jobs.size[jobs]
        features[:, 1] = fastest
        features[:, 2] = np.argmax(rows == fastest[:, None], axis=1) + 1
        features[:, 3] = np.argmax(allowed, axis=1) + 1
        features[:, 4] = self.jobs.requested[jobs]
        self._block_start, self._block_jobs, self._block_rows, self._block_features = first, jobs, rows, features

    def _remove_queued(self, slot: int) -> None:
        s = self.state
        q = s.n_queued
        for array in (s.queue_job, s.queue_submit, s.queue_runtime, s.queue_features, self._first_fit):
            array[slot : q - 1] = array[slot + 1 : q]
        s.n_queued = q - 1

    def _ensure_capacity(self, needed: int) -> None:
        s = self.state
        capacity = s.queue_job.size
        if needed <= capacity:
            return
        grown = max(needed, 2 * capacity)

        def grow(array: np.ndarray, fill: float) -> np.ndarray:
            bigger = np.full((grown, *array.shape[1:]), fill, dtype=array.dtype)
            bigger[:capacity] = array
            return bigger

        s.queue_job = grow(s.queue_job, 0)
        s.queue_submit = grow(s.queue_submit, 0.0)
        s.queue_runtime = grow(s.queue_runtime, 0.0)
        s.queue_features = grow(s.queue_features, 0.0)
        self._first_fit = grow(self._first_fit, s.n_procs + 1)


@dataclass(frozen=True)
class MoldableView:
    """A read-only snapshot of the state for baselines (``env.unwrapped.state``).

    Queue arrays are in arrival (FCFS) order, all queued jobs included (the first
    ``window_size`` of them are the env's window slots 0..window_size-1).
    """

    time: float
    n_procs: int
    free: int
    window_size: int
    can_wait: bool
    n_pending: int
    """Jobs still to arrive."""
    queue_job: np.ndarray
    queue_submit: np.ndarray
    queue_runtime: np.ndarray
    """(n_queued, m): T(n) for n = 1..m, ``inf`` where not allowed."""
    queue_size: np.ndarray
    queue_n_min: np.ndarray
    queue_requested: np.ndarray
    running_job: np.ndarray
    running_start: np.ndarray
    running_end: np.ndarray
    running_procs: np.ndarray

    @property
    def n_queued(self) -> int:
        return int(self.queue_job.size)


def view_of(sim: MoldableSim) -> MoldableView:
    """A read-only snapshot of ``sim``'s current state (non-writeable copies of the arrays)."""
    s = sim.state
    q, r = s.n_queued, s.n_running

    def frozen(array: np.ndarray) -> np.ndarray:
        copy = np.array(array)
        copy.flags.writeable = False
        return copy

    return MoldableView(
        time=s.time,
        n_procs=s.n_procs,
        free=s.free,
        window_size=sim.window_size,
        can_wait=sim.can_wait(),
        n_pending=sim.jobs.n_jobs - s.next_arrival,
        queue_job=frozen(s.queue_job[:q]),
        queue_submit=frozen(s.queue_submit[:q]),
        queue_runtime=frozen(s.queue_runtime[:q]),
        queue_size=frozen(s.queue_features[:q, 0]),
        queue_n_min=frozen(s.queue_features[:q, 3].astype(np.int64)),
        queue_requested=frozen(s.queue_features[:q, 4].astype(np.int64)),
        running_job=frozen(s.running_job[:r]),
        running_start=frozen(s.running_start[:r]),
        running_end=frozen(s.running_end[:r]),
        running_procs=frozen(s.running_procs[:r]),
    )
