"""Compiled event core of the dispatch family, run by ``fast`` (the env), ``vector`` and ``schedenv.fastpath.dispatch``.

A numba transcription of ``sim.DispatchSim`` (Harchol-Balter, "Task assignment with unknown
duration", J. ACM 2002, §1 and §4) on flat arrays, with the same floating-point operations in the
same order, so that completion times, per-step rewards (the objective's integral, including the
exact re-summation of ``DispatchSim._uncount``) and running tallies are bit-identical to the pure
simulator's. ``sim.py`` stays the specification; ``tests/perf`` compares the two.

State of one copy (the batched env stacks B of them on a leading axis; ``DispatchArrays``):

- a pool of job slots: ``jf[slot, ARRIVAL|SIZE|WASTED|QUEUEING|ENQUEUED]`` (float64) and
  ``ji[slot, JOB_ID|LIMIT|EXCEEDED|RUNS|LAST_HOST|NEXT|FIRST_HOST]`` (int64; ``JOB_ID`` -1 marks a free slot,
  ``NEXT`` links the FCFS queues and the free list); a job's fields share a cache line;
- hosts: ``hf[RUN_START|RUN_END|QUEUED_WORK|BUSY|FINAL_COUNT|FINAL_SUM, host]`` and ``hi[host]``, the
  running slot (-1 idle); queues ``qs[HEAD|TAIL|LENGTH, q]`` for hosts 0..h-1 and the central queue h;
- counters ``si`` and sums ``sf`` (indices below), and ``ct[COUNT|SUM, size class]``;
- optionally, per-job results indexed by job id: ``done_f[completion|wasted|queueing, job]`` and
  ``done_i[runs|final host, job]``, plus a third row ``done_i[COMPLETION_ORDER]`` listing the ids in
  completion order and a fourth ``done_i[FIRST_HOST_ROW, job]``, the host of each job's first run
  (pass arrays with no columns to keep none; rows beyond those given are not kept).

Every kernel is compiled with numba's ``_nrt=False`` (``NO_NRT``): they allocate nothing (callers pass every
array, scratch space included), and without the runtime's reference counting of the arrays that the
inlined helpers receive (an atomic increment and decrement per use) the event loop runs about four
times faster. Kernels compiled this way cannot create arrays; a ``np.empty`` here fails to compile.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

NO_NRT: dict[str, Any] = {"_nrt": False}
"""Compile without numba's runtime (no reference counting, no allocation); see the module doc."""

ARRIVAL, SIZE, WASTED, QUEUEING, ENQUEUED = range(5)
JOB_ID, LIMIT, EXCEEDED, RUNS, LAST_HOST, NEXT, FIRST_HOST = range(7)
JOB_INTS = 8
"""Columns of ``ji`` (one spare): a row is 64 bytes, one cache line."""
RUN_START, RUN_END, QUEUED_WORK, BUSY, FINAL_COUNT, FINAL_SUM = range(6)
HEAD, TAIL, LENGTH = range(3)
N_PRESENT, NEXT_ARRIVAL, FREE_HEAD, PENDING, N_COMPLETED, KILLS, STEPS, KILLED, COUNTER, KILL_EVENTS = range(10)
N_INTS = 10
TIME, WEIGHT, ACCRUED, STEP_START, RETURN = range(5)
RESPONSE, WAITING, QUEUEING_SUM, SLOWDOWN, WAITING_SLOWDOWN, QUEUEING_SLOWDOWN, WASTED_SUM, WORK = range(5, 13)
FIRST_ARRIVAL = 13
N_FLOATS = 14
PARTIALS = 96
"""``sf[N_FLOATS:]`` is ``fsum_counted``'s scratch space (the kernels allocate nothing; see the module doc)."""
COUNT, SUM = range(2)
COMPLETION_ORDER = 2
"""Optional third row of the per-job ``done_i``: the ids of the completed jobs in completion order."""
FIRST_HOST_ROW = 3
"""Optional fourth row of the per-job ``done_i``: the host of each job's first run."""

DECISION, END, CHUNK_END, FULL = range(4)
"""``advance`` outcomes: a job awaits a decision; all done; the next arrival is in the next chunk; no free slot."""


