"""The compiled env core of the moldable family: one numba call per env step (DESIGN §7).

Same semantics as ``ReferenceCore`` (``core.py``) over the pure simulator (``sim.py``), which stay
the specification: ``tests/moldable/test_fast_core.py`` steps both with the same actions and
compares observations, masks, rewards, elapsed times, completion records and state views.

One call of ``_step`` applies the decision (start a window slot on some count, or wait), advances
through arrivals and completions to the next decision epoch exactly as ``MoldableSim`` does, then
writes the observation and the action mask. Jobs live in preallocated arrays: the queue as rows
``[job, submit, size, fastest, fastest count, n_min, requested, T(1) .. T(m)]`` in FCFS order, the
running jobs as rows ``[job, start, end, procs, submit, size]``. A runtime row is computed when its job arrives
(Downey's formula with the same operations as ``DowneySpeedup.formula``, or the job's table), so
memory stays flat over long traces. When the queue is full, the kernel stops before the arrival that
needs room (status ``NEED_QUEUE``); the core grows the queue and calls again with ``ADVANCE``, which
resumes where it stopped. Finished jobs go to a buffer of m rows: one step completes at most the
jobs running after its decision (no job starts while the kernel advances), and they hold >= 1
processor each.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from schedenv.moldable.core import DEFAULT_MAX_RUNNING, GLOBAL_FEATURES, RELEASE_FEATURES, SLOT_FEATURES, obs_length
from schedenv.moldable.sim import MoldableJobRecord, MoldableView, Outcome
from schedenv.moldable.workload import MoldableJobSet

# ints[]: configuration, then the state (MAX_RUNNING, configuration, last so that older indices stay)
MAX_JOBS, N_PROCS, N_JOBS, N_QUEUED, N_RUNNING, FREE, NEXT_ARRIVAL, N_COMPLETED, N_DONE, MAX_RUNNING = range(10)
N_INTS = 10
"""Length of ``ints``."""
# floats[]: configuration, then the state and the outcome accumulated since the last decision
SCALE, TIME, TOTAL_OBJECTIVE, ELAPSED, ACCRUED = range(5)
# queue row layout; the runtimes T(1) .. T(m) follow from column Q_RUNTIME
Q_JOB, Q_SUBMIT, Q_SIZE, Q_FASTEST, Q_FASTEST_COUNT, Q_N_MIN, Q_REQUESTED, Q_RUNTIME = range(8)
# running row layout
R_JOB, R_START, R_END, R_PROCS, R_SUBMIT, R_SIZE = range(6)
# arrival rows (in arrival order): float part and int part
A_TIME, A_SIZE, A_L, A_A, A_SIGMA = range(5)
A_JOB, A_TABLE, A_REQUESTED = range(3)
# done rows
D_JOB, D_SUBMIT, D_SIZE, D_START, D_END, D_PROCS = range(6)

ADVANCE = -1
"""Action code: no decision, only advance to the next decision epoch (start of episode, resume)."""
OK, INVALID, NEED_QUEUE = range(3)
"""Kernel statuses."""


@numba.njit(cache=True, error_model="numpy")
def _downey_row(L, a, s, row, offset, m):
    """row[offset + n - 1] = L / S(n) for n = 1..m: ``DowneySpeedup.formula``'s branches, same operations."""
    for k in range(m):
        n = k + 1.0
        if s <= 1.0:
            if n <= a:
                speedup = a * n / (a + s * (n - 1.0) / 2.0)
            elif n <= 2.0 * a - 1.0:
                speedup = a * n / (s * (a - 0.5) + n * (1.0 - s / 2.0))
            else:
                speedup = a
        elif n <= a + a * s - s:
            speedup = n * a * (s + 1.0) / (s * (n + a - 1.0) + a)
        else:
            speedup = a
        row[offset + k] = L / speedup


