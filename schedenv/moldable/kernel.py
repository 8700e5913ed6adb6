"""The compiled transition of the moldable family: every numba kernel of the env's step (docs/architecture.md).

Same semantics as ``ReferenceCore`` (``core.py``) over the pure simulator (``sim.py``), which stay
the specification: ``tests/moldable/test_fast_core.py`` steps both with the same actions and
compares observations, masks, rewards, elapsed times, completion records and state views.

One call of ``step`` applies the decision (start a window slot on some count, or wait) and advances
through arrivals and completions to the next decision epoch exactly as ``MoldableSim`` does (the
family's one ``transition``), then writes the observation and the action mask. Jobs live in
preallocated arrays: the queue as rows ``[job, submit, size, fastest, fastest count, n_min,
requested, all counts allowed, log1p(size / scale), log1p(fastest / scale), L, A, sigma, table, count,
log1p(T(count) / scale)]`` in FCFS order (the ``Q_*`` columns; the last two a cache of the observation's
runtime-at-count feature, which ``_observe`` fills), the running jobs as rows ``[job, start, end, procs, submit, size]``
in start order, with a last column ``R_BY_END`` that lists their rows by end time (kept in order as
jobs start and end, so the next completion and the release profile are read off it, not sorted at
every step). A runtime T(n) is not stored: ``runtime`` gives it from the job's table or Downey's
formula (the same operations as ``DowneySpeedup.formula``), so a queued job costs 14 numbers whatever
m (what B copies stepped one after the other keep in cache) and memory stays flat over long traces.
The mask is a function of the state (``write_mask``; the factored mode's per-component mask
``write_factored_mask``); the single env's clears only the entries the last one may have set
(``ints[MASK_SET]``). When the queue is full, the kernel stops before the
arrival that needs room (status ``NEED_QUEUE``); ``fast.FastCore`` grows the queue and calls again
with ``ADVANCE``, which resumes where it stopped. Finished jobs go to a buffer of m rows: one step
completes at most the jobs running after its decision (no job starts while the kernel advances), and
they hold >= 1 processor each.

``step`` is driven by ``fast.FastCore`` (the single env) and by ``schedenv.fastpath.moldable``;
``start_rows`` and ``step_rows`` run ``transition`` and the observation for the B copies of
``vector.MoldableVectorEnv``, whose masks (4 KB a copy with the defaults) are written only when asked
(``mask_rows``), not kept per copy at every step: ``step_rows`` reads a masked action's fallback off the
state (``checked_action``) and steps the copies on ``borrowed`` views (no reference counts), prefetching
the next copy's rows (``schedenv.kernels``); ``rank_rows`` then ranks the ranked action mode's candidates
(``rank``, HRF-EASY's ``decide`` first) the same way, with one allocation-turn scratch for all copies. The
small helpers of a step are inlined into their
callers (``inline="always"``: numba counts a reference in and out for every array argument of a call);
``transition``, ``_observe`` and ``write_mask`` are not (inlined, they more than doubled the first compile and
gained nothing measurable). Kernels that call each
other share this module because numba's ``cache=True`` only watches the file a jitted function is
defined in (the helpers of ``schedenv.kernels`` aside: after editing those, delete the caches).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from schedenv.kernels import borrowed, move_entries, prefetch_entry, prefetch_row
from schedenv.moldable.core import (
    CANDIDATE_FEATURES,
    GLOBAL_FEATURES,
    PAPER_ALPHA,
    PAPER_THRESHOLD,
    RELEASE_FEATURES,
    SLOT_FEATURES,
    WIDTH_KINDS,
)
from schedenv.moldable.workload import MoldableJobSet

# ints[]: configuration, then the state (MAX_RUNNING, configuration, last so that older indices stay)
MAX_JOBS, N_PROCS, N_JOBS, N_QUEUED, N_RUNNING, FREE, NEXT_ARRIVAL, N_COMPLETED, N_DONE, MAX_RUNNING = range(10)
MASK_SET = 10
"""ints[MASK_SET]: the mask entries from 0 that the last observation may have set (the next one clears only those)."""
QUEUE_START = 11
"""ints[QUEUE_START]: the queue array's row of the first queued job (``live_queue``)."""
N_INTS = 12
"""Length of ``ints``."""
# floats[]: configuration, then the state and the outcome accumulated since the last decision
SCALE, TIME, TOTAL_OBJECTIVE, ELAPSED, ACCRUED = range(5)
# queue row layout (Q_ALL_COUNTS: 1.0 when every count 1..m is allowed; Q_LOG_SIZE, Q_LOG_FASTEST: the
# job's constant observation features, computed once at arrival); the runtimes T(n) are not stored:
# ``runtime`` gives them from the job's Downey parameters (Q_L, Q_A, Q_SIGMA) or its table (Q_TABLE >= 0)
Q_JOB, Q_SUBMIT, Q_SIZE, Q_FASTEST, Q_FASTEST_COUNT, Q_N_MIN, Q_REQUESTED, Q_ALL_COUNTS = range(8)
Q_LOG_SIZE, Q_LOG_FASTEST, Q_L, Q_A, Q_SIGMA, Q_TABLE = range(8, 14)
# the observation's runtime-at-count feature of the row, kept for the count it was worked out for (0: none
# yet): it changes only with that count, min(fastest count, free processors), not at every step
Q_AT_COUNT, Q_LOG_AT_COUNT = 14, 15
Q_COLUMNS = 16
"""Length of a queue row."""
# running row layout; column R_BY_END is not the row's own: running[j, R_BY_END] is the row of the j-th
# running job by end time, ties by row (numpy's stable argsort), kept in order as jobs start and end
R_JOB, R_START, R_END, R_PROCS, R_SUBMIT, R_SIZE, R_BY_END = range(7)
R_COLUMNS = 7
"""Length of a running row."""
# arrival rows (in arrival order): float part and int part
A_TIME, A_SIZE, A_L, A_A, A_SIGMA = range(5)
A_JOB, A_TABLE, A_REQUESTED = range(3)
# done rows
D_JOB, D_SUBMIT, D_SIZE, D_START, D_END, D_PROCS = range(6)

ADVANCE = -1
"""Action code: no decision, only advance to the next decision epoch (start of episode, resume)."""
OK, INVALID, NEED_QUEUE = range(3)
"""Kernel statuses."""


@numba.njit(cache=True, error_model="numpy", inline="always")
def runtime(row, procs, tables):
    """T(procs) of the queued job ``row``: its table's entry (``inf``: not allowed), or L / S(procs) with
    ``DowneySpeedup.formula``'s branches and operations."""
    table = np.int64(row[Q_TABLE])
    if table >= 0:
        return tables[table, procs - 1]
    L, a, s, n = row[Q_L], row[Q_A], row[Q_SIGMA], float(procs)
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
    return L / speedup


