"""A numba-compiled event loop for order-and-pack policies (DESIGN §7 fast path).

It repeats ``sim.advance`` operation for operation (same float expressions, same tie-breaking:
stable sorts over the jobs in arrival order), so it gives bit-identical completion times to the
pure core driven by the same policy; a test checks this. Orders: 0 = SRPT (least remaining size
k_j r_j / k), 1 = arrival, 2 = Gittins rank (a rank table per need, interpolated in the age).
Packings: 0 = ServerFilling, 1 = first fit, 2 = greedy, 3 = MaxWeight (count-vector table).
"""

from __future__ import annotations

import numpy as np
from numba import njit

COMPLETION_TOLERANCE = 1e-12
ORDERS = {"srpt": 0, "arrival": 1, "gittins": 2}
PACKINGS = {"serverfilling": 0, "firstfit": 1, "greedy": 2, "maxweight": 3}


@njit(cache=True)
def _pack(
    packing: int,
    ordered: np.ndarray,
    needs: np.ndarray,
    k: int,
    need_values: np.ndarray,
    table: np.ndarray,
    serve: np.ndarray,
) -> None:
    m = ordered.size
    if packing == 2:
        used = 0
        for i in range(m):
            j = ordered[i]
            if used + needs[j] > k:
                break
            serve[j] = True
            used += needs[j]
    elif packing == 1:
        free = k
        for i in range(m):
            if free == 0:
                break
            j = ordered[i]
            if needs[j] <= free:
                serve[j] = True
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
            serve[j] = True
            used += needs[j]
    else:
        n_values = need_values.size
        counts = np.zeros(n_values, dtype=np.int64)
        for i in range(m):
            for c in range(n_values):
                if needs[ordered[i]] == need_values[c]:
                    counts[c] += 1
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
        for c in range(n_values):
            left = table[best_row, c]
            for i in range(m):
                if left == 0:
                    break
                j = ordered[i]
                if needs[j] == need_values[c]:
                    serve[j] = True
                    left -= 1


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
    then have completion time inf)."""
    n = arrivals.size
    completion = np.full(n, np.inf)
    remaining = durations.copy()
    present = np.empty(n, dtype=np.int64)
    serve = np.zeros(n, dtype=np.bool_)
    m, next_arrival = 0, 0
    time = arrivals[0]
    while next_arrival < n and arrivals[next_arrival] <= time:
        present[m] = next_arrival
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
                    row = np.searchsorted(need_values, needs[j])
                    keys[i] = np.interp(age, rank_ages[row], rank_values[row])
            ordered = jobs[np.argsort(keys, kind="mergesort")]
        for i in range(m):
            serve[jobs[i]] = False
        _pack(packing, ordered, needs, k, need_values, table, serve)
        busy = 0
        until_completion = np.inf
        for i in range(m):
            j = jobs[i]
            if serve[j]:
                busy += needs[j]
                if remaining[j] < until_completion:
                    until_completion = remaining[j]
        until_arrival = arrivals[next_arrival] - time if next_arrival < n else np.inf
        elapsed = min(until_completion, until_arrival)
        total_flow += m * elapsed
        busy_time += busy * elapsed
        departure = until_completion <= until_arrival
        time = time + elapsed if departure else arrivals[next_arrival]
        kept = 0
        for i in range(m):
            j = jobs[i]
            if serve[j]:
                before = remaining[j]
                remaining[j] = before - elapsed
                if remaining[j] <= COMPLETION_TOLERANCE * durations[j] or (departure and before == until_completion):
                    completion[j] = time
                    continue
            present[kept] = j
            kept += 1
        m = kept
        while next_arrival < n and arrivals[next_arrival] <= time:
            present[m] = next_arrival
            m += 1
            next_arrival += 1
        if m == 0 and next_arrival < n:
            time = arrivals[next_arrival]
            while next_arrival < n and arrivals[next_arrival] <= time:
                present[m] = next_arrival
                m += 1
                next_arrival += 1
    return completion, total_flow, busy_time, False