@numba.njit(cache=True, **NO_NRT)
def fsum_counted(jf, ji, hi, limits, waiting, skip, n_present, partials):
    """``math.fsum`` of 1/x over the counted present jobs but ``skip`` (CPython's exactly rounded algorithm).

    ``partials`` is scratch space: at most about 40 non-overlapping partial sums of doubles exist.
    """
    n, seen = 0, 1
    for slot in range(ji.shape[0]):
        if seen == n_present:
            break
        if ji[slot, JOB_ID] < 0 or slot == skip:
            continue
        seen += 1
        final_run = ji[slot, RUNS] > 0 and hi[ji[slot, LAST_HOST]] == slot
        if waiting and final_run and jf[slot, SIZE] <= limits[ji[slot, LIMIT]]:
            continue
        x = 1.0 / jf[slot, SIZE]
        i = 0
        for j in range(n):
            y = partials[j]
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low != 0.0:
                partials[i] = low
                i += 1
            x = high
        n = i
        if x != 0.0:
            partials[n] = x
            n += 1
    high, low = 0.0, 0.0
    if n > 0:
        n -= 1
        high = partials[n]
        while n > 0:
            x = high
            n -= 1
            y = partials[n]
            high = x + y
            low = y - (high - x)
            if low != 0.0:
                break
        if n > 0 and ((low < 0.0 and partials[n - 1] < 0.0) or (low > 0.0 and partials[n - 1] > 0.0)):
            y = low * 2.0
            x = high + y
            if y == x - high:
                high = x
    return high


@numba.njit(cache=True, inline="always", **NO_NRT)
def bisect_left(bounds, x):
    """``bisect.bisect_left`` on a short sorted array (a loop: cheaper than ``np.searchsorted`` per call)."""
    index = 0
    while index < bounds.size and bounds[index] < x:
        index += 1
    return index


@numba.njit(cache=True, inline="always", **NO_NRT)
def _uncount(slot, jf, ji, hi, si, sf, limits, per_size, waiting):
    """``DispatchSim._uncount``: stop accruing the job's weight (exact re-sum after a large cancellation)."""
    if not per_size:
        sf[WEIGHT] -= 1.0
        return
    before = sf[WEIGHT]
    sf[WEIGHT] -= 1.0 / jf[slot, SIZE]
    if sf[WEIGHT] < 1e-4 * before:
        sf[WEIGHT] = fsum_counted(jf, ji, hi, limits, waiting, slot, si[N_PRESENT], sf[N_FLOATS:])


@numba.njit(cache=True, inline="always", **NO_NRT)
def _start(host, slot, jf, ji, hf, hi, si, sf, limits, per_size, waiting):
    """``DispatchSim._start``."""
    now = sf[TIME]
    jf[slot, QUEUEING] += now - jf[slot, ENQUEUED]
    ji[slot, RUNS] += 1
    ji[slot, LAST_HOST] = host
    if ji[slot, RUNS] == 1:
        ji[slot, FIRST_HOST] = host
    hi[host] = slot
    hf[RUN_START, host] = now
    limit = limits[ji[slot, LIMIT]]
    hf[RUN_END, host] = now + min(jf[slot, SIZE], limit)
    if waiting and jf[slot, SIZE] <= limit:
        _uncount(slot, jf, ji, hi, si, sf, limits, per_size, waiting)


@numba.njit(cache=True, inline="always", **NO_NRT)
def _push(queue, slot, ji, qs):
    ji[slot, NEXT] = -1
    if qs[LENGTH, queue] == 0:
        qs[HEAD, queue] = slot
    else:
        ji[qs[TAIL, queue], NEXT] = slot
    qs[TAIL, queue] = slot
    qs[LENGTH, queue] += 1


@numba.njit(cache=True, inline="always", **NO_NRT)
def _pop(queue, ji, qs):
    slot = qs[HEAD, queue]
    qs[HEAD, queue] = ji[slot, NEXT]
    qs[LENGTH, queue] -= 1
    return slot


