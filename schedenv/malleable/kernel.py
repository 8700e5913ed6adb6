"""The compiled transition of the malleable family: every numba kernel of the env's step (docs/architecture.md).

A numba transcription of ``sim.advance`` (the heSRPT paper's model: s(k) = k^p speedups only) with the
env's window and observation (``core.ReferenceCore``'s, which stays the specification with ``sim.py``;
``tests/malleable/test_fast_core.py`` steps both with the same actions). ``admit``, ``step`` and
``observe`` are driven by ``fast.FastCore`` (the single env), ``reset_rows`` and ``step_rows`` run them
for the B copies of ``vector.MalleableVectorEnv``; ``stable_order`` is also the baselines' order
(``baselines/kernels/malleable.py``) and the fast path's (``schedenv.fastpath.malleable``). Kernels
that call each other share this module because numba's ``cache=True`` only watches the file a jitted
function is defined in. Jobs live in preallocated arrays (capacity = the episode's job count), kept in
arrival order and compacted in place as jobs complete; no kernel allocates on a step.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from schedenv.malleable.sim import COMPLETION_TOLERANCE, MIN_ALLOCATION


@numba.njit(cache=True)
def admit(
    job_id, arrival, size, remaining, weight, n_jobs, arrival_times, stream_sizes, next_arrival, now, s_n, slowdown
):
    """Append the stream's jobs that have arrived by ``now``; returns the new counts."""
    while next_arrival < arrival_times.size and arrival_times[next_arrival] <= now:
        x = stream_sizes[next_arrival]
        job_id[n_jobs] = next_arrival
        arrival[n_jobs] = arrival_times[next_arrival]
        size[n_jobs] = x
        remaining[n_jobs] = x
        weight[n_jobs] = s_n / x if slowdown else 1.0
        n_jobs += 1
        next_arrival += 1
    return n_jobs, next_arrival


@numba.njit(cache=True)
def step(
    action, window, n_window, theta, job_id, arrival, size, remaining, weight, n_jobs,
    arrival_times, stream_sizes, next_arrival, now, n_servers, p, s_n, slowdown,
    done_id, done_arrival, done_size, fractions,
):  # fmt: skip
    """Validate ``action``, allocate, advance to the next epoch and compact; see ``sim.advance``.

    ``fractions``: the env's ``allocation="fractions"`` (a weight sum <= 1 is used as is, idling the rest).

    Returns (status, n_jobs, next_arrival, now, departure_time, accrued, work, n_done); status 1
    means an invalid action, and then nothing has been changed.
    """
    for value in action:
        if not (value >= 0.0 and value <= 1.0):  # also false for NaN
            return 1, n_jobs, next_arrival, now, now, 0.0, 0.0, 0
    n_outside = n_jobs - n_window
    for j in range(n_jobs):
        theta[j] = -1.0
    for s in range(n_window):
        theta[window[s]] = action[s]
    total = 0.0
    for j in range(n_jobs):
        if theta[j] < 0.0:
            theta[j] = action[action.size - 1] / n_outside
        total += theta[j]
    if total < MIN_ALLOCATION:  # all-zero or subnormal: EQUI
        for j in range(n_jobs):
            theta[j] = 1.0 / n_jobs
    elif total > 1.0 or not fractions:
        for j in range(n_jobs):
            theta[j] = theta[j] / total
    first, until_departure = -1, np.inf
    for j in range(n_jobs):
        rate = (theta[j] * n_servers) ** p
        if rate > 0.0:
            finish = remaining[j] / rate
            if finish < until_departure:
                first, until_departure = j, finish
    until_arrival = arrival_times[next_arrival] - now if next_arrival < arrival_times.size else np.inf
    elapsed = min(until_departure, until_arrival)
    accrued, work, kept, n_done = 0.0, 0.0, 0, 0
    event = now + elapsed
    for j in range(n_jobs):
        accrued += weight[j]
        served = (theta[j] * n_servers) ** p * elapsed
        left = remaining[j] - served
        if left <= COMPLETION_TOLERANCE * size[j] or (j == first and until_departure <= until_arrival):
            work += remaining[j]
            done_id[n_done], done_arrival[n_done], done_size[n_done] = job_id[j], arrival[j], size[j]
            n_done += 1
        else:
            work += served
            job_id[kept], arrival[kept], size[kept] = job_id[j], arrival[j], size[j]
            remaining[kept], weight[kept] = left, weight[j]
            kept += 1
    accrued *= elapsed
    n_jobs, next_arrival = admit(
        job_id, arrival, size, remaining, weight, kept, arrival_times, stream_sizes, next_arrival, event, s_n, slowdown
    )
    now = event
    if n_jobs == 0 and next_arrival < arrival_times.size:  # idle until the next arrival (docs/envs/index.md)
        now = arrival_times[next_arrival]
        n_jobs, next_arrival = admit(
            job_id, arrival, size, remaining, weight, 0, arrival_times, stream_sizes, next_arrival, now, s_n, slowdown
        )
    return 0, n_jobs, next_arrival, now, event, accrued, work, n_done


