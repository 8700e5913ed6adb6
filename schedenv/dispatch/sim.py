"""Pure event core for non-preemptive multi-host dispatch (Harchol-Balter, "Task assignment with
unknown duration", J. ACM 49(2), 2002, §1 and §4).

h identical hosts each serve their own queue first-come-first-served and run every job to
completion or to its time limit. A job run with limit s is killed when it has run for s without
completing (size > s): all its work is lost and it returns to the dispatcher, which now knows that
its size exceeds s. A central FCFS queue at the dispatcher feeds whichever host becomes idle first
(a host serves its own queue before the central one). Decision epochs are the arrivals and the
kills; completions and central-queue hand-offs need no decision and happen inside ``advance``:

    sim = DispatchSim(params)
    sim.dispatch(destination, limit_index)   # the pending job goes somewhere with a limit
    outcome = sim.advance()                  # run to the next arrival or kill, or to the end

For speed the simulator mutates its own state in place (one object per episode, like a
``numpy.random.Generator``); ``view()`` gives read-only numpy snapshots. It is deterministic: the
workload (arrival times and sizes) is fixed in ``params`` and nothing here draws random numbers.

The objective accrues as an integral of nonnegative per-job weights, so its total over an
episode equals the sum over jobs of the per-job objective (up to rounding): response time T
(weight 1 while the job is present), slowdown T / x (weight 1/x while present), waiting time
T - x (weight 1 while present and not in its final, successful run, whose length is exactly x)
and waiting slowdown (T - x) / x (weight 1/x likewise).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from schedenv.dispatch.records import DispatchRecord, EpisodeTally
from schedenv.validation import read_only

OBJECTIVES: tuple[str, ...] = ("response_time", "waiting_time", "slowdown", "waiting_slowdown")
"""Per-job objectives the env can accrue as its (negated) reward."""


@dataclass(frozen=True)
class DispatchParams:
    """Everything fixed for an episode: hosts, the time-limit ladder, the objective, the job stream."""

    n_hosts: int
    time_limits: np.ndarray
    """Strictly increasing kill limits; the last is ``inf`` (run to completion)."""
    objective: str
    arrivals: np.ndarray
    """Nondecreasing arrival times of the episode's jobs."""
    sizes: np.ndarray
    """Sizes (service demands) aligned with ``arrivals``."""
    size_class_bounds: tuple[float, ...] = ()
    """Size-class boundaries of the fairness metrics (see ``records``)."""

    @property
    def n_jobs(self) -> int:
        """Jobs in the episode."""
        return int(self.arrivals.size)


@dataclass(slots=True)
class Job:
    """A job in the system (finished jobs leave the state, so memory stays flat)."""

    job_id: int
    arrival: float
    size: float
    exceeded: int = -1
    """Index of the largest ladder limit the job is known to exceed (-1: none yet)."""
    limit: int = -1
    """Ladder index of the limit of its current (queued or running) attempt."""
    wasted: float = 0.0
    """Work lost to kills so far."""
    queueing: float = 0.0
    """Time spent waiting in queues (host or central) so far."""
    enqueued: float = 0.0
    """When it joined its current queue."""
    hosts: list[int] = field(default_factory=list)
    """Hosts it has run on, in order."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened during one ``advance``."""

    elapsed: float
    accrued: float
    """Objective accrued since the previous decision (an integral, so nonnegative)."""
    completed: list[DispatchRecord]
    killed: bool
    """True if the new pending job was killed (False: it just arrived, or the episode ended)."""