@numba.njit(cache=True, inline="always", **NO_NRT)
def dispatch(destination, limit, jf, ji, hf, hi, qs, si, sf, limits, per_size, waiting):
    """``DispatchSim.dispatch``: the pending job goes to ``destination`` (h: central queue) with ``limit``."""
    slot = si[PENDING]
    si[PENDING] = -1
    n_hosts = hi.size
    ji[slot, LIMIT] = limit
    jf[slot, ENQUEUED] = sf[TIME]
    if destination == n_hosts:
        for host in range(n_hosts):
            if hi[host] < 0:
                _start(host, slot, jf, ji, hf, hi, si, sf, limits, per_size, waiting)
                return
        _push(n_hosts, slot, ji, qs)
    elif hi[destination] < 0:
        _start(destination, slot, jf, ji, hf, hi, si, sf, limits, per_size, waiting)
    else:
        _push(destination, slot, ji, qs)
        hf[QUEUED_WORK, destination] += min(jf[slot, SIZE], limits[limit])


@numba.njit(cache=True, inline="always", **NO_NRT)
def _next_for(host, jf, ji, hf, hi, qs, si, sf, limits, per_size, waiting):
    """``DispatchSim._next_for``: own queue first, then the central queue, else idle."""
    if qs[LENGTH, host] > 0:
        slot = _pop(host, ji, qs)
        hf[QUEUED_WORK, host] -= min(jf[slot, SIZE], limits[ji[slot, LIMIT]])
        if qs[LENGTH, host] == 0:
            hf[QUEUED_WORK, host] = 0.0
        _start(host, slot, jf, ji, hf, hi, si, sf, limits, per_size, waiting)
    elif qs[LENGTH, hi.size] > 0:
        _start(host, _pop(hi.size, ji, qs), jf, ji, hf, hi, si, sf, limits, per_size, waiting)
    else:
        hi[host] = -1
        hf[RUN_END, host] = np.inf


@numba.njit(cache=True, inline="always", **NO_NRT)
def _complete(host, slot, jf, ji, hf, hi, si, sf, ct, limits, bounds, per_size, waiting, done_f, done_i):
    """``DispatchSim._complete`` and ``EpisodeTally.add``, in their order of operations."""
    size, arrival, now = jf[slot, SIZE], jf[slot, ARRIVAL], sf[TIME]
    hf[BUSY, host] += size
    if not waiting:
        _uncount(slot, jf, ji, hi, si, sf, limits, per_size, waiting)
    job_id = ji[slot, JOB_ID]
    ji[slot, JOB_ID] = -1
    ji[slot, NEXT] = si[FREE_HEAD]
    si[FREE_HEAD] = slot
    si[N_PRESENT] -= 1
    if si[N_PRESENT] == 0:
        sf[WEIGHT] = 0.0
    slowdown = (now - arrival) / size
    response = now - arrival
    queueing, wasted = jf[slot, QUEUEING], jf[slot, WASTED]
    si[N_COMPLETED] += 1
    sf[RESPONSE] += response
    sf[WAITING] += response - size
    sf[QUEUEING_SUM] += queueing
    sf[SLOWDOWN] += slowdown
    sf[WAITING_SLOWDOWN] += (response - size) / size
    sf[QUEUEING_SLOWDOWN] += queueing / size
    sf[WASTED_SUM] += wasted
    sf[WORK] += size
    si[KILLS] += ji[slot, RUNS] - 1
    sf[FIRST_ARRIVAL] = min(sf[FIRST_ARRIVAL], arrival)
    hf[FINAL_COUNT, host] += 1.0
    hf[FINAL_SUM, host] += slowdown
    size_class = bisect_left(bounds, size)
    ct[COUNT, size_class] += 1.0
    ct[SUM, size_class] += slowdown
    if done_f.shape[1]:
        done_f[0, job_id], done_f[1, job_id], done_f[2, job_id] = now, wasted, queueing
        done_i[0, job_id], done_i[1, job_id] = ji[slot, RUNS], host
        if done_i.shape[0] > COMPLETION_ORDER:
            done_i[COMPLETION_ORDER, si[N_COMPLETED] - 1] = job_id
        if done_i.shape[0] > FIRST_HOST_ROW:
            done_i[FIRST_HOST_ROW, job_id] = ji[slot, FIRST_HOST]