@numba.njit(cache=True)
def observe(window, remaining, size, n_jobs, scale, obs, order):
    """Sort the window (least remaining first, stable) and fill the observation; returns its length.

    ``order`` is scratch space of at least ``n_jobs`` entries, so that the step allocates nothing.
    """
    stable_order(remaining, n_jobs, order)
    n_window = min(n_jobs, window.size)
    obs[:] = 0.0
    outside_work = 0.0
    for s in range(n_jobs):
        j = order[s]
        if s < n_window:
            window[s] = j
            obs[3 * s] = 1.0
            obs[3 * s + 1] = math.log1p(remaining[j] / scale)
            obs[3 * s + 2] = math.log1p(size[j] / scale)
        else:
            outside_work += remaining[j]
    end = obs.size
    obs[end - 3] = math.log1p(n_jobs)
    obs[end - 2] = math.log1p(n_jobs - n_window)
    obs[end - 1] = math.log1p(outside_work / scale)
    return n_window


@numba.njit(cache=True)
def stable_order(keys, n, order):
    """Fill ``order[:n]`` with the stable ascending order of ``keys[:n]`` (as a mergesort argsort).

    The env's window holds the ``max_jobs`` jobs of least remaining size (ties by arrival order), and
    heSRPT and KNEE rank jobs the same way; all of them need this order without allocating on every event.
    """
    if n > 24:
        order[:n] = np.argsort(keys[:n], kind="mergesort")
        return
    for i in range(n):  # insertion sort: no allocation, fast for the few jobs usually present
        j = i
        while j > 0 and keys[order[j - 1]] > keys[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i


JOB_ID, DONE_ID, ORDER = 0, 1, 2
ARRIVAL, SIZE, REMAINING, WEIGHT, THETA, DONE_ARRIVAL, DONE_SIZE = range(7)
"""Rows of the per-copy job tables ``ids`` (int64) and ``jobs`` (float64), of shape (B, rows, capacity)."""


@numba.njit(cache=True)
def reset_rows(
    rows, ids, jobs, ints, floats, window, obs, n_obs, arrival_times, sizes, s_n, slowdown, scale, max_jobs
):  # fmt: skip
    """Start the episodes of copies ``rows`` (as FastCore's constructor); ints/floats: per-copy counters.

    ``s_n`` holds each copy's s(N); ``obs[i, :n_obs]`` is the core's observation (scenario slots follow).
    """
    for r in range(rows.size):
        i = rows[r]
        now = arrival_times[i, 0]
        n_jobs, nxt = admit(
            ids[i, JOB_ID], jobs[i, ARRIVAL], jobs[i, SIZE], jobs[i, REMAINING], jobs[i, WEIGHT], 0,
            arrival_times[i], sizes[i], 0, now, s_n[i], slowdown,
        )  # fmt: skip
        ints[i, 0], ints[i, 1], ints[i, 3], ints[i, 4] = n_jobs, nxt, 0, 0
        ints[i, 5] = n_jobs > max_jobs
        floats[i, 0], floats[i, 1], floats[i, 2] = now, 0.0, 0.0
        ints[i, 2] = observe(window[i], jobs[i, REMAINING], jobs[i, SIZE], n_jobs, scale, obs[i, :n_obs], ids[i, ORDER])


@numba.njit(cache=True)
def step_rows(
    rows, actions, ids, jobs, ints, floats, window, obs, n_obs, rewards, terminated,
    arrival_times, sizes, n_servers, p, s_n, slowdown, scale, max_jobs, fractions,
):  # fmt: skip
    """One ``MalleableEnv.step`` for each copy in ``rows`` (actions already validated; p, s_n per copy)."""
    for r in range(rows.size):
        i = rows[r]
        _, n_jobs, nxt, now, event, accrued, _, n_done = step(
            actions[i], window[i], ints[i, 2], jobs[i, THETA], ids[i, JOB_ID], jobs[i, ARRIVAL], jobs[i, SIZE],
            jobs[i, REMAINING], jobs[i, WEIGHT], ints[i, 0], arrival_times[i], sizes[i], ints[i, 1], floats[i, 0],
            n_servers, p[i], s_n[i], slowdown, ids[i, DONE_ID], jobs[i, DONE_ARRIVAL], jobs[i, DONE_SIZE], fractions,
        )  # fmt: skip
        for k in range(n_done):
            response = event - jobs[i, DONE_ARRIVAL, k]
            floats[i, 1] += response
            floats[i, 2] += response * s_n[i] / jobs[i, DONE_SIZE, k]
        ints[i, 0], ints[i, 1], floats[i, 0] = n_jobs, nxt, now
        ints[i, 3] += n_done
        ints[i, 4] += 1
        ints[i, 5] += n_jobs > max_jobs
        rewards[i] = -accrued
        terminated[i] = n_jobs == 0 and nxt >= arrival_times.shape[1]
        ints[i, 2] = observe(window[i], jobs[i, REMAINING], jobs[i, SIZE], n_jobs, scale, obs[i, :n_obs], ids[i, ORDER])