@numba.njit(cache=True, inline="always")
def _counts_to_scan(row, m):
    """The counts 1 .. c whose runtimes decide the queued job ``row``'s fastest count and n_min: m for a
    table job; for a Downey job the first count on which ``runtime`` takes its constant branch
    (speedup = A; the branch conditions are upper bounds on the count, so every larger count takes
    it too and has the very same runtime L / A), at most m."""
    if np.int64(row[Q_TABLE]) >= 0:
        return m
    a, s = row[Q_A], row[Q_SIGMA]
    last_rising = max(a, 2.0 * a - 1.0) if s <= 1.0 else a + a * s - s  # the largest count off the constant branch
    return np.int64(min(float(m), math.floor(last_rising) + 1.0))


SCAN_MARGIN = 1.0 + 256.0 * 2.0**-52
"""``scan_counts`` stops once a runtime exceeds the least one after it by this factor (see there)."""


@numba.njit(cache=True, error_model="numpy", inline="always")
def scan_counts(row, m, tables):
    """(fastest runtime, the first count that takes it, n_min: the first count with a finite runtime, 0 if
    none) of the queued job ``row`` over the counts 1 .. ``_counts_to_scan`` (larger counts repeat the last
    runtime: neither faster nor first): exactly what a scan of every count in increasing order finds.

    A Downey job (A >= 1, sigma and L finite) is scanned from the last count down, and only while the runtimes
    stay within ``SCAN_MARGIN`` of the least one seen: its exact runtime L / S(n) never increases with n
    (S is continuous and non-decreasing, HRF §2.2), and ``runtime`` computes it to within about 10 rounding
    errors (2^-52 each), so once a count's runtime exceeds the least one after it by 256 of them, every
    smaller count's runtime exceeds that least one too: none of them is the fastest or the first to take it.
    Its n_min is 1 (T(1) = L). Usually two or three counts are evaluated instead of up to m
    (``tests/moldable/test_fast_core.py`` compares both scans on adversarial parameters)."""
    last = _counts_to_scan(row, m)
    downey = np.int64(row[Q_TABLE]) < 0 and row[Q_A] >= 1.0
    if downey and 0.0 <= row[Q_SIGMA] < np.inf and 0.0 < row[Q_L] < np.inf:
        fastest, fastest_count = np.inf, 0
        for count in range(last, 0, -1):
            value = runtime(row, count, tables)
            if value <= fastest:
                fastest, fastest_count = value, count
            elif value > fastest * SCAN_MARGIN:
                break
        return fastest, fastest_count, 1
    fastest, fastest_count, n_min = np.inf, 0, 0
    for k in range(last):
        value = runtime(row, k + 1, tables)
        if value < fastest:
            fastest, fastest_count = value, k + 1
        if n_min == 0 and value < np.inf:
            n_min = k + 1
    return fastest, fastest_count, n_min


@numba.njit(cache=True)
def runtime_rows(queue, tables, m):
    """T(1) .. T(m) of every row of ``queue`` (rows), ``inf`` where a count is not allowed."""
    rows = np.empty((queue.shape[0], m))
    for i in range(queue.shape[0]):
        for k in range(m):
            rows[i, k] = runtime(queue[i], k + 1, tables)
    return rows


@numba.njit(cache=True, error_model="numpy", inline="always")
def _arrive_due(ints, floats, queue, arrivals_f, arrivals_i, tables):
    """Queue the jobs that have arrived by now (``MoldableSim._arrive_due``) after the last queued row of
    ``queue`` (the whole array, see ``live_queue``); False when it is full."""
    m, n_jobs, now = ints[N_PROCS], ints[N_JOBS], floats[TIME]
    while ints[NEXT_ARRIVAL] < n_jobs and arrivals_f[ints[NEXT_ARRIVAL], A_TIME] <= now:
        q, first = ints[N_QUEUED], ints[QUEUE_START]
        if first + q == queue.shape[0]:  # no row after the last job: move the jobs to the top, or grow
            if first == 0:
                return False
            move_entries(queue.reshape(queue.size), 0, first * Q_COLUMNS, q * Q_COLUMNS)
            first = ints[QUEUE_START] = 0
        p = ints[NEXT_ARRIVAL]
        row = queue[first + q]
        table = arrivals_i[p, A_TABLE]
        row[Q_TABLE], row[Q_L], row[Q_A], row[Q_SIGMA] = (
            table,
            arrivals_f[p, A_L],
            arrivals_f[p, A_A],
            arrivals_f[p, A_SIGMA],
        )
        if table >= 0:
            row[Q_ALL_COUNTS] = np.isfinite(tables[table]).all()
        else:  # a Downey job runs on every count: T(n) = L / S(n) <= L, as S(1) = 1 and S never decreases
            row[Q_ALL_COUNTS] = 1.0
        fastest, fastest_count, n_min = scan_counts(row, m, tables)
        row[Q_JOB] = arrivals_i[p, A_JOB]
        row[Q_SUBMIT] = arrivals_f[p, A_TIME]
        row[Q_SIZE] = arrivals_f[p, A_SIZE]
        row[Q_FASTEST] = fastest
        row[Q_FASTEST_COUNT] = fastest_count
        row[Q_N_MIN] = n_min
        row[Q_REQUESTED] = arrivals_i[p, A_REQUESTED]
        row[Q_LOG_SIZE] = math.log1p(row[Q_SIZE] / floats[SCALE])
        row[Q_LOG_FASTEST] = math.log1p(fastest / floats[SCALE])
        row[Q_AT_COUNT] = 0.0
        ints[N_QUEUED] = q + 1
        ints[NEXT_ARRIVAL] = p + 1
    return True


@numba.njit(cache=True, inline="always")
def live_queue(ints, queue):
    """The queued jobs' rows of the queue array ``queue``, in FCFS order from row 0 (and rows after them).

    The queued jobs occupy rows ``ints[QUEUE_START]`` to ``ints[QUEUE_START] + ints[N_QUEUED] - 1``: a job
    that starts from window slot s moves only the s rows before it, one row down, and the first row
    moves with them (``transition``), so a start costs at most the window, never the jobs outside it;
    an arrival that finds no row after the last job moves the jobs back to row 0 (``_arrive_due``).
    Every kernel but ``transition`` and ``_arrive_due`` reads the queue through this view."""
    return queue[ints[QUEUE_START] :]


@numba.njit(cache=True, inline="always")
def _has_decision(ints, queue):
    """Some window job fits in the free processors (``MoldableSim.has_decision``)."""
    w = min(ints[N_QUEUED], ints[MAX_JOBS])
    for i in range(w):  # noqa: SIM110 - a plain loop compiles; any() over a generator does not in numba
        if queue[i, Q_N_MIN] <= ints[FREE]:
            return True
    return False


@numba.njit(cache=True, inline="always")
def is_done(ints):
    return ints[NEXT_ARRIVAL] == ints[N_JOBS] and ints[N_QUEUED] + ints[N_RUNNING] == 0


@numba.njit(cache=True, inline="always")
def _can_wait(ints):
    return ints[N_RUNNING] > 0 or ints[NEXT_ARRIVAL] < ints[N_JOBS]


