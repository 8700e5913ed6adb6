"""The compiled transition of the multiserver-job family and every kernel around it (docs/architecture.md).

``advance`` is the one transition: it serves a given service set until the next arrival or
completion, completes, admits the arrivals (an emptied system idles until the next one) and accrues
the metrics, repeating ``sim.advance`` operation for operation (same float expressions, completions
in arrival order), so it gives bit-identical results to the pure core; tests check this. Everything
that moves time calls it: the env's step (``env_step``, driven by ``fast.FastCore``), the B copies of
``vector.MultiserverJobVectorEnv`` (``reset_rows`` / ``step_rows``) and the fast path
(``schedenv.fastpath.multiserver``, a loop of ``advance`` and a compiled policy).

State of one copy (the batched env stacks B of them on a leading axis; ``MultiserverArrays``):
the jobs present in arrival order, compacted in place as jobs complete (``jobs_i[JOB_ID|NEED]``,
``jobs_f[ARRIVAL|DURATION|REMAINING]``, ``in_service``), the counters ``ints`` and sums ``floats``
(indices below), the service set ``served`` (positions, the transition's input), the stream ids of
the jobs the last transition completed ``done`` (arrival order) and the episode's job stream
(``times``, ``needs``, ``durations``). Packings (the env's ``packing`` and the policies' compiled
rules): 0 = ServerFilling, 1 = first fit, 2 = greedy, 3 = MaxWeight (count-vector table over need
classes). Kernels that call each other share this module because numba's ``cache=True`` only
watches the file a jitted function is defined in (the helpers of ``schedenv.kernels`` aside: after
editing those, delete the caches). The per-step kernels allocate nothing: they sort
by insertion (``smallest_first``) and work in caller-owned scratch arrays (``keys``, ``work``). The
ones called at every epoch (``advance``, ``pack``, ``smallest_first``; ``decide`` of the compiled
policies) are inlined into their callers (``inline="always"``): a call passing a dozen arrays costs
about as much as an epoch's work (the fast path's loop ran about 1.3x slower without it). They index
the job tables in two dimensions rather than take row views, and the fast path runs them on
``borrowed`` views, so that numba's reference counting costs nothing per epoch. The batched env's
``step_rows`` and ``rank_rows`` take their row views from ``borrowed`` arrays too, and prefetch the
next copy's state while they step the current one (``prefetch_step``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from schedenv.kernels import borrowed, prefetch_entry, prefetch_row

COMPLETION_TOLERANCE = 1e-12
PACKINGS = {"serverfilling": 0, "firstfit": 1, "greedy": 2, "maxweight": 3}


INSERTION_LIMIT = 32
"""Stable orders of up to this many entries are built by insertion (no allocation); longer ones by
numpy's mergesort. Both give the one stable order, so results do not depend on the choice."""


@njit(cache=True, inline="always")
def smallest_first(keys: np.ndarray, n: int, count: int, order: np.ndarray) -> None:
    """``order[:count]`` = the first ``count`` entries of the stable ascending order of ``keys[:n]``
    (as ``np.argsort(keys[:n], kind="mergesort")[:count]``), ``count <= n``."""
    if count > INSERTION_LIMIT:
        order[:count] = np.argsort(keys[:n], kind="mergesort")[:count]
        return
    filled = 0
    for j in range(n):
        key = keys[j]
        if filled < count:
            p = filled
            filled += 1
        elif count > 0 and key < keys[order[count - 1]]:  # ties: the earlier entry stays ahead
            p = count - 1
        else:
            continue
        while p > 0 and keys[order[p - 1]] > key:
            order[p] = order[p - 1]
            p -= 1
        order[p] = j