@numba.njit(cache=True, inline="always", **NO_NRT)
def advance(
    jf, ji, hf, hi, qs, si, sf, ct, limits, bounds, per_size, waiting,
    arrivals, sizes, following, id_offset, done_f, done_i,
):  # fmt: skip
    """``DispatchSim.advance``, resumable: run to the next arrival or kill (``DECISION``), or ``END``.

    ``arrivals``/``sizes`` are the current chunk, ``following`` the first arrival time of the next one
    (inf on the last). Returns ``CHUNK_END`` before the next chunk's first arrival and ``FULL`` when
    an arrival finds no free slot, in both cases with the partial step kept in ``sf`` (the caller
    supplies the chunk or grows the pool and calls again). ``sf[ACCRUED]`` is the step's objective.
    """
    n_stream = arrivals.size
    while True:
        nxt = si[NEXT_ARRIVAL]
        t_arrival = arrivals[nxt] if nxt < n_stream else following
        host = 0
        for h in range(1, hi.size):
            if hf[RUN_END, h] < hf[RUN_END, host]:
                host = h
        t_host = hf[RUN_END, host]
        t_next = min(t_arrival, t_host)
        if t_next == np.inf:
            si[KILLED] = 0
            return END
        if t_host > t_arrival and (nxt >= n_stream or si[FREE_HEAD] < 0):
            return CHUNK_END if nxt >= n_stream else FULL
        sf[ACCRUED] += sf[WEIGHT] * (t_next - sf[TIME])
        sf[TIME] = t_next
        if t_host <= t_arrival:
            slot = hi[host]
            if jf[slot, SIZE] <= limits[ji[slot, LIMIT]]:
                _complete(host, slot, jf, ji, hf, hi, si, sf, ct, limits, bounds, per_size, waiting, done_f, done_i)
                _next_for(host, jf, ji, hf, hi, qs, si, sf, limits, per_size, waiting)
                continue
            limit = limits[ji[slot, LIMIT]]
            jf[slot, WASTED] += limit
            ji[slot, EXCEEDED] = ji[slot, LIMIT]
            hf[BUSY, host] += limit
            si[KILL_EVENTS] += 1
            _next_for(host, jf, ji, hf, hi, qs, si, sf, limits, per_size, waiting)
            si[PENDING], si[KILLED] = slot, 1
            return DECISION
        slot = si[FREE_HEAD]
        si[FREE_HEAD] = ji[slot, NEXT]
        size = sizes[nxt]
        ji[slot, JOB_ID], ji[slot, LIMIT], ji[slot, EXCEEDED], ji[slot, RUNS], ji[slot, LAST_HOST] = (
            id_offset + nxt,
            -1,
            -1,
            0,
            -1,
        )
        jf[slot, ARRIVAL], jf[slot, SIZE], jf[slot, WASTED], jf[slot, QUEUEING], jf[slot, ENQUEUED] = (
            t_arrival,
            size,
            0.0,
            0.0,
            0.0,
        )
        si[NEXT_ARRIVAL] = nxt + 1
        si[N_PRESENT] += 1
        sf[WEIGHT] += 1.0 / size if per_size else 1.0
        si[PENDING], si[KILLED] = slot, 0
        return DECISION


@numba.njit(cache=True, inline="always", **NO_NRT)
def host_work(host, hf, hi, now):
    """``DispatchSim.host_work`` of one host."""
    running = hf[RUN_END, host] - now if hi[host] >= 0 else 0.0
    return running + hf[QUEUED_WORK, host]


@numba.njit(cache=True, inline="always", **NO_NRT)
def begin_step(sf):
    """Start a new step's accounting (``DispatchSim.advance``'s ``start`` and ``accrued``)."""
    sf[ACCRUED] = 0.0
    sf[STEP_START] = sf[TIME]