@numba.njit(cache=True, inline="always")
def _next_event(ints, floats, running, arrivals_f, done):
    """Advance to the next arrival or completion and complete what ends then (``MoldableSim._next_event``)."""
    n = ints[N_RUNNING]
    t = running[np.int64(running[0, R_BY_END]), R_END] if n else np.inf
    if ints[NEXT_ARRIVAL] < ints[N_JOBS]:
        t = min(t, arrivals_f[ints[NEXT_ARRIVAL], A_TIME])
    dt = t - floats[TIME]
    accrued = (ints[N_QUEUED] + n) * dt
    floats[ELAPSED] += dt
    floats[ACCRUED] += accrued
    floats[TOTAL_OBJECTIVE] += accrued
    floats[TIME] = t
    ended = 0  # the jobs ending by t lead the by-end order: an arrival with none reads no running row
    while ended < n and running[np.int64(running[ended, R_BY_END]), R_END] <= t:
        ended += 1
    if ended == 0:
        return
    kept = n  # rows before the first ended one stay where they are
    for e in range(ended):
        kept = min(kept, np.int64(running[e, R_BY_END]))
    for r in range(kept, n):
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
                for c in range(R_BY_END):  # element copies: a row view costs more than the row
                    running[kept, c] = running[r, c]
            kept += 1
    ints[N_RUNNING] = kept
    _drop_ended(running, n - kept, n)


@numba.njit(cache=True, inline="always")
def _drop_ended(running, ended, n):
    """The by-end order after the ``ended`` first of its ``n`` jobs (those ending by now) left and the
    rows after them moved up: each remaining row loses one per ended row before it."""
    if ended == 0:
        return
    for j in range(ended, n):
        row = running[j, R_BY_END]
        before = 0
        for e in range(ended):
            before += running[e, R_BY_END] < row
        running[j, R_BY_END] = row - before
    for j in range(ended, n):
        running[j - ended, R_BY_END] = running[j, R_BY_END]


@numba.njit(cache=True, inline="always")
def log1p_float32(x):
    """A double that float32 rounds to ``float32(math.log1p(x))`` exactly, for the observation's features.

    For x >= 0.01, ``log(1 + x)`` (libm's ``log``, about twice as fast as its ``log1p`` there) is within
    about 100 ulps of log1p(x): rounding 1 + x moves the logarithm by at most 2^-53 absolute, and
    log1p(x) >= 0.00995. The result is kept only when the whole interval +-1e-12 relative around it
    (some 4,500 ulps) rounds to one float32, which then holds libm's log1p too; otherwise (about 2 in
    100,000 values, near a float32 rounding boundary), and for smaller, negative or non-finite ``x``, it
    is ``math.log1p(x)`` itself (``tests/moldable/test_fast_core.py`` checks boundary values).
    """
    if not (x >= 0.01 and x < 1e300):  # small x: log1p is fast there; NaN, inf and negatives: log1p's own
        return math.log1p(x)
    y = math.log(1.0 + x)
    margin = 1e-12 * y
    if np.float32(y - margin) != np.float32(y + margin):
        return math.log1p(x)
    return y


@numba.njit(cache=True)
def _observe(ints, floats, queue, running, arrivals_f, tables, obs):
    """The env's observation (Observation Space table) of the queued rows ``queue`` (``live_queue``).

    A window job's runtime-at-count feature is worked out only when its count differs from the one its
    row keeps (``Q_AT_COUNT``), and kept there. The jobs outside the window are the last arrivals (a job
    behind the window has been behind it since it arrived, and so has every later one): their sizes are
    summed, in the same FCFS order, from the arrival rows, which lie together, not from their queue rows."""
    m, max_jobs, q, n_run, free = ints[N_PROCS], ints[MAX_JOBS], ints[N_QUEUED], ints[N_RUNNING], ints[FREE]
    now, scale = floats[TIME], floats[SCALE]
    w = min(q, max_jobs)
    for k in range(obs.size):  # plain loops, not slice assignments: these run at every step, and a slice is a view
        obs[k] = 0.0
    for i in range(w):  # queue[i, column], not a row view: a view costs more than these reads
        base = SLOT_FEATURES * i
        count = np.int64(min(queue[i, Q_FASTEST_COUNT], max(free, 1)))
        obs[base] = 1.0
        obs[base + 1] = log1p_float32((now - queue[i, Q_SUBMIT]) / scale)
        obs[base + 2] = queue[i, Q_LOG_SIZE]
        obs[base + 3] = queue[i, Q_LOG_FASTEST]
        if count == queue[i, Q_FASTEST_COUNT]:  # T(count) is the fastest runtime
            obs[base + 4] = queue[i, Q_LOG_FASTEST]
        else:
            if queue[i, Q_AT_COUNT] != count:  # worked out once per count (the free processors change it)
                at_count = runtime(queue[i], count, tables)
                queue[i, Q_AT_COUNT] = count
                queue[i, Q_LOG_AT_COUNT] = log1p_float32((0.0 if np.isinf(at_count) else at_count) / scale)
            obs[base + 4] = queue[i, Q_LOG_AT_COUNT]
        obs[base + 5] = queue[i, Q_FASTEST_COUNT] / m
        obs[base + 6] = queue[i, Q_N_MIN] / m
        obs[base + 7] = queue[i, Q_REQUESTED] / m
    tail = SLOT_FEATURES * max_jobs
    obs[tail] = free / m
    obs[tail + 1] = n_run / m
    obs[tail + 2] = log1p_float32(q)
    obs[tail + 3] = log1p_float32(q - w)
    if q > w:
        outside, arrived = 0.0, ints[NEXT_ARRIVAL]
        for p in range(arrived - (q - w), arrived):  # queue[w:q, Q_SIZE]
            outside += arrivals_f[p, A_SIZE]
        obs[tail + 4] = log1p_float32(outside / (m * scale))
    if n_run:
        busy = 0.0
        for r in range(n_run):
            busy += (running[r, R_END] - now) * running[r, R_PROCS]
        # the soonest remaining time: the first job by end time's (x - now is monotone in x: the same minimum)
        obs[tail + 5] = log1p_float32((running[np.int64(running[0, R_BY_END]), R_END] - now) / scale)
        obs[tail + 6] = log1p_float32(busy / (m * scale))
        _release_profile(ints, floats, running, obs, tail + GLOBAL_FEATURES)


@numba.njit(cache=True)
def write_mask(ints, queue, tables, mask, dirty):
    """Write the env's flat action mask of the state (all ones once done; ``queue``: the queued rows,
    ``live_queue``) into ``mask``, whose entries from ``dirty`` on (the last one, wait, aside) are known
    to be 0; returns the new such bound.

    The mask is a function of the state (window, free processors, runtimes), so it is written where it
    is needed: the single env's ``mask`` after every step (``dirty`` its previous bound, so only what
    the last mask may have set is cleared), a zeroed array for the batched env's ``action_masks()``
    (``dirty`` 0: only the allowed entries are written). No entry is written twice (a window slot's
    counts, then what is left to clear below ``dirty``).
    """
    if is_done(ints):
        mask[:] = 1
        return mask.size
    # slice assignments, not loops over an offset index: numba's slices compile to wide stores, the loops
    # to byte stores (3 to 15x slower on the batched env's masks)
    m, free = ints[N_PROCS], ints[FREE]
    w = min(ints[N_QUEUED], ints[MAX_JOBS])
    downey = tables.shape[0] == 0  # every job a Downey job: no queue row to read
    for i in range(w):
        start = i * m
        if downey or queue[i, Q_ALL_COUNTS]:  # Downey jobs: no runtime to read
            mask[start : start + free] = 1
        else:
            table = np.int64(queue[i, Q_TABLE])
            for k in range(free):  # an unconditional store vectorises (8x faster than a guarded one)
                mask[start + k] = tables[table, k] < np.inf
        mask[start + free : min(start + m, dirty)] = 0
    mask[w * m : min(dirty, mask.size - 1)] = 0
    mask[mask.size - 1] = _can_wait(ints)
    return w * m