@numba.njit(cache=True, error_model="numpy")
def _arrive_due(ints, floats, queue, arrivals_f, arrivals_i, tables):
    """Queue the jobs that have arrived by now (``MoldableSim._arrive_due``); False when the queue is full."""
    m, n_jobs, now = ints[N_PROCS], ints[N_JOBS], floats[TIME]
    while ints[NEXT_ARRIVAL] < n_jobs and arrivals_f[ints[NEXT_ARRIVAL], A_TIME] <= now:
        q = ints[N_QUEUED]
        if q == queue.shape[0]:
            return False
        p = ints[NEXT_ARRIVAL]
        row = queue[q]
        table = arrivals_i[p, A_TABLE]
        if table >= 0:
            row[Q_RUNTIME:] = tables[table]
        else:
            _downey_row(arrivals_f[p, A_L], arrivals_f[p, A_A], arrivals_f[p, A_SIGMA], row, Q_RUNTIME, m)
        fastest, fastest_count, n_min = np.inf, 0, 0
        for k in range(m):
            value = row[Q_RUNTIME + k]
            if value < fastest:
                fastest, fastest_count = value, k + 1
            if n_min == 0 and value < np.inf:
                n_min = k + 1
        row[Q_JOB] = arrivals_i[p, A_JOB]
        row[Q_SUBMIT] = arrivals_f[p, A_TIME]
        row[Q_SIZE] = arrivals_f[p, A_SIZE]
        row[Q_FASTEST] = fastest
        row[Q_FASTEST_COUNT] = fastest_count
        row[Q_N_MIN] = n_min
        row[Q_REQUESTED] = arrivals_i[p, A_REQUESTED]
        ints[N_QUEUED] = q + 1
        ints[NEXT_ARRIVAL] = p + 1
    return True


@numba.njit(cache=True)
def _has_decision(ints, queue):
    """Some window job fits in the free processors (``MoldableSim.has_decision``)."""
    w = min(ints[N_QUEUED], ints[MAX_JOBS])
    for i in range(w):  # noqa: SIM110 - a plain loop compiles; any() over a generator does not in numba
        if queue[i, Q_N_MIN] <= ints[FREE]:
            return True
    return False


@numba.njit(cache=True)
def _is_done(ints):
    return ints[NEXT_ARRIVAL] == ints[N_JOBS] and ints[N_QUEUED] + ints[N_RUNNING] == 0


@numba.njit(cache=True)
def _can_wait(ints):
    return ints[N_RUNNING] > 0 or ints[NEXT_ARRIVAL] < ints[N_JOBS]


@numba.njit(cache=True)
def _next_event(ints, floats, running, arrivals_f, done):
    """Advance to the next arrival or completion and complete what ends then (``MoldableSim._next_event``)."""
    n = ints[N_RUNNING]
    t = np.inf
    for r in range(n):
        t = min(t, running[r, R_END])
    if ints[NEXT_ARRIVAL] < ints[N_JOBS]:
        t = min(t, arrivals_f[ints[NEXT_ARRIVAL], A_TIME])
    dt = t - floats[TIME]
    accrued = (ints[N_QUEUED] + n) * dt
    floats[ELAPSED] += dt
    floats[ACCRUED] += accrued
    floats[TOTAL_OBJECTIVE] += accrued
    floats[TIME] = t
    kept = 0
    for r in range(n):
        if running[r, R_END] <= t:
            d = ints[N_DONE]
            done[d, D_JOB] = running[r, R_JOB]
            done[d, D_SUBMIT] = running[r, R_SUBMIT]
            done[d, D_SIZE] = running[r, R_SIZE]
            done[d, D_START] = running[r, R_START]
            done[d, D_END] = running[r, R_END]
            done[d, D_PROCS] = running[r, R_PROCS]
            ints[N_DONE] = d + 1
            ints[FREE] += np.int64(running[r, R_PROCS])
            ints[N_COMPLETED] += 1
        else:
            if kept != r:
                running[kept] = running[r]
            kept += 1
    ints[N_RUNNING] = kept