@njit(cache=True, inline="always")
def pack(
    packing: int,
    ordered: np.ndarray,
    m: int,
    needs: np.ndarray,
    k: int,
    table: np.ndarray,
    counts: np.ndarray,
    class_of: np.ndarray,
    served: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Write the positions of the jobs to serve, chosen from ``ordered[:m]`` (most urgent first), into
    ``served``; return how many. ``served`` and ``scratch`` hold at least k entries. MaxWeight
    reads the counts of the jobs present per need class (``counts``; needs lie in 1..k, so there are
    at most k classes) and a need's class (``class_of[need]``)."""
    n_served = 0
    if packing == 2:
        used = 0
        for i in range(m):
            j = ordered[i]
            if used + needs[j] > k:
                break
            served[n_served], n_served = j, n_served + 1
            used += needs[j]
    elif packing == 1:
        free = k
        for i in range(m):
            if free == 0:
                break
            j = ordered[i]
            if needs[j] <= free:
                served[n_served], n_served = j, n_served + 1
                free -= needs[j]
    elif packing == 0:
        total, prefix = 0, m
        for i in range(m):
            total += needs[ordered[i]]
            if total >= k:
                prefix = i + 1
                break
        # prefix <= k (every need is >= 1); order it by decreasing need, stably.
        for i in range(prefix):
            p, need = i, needs[ordered[i]]
            while p > 0 and needs[ordered[scratch[p - 1]]] < need:
                scratch[p] = scratch[p - 1]
                p -= 1
            scratch[p] = i
        used = 0
        for i in range(prefix):
            j = ordered[scratch[i]]
            if used + needs[j] > k:
                break
            served[n_served], n_served = j, n_served + 1
            used += needs[j]
    else:
        n_values = counts.size
        best_row, best_value = 0, -1
        for r in range(table.shape[0]):
            value = 0
            for c in range(n_values):
                if table[r, c] > counts[c]:
                    value = -1
                    break
                value += table[r, c] * counts[c]
            if value > best_value:
                best_row, best_value = r, value
        left, remaining = scratch, 0  # left[c]: class c's jobs still to serve (at most k classes)
        for c in range(n_values):
            left[c] = table[best_row, c]
            remaining += left[c]
        for i in range(m):
            if remaining == 0:
                break
            j = ordered[i]
            c = class_of[needs[j]]
            if left[c] > 0:
                served[n_served], n_served = j, n_served + 1
                left[c] -= 1
                remaining -= 1
    return n_served


def pack_service_set(packing: str, ordered: np.ndarray, needs: np.ndarray, n_servers: int) -> np.ndarray:
    """The boolean service set that ``packing`` ("serverfilling", "firstfit" or "greedy") makes of
    the jobs ``ordered`` (positions into ``needs``, most urgent first): the compiled twin of
    ``schedenv.multiserver.packing.pack`` used by the env's priority mode."""
    served, scratch = np.empty(n_servers, dtype=np.int64), np.empty(n_servers, dtype=np.int64)
    code = PACKINGS[packing]
    n_served = pack(code, ordered, ordered.size, needs, n_servers, _NO_TABLE, _NO_COUNTS, _NO_COUNTS, served, scratch)
    serve = np.zeros(needs.size, dtype=np.bool_)
    serve[served[:n_served]] = True
    return serve


_NO_TABLE = np.zeros((1, 1), dtype=np.int64)
_NO_COUNTS = np.zeros(1, dtype=np.int64)


JOB_ID, NEED = 0, 1
ARRIVAL, DURATION, REMAINING = 0, 1, 2
"""Rows of a copy's job tables ``jobs_i`` (int64) and ``jobs_f`` (float64), one column per job present."""
N_JOBS, NEXT_ARRIVAL, N_COMPLETED, BUSY, N_DONE, N_WINDOW, FREE, EPOCHS, OVERFLOW = range(9)
"""Columns of ``ints``: the transition's counters and the last transition's busy servers and completions,
then the env's (window size, free servers of a select-mode epoch, epochs and epochs with jobs outside
the window)."""
TIME, BUSY_TIME, TOTAL_FLOW, EVENT, ELAPSED, ACCRUED = range(6)
"""Columns of ``floats``: the clock and the accrued sums, then the last transition's event time (the
arrival or completion that ended its service interval), service interval and flow time accrued."""
OK, BAD_SCORES, OVER_CAPACITY, IDLE_FOREVER = range(4)
"""Statuses of ``advance`` and ``env_step``: done; a score outside [-1, 1] or NaN; the service set
needs more than k servers; it is empty with no arrival pending (nothing is changed unless OK)."""
RESPONSE, SLOWDOWN, DONE_DURATION = 0, 1, 2
"""Rows of the batched env's ``finished`` (float64, (B, 3, jobs per episode)): the completed jobs'
response time, slowdown and duration, in completion order."""


class MultiserverArrays(NamedTuple):
    """The state of one copy, or of B copies stacked on a leading axis (see the module docstring), in the
    order every kernel of the family takes it; ``keys`` and ``work`` are scratch space, sized so that a step
    allocates nothing (``work[-n_servers:]`` is the packing's own)."""

    jobs_i: np.ndarray
    jobs_f: np.ndarray
    in_service: np.ndarray
    ints: np.ndarray
    floats: np.ndarray
    served: np.ndarray
    done: np.ndarray
    times: np.ndarray
    needs: np.ndarray
    durations: np.ndarray
    keys: np.ndarray
    work: np.ndarray

    @classmethod
    def zeros(cls, n_copies: int, capacity: int, n_servers: int, max_jobs: int = 0) -> MultiserverArrays:
        """``n_copies`` copies for episodes of ``capacity`` jobs (and windows of ``max_jobs`` slots)."""
        b, n = n_copies, capacity
        int_size, float_size = max(n, 3 * max_jobs) + n_servers, max(n, max_jobs)
        return cls(
            np.zeros((b, 2, n), dtype=np.int64), np.zeros((b, 3, n)), np.zeros((b, n), dtype=np.bool_),
            np.zeros((b, 9), dtype=np.int64), np.zeros((b, 6)), np.zeros((b, max(n_servers, max_jobs)), dtype=np.int64),
            np.zeros((b, n_servers), dtype=np.int64), np.zeros((b, n)), np.zeros((b, n), dtype=np.int64),
            np.zeros((b, n)), np.zeros((b, float_size)), np.zeros((b, int_size), dtype=np.int64),
        )  # fmt: skip

    def views(self, index: int) -> MultiserverArrays:
        """The state of copy ``index`` (views into these arrays)."""
        return MultiserverArrays(*(array[index] for array in self))


@njit(cache=True, inline="always")
def _admit(jobs_i, jobs_f, in_service, n_jobs, next_arrival, time, times, needs, durations):  # fmt: skip
    """Admit the jobs of the stream that have arrived by ``time``; returns the new (n_jobs, next_arrival)."""
    while next_arrival < times.size and times[next_arrival] <= time:
        jobs_i[JOB_ID, n_jobs], jobs_i[NEED, n_jobs] = next_arrival, needs[next_arrival]
        jobs_f[ARRIVAL, n_jobs], jobs_f[DURATION, n_jobs] = times[next_arrival], durations[next_arrival]
        jobs_f[REMAINING, n_jobs], in_service[n_jobs] = durations[next_arrival], False
        n_jobs += 1
        next_arrival += 1
    return n_jobs, next_arrival


@njit(cache=True)
def start(jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work):  # fmt: skip
    """A new episode of the stream ``times``, ``needs``, ``durations``: the jobs of the first arrival instant."""
    ints[:], floats[:] = 0, 0.0
    time = times[0]
    ints[N_JOBS], ints[NEXT_ARRIVAL] = _admit(jobs_i, jobs_f, in_service, 0, 0, time, times, needs, durations)
    floats[TIME] = time


@njit(cache=True, inline="always")
def ended(ints, times):
    """Every job of the stream has arrived and completed."""
    return ints[N_JOBS] == 0 and ints[NEXT_ARRIVAL] >= times.size


@njit(cache=True, inline="always")
def advance(n_served, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k):
    """The transition (``sim.advance``): serve the jobs at positions ``served[:n_served]`` until the next
    arrival or completion, complete the jobs that finish, admit the arrivals (an emptied system idles
    until the next one, docs/envs/index.md) and accrue the flow time and busy server-time.

    Writes the outcome in ``ints[BUSY|N_DONE]``, ``floats[EVENT|ELAPSED|ACCRUED]`` and the completed
    jobs' stream ids in ``done[:ints[N_DONE]]`` (arrival order); returns a status (``OK``,
    ``OVER_CAPACITY``, ``IDLE_FOREVER``: then nothing else is changed).
    """
    n_jobs, next_arrival, time = ints[N_JOBS], ints[NEXT_ARRIVAL], floats[TIME]
    busy = 0
    until_completion = np.inf
    for i in range(n_served):
        j = served[i]
        busy += jobs_i[NEED, j]
        if jobs_f[REMAINING, j] < until_completion:
            until_completion = jobs_f[REMAINING, j]
    ints[BUSY], ints[N_DONE] = busy, 0
    floats[EVENT], floats[ELAPSED], floats[ACCRUED] = time, 0.0, 0.0
    if busy > k:
        return OVER_CAPACITY
    until_arrival = times[next_arrival] - time if next_arrival < times.size else np.inf
    elapsed = min(until_completion, until_arrival)
    if elapsed == np.inf:
        return IDLE_FOREVER
    departure = until_completion <= until_arrival
    time = time + elapsed if departure else times[next_arrival]
    accrued = n_jobs * elapsed
    floats[EVENT], floats[ELAPSED], floats[ACCRUED] = time, elapsed, accrued
    floats[TOTAL_FLOW] += accrued
    floats[BUSY_TIME] += busy * elapsed
    for j in range(n_jobs):
        in_service[j] = False
    n_done = 0  # done[:n_done]: positions of the completed jobs, ascending (at most k are served)
    for i in range(n_served):
        j = served[i]
        in_service[j] = True
        before = jobs_f[REMAINING, j]
        jobs_f[REMAINING, j] = before - elapsed
        if jobs_f[REMAINING, j] <= COMPLETION_TOLERANCE * jobs_f[DURATION, j] or (
            departure and before == until_completion
        ):
            p = n_done
            while p > 0 and done[p - 1] > j:
                done[p] = done[p - 1]
                p -= 1
            done[p] = j
            n_done += 1
    if n_done:
        kept, d = 0, 0
        for j in range(n_jobs):
            if d < n_done and done[d] == j:
                done[d] = jobs_i[JOB_ID, j]  # position j is not yet overwritten: kept <= j
                d += 1
                continue
            jobs_i[JOB_ID, kept], jobs_i[NEED, kept] = jobs_i[JOB_ID, j], jobs_i[NEED, j]
            jobs_f[ARRIVAL, kept], jobs_f[DURATION, kept] = jobs_f[ARRIVAL, j], jobs_f[DURATION, j]
            jobs_f[REMAINING, kept], in_service[kept] = jobs_f[REMAINING, j], in_service[j]
            kept += 1
        n_jobs = kept
    n_jobs, next_arrival = _admit(jobs_i, jobs_f, in_service, n_jobs, next_arrival, time, times, needs, durations)
    if n_jobs == 0 and next_arrival < times.size:
        time = times[next_arrival]
        n_jobs, next_arrival = _admit(jobs_i, jobs_f, in_service, 0, next_arrival, time, times, needs, durations)
    ints[N_JOBS], ints[NEXT_ARRIVAL], ints[N_DONE] = n_jobs, next_arrival, n_done
    ints[N_COMPLETED] += n_done
    floats[TIME] = time
    return OK


@njit(cache=True)
def open_epoch(
    window, obs, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k,
    scale, size_known,
):  # fmt: skip
    """The env's window (least remaining size first, ties by arrival, when ``size_known``; else oldest
    first) in ``window[:ints[N_WINDOW]]`` and its observation (layout in ``MultiserverJobEnv``'s
    docstring) in ``obs``, whose entries after the job features (the scenario parameters) are left
    alone."""
    n, max_jobs, time = ints[N_JOBS], window.size, floats[TIME]
    needs, durations, remaining, arrivals = jobs_i[NEED], jobs_f[DURATION], jobs_f[REMAINING], jobs_f[ARRIVAL]
    n_window = min(n, max_jobs)
    ints[N_WINDOW] = n_window
    if size_known:
        for j in range(n):
            keys[j] = remaining[j] * needs[j]
        smallest_first(keys, n, n_window, window)
    else:
        for slot in range(n_window):
            window[slot] = slot
    features = 7
    obs[: features * max_jobs + 5] = 0.0
    for slot in range(n_window):
        j = window[slot]
        base = features * slot
        unit = needs[j] / (k * scale)
        obs[base] = 1.0
        obs[base + 1] = needs[j] / k
        if size_known:
            obs[base + 2] = np.log1p(unit * remaining[j])
        obs[base + 3] = np.log1p(unit * (durations[j] - remaining[j]))
        obs[base + 4] = np.log1p((time - arrivals[j]) / scale)
        obs[base + 6] = 1.0 if in_service[j] else 0.0
    base = features * max_jobs
    obs[base] = 1.0  # free servers / k: all are free when an epoch opens
    obs[base + 1] = np.log1p(n)
    n_outside = n - n_window
    if n_outside > 0:
        work[:n] = 0  # work[j] = 1: job j is in the window
        for slot in range(n_window):
            work[window[slot]] = 1
        outside_need, outside_work = 0.0, 0.0
        for j in range(n):
            if not work[j]:
                outside_need += needs[j]
                outside_work += needs[j] * remaining[j]
        obs[base + 2] = np.log1p(n_outside)
        obs[base + 3] = np.log1p(outside_need / k)
        if size_known:
            obs[base + 4] = np.log1p(outside_work / (k * scale))


@njit(cache=True)
def open_episode(
    window, obs, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k,
    scale, size_known,
):  # fmt: skip
    """``start`` and the first epoch's window and observation (``ints[N_WINDOW]``)."""
    state = (jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work)
    start(*state)
    open_epoch(window, obs, *state, k, scale, size_known)


@njit(cache=True)
def env_step(
    scores, selected, packing, window, obs, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs,
    durations, keys, work, k, scale, size_known,
):  # fmt: skip
    """One env step that advances time: the service set, ``advance`` and the next epoch's window
    (``ints[N_WINDOW]``) and observation, in place; returns ``advance``'s status, or ``BAD_SCORES``.

    Priority mode (``selected`` empty): ``scores`` per slot, packed by ``packing`` as in
    ``MultiserverJobEnv.service_set_from_scores``. Select mode (``scores`` empty): serve the slots
    flagged in ``selected``. Nothing is changed unless the status is ``OK``.
    """
    m, n_window = window.size, ints[N_WINDOW]
    for slot in range(scores.size):
        if not (scores[slot] >= -1.0 and scores[slot] <= 1.0):  # also false for NaN
            return BAD_SCORES
    n_served = 0
    if selected.size == 0:
        slots, order, ordered = work[:m], work[m : 2 * m], work[2 * m : 3 * m]
        eligible = 0
        for slot in range(n_window):
            eligible += scores[slot] >= 0.0
        count = 0
        for slot in range(n_window):
            if eligible == 0 or scores[slot] >= 0.0:
                slots[count] = slot
                keys[count] = -scores[slot]
                count += 1
        smallest_first(keys, count, count, order)
        for i in range(count):
            ordered[i] = window[slots[order[i]]]
        n_served = pack(
            packing, ordered, count, jobs_i[NEED], k, _NO_TABLE, _NO_COUNTS, _NO_COUNTS, served, work[work.size - k :]
        )
    else:
        for slot in range(selected.size):
            if selected[slot]:
                served[n_served] = window[slot]
                n_served += 1
    state = (jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work)
    status = advance(
        n_served, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k
    )
    if status == OK:
        open_epoch(window, obs, *state, k, scale, size_known)
    return status


@njit(cache=True)
def reset_rows(
    rows, window, obs, selected, mask, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs,
    durations, keys, work, k, scale, size_known,
):  # fmt: skip
    """Start the episodes of copies ``rows`` of the batched env, as ``FastCore.__init__`` and
    ``MultiserverJobEnv.reset`` do for one env: ``open_episode``, then the env's counters and the
    select-mode mask."""
    max_jobs = window.shape[1]
    for r in range(rows.size):
        i = rows[r]
        open_episode(
            window[i], obs[i], jobs_i[i], jobs_f[i], in_service[i], ints[i], floats[i], served[i], done[i], times[i],
            needs[i], durations[i], keys[i], work[i], k, scale, size_known,
        )  # fmt: skip
        ints[i, FREE], ints[i, EPOCHS], ints[i, OVERFLOW] = k, 1, ints[i, N_JOBS] > max_jobs
        selected[i, :] = False
        mask[i, :] = 0
        mask[i, : ints[i, N_WINDOW]] = 1


@njit(cache=True, inline="always")
def prefetch_step(
    i, window, obs, selected, mask, finished, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs,
    durations, keys, work,
):  # fmt: skip
    """Prefetch what ``step_rows`` reads of copy ``i``: its counters, window, mask and observation, its
    ``ints[i, N_JOBS]`` jobs with their scratch entries, its service set, the slots of its next
    completion records and its next arrival (``ints[i]`` itself was prefetched a copy earlier).

    At B = 1024 the batch's state (about 57 kB per copy with the defaults) outgrows the caches, and
    consecutive copies lie a copy's stride apart, which the hardware prefetchers do not follow: every
    copy's step started on a dozen cold cache lines, more the more jobs are present (a sampled,
    partly masked policy lets 25 to 40 accumulate, against 5 to 10 for the first valid action). With
    these hints, issued one copy ahead, the batched env stepped 1.1 to 1.5 times faster in the select
    and ranked modes (measured alternating in one run, ``benchmarks/speed.py``'s batched section). They
    change no result.
    """
    n = ints[i, N_JOBS]
    lines = (8 * n + 63) // 64  # of one row of 8-byte entries per job
    prefetch_row(floats, i, 1)
    prefetch_row(mask, i, 1)
    prefetch_row(selected, i, 1)
    prefetch_row(window, i, (window.strides[0] + 63) // 64)
    prefetch_row(obs, i, (obs.strides[0] + 63) // 64)
    for row in range(jobs_i.shape[1]):
        prefetch_row(jobs_i[i], row, lines)
    for row in range(jobs_f.shape[1]):
        prefetch_row(jobs_f[i], row, lines)
    prefetch_row(in_service, i, (n + 63) // 64)
    prefetch_row(keys, i, lines)
    prefetch_row(work, i, lines)
    prefetch_row(served, i, 1)
    prefetch_row(done, i, 1)
    completed = ints[i, N_COMPLETED]
    if completed < finished.shape[2]:
        for row in range(finished.shape[1]):
            prefetch_entry(finished[i], row, completed)
    arrival = ints[i, NEXT_ARRIVAL]
    if arrival < times.shape[1]:
        prefetch_entry(times, i, arrival)
        prefetch_entry(needs, i, arrival)
        prefetch_entry(durations, i, arrival)


@njit(cache=True)
def step_rows(
    rows, slots, scores, select, penalty, packing, window, obs, selected, mask, finished, rewards, terminated,
    invalid, jobs_i, jobs_f, in_service, ints, floats, served, done, times, needs, durations, keys, work, k, scale,
    size_known,
):  # fmt: skip
    """One ``MultiserverJobEnv.step`` for each copy in ``rows`` of the batched env, same operations.

    Select mode (``select``): ``slots[i]`` in 0..max_jobs, already checked to lie in the space; a
    masked one is replaced by the env's fallback (commit if allowed, else slot 0), flagged in
    ``invalid`` and charged ``penalty`` (0 unless invalid_action="penalty"). Priority mode:
    ``scores[i]`` (float64, already checked to lie in [-1, 1]). A step that commits runs
    ``env_step`` and records the completed jobs in ``finished``.
    """
    b = borrowed  # row views of borrowed arrays pass no reference counts to the calls below
    window, obs, selected, mask, finished = b(window), b(obs), b(selected), b(mask), b(finished)
    rewards, terminated, invalid = b(rewards), b(terminated), b(invalid)
    jobs_i, jobs_f, in_service, ints, floats = b(jobs_i), b(jobs_f), b(in_service), b(ints), b(floats)
    served, done, times, needs, durations = b(served), b(done), b(times), b(needs), b(durations)
    keys, work = b(keys), b(work)
    max_jobs = window.shape[1]
    commit, free_index = max_jobs, 7 * max_jobs
    no_scores, no_selection = np.empty(0), np.empty(0, dtype=np.bool_)
    n_rows = rows.size
    for r in range(n_rows):
        i = rows[r]
        if r + 2 < n_rows:
            prefetch_row(ints, rows[r + 2], 2)
        if r + 1 < n_rows:
            prefetch_step(
                rows[r + 1], window, obs, selected, mask, finished, jobs_i, jobs_f, in_service, ints, floats, served,
                done, times, needs, durations, keys, work,
            )  # fmt: skip
        charge = 0.0
        invalid[i], terminated[i] = False, False
        if select:
            slot = slots[i]
            if mask[i, slot] == 0:
                invalid[i], charge = True, penalty
                slot = commit if mask[i, commit] else 0
            if slot != commit:
                selected[i, slot] = True
                ints[i, FREE] -= jobs_i[i, NEED, window[i, slot]]
                free, fits = ints[i, FREE], False
                for s in range(ints[i, N_WINDOW]):
                    allowed = not selected[i, s] and jobs_i[i, NEED, window[i, s]] <= free
                    mask[i, s] = allowed
                    fits = fits or allowed
                if fits:
                    mask[i, commit] = 1
                    obs[i, 7 * slot + 5] = 1.0
                    obs[i, free_index] = free / k
                    rewards[i] = -charge if charge else 0.0
                    continue
        completed = ints[i, N_COMPLETED]
        env_step(
            no_scores if select else scores[i], selected[i] if select else no_selection, packing, window[i], obs[i],
            jobs_i[i], jobs_f[i], in_service[i], ints[i], floats[i], served[i], done[i], times[i], needs[i],
            durations[i], keys[i], work[i], k, scale, size_known,
        )  # fmt: skip
        event = floats[i, EVENT]
        for d in range(ints[i, N_DONE]):
            j = done[i, d]
            arrival, duration = times[i, j], durations[i, j]
            finished[i, RESPONSE, completed + d] = event - arrival
            finished[i, SLOWDOWN, completed + d] = (event - arrival) / duration
            finished[i, DONE_DURATION, completed + d] = duration
        n_jobs = ints[i, N_JOBS]
        if n_jobs:
            ints[i, EPOCHS] += 1
            ints[i, OVERFLOW] += n_jobs > max_jobs
        now_ended = ended(ints[i], times[i])
        terminated[i] = now_ended
        if select:
            selected[i, :] = False
            ints[i, FREE] = k
            mask[i, :] = 1 if now_ended else 0
            mask[i, : ints[i, N_WINDOW]] = 1
        accrued = floats[i, ACCRUED]
        rewards[i] = -accrued - charge if charge else -accrued


RANKED_COMMIT = -1
"""The ``options`` entry of the commit option (ranked mode, ``rank_options``)."""


@njit(cache=True)
def rank_options(window, needs, selected, free, k, new_epoch, plan, features, obs, options, mask, work):  # fmt: skip
    """Ranked mode (``MultiserverJobEnv``, ``action_mode="ranked"``): the options of one decision in
    ServerFilling-SRPT's order (Grosof et al. 2022, §3.2), so that option 0 at every step is that policy.

    ``window`` holds the positions in ``needs`` of the window's jobs in slot order (least remaining
    size first, i.e. SRPT order, when sizes are known); ``selected`` flags the slots chosen so far and
    ``free`` the servers they leave. At a new epoch (``new_epoch``, nothing selected yet) ``plan`` is
    set to the slots ServerFilling serves over the window order (``pack``, the packing of the env's
    priority mode and of the fast path) and ``features`` to a copy of the window-order slot features
    of ``obs``. The options, written in ``options`` (a slot, or ``RANKED_COMMIT``) and counted in the
    return value, are: the unselected slots of ``plan`` that fit in ``free`` (slot order), then
    commit when a job is selected, then the other unselected slots that fit (slot order). ``obs``
    gets option i's features in slot i (the commit option: valid 1 and feature 5 set, the rest 0),
    padding after them, and free / k; ``mask`` is 1 for the options. ``work`` (int64) holds at least
    2 * max_jobs + 2 * k entries.
    """
    m, n_window = options.size, window.size
    if new_epoch:
        window_needs, ordered = work[:m], work[m : 2 * m]
        for s in range(m):
            plan[s] = False
        for s in range(n_window):
            window_needs[s], ordered[s] = needs[window[s]], s
        served, pack_scratch = work[2 * m : 2 * m + k], work[2 * m + k : 2 * m + 2 * k]
        n_served = pack(0, ordered, n_window, window_needs, k, _NO_TABLE, _NO_COUNTS, _NO_COUNTS, served, pack_scratch)
        for i in range(n_served):
            plan[served[i]] = True
        features[:] = obs[: 7 * m]
    any_selected = False
    for s in range(n_window):
        any_selected = any_selected or selected[s]
    n = 0
    for phase in range(2):  # the paper's service set, commit, then the other jobs
        for s in range(n_window):
            if plan[s] == (phase == 0) and not selected[s] and needs[window[s]] <= free:
                options[n] = s
                n += 1
        if phase == 0 and any_selected:
            options[n] = RANKED_COMMIT
            n += 1
    obs[: 7 * m] = 0.0
    mask[:] = 0
    for i in range(n):
        s = options[i]
        mask[i] = 1
        if s == RANKED_COMMIT:
            obs[7 * i], obs[7 * i + 5] = 1.0, 1.0
        else:
            obs[7 * i : 7 * i + 7] = features[7 * s : 7 * s + 7]
    obs[7 * m] = free / k
    return n


@njit(cache=True)
def rank_rows(rows, jobs_i, window, selected, ints, n_stream, k, plan, features, obs, options, mask, work):  # fmt: skip
    """``rank_options`` for each copy in ``rows`` of the batched env after its step or reset (a copy with
    nothing selected has just opened an epoch); a copy whose episode has ended (all ``n_stream`` jobs
    arrived and completed) gets an all-ones mask, as the single env. Prefetches as ``step_rows`` does
    (``prefetch_step``)."""
    b = borrowed
    jobs_i, window, selected, ints, plan, features = b(jobs_i), b(window), b(selected), b(ints), b(plan), b(features)
    obs, options, mask, work = b(obs), b(options), b(mask), b(work)
    n_rows = rows.size
    for r in range(n_rows):
        i = rows[r]
        if r + 2 < n_rows:
            prefetch_row(ints, rows[r + 2], 2)
        if r + 1 < n_rows:
            after = rows[r + 1]
            prefetch_row(jobs_i[after], NEED, (8 * ints[after, N_JOBS] + 63) // 64)
            prefetch_row(window, after, (window.strides[0] + 63) // 64)
            prefetch_row(options, after, (options.strides[0] + 63) // 64)
            prefetch_row(work, after, (work.strides[0] + 63) // 64)
            prefetch_row(obs, after, (obs.strides[0] + 63) // 64)
            prefetch_row(features, after, (features.strides[0] + 63) // 64)
            prefetch_row(selected, after, 1)
            prefetch_row(plan, after, 1)
            prefetch_row(mask, after, 1)
        n_window = ints[i, N_WINDOW]
        new_epoch = True
        for s in range(n_window):
            new_epoch = new_epoch and not selected[i, s]
        rank_options(
            window[i, :n_window], jobs_i[i, NEED], selected[i, :n_window], ints[i, FREE], k, new_epoch, plan[i],
            features[i], obs[i], options[i], mask[i], work[i],
        )  # fmt: skip
        if ints[i, N_JOBS] == 0 and ints[i, NEXT_ARRIVAL] >= n_stream:
            mask[i, :] = 1