@numba.njit(cache=True, **NO_NRT)
def clear(jf, ji, hf, hi, qs, si, sf, ct):
    """An empty copy at time 0: every slot free (linked in order), hosts idle, tallies zero."""
    capacity = ji.shape[0]
    jf[:] = 0.0
    ji[:] = -1
    for slot in range(capacity - 1):
        ji[slot, NEXT] = slot + 1
    hf[:] = 0.0
    hf[RUN_END] = np.inf
    hi[:] = -1
    qs[:] = 0
    si[:] = 0
    si[PENDING] = -1
    sf[:] = 0.0
    sf[FIRST_ARRIVAL] = np.inf
    ct[:] = 0.0


@numba.njit(cache=True, **NO_NRT)
def observe(obs, jf, ji, hf, hi, qs, si, sf, n_limits, max_jobs, scale, known, n_jobs_total):
    """``ReferenceCore``'s observation (``core.py``) into ``obs`` (float32); returns the jobs outside the windows."""
    n_hosts, now = hi.size, sf[TIME]
    pos = 0
    for host in range(n_hosts):
        running = hi[host]
        obs[pos + 1] = math.log1p(qs[LENGTH, host])
        if running < 0:
            obs[pos], obs[pos + 2], obs[pos + 3] = 0.0, 0.0, 0.0
        else:
            obs[pos] = 1.0
            obs[pos + 2] = math.log1p((now - hf[RUN_START, host]) / scale)
            obs[pos + 3] = (ji[running, LIMIT] + 1) / n_limits
        pos += 4
        if known:
            obs[pos] = math.log1p(host_work(host, hf, hi, now) / scale)
            pos += 1
    obs[pos] = math.log1p(qs[LENGTH, n_hosts])
    pos += 1
    width = 5 if known else 4
    outside = 0
    for queue in range(n_hosts + 1):
        length = qs[LENGTH, queue]
        shown = min(length, max_jobs)
        slot = qs[HEAD, queue]
        for _ in range(shown):
            obs[pos] = 1.0
            obs[pos + 1] = (ji[slot, LIMIT] + 1) / n_limits
            obs[pos + 2] = (ji[slot, EXCEEDED] + 1) / n_limits
            obs[pos + 3] = math.log1p((now - jf[slot, ARRIVAL]) / scale)
            if known:
                obs[pos + 4] = math.log1p(jf[slot, SIZE] / scale)
            pos += width
            slot = ji[slot, NEXT]
        obs[pos : pos + width * (max_jobs - shown)] = 0.0
        pos += width * (max_jobs - shown)
        outside += length - shown
    pending = si[PENDING]
    if pending < 0:
        obs[pos : pos + width] = 0.0
    else:
        runs = ji[pending, RUNS]
        obs[pos] = math.log1p((now - jf[pending, ARRIVAL]) / scale)
        obs[pos + 1] = (ji[pending, EXCEEDED] + 1) / n_limits
        obs[pos + 2] = math.log1p(runs)
        obs[pos + 3] = (ji[pending, LAST_HOST] + 1) / n_hosts if runs else 0.0
        if known:
            obs[pos + 4] = math.log1p(jf[pending, SIZE] / scale)
    pos += width
    obs[pos] = math.log1p(si[N_PRESENT])
    obs[pos + 1] = math.log1p(outside)
    obs[pos + 2] = math.log1p((now - sf[STEP_START]) / scale)
    obs[pos + 3] = si[NEXT_ARRIVAL] / n_jobs_total
    return outside


@numba.njit(cache=True, **NO_NRT)
def _after_step(i, status, jf, ji, hf, hi, qs, si, sf, obs, n_limits, n_jobs, max_jobs, scale, known, out_i, out_f):
    """Observation, mask row, outside count and flags of copy ``i`` after ``advance`` returned ``status``."""
    outside = observe(obs[i], jf[i], ji[i], hf[i], hi[i], qs[i], si[i], sf[i], n_limits, max_jobs, scale, known, n_jobs)
    pending = si[i, PENDING]
    out_i[i, 0] = ji[i, pending, EXCEEDED] + 1 if pending >= 0 else 0
    out_i[i, 1] = outside
    out_i[i, 2] = status == END
    out_f[i] = -sf[i, ACCRUED]