@numba.njit(cache=True)
def _observe(ints, floats, queue, running, obs, mask):
    """The env's observation (Observation Space table) and action mask (all ones once done)."""
    m, max_jobs, q, n_run, free = ints[N_PROCS], ints[MAX_JOBS], ints[N_QUEUED], ints[N_RUNNING], ints[FREE]
    now, scale = floats[TIME], floats[SCALE]
    w = min(q, max_jobs)
    obs[:] = 0.0
    mask[:] = 0
    for i in range(w):
        row = queue[i]
        base = SLOT_FEATURES * i
        count = np.int64(min(row[Q_FASTEST_COUNT], max(free, 1)))
        at_count = row[Q_RUNTIME + count - 1]
        if np.isinf(at_count):
            at_count = 0.0
        obs[base] = 1.0
        obs[base + 1] = math.log1p((now - row[Q_SUBMIT]) / scale)
        obs[base + 2] = math.log1p(row[Q_SIZE] / scale)
        obs[base + 3] = math.log1p(row[Q_FASTEST] / scale)
        obs[base + 4] = math.log1p(at_count / scale)
        obs[base + 5] = row[Q_FASTEST_COUNT] / m
        obs[base + 6] = row[Q_N_MIN] / m
        obs[base + 7] = row[Q_REQUESTED] / m
    tail = SLOT_FEATURES * max_jobs
    obs[tail] = free / m
    obs[tail + 1] = n_run / m
    obs[tail + 2] = math.log1p(q)
    obs[tail + 3] = math.log1p(q - w)
    if q > w:
        outside = 0.0
        for i in range(w, q):
            outside += queue[i, Q_SIZE]
        obs[tail + 4] = math.log1p(outside / (m * scale))
    if n_run:
        soonest, busy = np.inf, 0.0
        for r in range(n_run):
            remaining = running[r, R_END] - now
            soonest = min(soonest, remaining)
            busy += remaining * running[r, R_PROCS]
        obs[tail + 5] = math.log1p(soonest / scale)
        obs[tail + 6] = math.log1p(busy / (m * scale))
        _release_profile(ints, floats, running, obs, tail + GLOBAL_FEATURES)
    if _is_done(ints):
        mask[:] = 1
        return
    for i in range(w):
        row, allowed = queue[i, Q_RUNTIME : Q_RUNTIME + free], mask[i * m : i * m + free]
        for k in range(free):  # an unconditional store vectorises (8x faster than a guarded one)
            allowed[k] = row[k] < np.inf
    mask[mask.size - 1] = _can_wait(ints)


@numba.njit(cache=True)
def _release_profile(ints, floats, running, obs, start):
    """(remaining time, processors) of the first ``MAX_RUNNING`` running jobs by end time, ties by row
    (numpy's stable argsort): one pass over the rows keeps the first ones sorted, inserting a row after
    those that end no later (O(running jobs x MAX_RUNNING) at worst, about one pass when few insert)."""
    n_run, now, scale, m = ints[N_RUNNING], floats[TIME], floats[SCALE], ints[N_PROCS]
    size = min(ints[MAX_RUNNING], n_run)
    if size == 0:
        return
    first = np.empty(size, dtype=np.int64)
    kept = 0
    for r in range(n_run):
        end = running[r, R_END]
        if kept == size and not end < running[first[size - 1], R_END]:
            continue
        at = min(kept, size - 1)
        while at > 0 and end < running[first[at - 1], R_END]:
            first[at] = first[at - 1]
            at -= 1
        first[at] = r
        kept = min(kept + 1, size)
    for j in range(size):
        obs[start + RELEASE_FEATURES * j] = math.log1p((running[first[j], R_END] - now) / scale)
        obs[start + RELEASE_FEATURES * j + 1] = running[first[j], R_PROCS] / m


@numba.njit(cache=True)
def _fallback(action, mask, m):
    """The valid action closest to a masked ``action`` (the env's ``invalid_action`` rule).

    A start of slot s on n processors becomes slot s on the largest allowed count <= n, else on the
    smallest allowed count above n; if slot s cannot start at all (padding, or no count fits), wait
    when waiting is allowed, else the first valid action. A masked wait becomes the first valid action
    (the earliest window slot on its smallest allowed count).
    """
    wait = mask.size - 1
    if action != wait:
        base = action - action % m
        for k in range(action, base - 1, -1):
            if mask[k]:
                return k
        for k in range(action + 1, base + m):
            if mask[k]:
                return k
        if mask[wait]:
            return wait
    for k in range(mask.size):
        if mask[k]:
            return k
    return wait


def fallback_action(action: int, mask: np.ndarray, n_procs: int) -> int:
    """The valid flat action that replaces the masked ``action`` (rule: ``_fallback``, the env's Action Space)."""
    return int(_fallback(action, mask, n_procs))


