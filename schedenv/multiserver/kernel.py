"""A numba-compiled event loop for order-and-pack policies (the fast path of docs/baselines/index.md).

It repeats ``sim.advance`` operation for operation (same float expressions, same tie-breaking:
stable sorts over the jobs in arrival order), so it gives bit-identical completion times to the
pure core driven by the same policy; a test checks this. Orders: 0 = SRPT (least remaining size
k_j r_j / k), 1 = arrival, 2 = Gittins rank (a rank table per need, interpolated in the age).
Packings: 0 = ServerFilling, 1 = first fit, 2 = greedy, 3 = MaxWeight (count-vector table over
``need_values``, whose job counts are kept up to date at arrivals and completions). The Gittins
rank tables have one row per entry of ``need_values``.

The env's per-step kernels live here too (``open_epoch``, ``env_step``, driven by ``fast.FastCore``,
and ``reset_rows`` / ``step_rows``, which run them for the B copies of ``vector.MultiserverJobVectorEnv``),
because numba's ``cache=True`` only watches the file a jitted function is defined in: kernels that
call each other (``_pack``, ``fill_observation``) must share a module. The per-step kernels allocate
nothing: they sort by insertion (``smallest_first``) and work in caller-owned scratch arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

COMPLETION_TOLERANCE = 1e-12
ORDERS = {"srpt": 0, "arrival": 1, "gittins": 2}
PACKINGS = {"serverfilling": 0, "firstfit": 1, "greedy": 2, "maxweight": 3}


INSERTION_LIMIT = 32
"""Stable orders of up to this many entries are built by insertion (no allocation); longer ones by
numpy's mergesort. Both give the one stable order, so results do not depend on the choice."""


@njit(cache=True)
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


@njit(cache=True)
def _take(j: int, serve: np.ndarray, served: np.ndarray, n_served: int) -> int:
    serve[j] = True
    served[n_served] = j
    return n_served + 1