@numba.njit(cache=True)
def write_factored_mask(ints, queue, tables, mask):
    """Write the factored action space's mask of the state (``queue``: the queued rows, ``live_queue``)
    into ``mask`` (``max_jobs`` slots, wait, then
    the counts 1 .. m; all ones once done): ``core.factored_mask`` of ``write_mask``'s flat mask, read off
    the state. A window slot is allowed when some count up to the free processors is allowed for its
    job, a count when some window slot allows it, wait as in the flat mask."""
    if is_done(ints):
        mask[:] = 1
        return
    max_jobs, free = ints[MAX_JOBS], ints[FREE]
    mask[:] = 0
    counts = mask[max_jobs + 1 :]
    for i in range(min(ints[N_QUEUED], max_jobs)):
        if tables.shape[0] == 0 or queue[i, Q_ALL_COUNTS]:  # every count allowed: those up to free fit
            if free > 0:
                mask[i] = 1
                counts[:free] = 1
        else:
            table = np.int64(queue[i, Q_TABLE])
            for k in range(free):
                if tables[table, k] < np.inf:
                    mask[i] = 1
                    counts[k] = 1
    mask[max_jobs] = _can_wait(ints)


@numba.njit(cache=True, inline="always")
def _allowed(queue, slot, procs, tables):
    """Window slot ``slot``'s job may run on ``procs`` processors (its mask entries below ``FREE``)."""
    if tables.shape[0] == 0 or queue[slot, Q_ALL_COUNTS]:
        return True
    return tables[np.int64(queue[slot, Q_TABLE]), procs - 1] < np.inf


@numba.njit(cache=True, inline="always")
def _first_valid(ints, queue, tables):
    """The first action ``write_mask`` allows that is not the wait (the earliest window slot on its smallest
    allowed count), or the wait when there is none."""
    m, free = ints[N_PROCS], ints[FREE]
    for i in range(min(ints[N_QUEUED], ints[MAX_JOBS])):
        for k in range(1, free + 1):
            if _allowed(queue, i, k, tables):
                return i * m + k - 1
    return ints[MAX_JOBS] * m


@numba.njit(cache=True, inline="always")
def checked_action(action, ints, queue, tables):
    """(the action stepped, masked) for ``action`` in range: ``action`` if ``write_mask`` allows it, else its
    ``_fallback``, read off the state instead of a written mask (the same rule, the same result)."""
    m, max_jobs, free = ints[N_PROCS], ints[MAX_JOBS], ints[FREE]
    wait = max_jobs * m
    if is_done(ints):  # the mask is all ones
        return action, False
    if action != wait:
        slot, procs = action // m, action % m + 1
        if slot < min(ints[N_QUEUED], max_jobs):
            for k in range(min(procs, free), 0, -1):  # the largest allowed count <= procs
                if _allowed(queue, slot, k, tables):
                    return slot * m + k - 1, k != procs
            for k in range(procs + 1, free + 1):  # else the smallest above
                if _allowed(queue, slot, k, tables):
                    return slot * m + k - 1, True
        if _can_wait(ints):
            return wait, True
    elif _can_wait(ints):
        return action, False
    return _first_valid(ints, queue, tables), True


@numba.njit(cache=True, inline="always")
def _release_profile(ints, floats, running, obs, start):
    """(remaining time, processors) of the first ``MAX_RUNNING`` running jobs by end time, ties by row
    (numpy's stable argsort): the first entries of the by-end order (``R_BY_END``)."""
    now, scale, m = floats[TIME], floats[SCALE], ints[N_PROCS]
    for j in range(min(ints[MAX_RUNNING], ints[N_RUNNING])):
        r = np.int64(running[j, R_BY_END])
        obs[start + RELEASE_FEATURES * j] = log1p_float32((running[r, R_END] - now) / scale)
        obs[start + RELEASE_FEATURES * j + 1] = running[r, R_PROCS] / m


@numba.njit(cache=True, inline="always")
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
def step(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, mask):
    """Apply ``action`` (the env's encoding, or ``ADVANCE``), advance to the next decision epoch, observe
    and write the mask (``transition``, ``_observe``, ``write_mask``).

    Returns a status: ``INVALID`` (nothing changed), ``NEED_QUEUE`` (grow the queue, then call
    again with ``ADVANCE``) or ``OK``.
    """
    status = transition(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done)
    if status == OK:
        queued = live_queue(ints, queue)
        _observe(ints, floats, queued, running, arrivals_f, tables, obs)
        ints[MASK_SET] = write_mask(ints, queued, tables, mask, ints[MASK_SET])
    return status


@numba.njit(cache=True)
def transition(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done):
    """Apply ``action`` (the env's encoding, or ``ADVANCE``) and advance to the next decision epoch: the
    family's one transition (the single env's ``step``, the batched ``step_rows``, the fast path).
    ``queue`` is the whole queue array (``live_queue``).

    Returns a status: ``INVALID`` (nothing changed), ``NEED_QUEUE`` (grow the queue, then call
    again with ``ADVANCE``) or ``OK``.
    """
    m, max_jobs = ints[N_PROCS], ints[MAX_JOBS]
    if action != ADVANCE:
        at = np.inf  # the started job's runtime
        if action == max_jobs * m:
            if not _can_wait(ints):
                return INVALID
        else:
            slot, procs = action // m, action % m + 1
            if not (0 <= slot < min(ints[N_QUEUED], max_jobs) and procs <= ints[FREE]):
                return INVALID
            at = runtime(live_queue(ints, queue)[slot], procs, tables)
            if not at < np.inf:
                return INVALID
        ints[N_DONE] = 0
        floats[ELAPSED] = 0.0
        floats[ACCRUED] = 0.0
        if action == max_jobs * m:
            _next_event(ints, floats, running, arrivals_f, done)
        else:
            r, q, now, first = ints[N_RUNNING], ints[N_QUEUED], floats[TIME], ints[QUEUE_START]
            slot += first  # the row of the started job
            running[r, R_JOB] = queue[slot, Q_JOB]
            running[r, R_START] = now
            running[r, R_END] = now + at
            running[r, R_PROCS] = procs
            running[r, R_SUBMIT] = queue[slot, Q_SUBMIT]
            running[r, R_SIZE] = queue[slot, Q_SIZE]
            j = r  # the new row goes after every job that ends no later (ties by row)
            while j > 0 and running[np.int64(running[j - 1, R_BY_END]), R_END] > running[r, R_END]:
                running[j, R_BY_END] = running[j - 1, R_BY_END]
                j -= 1
            running[j, R_BY_END] = r
            ints[N_RUNNING] = r + 1
            ints[FREE] -= procs
            # the window rows before the started one move down a row (``live_queue``): one memmove (an element
            # loop does not vectorise, its source and destination overlapping)
            entries = queue.reshape(queue.size)
            move_entries(entries, (first + 1) * Q_COLUMNS, first * Q_COLUMNS, (slot - first) * Q_COLUMNS)
            ints[QUEUE_START] = first + 1
            ints[N_QUEUED] = q - 1
    while True:
        if not _arrive_due(ints, floats, queue, arrivals_f, arrivals_i, tables):
            return NEED_QUEUE
        if _has_decision(ints, live_queue(ints, queue)) or is_done(ints):
            break
        _next_event(ints, floats, running, arrivals_f, done)
    return OK