@numba.njit(cache=True)
def _step(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, mask):
    """Apply ``action`` (the env's encoding, or ``ADVANCE``), advance to the next decision epoch, observe.

    Returns a status: ``INVALID`` (nothing changed), ``NEED_QUEUE`` (grow the queue, then call
    again with ``ADVANCE``) or ``OK``.
    """
    m, max_jobs = ints[N_PROCS], ints[MAX_JOBS]
    if action != ADVANCE:
        if action == max_jobs * m:
            if not _can_wait(ints):
                return INVALID
        else:
            slot, procs = action // m, action % m + 1
            if not (0 <= slot < min(ints[N_QUEUED], max_jobs) and procs <= ints[FREE]):
                return INVALID
            if not queue[slot, Q_RUNTIME + procs - 1] < np.inf:
                return INVALID
        ints[N_DONE] = 0
        floats[ELAPSED] = 0.0
        floats[ACCRUED] = 0.0
        if action == max_jobs * m:
            _next_event(ints, floats, running, arrivals_f, done)
        else:
            r, q, now = ints[N_RUNNING], ints[N_QUEUED], floats[TIME]
            running[r, R_JOB] = queue[slot, Q_JOB]
            running[r, R_START] = now
            running[r, R_END] = now + queue[slot, Q_RUNTIME + procs - 1]
            running[r, R_PROCS] = procs
            running[r, R_SUBMIT] = queue[slot, Q_SUBMIT]
            running[r, R_SIZE] = queue[slot, Q_SIZE]
            ints[N_RUNNING] = r + 1
            ints[FREE] -= procs
            for i in range(slot, q - 1):
                queue[i] = queue[i + 1]
            ints[N_QUEUED] = q - 1
    while True:
        if not _arrive_due(ints, floats, queue, arrivals_f, arrivals_i, tables):
            return NEED_QUEUE
        if _has_decision(ints, queue) or _is_done(ints):
            break
        _next_event(ints, floats, running, arrivals_f, done)
    _observe(ints, floats, queue, running, obs, mask)
    return OK