@njit(cache=True)
def _pack(
    packing: int,
    ordered: np.ndarray,
    needs: np.ndarray,
    k: int,
    table: np.ndarray,
    counts: np.ndarray,
    need_class: np.ndarray,
    serve: np.ndarray,
    served: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Mark the jobs to serve (``serve`` flags and the list ``served``); return how many.
    ``served`` and ``scratch`` hold at least k entries."""
    m, n_served = ordered.size, 0
    if packing == 2:
        used = 0
        for i in range(m):
            j = ordered[i]
            if used + needs[j] > k:
                break
            n_served = _take(j, serve, served, n_served)
            used += needs[j]
    elif packing == 1:
        free = k
        for i in range(m):
            if free == 0:
                break
            j = ordered[i]
            if needs[j] <= free:
                n_served = _take(j, serve, served, n_served)
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
            n_served = _take(j, serve, served, n_served)
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
        left = table[best_row].copy()
        remaining = left.sum()
        for i in range(m):
            if remaining == 0:
                break
            j = ordered[i]
            c = need_class[j]
            if left[c] > 0:
                n_served = _take(j, serve, served, n_served)
                left[c] -= 1
                remaining -= 1
    return n_served


@njit(cache=True)
def simulate(
    arrivals: np.ndarray,
    needs: np.ndarray,
    durations: np.ndarray,
    k: int,
    order: int,
    packing: int,
    need_values: np.ndarray,
    table: np.ndarray,
    rank_ages: np.ndarray,
    rank_values: np.ndarray,
    cap: int,
) -> tuple[np.ndarray, float, float, bool]:
    """Completion times, total flow time and busy server-time of one episode, and whether it was
    cut short because more than ``cap`` jobs were present (``cap`` <= 0: never; unfinished jobs
    then have completion time inf).

    Work per epoch is O(k) apart from the SRPT / Gittins sort and the removal of completed jobs
    from the arrival-ordered list, so long queues (high load, unstable policies) stay cheap.
    """
    n = arrivals.size
    completion = np.full(n, np.inf)
    remaining = durations.copy()
    present = np.empty(n, dtype=np.int64)
    serve = np.zeros(n, dtype=np.bool_)
    served, scratch = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
    need_class = np.zeros(n, dtype=np.int64)
    for j in range(n):
        for c in range(need_values.size):
            if needs[j] == need_values[c]:
                need_class[j] = c
    counts = np.zeros(need_values.size, dtype=np.int64)
    m, next_arrival, n_served = 0, 0, 0
    time = arrivals[0]
    while next_arrival < n and arrivals[next_arrival] <= time:
        present[m] = next_arrival
        counts[need_class[next_arrival]] += 1
        m += 1
        next_arrival += 1
    total_flow, busy_time = 0.0, 0.0
    while m > 0 or next_arrival < n:
        if 0 < cap < m:
            return completion, total_flow, busy_time, True
        jobs = present[:m]
        if order == 1:
            ordered = jobs
        else:
            keys = np.empty(m)
            for i in range(m):
                j = jobs[i]
                if order == 0:
                    keys[i] = needs[j] * remaining[j]
                else:
                    age = needs[j] * (durations[j] - remaining[j]) / k
                    keys[i] = np.interp(age, rank_ages[need_class[j]], rank_values[need_class[j]])
            ordered = jobs[np.argsort(keys, kind="mergesort")]
        for i in range(n_served):
            serve[served[i]] = False
        n_served = _pack(packing, ordered, needs, k, table, counts, need_class, serve, served, scratch)
        busy = 0
        until_completion = np.inf
        for i in range(n_served):
            j = served[i]
            busy += needs[j]
            if remaining[j] < until_completion:
                until_completion = remaining[j]
        until_arrival = arrivals[next_arrival] - time if next_arrival < n else np.inf
        elapsed = min(until_completion, until_arrival)
        total_flow += m * elapsed
        busy_time += busy * elapsed
        departure = until_completion <= until_arrival
        time = time + elapsed if departure else arrivals[next_arrival]
        n_done = 0
        for i in range(n_served):
            j = served[i]
            before = remaining[j]
            remaining[j] = before - elapsed
            if remaining[j] <= COMPLETION_TOLERANCE * durations[j] or (departure and before == until_completion):
                completion[j] = time
                counts[need_class[j]] -= 1
                n_done += 1
        if n_done:
            kept = 0
            for i in range(m):
                j = present[i]
                if completion[j] == np.inf:
                    present[kept] = j
                    kept += 1
            m = kept
        while next_arrival < n and arrivals[next_arrival] <= time:
            present[m] = next_arrival
            counts[need_class[next_arrival]] += 1
            m += 1
            next_arrival += 1
        if m == 0 and next_arrival < n:
            time = arrivals[next_arrival]
            while next_arrival < n and arrivals[next_arrival] <= time:
                present[m] = next_arrival
                counts[need_class[next_arrival]] += 1
                m += 1
                next_arrival += 1
    return completion, total_flow, busy_time, False


def pack_service_set(packing: str, ordered: np.ndarray, needs: np.ndarray, n_servers: int) -> np.ndarray:
    """The boolean service set that ``packing`` ("serverfilling", "firstfit" or "greedy") makes of
    the jobs ``ordered`` (positions into ``needs``, most urgent first): the compiled twin of
    ``schedenv.multiserver.packing.pack`` used by the env's priority mode."""
    serve = np.zeros(needs.size, dtype=np.bool_)
    served, scratch = np.empty(n_servers, dtype=np.int64), np.empty(n_servers, dtype=np.int64)
    empty = np.zeros(1, dtype=np.int64)
    _pack(PACKINGS[packing], ordered, needs, n_servers, _NO_TABLE, empty, empty, serve, served, scratch)
    return serve


_NO_TABLE = np.zeros((1, 1), dtype=np.int64)
_NO_COUNTS = np.zeros(1, dtype=np.int64)


@njit(cache=True)
def fill_observation(
    obs: np.ndarray,
    max_jobs: int,
    window: np.ndarray,
    needs: np.ndarray,
    durations: np.ndarray,
    remaining: np.ndarray,
    arrivals: np.ndarray,
    in_service: np.ndarray,
    time: float,
    k: int,
    scale: float,
    size_known: bool,
    free: int,
    marks: np.ndarray,
) -> None:
    """Write the env's observation (layout in ``MultiserverJobEnv``'s docstring) into ``obs``; entries
    after the job features (the scenario parameters) are left alone. ``marks`` is scratch space of at
    least ``needs.size`` entries."""
    features = 7
    obs[: features * max_jobs + 5] = 0.0
    for slot in range(window.size):
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
    n = needs.size
    obs[base] = free / k
    obs[base + 1] = np.log1p(n)
    n_outside = n - window.size
    if n_outside > 0:
        marks[:n] = 0
        for slot in range(window.size):
            marks[window[slot]] = 1
        outside_need, outside_work = 0.0, 0.0
        for j in range(n):
            if not marks[j]:
                outside_need += needs[j]
                outside_work += needs[j] * remaining[j]
        obs[base + 2] = np.log1p(n_outside)
        obs[base + 3] = np.log1p(outside_need / k)
        if size_known:
            obs[base + 4] = np.log1p(outside_work / (k * scale))


@njit(cache=True)
def open_epoch(
    window: np.ndarray,
    obs: np.ndarray,
    needs: np.ndarray,
    durations: np.ndarray,
    remaining: np.ndarray,
    arrivals: np.ndarray,
    in_service: np.ndarray,
    time: float,
    k: int,
    scale: float,
    size_known: bool,
    keys: np.ndarray,
    work: np.ndarray,
) -> int:
    """The env's window (least remaining size first, ties by arrival, when ``size_known``; else
    oldest first) written into ``window``, and its observation into ``obs``; returns the window
    size. The arrays hold the jobs present in arrival order; ``keys`` and ``work`` are scratch
    space (``scratch_sizes``)."""
    n, max_jobs = needs.size, window.size
    n_window = min(n, max_jobs)
    if size_known:
        for j in range(n):
            keys[j] = remaining[j] * needs[j]
        smallest_first(keys, n, n_window, window)
    else:
        for slot in range(n_window):
            window[slot] = slot
    shown = window[:n_window]
    fill_observation(
        obs, max_jobs, shown, needs, durations, remaining, arrivals, in_service, time, k, scale, size_known, k, work
    )
    return n_window


def scratch_sizes(capacity: int, max_jobs: int, n_servers: int) -> tuple[int, int]:
    """Entries of the int64 and float64 scratch arrays that ``env_step`` and ``open_epoch`` need for
    ``capacity`` jobs (the episode's job count), so that a step allocates nothing."""
    return max(capacity, 3 * max_jobs + 3 * n_servers), max(capacity, max_jobs)


@njit(cache=True)
def env_step(
    scores, selected, packing, window, n_window, obs, job_id, arrival, needs, durations, remaining, in_service,
    n_jobs, next_arrival, time, arrival_times, stream_needs, stream_durations, k, scale, size_known, serve, done,
    keys, work,
):  # fmt: skip
    """One env step that advances time: the service set, ``sim.advance`` and the next epoch's window
    and observation, in place. The jobs present are ``[:n_jobs]`` of the job arrays (arrival order).

    Priority mode (``selected`` empty): ``scores`` per slot, packed by ``packing`` as in
    ``MultiserverJobEnv.service_set_from_scores``. Select mode (``scores`` empty): serve the slots
    flagged in ``selected``. Returns (status, n_jobs, next_arrival, time, event, n_window, elapsed,
    busy, n_done) with the stream indices of the completed jobs (arrival order) in ``done[:n_done]``.
    ``event`` is the time of the arrival or completion that ends the service interval ``elapsed``;
    ``time`` is later when an emptied system waits for the next arrival.
    Status 1: a score outside [-1, 1] or NaN; 2: the service set overflows k; 3: it is empty with
    no arrival pending. Nothing is changed unless the status is 0. ``keys`` (float64) and ``work``
    (int64) are scratch space of ``scratch_sizes`` entries.
    """
    m = window.size
    slots, order, ordered = work[:m], work[m : 2 * m], work[2 * m : 3 * m]
    served, pack_scratch, gone = work[3 * m : 3 * m + k], work[3 * m + k : 3 * m + 2 * k], work[3 * m + 2 * k :]
    for slot in range(scores.size):
        if not (scores[slot] >= -1.0 and scores[slot] <= 1.0):  # also false for NaN
            return 1, n_jobs, next_arrival, time, time, n_window, 0.0, 0, 0
    for j in range(n_jobs):
        serve[j] = False
    if selected.size == 0:
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
        _pack(packing, ordered[:count], needs, k, _NO_TABLE, _NO_COUNTS, _NO_COUNTS, serve, served, pack_scratch)
    else:
        for slot in range(selected.size):
            if selected[slot]:
                serve[window[slot]] = True
    busy = 0
    until_completion = np.inf
    for j in range(n_jobs):
        if serve[j]:
            busy += needs[j]
            if remaining[j] < until_completion:
                until_completion = remaining[j]
    if busy > k:
        return 2, n_jobs, next_arrival, time, time, n_window, 0.0, busy, 0
    n = arrival_times.size
    until_arrival = arrival_times[next_arrival] - time if next_arrival < n else np.inf
    elapsed = min(until_completion, until_arrival)
    if elapsed == np.inf:
        return 3, n_jobs, next_arrival, time, time, n_window, 0.0, busy, 0
    departure = until_completion <= until_arrival
    time = time + elapsed if departure else arrival_times[next_arrival]
    event = time
    n_done = 0  # gone[:n_done]: positions of the completed jobs (at most k are served)
    for j in range(n_jobs):
        in_service[j] = serve[j]
        if serve[j]:
            before = remaining[j]
            remaining[j] = before - elapsed
            if remaining[j] <= COMPLETION_TOLERANCE * durations[j] or (departure and before == until_completion):
                gone[n_done] = j
                done[n_done] = job_id[j]
                n_done += 1
    if n_done:
        kept, d = 0, 0
        for j in range(n_jobs):
            if d < n_done and gone[d] == j:
                d += 1
                continue
            job_id[kept], arrival[kept], needs[kept] = job_id[j], arrival[j], needs[j]
            durations[kept], remaining[kept], in_service[kept] = durations[j], remaining[j], in_service[j]
            kept += 1
        n_jobs = kept
    for _ in range(2):  # admit the arrivals; an emptied system idles until the next one (docs/envs/index.md)
        while next_arrival < n and arrival_times[next_arrival] <= time:
            job_id[n_jobs], arrival[n_jobs] = next_arrival, arrival_times[next_arrival]
            needs[n_jobs], durations[n_jobs] = stream_needs[next_arrival], stream_durations[next_arrival]
            remaining[n_jobs], in_service[n_jobs] = stream_durations[next_arrival], False
            n_jobs += 1
            next_arrival += 1
        if n_jobs > 0 or next_arrival >= n:
            break
        time = arrival_times[next_arrival]
    n_window = open_epoch(
        window, obs, needs[:n_jobs], durations[:n_jobs], remaining[:n_jobs], arrival[:n_jobs], in_service[:n_jobs],
        time, k, scale, size_known, keys, work,
    )  # fmt: skip
    return 0, n_jobs, next_arrival, time, event, n_window, elapsed, busy, n_done


JOB_ID, NEED = 0, 1
ARRIVAL, DURATION, REMAINING = 0, 1, 2
IN_SERVICE, SERVE = 0, 1
RESPONSE, SLOWDOWN, DONE_DURATION = 0, 1, 2
"""Rows of the batched env's per-copy job tables: ``jobs_i`` (int64), ``jobs_f`` (float64), ``flags``
(bool), each of shape (B, rows, capacity), and ``finished`` (float64, (B, 3, jobs per episode): the
completed jobs' response time, slowdown and duration, in completion order)."""
N_JOBS, NEXT_ARRIVAL, N_WINDOW, FREE, N_COMPLETED, EPOCHS, OVERFLOW = range(7)
TIME, BUSY_TIME, TOTAL_FLOW = range(3)
"""Columns of the batched env's per-copy counters ``ints`` (int64) and ``floats`` (float64)."""


@njit(cache=True)
def reset_rows(
    rows, jobs_i, jobs_f, flags, window, obs, selected, mask, ints, floats, times, stream_needs, stream_durations,
    k, scale, size_known, keys, work,
):  # fmt: skip
    """Start the episodes of copies ``rows`` of the batched env, as ``FastCore.__init__`` and
    ``MultiserverJobEnv.reset`` do for one env: admit the jobs of the first arrival instant, open
    the first epoch (window, observation, select-mode mask)."""
    max_jobs = window.shape[1]
    for r in range(rows.size):
        i = rows[r]
        time = times[i, 0]
        n = 0
        while n < times.shape[1] and times[i, n] <= time:
            jobs_i[i, JOB_ID, n], jobs_i[i, NEED, n] = n, stream_needs[i, n]
            jobs_f[i, ARRIVAL, n], jobs_f[i, DURATION, n] = times[i, n], stream_durations[i, n]
            jobs_f[i, REMAINING, n], flags[i, IN_SERVICE, n] = stream_durations[i, n], False
            n += 1
        ints[i, N_JOBS], ints[i, NEXT_ARRIVAL], ints[i, FREE], ints[i, N_COMPLETED] = n, n, k, 0
        ints[i, EPOCHS], ints[i, OVERFLOW] = 1, n > max_jobs
        floats[i, TIME], floats[i, BUSY_TIME], floats[i, TOTAL_FLOW] = time, 0.0, 0.0
        need, arrival, duration = jobs_i[i, NEED], jobs_f[i, ARRIVAL], jobs_f[i, DURATION]
        remaining, in_service = jobs_f[i, REMAINING], flags[i, IN_SERVICE]
        n_window = open_epoch(
            window[i], obs[i], need[:n], duration[:n], remaining[:n], arrival[:n], in_service[:n], time, k, scale,
            size_known, keys[i], work[i],
        )  # fmt: skip
        ints[i, N_WINDOW] = n_window
        selected[i, :] = False
        mask[i, :] = 0
        mask[i, :n_window] = 1


@njit(cache=True)
def step_rows(
    rows, slots, scores, select, penalty, packing, jobs_i, jobs_f, flags, done, window, obs, selected, mask, ints,
    floats, finished, times, stream_needs, stream_durations, k, scale, size_known, rewards, terminated, invalid,
    keys, work,
):  # fmt: skip
    """One ``MultiserverJobEnv.step`` for each copy in ``rows`` of the batched env, same operations.

    Select mode (``select``): ``slots[i]`` in 0..max_jobs, already checked to lie in the space; a
    masked one is replaced by the env's fallback (commit if allowed, else slot 0), flagged in
    ``invalid`` and charged ``penalty`` (0 unless invalid_action="penalty"). Priority mode:
    ``scores[i]`` (float64, already checked to lie in [-1, 1]). A step that commits runs
    ``env_step`` and records the completed jobs in ``finished``.
    """
    max_jobs = window.shape[1]
    commit, free_index, n = max_jobs, 7 * max_jobs, times.shape[1]
    no_scores, no_selection = np.empty(0), np.empty(0, dtype=np.bool_)
    for r in range(rows.size):
        i = rows[r]
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
        n_before = ints[i, N_JOBS]
        _, n_jobs, next_arrival, time, event, n_window, elapsed, busy, n_done = env_step(
            no_scores if select else scores[i], selected[i] if select else no_selection, packing, window[i],
            ints[i, N_WINDOW], obs[i], jobs_i[i, JOB_ID], jobs_f[i, ARRIVAL], jobs_i[i, NEED], jobs_f[i, DURATION],
            jobs_f[i, REMAINING], flags[i, IN_SERVICE], n_before, ints[i, NEXT_ARRIVAL], floats[i, TIME], times[i],
            stream_needs[i], stream_durations[i], k, scale, size_known, flags[i, SERVE], done[i], keys[i], work[i],
        )  # fmt: skip
        accrued = n_before * elapsed
        floats[i, BUSY_TIME] += busy * elapsed
        floats[i, TOTAL_FLOW] += accrued
        floats[i, TIME] = time
        completed = ints[i, N_COMPLETED]
        for d in range(n_done):
            j = done[i, d]
            arrival, duration = times[i, j], stream_durations[i, j]
            finished[i, RESPONSE, completed + d] = event - arrival
            finished[i, SLOWDOWN, completed + d] = (event - arrival) / duration
            finished[i, DONE_DURATION, completed + d] = duration
        ints[i, N_COMPLETED] = completed + n_done
        ints[i, N_JOBS], ints[i, NEXT_ARRIVAL], ints[i, N_WINDOW] = n_jobs, next_arrival, n_window
        if n_jobs:
            ints[i, EPOCHS] += 1
            ints[i, OVERFLOW] += n_jobs > max_jobs
        ended = n_jobs == 0 and next_arrival >= n
        terminated[i] = ended
        if select:
            selected[i, :] = False
            ints[i, FREE] = k
            mask[i, :] = 1 if ended else 0
            mask[i, :n_window] = 1
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
    set to the slots ServerFilling serves over the window order (``_pack``, the packing of the env's
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
        _pack(0, ordered[:n_window], window_needs, k, _NO_TABLE, _NO_COUNTS, _NO_COUNTS, plan, served, pack_scratch)
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
    arrived and completed) gets an all-ones mask, as the single env."""
    for r in range(rows.size):
        i = rows[r]
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
