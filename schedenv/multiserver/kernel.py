"""A numba-compiled event loop for order-and-pack policies (DESIGN §7 fast path).

It repeats ``sim.advance`` operation for operation (same float expressions, same tie-breaking:
stable sorts over the jobs in arrival order), so it gives bit-identical completion times to the
pure core driven by the same policy; a test checks this. Orders: 0 = SRPT (least remaining size
k_j r_j / k), 1 = arrival, 2 = Gittins rank (a rank table per need, interpolated in the age).
Packings: 0 = ServerFilling, 1 = first fit, 2 = greedy, 3 = MaxWeight (count-vector table over
``need_values``, whose job counts are kept up to date at arrivals and completions). The Gittins
rank tables have one row per entry of ``need_values``.

The env's per-step kernels live here too (``open_epoch``, ``env_step``, driven by ``fast.FastCore``),
because numba's ``cache=True`` only watches the file a jitted function is defined in: kernels that
call each other (``_pack``, ``fill_observation``) must share a module.
"""

from __future__ import annotations

import numpy as np
from numba import njit

COMPLETION_TOLERANCE = 1e-12
ORDERS = {"srpt": 0, "arrival": 1, "gittins": 2}
PACKINGS = {"serverfilling": 0, "firstfit": 1, "greedy": 2, "maxweight": 3}


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
) -> int:
    """Mark the jobs to serve (``serve`` flags and the list ``served``); return how many."""
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
        members = ordered[:prefix]
        keys = np.empty(prefix, dtype=np.int64)
        for i in range(prefix):
            keys[i] = -needs[members[i]]
        by_need = members[np.argsort(keys, kind="mergesort")]
        used = 0
        for i in range(prefix):
            j = by_need[i]
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
    served = np.empty(k, dtype=np.int64)
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
        n_served = _pack(packing, ordered, needs, k, table, counts, need_class, serve, served)
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
    served = np.empty(n_servers, dtype=np.int64)
    empty = np.zeros(1, dtype=np.int64)
    _pack(PACKINGS[packing], ordered, needs, n_servers, _NO_TABLE, empty, empty, serve, served)
    return serve


_NO_TABLE = np.zeros((1, 1), dtype=np.int64)


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
) -> None:
    """Write the env's observation (layout in ``MultiserverJobEnv``'s docstring) into ``obs``."""
    features = 7
    obs[:] = 0.0
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
        inside = np.zeros(n, dtype=np.bool_)
        for slot in range(window.size):
            inside[window[slot]] = True
        outside_need, outside_work = 0.0, 0.0
        for j in range(n):
            if not inside[j]:
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
) -> int:
    """The env's window (least remaining size first, ties by arrival, when ``size_known``; else
    oldest first) written into ``window``, and its observation into ``obs``; returns the window
    size. The arrays hold the jobs present in arrival order."""
    n, max_jobs = needs.size, window.size
    n_window = min(n, max_jobs)
    if size_known:
        keys = np.empty(n)
        for j in range(n):
            keys[j] = remaining[j] * needs[j]
        window[:n_window] = np.argsort(keys, kind="mergesort")[:n_window]
    else:
        for slot in range(n_window):
            window[slot] = slot
    shown = window[:n_window]
    fill_observation(
        obs, max_jobs, shown, needs, durations, remaining, arrivals, in_service, time, k, scale, size_known, k
    )
    return n_window


@njit(cache=True)
def env_step(
    scores, selected, packing, window, n_window, obs, job_id, arrival, needs, durations, remaining, in_service,
    n_jobs, next_arrival, time, arrival_times, stream_needs, stream_durations, k, scale, size_known, serve, done,
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
    no arrival pending. Nothing is changed unless the status is 0.
    """
    for slot in range(scores.size):
        if not (scores[slot] >= -1.0 and scores[slot] <= 1.0):  # also false for NaN
            return 1, n_jobs, next_arrival, time, time, n_window, 0.0, 0, 0
    for j in range(n_jobs):
        serve[j] = False
    if selected.size == 0:
        count = 0
        for slot in range(n_window):
            count += scores[slot] >= 0.0
        slots = np.empty(n_window if count == 0 else count, dtype=np.int64)
        keys = np.empty(slots.size)
        count = 0
        for slot in range(n_window):
            if slots.size == n_window or scores[slot] >= 0.0:
                slots[count] = slot
                keys[count] = -scores[slot]
                count += 1
        ordered = window[slots[np.argsort(keys, kind="mergesort")]]
        empty = np.zeros(1, dtype=np.int64)
        _pack(packing, ordered, needs, k, _NO_TABLE, empty, empty, serve, np.empty(k, dtype=np.int64))
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
    n_done = 0
    gone = np.empty(k, dtype=np.int64)  # positions of the completed jobs (at most k are served)
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
    for _ in range(2):  # admit the arrivals; an emptied system idles until the next one (DESIGN §3)
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
        time, k, scale, size_known,
    )  # fmt: skip
    return 0, n_jobs, next_arrival, time, event, n_window, elapsed, busy, n_done
