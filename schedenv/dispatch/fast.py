"""The compiled env core of the dispatch family: ``DispatchEnv`` steps the kernels (docs/architecture.md).

``FastCore`` runs one copy of the batched env's state (``kernel.DispatchArrays`` with B = 1) through
``kernel.step_rows``, the numba transcription of ``DispatchSim.dispatch`` + ``advance`` and of the
observation, with the same floating-point operations in the same order. ``ReferenceCore``
(``core.py``) over the pure simulator (``sim.py``) stays the specification:
``tests/dispatch/test_fast_core.py`` steps both with the same actions and compares observations,
rewards, completion records, masks, state views and metrics, exactly.

The kernels keep each job's number of runs and last host, not its host sequence. Every kill is a
decision epoch, so the core sees each one and keeps the hosts each job was killed at; with the
final host (kept by the kernel) they give ``DispatchRecord.hosts``. The kernel also lists the
completed job ids in order (``kernel.COMPLETION_ORDER``), so a step's records are built from the
new entries only. ``sim`` rebuilds a ``DispatchSim`` in the same state (for ``render`` and
inspection): exact, but a copy.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from schedenv.dispatch.core import ObservationLayout
from schedenv.dispatch.kernel import (
    ACCRUED,
    ARRIVAL,
    COMPLETION_ORDER,
    ENQUEUED,
    EXCEEDED,
    HEAD,
    JOB_ID,
    KILLED,
    LAST_HOST,
    LENGTH,
    LIMIT,
    N_COMPLETED,
    N_PRESENT,
    NEXT,
    NEXT_ARRIVAL,
    PENDING,
    QUEUED_WORK,
    QUEUEING,
    RETURN,
    RUN_END,
    RUN_START,
    RUNS,
    SIZE,
    STEP_START,
    TIME,
    WASTED,
    WEIGHT,
    DispatchArrays,
    reset_rows,
    step_rows,
)
from schedenv.dispatch.metrics import episode_metrics, tally_of
from schedenv.dispatch.records import DispatchRecord
from schedenv.dispatch.sim import DispatchParams, DispatchSim, Job, Outcome, PendingJob, StateView
from schedenv.validation import read_only

INITIAL_CAPACITY = 64
"""Job slots per copy at first; the pool doubles when a copy could run out."""


class FastCore:
    """One episode on the compiled kernels, with ``ReferenceCore``'s interface (see the module doc)."""

    def __init__(self, params: DispatchParams, layout: ObservationLayout) -> None:
        self.params, self.layout = params, layout
        n = params.n_jobs
        self._arrivals = np.ascontiguousarray(params.arrivals, dtype=np.float64).reshape(1, n)
        self._sizes = np.ascontiguousarray(params.sizes, dtype=np.float64).reshape(1, n)
        self._limits = np.asarray(params.time_limits, dtype=np.float64)
        self._bounds = np.asarray(params.size_class_bounds, dtype=np.float64)
        self._state = DispatchArrays(1, params.n_hosts, self._bounds.size + 1, min(INITIAL_CAPACITY, n + 1))
        self._obs = np.zeros((1, layout.length), dtype=np.float32)
        self._obs[0, layout.summary_end :] = layout.shown_params  # constant; the kernels write the rest
        self._out_i = np.zeros((1, 3), dtype=np.int64)
        self._out_f = np.zeros(1)
        self._done_f = np.full((3, n), np.nan)
        self._done_i = np.zeros((3, n), dtype=np.int64)
        self._action = np.zeros(1, dtype=np.int64)
        self._killed_at: dict[int, list[int]] = {}
        """Per job still in the system: the hosts its killed runs ran on, in order."""
        self._n_completed = 0
        self.killed = False
        self.done = False
        self.time = 0.0
        self.n_jobs = 0
        """Jobs in the system."""
        self.n_outside = 0
        """Queued jobs outside the windows."""
        self.exceeded = -1
        """Ladder index of the largest limit the pending job exceeded (-1: none, or no pending job)."""
        self.pending_id = -1
        """The pending job's id (-1 if none)."""
        self._capacity = self._state.capacity
        self._args = self._kernel_args()
        reset_rows(self._args[0], *self._args[2:])
        self._read()

    # ----------------------------------------------------------------- the core interface
    def step(self, destination: int, limit: int) -> Outcome:
        """Dispatch the pending job (a valid decision) and advance to the next decision epoch."""
        if self.n_jobs >= self._capacity:  # a step admits at most one job
            self._state.grow()
            self._capacity = self._state.capacity
            self._args = self._kernel_args()
        self._action[0] = destination * self.layout.n_limits + limit
        step_rows(*self._args)
        before = self._n_completed
        elapsed, accrued = self._read()
        completed = self._records(before, self._n_completed) if self._n_completed > before else []
        return Outcome(elapsed, accrued, completed, self.killed)

    def observation(self) -> np.ndarray:
        """The flat float32 observation (a fresh array)."""
        return self._obs[0].copy()

    @property
    def state(self) -> StateView:
        """``DispatchSim.view`` from the arrays (same values and dtypes)."""
        _, ji, hf, hi, qs, si, _, _ = self._state.views(0)
        n_hosts, now = self.params.n_hosts, self.time
        busy = hi >= 0
        pending = self.pending_view()
        return StateView(
            time=now,
            n_jobs=self.n_jobs,
            n_arrived=int(si[NEXT_ARRIVAL]),
            n_completed=int(si[N_COMPLETED]),
            busy=read_only(busy),
            run_start=read_only(hf[RUN_START].copy()),
            run_limit=read_only(np.where(busy, ji[hi, LIMIT], -1)),
            queue_length=read_only(qs[LENGTH, :n_hosts].copy()),
            host_work=read_only(np.where(busy, hf[RUN_END] - now, 0.0) + hf[QUEUED_WORK]),
            central_length=int(qs[LENGTH, n_hosts]),
            pending_job=self.pending_id,
            pending_exceeded=self.exceeded,
            pending_age=0.0 if pending is None else pending.age,
            pending_size=np.nan if pending is None else pending.size,
            pending_hosts=() if pending is None else pending.hosts,
        )

    def pending_view(self) -> PendingJob | None:
        """The job awaiting a decision (None once the episode is over)."""
        if self.pending_id < 0:
            return None
        slot = int(self._state.si[0, PENDING])
        jf = self._state.jf[0]
        hosts = tuple(self._killed_at.get(self.pending_id, ()))
        age = self.time - float(jf[slot, ARRIVAL])
        return PendingJob(self.pending_id, age, self.exceeded, hosts, float(jf[slot, SIZE]))

    def metrics(self) -> dict[str, float]:
        """``episode_metrics`` so far."""
        _, _, hf, _, _, si, sf, ct = self._state.views(0)
        return episode_metrics(self.params.n_hosts, self.params.size_class_bounds, hf, si, sf, ct)

    @property
    def sim(self) -> DispatchSim:
        """A ``DispatchSim`` in the same state, rebuilt from the arrays (a copy: changing it changes nothing here)."""
        jf, ji, hf, hi, qs, si, sf, ct = (array.copy() for array in self._state.views(0))
        sim = DispatchSim(self.params)
        jobs: dict[int, Job] = {}
        for slot in np.flatnonzero(ji[:, JOB_ID] >= 0).tolist():
            job_id = int(ji[slot, JOB_ID])
            hosts = list(self._killed_at.get(job_id, ()))
            if ji[slot, RUNS] > len(hosts):  # it is running
                hosts.append(int(ji[slot, LAST_HOST]))
            jobs[slot] = Job(
                job_id, float(jf[slot, ARRIVAL]), float(jf[slot, SIZE]), int(ji[slot, EXCEEDED]),
                int(ji[slot, LIMIT]), float(jf[slot, WASTED]), float(jf[slot, QUEUEING]),
                float(jf[slot, ENQUEUED]), hosts,
            )  # fmt: skip

        def queue(index: int) -> deque[Job]:
            slots, slot = [], int(qs[HEAD, index])
            for _ in range(int(qs[LENGTH, index])):
                slots.append(jobs[slot])
                slot = int(ji[slot, NEXT])
            return deque(slots)

        n_hosts = self.params.n_hosts
        sim.time, sim.next_arrival, sim.weight = self.time, int(si[NEXT_ARRIVAL]), float(sf[WEIGHT])
        sim.running = [jobs[slot] if slot >= 0 else None for slot in hi.tolist()]
        sim.run_start, sim.run_end = hf[RUN_START].tolist(), hf[RUN_END].tolist()
        sim.queued_work = hf[QUEUED_WORK].tolist()
        sim.queues = [queue(host) for host in range(n_hosts)]
        sim.central = queue(n_hosts)
        sim.present = {job.job_id: job for job in sorted(jobs.values(), key=lambda job: job.job_id)}
        sim.pending = jobs[int(si[PENDING])] if si[PENDING] >= 0 else None
        sim.tally = tally_of(n_hosts, self.params.size_class_bounds, hf, si, sf, ct)
        return sim

    # ----------------------------------------------------------------- internals
    def _kernel_args(self) -> tuple:
        """``step_rows``'s arguments (``reset_rows`` takes the same without the actions)."""
        layout, state = self.layout, self._state
        # The arrays themselves, not views: a pickled core must still share them with ``_state``.
        return (
            np.zeros(1, dtype=np.int64), self._action,
            state.jf, state.ji, state.hf, state.hi, state.qs, state.si, state.sf, state.ct, self._limits, self._bounds,
            self.params.objective in ("slowdown", "waiting_slowdown"),
            self.params.objective in ("waiting_time", "waiting_slowdown"),
            self._arrivals, self._sizes, self._obs, layout.max_jobs, float(layout.scale), layout.size_known,
            self._out_i, self._out_f, self._done_f, self._done_i,
        )  # fmt: skip

    def _read(self) -> tuple[float, float]:
        """Copy the counters the env reports after a kernel call, note the host of a kill; (elapsed, accrued)."""
        state = self._state
        counters = state.si[0].tolist()
        sums = state.sf[0, : RETURN + 1].tolist()
        now, accrued, step_start = sums[TIME], sums[ACCRUED], sums[STEP_START]
        mask_row, self.n_outside, done = self._out_i[0].tolist()
        self.done, self.exceeded, self.time = bool(done), mask_row - 1, now
        self.n_jobs, self.killed, self._n_completed = counters[N_PRESENT], bool(counters[KILLED]), counters[N_COMPLETED]
        slot = counters[PENDING]
        self.pending_id = -1 if slot < 0 else state.ji.item(0, slot, JOB_ID)
        if self.killed:
            self._killed_at.setdefault(self.pending_id, []).append(state.ji.item(0, slot, LAST_HOST))
        return now - step_start, accrued

    def _records(self, start: int, stop: int) -> list[DispatchRecord]:
        """The records of the jobs completed (in order) between completion counts ``start`` and ``stop``."""
        arrivals, sizes = self.params.arrivals, self.params.sizes
        done_f, done_i = self._done_f, self._done_i
        records = []
        for job in done_i[COMPLETION_ORDER, start:stop].tolist():
            arrival, size = arrivals.item(job), sizes.item(job)
            completion, wasted, queueing = done_f[:, job].tolist()
            hosts = (*self._killed_at.pop(job, ()), done_i.item(1, job))
            slowdown = (completion - arrival) / size
            records.append(DispatchRecord(job, arrival, size, completion, slowdown, hosts, wasted, queueing))
        return records