@dataclass(frozen=True)
class StateView:
    """A read-only snapshot of the simulator (what baselines read through ``env.unwrapped.state``).

    Host arrays have one entry per host; ``run_limit`` is a ladder index (-1 when idle).
    ``host_work`` is the work each host still has to do (running attempt plus queue, each attempt
    counted as min(size, limit)): only size-aware policies may use it.
    """

    time: float
    n_jobs: int
    n_arrived: int
    n_completed: int
    busy: np.ndarray
    run_start: np.ndarray
    run_limit: np.ndarray
    queue_length: np.ndarray
    host_work: np.ndarray
    central_length: int
    pending_job: int
    """Job id awaiting a decision (-1 if none)."""
    pending_exceeded: int
    """Ladder index of the largest limit the pending job exceeded (-1 if none)."""
    pending_age: float
    pending_size: float
    """The pending job's size (only size-aware policies may read it)."""
    pending_hosts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PendingJob:
    """The job awaiting a decision, as a policy may see it (``size`` only for size-aware policies)."""

    job_id: int
    age: float
    exceeded: int
    """Ladder index of the largest limit it exceeded (-1: none)."""
    hosts: tuple[int, ...]
    """Hosts it already ran on (and was killed at), in order."""
    size: float


class DispatchSim:
    """The event loop: hosts, queues, the pending decision and the episode's tallies."""

    def __init__(self, params: DispatchParams) -> None:
        self.params = params
        self.n_jobs = params.n_jobs
        """Jobs in the episode (``params.n_jobs``)."""
        h = params.n_hosts
        self.limits: list[float] = [float(s) for s in params.time_limits]
        self.time = 0.0
        self.next_arrival = 0
        self.running: list[Job | None] = [None] * h
        self.run_start: list[float] = [0.0] * h
        self.run_end: list[float] = [math.inf] * h
        self.queues: list[deque[Job]] = [deque() for _ in range(h)]
        self.queued_work: list[float] = [0.0] * h
        self.central: deque[Job] = deque()
        self.present: dict[int, Job] = {}
        self.weight = 0.0
        """Current accrual rate of the objective: the sum of the weights of the jobs it counts."""
        self.pending: Job | None = None
        self.tally = EpisodeTally(h, class_bounds=params.size_class_bounds)
        self._per_size = params.objective in ("slowdown", "waiting_slowdown")
        self._waiting = params.objective in ("waiting_time", "waiting_slowdown")

    # ----------------------------------------------------------------- decisions
    @property
    def done(self) -> bool:
        """Every job has arrived and completed."""
        return self.next_arrival >= self.n_jobs and not self.present

    def dispatch(self, destination: int, limit: int) -> None:
        """Send the pending job to host ``destination`` (or the central queue if it equals n_hosts).

        The caller (the env) has validated the pair: ``limit`` must exceed the job's ``exceeded``.
        """
        job = self.pending
        if job is None:
            raise RuntimeError("no job is waiting for a decision")
        self.pending = None
        job.limit = limit
        job.enqueued = self.time
        if destination == self.params.n_hosts:
            idle = [h for h, running in enumerate(self.running) if running is None]
            if idle:
                self._start(idle[0], job)
            else:
                self.central.append(job)
        elif self.running[destination] is None:
            self._start(destination, job)
        else:
            self.queues[destination].append(job)
            self.queued_work[destination] += min(job.size, self.limits[limit])

    def _start(self, host: int, job: Job) -> None:
        job.queueing += self.time - job.enqueued
        job.hosts.append(host)
        self.running[host] = job
        self.run_start[host] = self.time
        limit = self.limits[job.limit]
        self.run_end[host] = self.time + min(job.size, limit)
        if self._waiting and job.size <= limit:
            self._uncount(job)

    def _counted(self, job: Job) -> bool:
        """Whether the objective's integral counts ``job`` now (waiting objectives skip the final run)."""
        if not self._waiting or not job.hosts:
            return True
        running = self.running[job.hosts[-1]] is job
        return not (running and job.size <= self.limits[job.limit])

    def _uncount(self, job: Job) -> None:
        """Stop accruing ``job``'s weight."""
        if not self._per_size:
            self.weight -= 1.0
            return
        before = self.weight
        self.weight -= 1.0 / job.size
        # Sizes span many decades: re-add exactly when a large term cancels most of the sum.
        if self.weight < 1e-4 * before:
            self.weight = math.fsum(1.0 / j.size for j in self.present.values() if j is not job and self._counted(j))

    def _next_for(self, host: int) -> None:
        """The host has just freed up: its own queue first, then the central queue."""
        queue = self.queues[host]
        if queue:
            job = queue.popleft()
            self.queued_work[host] -= min(job.size, self.limits[job.limit])
            if not queue:
                self.queued_work[host] = 0.0
            self._start(host, job)
        elif self.central:
            self._start(host, self.central.popleft())
        else:
            self.running[host] = None
            self.run_end[host] = math.inf

    # ----------------------------------------------------------------- events
    def advance(self) -> Outcome:
        """Run until a job needs a decision (an arrival or a kill) or every job has completed."""
        if self.pending is not None:
            raise RuntimeError("a job is waiting for a decision; call dispatch() first")
        params = self.params
        n_jobs, arrivals = self.n_jobs, params.arrivals
        start = self.time
        accrued = 0.0
        completed: list[DispatchRecord] = []
        run_end = self.run_end
        while True:
            t_arrival = arrivals.item(self.next_arrival) if self.next_arrival < n_jobs else math.inf
            t_host = min(run_end)
            host = run_end.index(t_host)
            t_next = t_host if t_host < t_arrival else t_arrival
            if t_next == math.inf:
                return Outcome(self.time - start, accrued, completed, False)
            accrued += self.weight * (t_next - self.time)
            self.time = t_next
            if t_host <= t_arrival:
                job = self.running[host]
                assert job is not None
                if job.size <= self.limits[job.limit]:
                    self._complete(host, job, completed)
                    self._next_for(host)
                    continue
                self._kill(host, job)
                self._next_for(host)
                self.pending = job
                return Outcome(self.time - start, accrued, completed, True)
            index = self.next_arrival
            self.next_arrival += 1
            job = Job(index, t_arrival, params.sizes.item(index))
            self.present[index] = job
            self.weight += 1.0 / job.size if self._per_size else 1.0
            self.pending = job
            return Outcome(self.time - start, accrued, completed, False)

    def _kill(self, host: int, job: Job) -> None:
        limit = self.limits[job.limit]
        job.wasted += limit
        job.exceeded = job.limit
        self.tally.busy[host] += limit

    def _complete(self, host: int, job: Job, completed: list[DispatchRecord]) -> None:
        """Remove the finished job and record it."""
        self.tally.busy[host] += job.size
        if not self._waiting:
            self._uncount(job)
        del self.present[job.job_id]
        if not self.present:
            self.weight = 0.0
        record = DispatchRecord(
            job.job_id,
            job.arrival,
            job.size,
            self.time,
            (self.time - job.arrival) / job.size,
            tuple(job.hosts),
            job.wasted,
            job.queueing,
        )
        self.tally.add(record)
        completed.append(record)

    # ----------------------------------------------------------------- views
    def pending_view(self) -> PendingJob | None:
        """The job awaiting a decision (None once the episode is over)."""
        job = self.pending
        if job is None:
            return None
        return PendingJob(job.job_id, self.time - job.arrival, job.exceeded, tuple(job.hosts), job.size)

    def host_work(self) -> list[float]:
        """Work left at each host: the running attempt's remainder plus its queue."""
        return [
            (self.run_end[h] - self.time if self.running[h] is not None else 0.0) + self.queued_work[h]
            for h in range(self.params.n_hosts)
        ]

    def view(self) -> StateView:
        """A read-only snapshot for baselines."""
        h = self.params.n_hosts
        job = self.pending
        return StateView(
            time=self.time,
            n_jobs=len(self.present),
            n_arrived=self.next_arrival,
            n_completed=self.tally.n_completed,
            busy=read_only(np.array([r is not None for r in self.running])),
            run_start=read_only(np.array(self.run_start)),
            run_limit=read_only(np.array([-1 if r is None else r.limit for r in self.running], dtype=np.int64)),
            queue_length=read_only(np.array([len(q) for q in self.queues], dtype=np.int64)),
            host_work=read_only(np.array(self.host_work()) if h else np.empty(0)),
            central_length=len(self.central),
            pending_job=-1 if job is None else job.job_id,
            pending_exceeded=-1 if job is None else job.exceeded,
            pending_age=0.0 if job is None else self.time - job.arrival,
            pending_size=math.nan if job is None else job.size,
            pending_hosts=() if job is None else tuple(job.hosts),
        )