def arrival_arrays(jobs: MoldableJobSet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's arrival rows (float part, int part; in arrival order) and runtime tables of ``jobs``."""
    m = jobs.n_procs
    table_jobs = sorted(jobs.tables)
    table_of = np.full(jobs.n_jobs, -1, dtype=np.int64)
    table_of[table_jobs] = np.arange(len(table_jobs))
    tables = np.array([jobs.tables[j] for j in table_jobs]).reshape(len(table_jobs), m)
    arrivals_f, arrivals_i = arrival_rows(jobs.submit, jobs.size, jobs.L, jobs.A, jobs.sigma, table_of, jobs.requested)
    return arrivals_f, arrivals_i, tables


def arrival_rows(
    submit: np.ndarray,
    size: np.ndarray,
    L: np.ndarray,
    A: np.ndarray,
    sigma: np.ndarray,
    table_of: np.ndarray,
    requested: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The arrival rows (float part, int part) of jobs given by aligned columns along the last axis: one
    job set's (n_jobs,) columns, or a stack (..., n_jobs) of several (the batched env's resets). Jobs go
    in arrival order (``MoldableJobSet.arrival_order``: by submit time, ties by index)."""
    arrivals_f, arrivals_i = np.empty((*submit.shape, 5)), np.empty((*submit.shape, 3), dtype=np.int64)
    if (submit[..., 1:] >= submit[..., :-1]).all():  # already in arrival order (a generator's jobs are)
        order = np.arange(submit.shape[-1])
        columns: tuple[np.ndarray, ...] = (submit, size, L, A, sigma, table_of, requested)
    else:
        order = np.argsort(submit, axis=-1, kind="stable")
        columns = tuple(np.take_along_axis(c, order, axis=-1) for c in (submit, size, L, A, sigma, table_of, requested))
    for c in range(5):
        arrivals_f[..., c] = columns[c]
    arrivals_i[..., 0], arrivals_i[..., 1], arrivals_i[..., 2] = order, columns[5], columns[6]
    return arrivals_f, arrivals_i


def initial_queue_rows(n_jobs: int) -> int:
    """The queue's first capacity (it doubles when needed)."""
    return max(16, min(n_jobs, 64))


@numba.njit(cache=True)
def start_episode(ints, floats, max_jobs, m, n_jobs, max_running, scale, first_arrival):
    """Counters of an episode before its first ``ADVANCE``."""
    ints[:] = 0
    ints[MAX_JOBS], ints[N_PROCS], ints[N_JOBS], ints[FREE], ints[MAX_RUNNING] = max_jobs, m, n_jobs, m, max_running
    ints[MASK_SET] = max_jobs * m + 1
    floats[:] = 0.0
    floats[SCALE], floats[TIME] = scale, first_arrival


TURNAROUND, WAITING, RUNTIME, SLOWDOWN, BUSY, LAST, EPOCHS, OVERFLOW = range(8)
"""Per-copy episode sums (``stats``): turnaround, waiting, runtime, slowdown and procs x runtime of
the completed jobs, the last completion, decision epochs and epochs with jobs outside the window."""


@numba.njit(cache=True, inline="always")
def _finish(i, penalty, ints, floats, done, stats, rewards, invalid):
    """After copy i's step: its reward and its episode sums (as ``MoldableEnv.step`` counts them)."""
    row_ints = ints[i]
    for d in range(row_ints[N_DONE]):
        submit, start, end = done[i, d, D_SUBMIT], done[i, d, D_START], done[i, d, D_END]
        runtime = end - start
        stats[i, TURNAROUND] += end - submit
        stats[i, WAITING] += start - submit
        stats[i, RUNTIME] += runtime
        stats[i, SLOWDOWN] += (end - submit) / runtime
        stats[i, BUSY] += done[i, d, D_PROCS] * runtime
        stats[i, LAST] = max(stats[i, LAST], end)
    if not is_done(row_ints):
        stats[i, EPOCHS] += 1.0
        stats[i, OVERFLOW] += row_ints[N_QUEUED] > row_ints[MAX_JOBS]
    reward = -floats[i, ACCRUED]
    if invalid[i]:
        reward -= penalty
    rewards[i] = reward


@numba.njit(cache=True)
def step_rows(
    rows, actions, penalty, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, core_length,
    stats, rewards, invalid, status,
):  # fmt: skip
    """One ``MoldableEnv.step`` for each copy in ``rows`` (``actions`` in range; ``ADVANCE`` resumes a copy
    that stopped with ``NEED_QUEUE`` after its queue grew). A masked action takes its fallback
    (``checked_action``: read off the copy's state, no mask is written)."""
    b = borrowed  # row views of borrowed arrays pass no reference counts to the calls below
    ints, floats, queue, running = b(ints), b(floats), b(queue), b(running)
    arrivals_f, arrivals_i, tables, done, obs, stats = (
        b(arrivals_f),
        b(arrivals_i),
        b(tables),
        b(done),
        b(obs),
        b(stats),
    )
    rewards, invalid, status = b(rewards), b(invalid), b(status)
    n_rows = rows.size
    for r in range(n_rows):
        i = rows[r]
        if r + 2 < n_rows:
            prefetch_row(ints, rows[r + 2], 2)
        if r + 1 < n_rows:
            _prefetch_copy(rows[r + 1], ints, floats, queue, running, arrivals_f, arrivals_i, obs)
        copy_ints, copy_floats, copy_queue, copy_running = ints[i], floats[i], queue[i], running[i]
        action = actions[i]
        if action != ADVANCE:
            action, invalid[i] = checked_action(action, copy_ints, live_queue(copy_ints, copy_queue), tables)
        status[i] = transition(
            action, copy_ints, copy_floats, copy_queue, copy_running, arrivals_f[i], arrivals_i[i], tables, done[i]
        )
        if status[i] == OK:
            _observe(
                copy_ints, copy_floats, live_queue(copy_ints, copy_queue), copy_running, arrivals_f[i], tables,
                obs[i, :core_length],
            )  # fmt: skip
            _finish(i, penalty, ints, floats, done, stats, rewards, invalid)


@numba.njit(cache=True, inline="always")
def _prefetch_copy(i, ints, floats, queue, running, arrivals_f, arrivals_i, obs):
    """Prefetch what ``step_rows`` reads of copy ``i``: its sums, window and running rows, observation,
    the arrival rows of the jobs outside its window (``_observe``) and its next arrival (``ints[i]`` itself
    was prefetched a copy earlier). At B = 1024 the copies' state outgrows the caches, and the
    masked-sampling step ran about 0.2 µs per copy faster with these hints (alternating runs); they
    change no result."""
    prefetch_row(floats, i, 1)
    _prefetch_rows(i, ints, queue, running, obs, min(ints[i, N_QUEUED], ints[i, MAX_JOBS]))
    arrival, outside = ints[i, NEXT_ARRIVAL], ints[i, N_QUEUED] - ints[i, MAX_JOBS]
    if outside > 0:
        prefetch_row(arrivals_f[i], arrival - outside, (outside * arrivals_f.shape[2] * 8 + 63) // 64 + 1)
    if arrival < arrivals_f.shape[1]:
        prefetch_entry(arrivals_f[i], arrival, 0)
        prefetch_entry(arrivals_i[i], arrival, 0)


@numba.njit(cache=True, inline="always")
def _prefetch_rows(i, ints, queue, running, obs, queued):
    """Prefetch copy ``i``'s first ``queued`` queued rows, its running rows (as many as it holds) and its
    observation row (``step_rows`` through ``_prefetch_copy``: the window; ``rank_rows``: every queued job)."""
    prefetch_row(queue[i], ints[i, QUEUE_START], (queued * Q_COLUMNS * 8 + 63) // 64 + 1)
    prefetch_row(running, i, (ints[i, N_RUNNING] * R_COLUMNS * 8 + 63) // 64 + 1)
    prefetch_row(obs, i, (obs.strides[0] + 63) // 64)


@numba.njit(cache=True)
def mask_rows(ints, queue, tables, masks, dirty):
    """The flat action masks of every copy (``write_mask``) into ``masks`` (one row per copy, entries from
    ``dirty`` on known to be 0; ``dirty`` its row length: none known)."""
    ints, queue, tables, masks = borrowed(ints), borrowed(queue), borrowed(tables), borrowed(masks)
    for i in range(masks.shape[0]):
        write_mask(ints[i], live_queue(ints[i], queue[i]), tables, masks[i], dirty)


@numba.njit(cache=True)
def factored_mask_rows(ints, queue, tables, masks):
    """The factored action masks of every copy (``write_factored_mask``) into ``masks`` (one row per copy)."""
    ints, queue, tables, masks = borrowed(ints), borrowed(queue), borrowed(tables), borrowed(masks)
    for i in range(masks.shape[0]):
        write_factored_mask(ints[i], live_queue(ints[i], queue[i]), tables, masks[i])


@numba.njit(cache=True)
def start_rows(rows, ints, floats, arrivals_f, stats, invalid, max_jobs, m, n_jobs, max_running, scale):
    """Counters of the episodes of copies ``rows`` before their first ``ADVANCE``."""
    for r in range(rows.size):
        i = rows[r]
        start_episode(ints[i], floats[i], max_jobs, m, n_jobs, max_running, scale, arrivals_f[i, 0, A_TIME])
        stats[i, :] = 0.0
        invalid[i] = False


# ----------------------------------------------------------------------------- the paper policy's decision
HRF, RIGID = 0, 1
"""Allocation scheme codes of ``decide``."""
# policy state: allocation turn (its time, number and queued jobs) and EASY reservation (job -1: none)
P_TURN_TIME, P_TURN, P_RES_JOB, P_RES_PROCS, P_RES_TIME, P_TURN_JOBS = range(6)
# rows of an allocation turn's scratch ``work`` (one column per queue position; W_COUNT, W_ORDER hold integers)
W_REVENUE, W_NEXT, W_COUNT, W_ORDER = range(4)
WORK_ROWS = 4
"""Rows of ``decide``'s scratch: ``np.empty((WORK_ROWS, queue rows))``, shared by copies stepped one after the other."""


def initial_policy_state() -> np.ndarray:
    """``decide``'s state at the start of an episode: no allocation turn yet, no EASY reservation."""
    return np.array([-np.inf, 0.0, -1.0, 0.0, 0.0, -1.0])


@numba.njit(cache=True)
def _hrf_turn(ints, queue, tables, alpha, threshold, turn, turn_of, count_of, work, resume):
    """Algorithm 1 over every queued job (``baselines.moldable.hrf_allocation``); counts go to ``count_of``.

    The heap becomes a list of the queue positions with a positive revenue (``work[W_ORDER]``), highest
    first, ties to the earlier job (the heap's (-revenue, position) order). Its first job takes
    processors while it stays first (no other revenue moves meanwhile), then moves down the list to its
    new revenue's place, or leaves it: the heap's choices, processor by processor. Each position keeps
    its count, revenue RP(count) = T(count) - T(count + 1) (HRF §4.2; -inf at the cap or when count + 1
    is not allowed) and T(count + 1), which is the next revenue's T(count): every runtime is evaluated once.
    When the counts take the whole budget (a long queue) no revenue is read; otherwise fewer than alpha m
    jobs are queued (each holds a processor), and the list is built by insertion.

    With ``resume`` the jobs start from their counts in ``count_of``: those of the previous turn, over a
    set the queued jobs are what is left of (the others started since). The heap merges the jobs'
    revenue sequences, always taking the highest head, so the previous turn took the queued jobs'
    processors in the very order a turn over them alone takes them; such a turn then goes on with the
    processors the started jobs held (the budget minus the queued jobs' counts): the same counts.
    """
    m, q = ints[N_PROCS], ints[N_QUEUED]
    extra = np.int64(math.floor(alpha * m + 1e-9))
    cap = min(m, np.int64(math.ceil(threshold * m - 1e-9)))
    revenue, following, count, order = work[W_REVENUE], work[W_NEXT], work[W_COUNT], work[W_ORDER]
    for i in range(q):
        x = count_of[np.int64(queue[i, Q_JOB])] if resume else np.int64(queue[i, Q_N_MIN])
        count[i] = x
        extra -= x
    if extra <= 0:  # no processor left (a long queue): no revenue is read
        for i in range(q):
            job = np.int64(queue[i, Q_JOB])
            turn_of[job], count_of[job] = turn, np.int64(count[i])
        return
    n = 0  # order[:n]: the positions with a positive revenue, highest first (fewer than alpha m of them)
    for i in range(q):
        row = queue[i]
        x = count[i]
        value = -np.inf
        if x < cap:
            following[i] = runtime(row, np.int64(x) + 1, tables)
            if following[i] < np.inf:
                value = runtime(row, np.int64(x), tables) - following[i]
        revenue[i] = value
        if value > 0.0:
            k = n
            while k > 0 and value > revenue[np.int64(order[k - 1])]:  # i is the latest: after every equal revenue
                order[k] = order[k - 1]
                k -= 1
            order[k] = i
            n += 1
    first = 0  # the list is order[first:n]
    while extra > 0 and first < n:
        best = np.int64(order[first])
        second = np.int64(order[first + 1]) if first + 1 < n else -1
        row, c, after, value = queue[best], np.int64(count[best]), following[best], revenue[best]
        while extra > 0:  # best takes processors while it stays first
            c += 1
            extra -= 1
            value = -np.inf  # RP(c)
            if c < cap:
                at, after = after, runtime(row, c + 1, tables)
                if after < np.inf:
                    value = at - after
            if not value > 0.0:
                break
            if second >= 0 and not (value > revenue[second] or (value == revenue[second] and best < second)):
                break
        count[best], following[best], revenue[best] = c, after, value
        first += 1
        if value > 0.0:  # back into the list, after every job that now comes first
            k = first
            while k < n and (
                revenue[np.int64(order[k])] > value or (revenue[np.int64(order[k])] == value and order[k] < best)
            ):
                order[k - 1] = order[k]
                k += 1
            order[k - 1] = best
            first -= 1
    for i in range(q):
        job = np.int64(queue[i, Q_JOB])
        turn_of[job], count_of[job] = turn, np.int64(count[i])


@numba.njit(cache=True, inline="always")
def _spare(ints, running, shadow, need):
    """EASY's extra processors: free now plus those released by ``shadow``, minus the head's ``need``."""
    spare = ints[FREE] - need
    for r in range(ints[N_RUNNING]):
        if running[r, R_END] <= shadow:
            spare += np.int64(running[r, R_PROCS])
    return spare


@numba.njit(cache=True)
def decide(
    scheme, easy, alpha, threshold, ints, floats, queue, running, tables, policy, turn_of, count_of, work, counts
):
    """The env action of ``baselines.moldable.MoldablePolicy.act`` for the current state (HRF paper §3, §5;
    ``queue``: the queued rows, ``live_queue``).

    HRF (Algorithm 1 once per allocation turn, over all queued jobs, ``_hrf_turn``; ties to the earlier
    job) or Rigid (requested counts), with FCFS or EASY selection (§3.2; the head's count frozen in its
    reservation). ``counts`` receives the window's counts (the head's reserved count when it has a
    reservation); ``policy`` carries the turn and the reservation from one decision to the next
    (``initial_policy_state``; ``alpha`` and ``threshold`` fixed along the episode); ``work`` is the
    turn's scratch (``WORK_ROWS``). A new turn over the very jobs of the previous one (no job started or
    arrived since: they all belong to it and as many are queued) gives them the same counts, so it only
    renumbers them; one over what is left of them after starts resumes from their counts (``_hrf_turn``).
    """
    m, now, free = ints[N_PROCS], floats[TIME], ints[FREE]
    w = min(ints[N_QUEUED], ints[MAX_JOBS])
    if scheme == HRF:
        turn = np.int64(policy[P_TURN])
        fresh = now != policy[P_TURN_TIME]
        for i in range(w):
            fresh = fresh or turn_of[np.int64(queue[i, Q_JOB])] != turn
        if fresh:
            q = ints[N_QUEUED]
            kept = True  # every queued job was in the previous turn: only starts since
            for i in range(q):
                kept = kept and turn_of[np.int64(queue[i, Q_JOB])] == turn
            turn += 1
            if kept and q == policy[P_TURN_JOBS]:  # the very same jobs: the same counts
                for i in range(q):
                    turn_of[np.int64(queue[i, Q_JOB])] = turn
            else:
                _hrf_turn(ints, queue, tables, alpha, threshold, turn, turn_of, count_of, work, kept)
            policy[P_TURN_TIME], policy[P_TURN], policy[P_TURN_JOBS] = now, turn, q
        for i in range(w):
            counts[i] = count_of[np.int64(queue[i, Q_JOB])]
    else:
        for i in range(w):
            counts[i] = np.int64(queue[i, Q_REQUESTED])
    head = queue[0, Q_JOB]
    if policy[P_RES_JOB] == head:
        counts[0] = np.int64(policy[P_RES_PROCS])
    if counts[0] <= free:
        policy[P_RES_JOB] = -1.0
        return counts[0] - 1
    if easy:
        if policy[P_RES_JOB] != head:
            need, available, shadow = counts[0], free, now
            for k in range(ints[N_RUNNING]):  # by end time (R_BY_END)
                if available >= need:
                    break
                r = np.int64(running[k, R_BY_END])
                available += np.int64(running[r, R_PROCS])
                shadow = max(now, running[r, R_END])
            policy[P_RES_JOB], policy[P_RES_PROCS], policy[P_RES_TIME] = head, need, shadow
        shadow, need = policy[P_RES_TIME], np.int64(policy[P_RES_PROCS])
        spare = _spare(ints, running, shadow, need)
        for slot in range(1, w):
            procs = counts[slot]
            if procs > free:
                continue
            if now + runtime(queue[slot], procs, tables) <= shadow or procs <= spare:
                return slot * m + procs - 1
    return ints[MAX_JOBS] * m


@numba.njit(cache=True)
def follow_paper_policy(
    action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, policy, turn_of, count_of, work, counts
):  # fmt: skip
    """Apply the flat ``action`` (``ADVANCE``: resume after ``NEED_QUEUE``), then take HRF-EASY's decision at every
    decision epoch until the episode ends: ``decide`` with the paper's alpha and threshold, candidate 0 of the
    ranked mode (``rank`` calls it once per epoch, as here). The objective accrues in ``floats[TOTAL_OBJECTIVE]``.
    Returns ``OK``, ``NEED_QUEUE`` (grow the queue and ``work``, then call again with ``ADVANCE``) or ``INVALID``."""
    status = transition(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done)
    while status == OK and not is_done(ints):
        chosen = decide(
            HRF, True, PAPER_ALPHA, PAPER_THRESHOLD, ints, floats, live_queue(ints, queue), running, tables, policy,
            turn_of, count_of, work, counts,
        )  # fmt: skip
        status = transition(chosen, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done)
    return status


# ----------------------------------------------------------------------------- ranked candidates
@numba.njit(cache=True, inline="always")
def _fit(row, target, tables):
    """The largest allowed count of the queued job ``row`` in [n_min, ``target``], 0 if none."""
    for k in range(target, np.int64(row[Q_N_MIN]) - 1, -1):
        if row[Q_ALL_COUNTS] or runtime(row, k, tables) < np.inf:
            return k
    return 0


@numba.njit(cache=True, inline="always")
def _features(slot, procs, row, ints, floats, tables, reserved, shadow, spare, obs, robs, base):
    """The features of starting window slot ``slot`` (queued row ``row``) on ``procs`` (0: none) processors
    into ``robs[base + 1 : base + CANDIDATE_FEATURES]`` (Observation Space; the first, allowed, is the
    caller's); returns whether the start fits now. The slot's waiting time is read from the flat
    observation ``obs`` and the log runtime on the fastest count from the queue row: the same numbers,
    computed once."""
    m, free, now, scale = ints[N_PROCS], ints[FREE], floats[TIME], floats[SCALE]
    at = runtime(row, procs, tables) if procs >= 1 else np.inf
    robs[base + 1] = 1.0
    robs[base + 2] = obs[SLOT_FEATURES * slot + 1]  # log1p((now - submit) / scale), see _observe
    robs[base + 3] = row[Q_LOG_SIZE]
    robs[base + 4] = procs / m
    robs[base + 5], robs[base + 6] = 0.0, 0.0
    if at < np.inf:
        robs[base + 5] = row[Q_LOG_FASTEST] if procs == row[Q_FASTEST_COUNT] else log1p_float32(at / scale)
        robs[base + 6] = slot == 0 or not reserved or now + at <= shadow or procs <= spare
    robs[base + 7] = slot / ints[MAX_JOBS]
    return procs >= 1 and procs <= free and at < np.inf


@numba.njit(cache=True)
def rank(ints, floats, queue, running, tables, obs, policy, turn_of, count_of, work, counts, candidates, cmask, robs):
    """The ranked action mode's candidates, mask and observation at a decision epoch (``MoldableEnv``;
    ``queue``: the queued rows, ``live_queue``).

    Candidate 0 is HRF-EASY's decision (``decide`` with the paper's alpha and threshold, its state in
    ``policy``: call once per decision epoch, as the baseline decides once per step); candidate
    ``1 + WIDTH_KINDS i + k`` starts window slot i on its k-th width (HRF's count, HRF's count
    shrunk to fit the free processors, half HRF's count, the smallest count, the fastest count that
    fits now); the last candidate waits. ``candidates`` rows are (slot, procs): slot -1 waits, procs
    0 names no start. A candidate is allowed when it fits now and repeats no earlier one.
    ``robs`` receives the candidate features, then the flat observation's summary
    and release profile (from ``obs``), then the EASY reservation. Once the episode is over the
    mask is all ones and the candidates are waits.

    A start decision of ``decide`` is always width 0 (HRF's count) of its slot, so candidate 0 takes
    that candidate's features, and a width equal to an earlier one of its slot takes that one's: each
    distinct (slot, count) is worked out once. ``candidates`` and ``robs`` keep what the last call wrote
    (zeros at first): the window's candidates are written in full, and only the slots after the window
    that the last call filled (their first width names the slot) are cleared, not all 5 ``max_jobs``.
    """
    m, max_jobs, free, now, scale = ints[N_PROCS], ints[MAX_JOBS], ints[FREE], floats[TIME], floats[SCALE]
    n_candidates = candidates.shape[0]
    last = n_candidates - 1
    tail = CANDIDATE_FEATURES * n_candidates
    flat_tail = SLOT_FEATURES * max_jobs
    length = obs.size - flat_tail
    robs[tail : tail + length] = obs[flat_tail:]
    robs[tail + length :] = 0.0  # the EASY reservation, if any, below
    candidates[last, 0], candidates[last, 1] = -1, 0
    if is_done(ints):
        robs[:tail] = 0.0
        candidates[:, 0], candidates[:, 1] = -1, 0
        cmask[:] = 1
        return
    w = min(ints[N_QUEUED], max_jobs)
    filled = w  # the slots [w, filled) the last call filled
    while filled < max_jobs and candidates[1 + WIDTH_KINDS * filled, 0] >= 0:
        filled += 1
    if filled > w:
        robs[CANDIDATE_FEATURES * (1 + WIDTH_KINDS * w) : CANDIDATE_FEATURES * (1 + WIDTH_KINDS * filled)] = 0.0
        candidates[1 + WIDTH_KINDS * w : 1 + WIDTH_KINDS * filled, 0] = -1
        candidates[1 + WIDTH_KINDS * w : 1 + WIDTH_KINDS * filled, 1] = 0
    cmask[:] = 0
    first = decide(
        HRF, True, PAPER_ALPHA, PAPER_THRESHOLD, ints, floats, queue, running, tables, policy, turn_of, count_of,
        work, counts,
    )  # fmt: skip
    reserved = policy[P_RES_JOB] == queue[0, Q_JOB]
    shadow, need, spare = now, np.int64(0), np.int64(0)
    if reserved:
        shadow, need = policy[P_RES_TIME], np.int64(policy[P_RES_PROCS])
        spare = _spare(ints, running, shadow, need)
        robs[tail + length] = need / m
        robs[tail + length + 1] = math.log1p(max(shadow - now, 0.0) / scale)
        robs[tail + length + 2] = max(spare, 0) / m
    first_slot, first_procs = -1, 0
    if first != max_jobs * m:
        first_slot, first_procs = first // m, first % m + 1
    candidates[0, 0], candidates[0, 1] = first_slot, first_procs
    robs[:CANDIDATE_FEATURES] = 0.0  # a wait: allowed, no features; a start: below
    if first_slot < 0:
        cmask[0] = 1
        robs[0] = 1.0
    for i in range(w):
        row = queue[i]
        hrf, n_min = counts[i], np.int64(row[Q_N_MIN])
        widths = (
            hrf,
            _fit(row, min(hrf, free), tables),
            _fit(row, max(n_min, hrf // 2), tables),
            n_min,
            _fit(row, min(np.int64(row[Q_FASTEST_COUNT]), free), tables),
        )
        for k in range(WIDTH_KINDS):
            j, procs = 1 + WIDTH_KINDS * i + k, widths[k]
            candidates[j, 0], candidates[j, 1] = i, procs
            base = CANDIDATE_FEATURES * j
            earlier = 0
            while earlier < k and widths[earlier] != procs:
                earlier += 1
            if earlier < k:  # a repeat of width `earlier`: its features, not allowed
                source = base - CANDIDATE_FEATURES * (k - earlier)
                robs[base] = 0.0
                for f in range(1, CANDIDATE_FEATURES):
                    robs[base + f] = robs[source + f]
                continue
            fits = _features(i, procs, row, ints, floats, tables, reserved, shadow, spare, obs, robs, base)
            allowed = fits
            if i == first_slot and procs == first_procs:  # candidate 0 (always width 0 of its slot)
                cmask[0] = fits
                robs[0] = fits
                for f in range(1, CANDIDATE_FEATURES):
                    robs[f] = robs[base + f]
                allowed = False
            cmask[j] = allowed
            robs[base] = allowed
    cmask[last] = first != max_jobs * m and _can_wait(ints)
    robs[CANDIDATE_FEATURES * last] = cmask[last]


@numba.njit(cache=True)
def rank_rows(rows, ints, floats, queue, running, tables, obs, policy, turn_of, count_of, work, counts, candidates,
              cmask, robs, ranked_length):  # fmt: skip
    """``rank`` for each copy in ``rows`` of the batched env (after its step): its ranked observation is
    ``robs[i, :ranked_length]``. The copies' arrays are ``borrowed`` (no reference counts) and the next
    copy's queue, running and flat observation rows are prefetched (``schedenv.kernels``), as in ``step_rows``."""
    b = borrowed
    ints, floats, queue, running, tables, obs = b(ints), b(floats), b(queue), b(running), b(tables), b(obs)
    policy, turn_of, count_of, work, counts = b(policy), b(turn_of), b(count_of), b(work), b(counts)
    candidates, cmask, robs = b(candidates), b(cmask), b(robs)
    n_rows = rows.size
    for r in range(n_rows):
        i = rows[r]
        if r + 1 < n_rows:
            _prefetch_rows(rows[r + 1], ints, queue, running, obs, ints[rows[r + 1], N_QUEUED])
        rank(
            ints[i], floats[i], live_queue(ints[i], queue[i]), running[i], tables, obs[i], policy[i], turn_of[i],
            count_of[i], work,
            counts[i], candidates[i], cmask[i], robs[i, :ranked_length],
        )  # fmt: skip