@numba.njit(cache=True, **NO_NRT)
def step_rows(
    rows, actions, jf, ji, hf, hi, qs, si, sf, ct, limits, bounds, per_size, waiting,
    arrivals, sizes, obs, max_jobs, scale, known, out_i, out_f, no_f, no_i,
):  # fmt: skip
    """One ``DispatchEnv.step`` for each copy in ``rows`` (actions already validated).

    ``out_i[i]`` gets (mask row, queued jobs outside the windows, terminated), ``out_f[i]`` the reward.
    """
    n_limits = limits.size
    for r in range(rows.size):
        i = rows[r]
        destination, limit = divmod(actions[i], n_limits)
        dispatch(destination, limit, jf[i], ji[i], hf[i], hi[i], qs[i], si[i], sf[i], limits, per_size, waiting)
        si[i, STEPS] += 1
        begin_step(sf[i])
        status = advance(
            jf[i], ji[i], hf[i], hi[i], qs[i], si[i], sf[i], ct[i], limits, bounds, per_size, waiting,
            arrivals[i], sizes[i], np.inf, 0, no_f, no_i,
        )  # fmt: skip
        _after_step(
            i, status, jf, ji, hf, hi, qs, si, sf, obs, n_limits, arrivals.shape[1],
            max_jobs, scale, known, out_i, out_f,
        )  # fmt: skip


@numba.njit(cache=True, **NO_NRT)
def reset_rows(
    rows, jf, ji, hf, hi, qs, si, sf, ct, limits, bounds, per_size, waiting,
    arrivals, sizes, obs, max_jobs, scale, known, out_i, out_f, no_f, no_i,
):  # fmt: skip
    """``DispatchEnv.reset`` after the workload draw: an empty system advanced to the first arrival."""
    for r in range(rows.size):
        i = rows[r]
        clear(jf[i], ji[i], hf[i], hi[i], qs[i], si[i], sf[i], ct[i])
        status = advance(
            jf[i], ji[i], hf[i], hi[i], qs[i], si[i], sf[i], ct[i], limits, bounds, per_size, waiting,
            arrivals[i], sizes[i], np.inf, 0, no_f, no_i,
        )  # fmt: skip
        _after_step(
            i, status, jf, ji, hf, hi, qs, si, sf, obs, limits.size, arrivals.shape[1],
            max_jobs, scale, known, out_i, out_f,
        )  # fmt: skip


class DispatchArrays:
    """The state arrays of ``n_copies`` copies (see the module docstring), with a growable slot pool."""

    def __init__(self, n_copies: int, n_hosts: int, n_classes: int, capacity: int) -> None:
        b, h = n_copies, n_hosts
        self.jf = np.zeros((b, capacity, 5))
        self.ji = np.zeros((b, capacity, JOB_INTS), dtype=np.int64)
        self.hf = np.zeros((b, 6, h))
        self.hi = np.zeros((b, h), dtype=np.int64)
        self.qs = np.zeros((b, 3, h + 1), dtype=np.int64)
        self.si = np.zeros((b, N_INTS), dtype=np.int64)
        self.sf = np.zeros((b, N_FLOATS + PARTIALS))
        self.ct = np.zeros((b, 2, n_classes))
        for i in range(b):
            clear(*self.views(i))

    @property
    def capacity(self) -> int:
        """Job slots per copy."""
        return int(self.ji.shape[1])

    def views(self, index: int | slice) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any]:
        """The arrays of copy ``index`` (or of the copies a slice selects), in ``advance``'s order."""
        return (
            self.jf[index], self.ji[index], self.hf[index], self.hi[index],
            self.qs[index], self.si[index], self.sf[index], self.ct[index],
        )  # fmt: skip

    def grow(self) -> None:
        """Double the slot pool of every copy; the new slots go to the front of each free list."""
        old = self.capacity
        new = 2 * old
        self.jf = np.concatenate([self.jf, np.zeros((self.jf.shape[0], old, 5))], axis=1)
        self.ji = np.concatenate([self.ji, np.full((self.ji.shape[0], old, JOB_INTS), -1, dtype=np.int64)], axis=1)
        self.ji[:, old : new - 1, NEXT] = np.arange(old + 1, new)
        self.ji[:, new - 1, NEXT] = self.si[:, FREE_HEAD]
        self.si[:, FREE_HEAD] = old