def arrival_arrays(jobs: MoldableJobSet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's arrival rows (float part, int part; in arrival order) and runtime tables of ``jobs``."""
    m = jobs.n_procs
    order = jobs.arrival_order()
    table_jobs = sorted(jobs.tables)
    table_of = np.full(jobs.n_jobs, -1, dtype=np.int64)
    table_of[table_jobs] = np.arange(len(table_jobs))
    tables = np.array([jobs.tables[j] for j in table_jobs]).reshape(len(table_jobs), m)
    arrivals_f = np.column_stack(
        (jobs.submit[order], jobs.size[order], jobs.L[order], jobs.A[order], jobs.sigma[order])
    )
    arrivals_i = np.column_stack((order, table_of[order], jobs.requested[order]))
    return arrivals_f, arrivals_i, tables


def initial_queue_rows(n_jobs: int) -> int:
    """The queue's first capacity (it doubles when needed)."""
    return max(16, min(n_jobs, 64))


@numba.njit(cache=True)
def _start(ints, floats, max_jobs, m, n_jobs, max_running, scale, first_arrival):
    """Counters of an episode before its first ``ADVANCE``."""
    ints[:] = 0
    ints[MAX_JOBS], ints[N_PROCS], ints[N_JOBS], ints[FREE], ints[MAX_RUNNING] = max_jobs, m, n_jobs, m, max_running
    floats[:] = 0.0
    floats[SCALE], floats[TIME] = scale, first_arrival


class FastCore:
    """The compiled core (every job set: Downey jobs and runtime tables); the env's default."""

    def __init__(
        self, jobs: MoldableJobSet, max_jobs: int, time_scale: float, max_running: int = DEFAULT_MAX_RUNNING
    ) -> None:
        self.jobs, self.max_jobs, self.time_scale, self.max_running = jobs, max_jobs, time_scale, max_running
        m = self.n_procs = jobs.n_procs
        n = jobs.n_jobs
        self._arrivals_f, self._arrivals_i, self._tables = arrival_arrays(jobs)
        self._ints = np.zeros(N_INTS, dtype=np.int64)
        self._floats = np.zeros(5)
        _start(self._ints, self._floats, max_jobs, m, n, max_running, time_scale, self._arrivals_f[0, A_TIME])
        self._queue = np.zeros((initial_queue_rows(n), Q_RUNTIME + m))
        self._running = np.zeros((m, 6))
        self._done = np.zeros((m, 6))  # enough: see the module docstring
        self._obs = np.zeros(obs_length(max_jobs, max_running), dtype=np.float32)
        self.mask = np.zeros(max_jobs * m + 1, dtype=np.int8)
        self._arrays = self._kernel_arrays()
        self._run(ADVANCE)
        self._counters = self._ints.tolist()
        self._time = float(self._floats[TIME])

    # ----------------------------------------------------------------- counters
    @property
    def done(self) -> bool:
        c = self._counters
        return c[NEXT_ARRIVAL] == c[N_JOBS] and c[N_QUEUED] + c[N_RUNNING] == 0

    @property
    def time(self) -> float:
        return self._time

    @property
    def n_queued(self) -> int:
        return self._counters[N_QUEUED]

    @property
    def n_running(self) -> int:
        return self._counters[N_RUNNING]

    @property
    def free(self) -> int:
        return self._counters[FREE]

    @property
    def window_size(self) -> int:
        return min(self._counters[N_QUEUED], self.max_jobs)

    @property
    def total_objective(self) -> float:
        return float(self._floats[TOTAL_OBJECTIVE])

    # ----------------------------------------------------------------- steps
    def apply(self, action: int) -> Outcome:
        """Start or wait as the env's ``action`` says; ``ValueError`` (state unchanged) when it does not fit."""
        if not 0 <= action < self.mask.size or self._run(action) == INVALID:
            raise ValueError(f"action={action!r} does not fit the current state (see action_masks())")
        counters = self._counters = self._ints.tolist()
        floats = self._floats.tolist()
        self._time = floats[TIME]
        n_done = counters[N_DONE]
        return Outcome(floats[ELAPSED], floats[ACCRUED], self._completed(n_done) if n_done else [])

    def _run(self, action: int) -> int:
        status = _step(action, *self._arrays)
        while status == NEED_QUEUE:
            self._queue = _grown(self._queue)
            self._arrays = self._kernel_arrays()
            status = _step(ADVANCE, *self._arrays)
        return int(status)

    def _kernel_arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self._ints, self._floats, self._queue, self._running, self._arrivals_f, self._arrivals_i, self._tables,
            self._done, self._obs, self.mask,
        )  # fmt: skip

    def _completed(self, n_done: int) -> list[MoldableJobRecord]:
        return [
            MoldableJobRecord(int(job), submit, size, end, (end - submit) / (end - start), start, int(procs))
            for job, submit, size, start, end, procs in self._done[:n_done].tolist()
        ]

    def observation(self) -> np.ndarray:
        """The flat observation of the env's Observation Space table (a fresh array)."""
        return self._obs.copy()

    def view(self) -> MoldableView:
        """A read-only snapshot of the state for baselines (the layout of ``sim.view_of``)."""
        c = self._counters
        queue, running = self._queue[: c[N_QUEUED]], self._running[: c[N_RUNNING]]

        def frozen(array: np.ndarray, dtype: type = np.float64) -> np.ndarray:
            copy: np.ndarray = np.array(array, dtype=dtype)
            copy.flags.writeable = False
            return copy

        return MoldableView(
            time=self.time,
            n_procs=self.n_procs,
            free=c[FREE],
            window_size=self.window_size,
            can_wait=c[N_RUNNING] > 0 or c[NEXT_ARRIVAL] < c[N_JOBS],
            n_pending=c[N_JOBS] - c[NEXT_ARRIVAL],
            queue_job=frozen(queue[:, Q_JOB], np.int64),
            queue_submit=frozen(queue[:, Q_SUBMIT]),
            queue_runtime=frozen(queue[:, Q_RUNTIME:]),
            queue_size=frozen(queue[:, Q_SIZE]),
            queue_n_min=frozen(queue[:, Q_N_MIN], np.int64),
            queue_requested=frozen(queue[:, Q_REQUESTED], np.int64),
            running_job=frozen(running[:, R_JOB], np.int64),
            running_start=frozen(running[:, R_START]),
            running_end=frozen(running[:, R_END]),
            running_procs=frozen(running[:, R_PROCS], np.int64),
        )


def _grown(array: np.ndarray) -> np.ndarray:
    bigger = np.zeros((2 * array.shape[0], array.shape[1]))
    bigger[: array.shape[0]] = array
    return bigger
