"""The compiled transition of the malleable family: the one event step of the env, the batched env and the fast path.

A numba transcription of ``sim.advance`` (the heSRPT paper's model: s(k) = k^p speedups only) with the
env's window and observation (``core.ReferenceCore``'s, which stays the specification with ``sim.py``;
``tests/malleable/test_fast_core.py`` steps both with the same actions). ``step`` is the env's step
(validate the action, ``apply_weights``, ``advance``): ``fast.FastCore`` (the single env) calls it, and
``step_rows`` calls it for the B copies of ``vector.MalleableVectorEnv``; the fast path
(``schedenv.fastpath.malleable``) loops ``advance`` with a compiled policy. ``stable_order`` is also the
baselines' order (``baselines/kernels/malleable.py``). Kernels that call each other share this module
because numba's ``cache=True`` only watches the file a jitted function is defined in.

The state of an episode is four arrays, ``MalleableArrays.views``, passed in this order to every kernel:

- ``ids[JOB_ID|DONE_ID|ORDER, slot]`` (int64) and ``jobs[ARRIVAL|SIZE|REMAINING|WEIGHT|THETA|DONE_ARRIVAL|
  DONE_SIZE|RATE, slot]`` (float64): the jobs present, in arrival order and compacted in place as jobs
  complete, the jobs completed by the last step (``DONE_*``), the fractions it applied (``THETA``) and
  scratch space for the window's order (``ORDER``) and for each job's service rate (``RATE``);
- ``ints[N_JOBS|NEXT_ARRIVAL|N_WINDOW|N_COMPLETED|EPOCHS|OVERFLOW|ARRIVED_BEFORE]`` (int64): the counters;
  a job's id is ``ARRIVED_BEFORE`` + its index in the arrival stream (the fast path streams chunks);
- ``floats[TIME|RESPONSE|SLOWDOWN|WORK|OBJECTIVE]`` (float64): the clock and the metrics' running sums.

The batched env stacks B of them on a leading axis. No kernel allocates on a step. For the fast
path's loop (about 100 ns per event), ``admit`` and ``settle`` are inlined (``inline="always"``) and
``advance`` and ``apply_weights`` run without numba's reference counting (``NO_NRT``: they create
no array): as plain calls with counted row views, or with ``settle`` inlined into a counted loop (it
binds six arrays), the loop ran 1.4 to 2 times slower than when it had its own copy of this step.
``advance`` computes each job's rate (theta N)^p once, in the loop that finds the next departure, and
the serving loop reads it from ``RATE``: with a second ``pow`` call there, which spills the sums that
loop carries (objective, work, response, slowdown) to the stack around every call, the fast path
without the env's window ran 10 to 19% slower than its own fused loop before this kernel was shared;
with one call it runs at that loop's speed or faster.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from schedenv.malleable.sim import COMPLETION_TOLERANCE, MIN_ALLOCATION

NO_NRT: dict[str, Any] = {"_nrt": False}
"""Compile without numba's reference counting (see the module doc)."""
JOB_ID, DONE_ID, ORDER = range(3)
ARRIVAL, SIZE, REMAINING, WEIGHT, THETA, DONE_ARRIVAL, DONE_SIZE, RATE = range(8)
N_JOBS, NEXT_ARRIVAL, N_WINDOW, N_COMPLETED, EPOCHS, OVERFLOW, ARRIVED_BEFORE = range(7)
TIME, RESPONSE, SLOWDOWN, WORK, OBJECTIVE = range(5)


class MalleableArrays:
    """The state arrays of ``n_copies`` episodes (see the module docstring) with room for ``capacity`` jobs each."""

    def __init__(self, n_copies: int, capacity: int) -> None:
        self.ids = np.zeros((n_copies, 3, capacity), dtype=np.int64)
        self.jobs = np.zeros((n_copies, 8, capacity))
        self.ints = np.zeros((n_copies, 7), dtype=np.int64)
        self.floats = np.zeros((n_copies, 5))

    def views(self, index: int | slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``ids``, ``jobs``, ``ints``, ``floats`` of copy ``index`` (or of the copies a slice selects)."""
        return self.ids[index], self.jobs[index], self.ints[index], self.floats[index]

    def grow(self) -> None:
        """Double every copy's room for jobs, keeping the state."""
        self.ids = np.concatenate([self.ids, np.zeros_like(self.ids)], axis=2)
        self.jobs = np.concatenate([self.jobs, np.zeros_like(self.jobs)], axis=2)


@numba.njit(cache=True, inline="always")
def admit(ids, jobs, ints, arrival_times, sizes, now, s_n, slowdown):
    """Append the stream's jobs that have arrived by ``now``."""
    n_jobs, nxt, first = ints[N_JOBS], ints[NEXT_ARRIVAL], ints[ARRIVED_BEFORE]
    while nxt < arrival_times.size and arrival_times[nxt] <= now:
        x = sizes[nxt]
        ids[JOB_ID, n_jobs] = first + nxt
        jobs[ARRIVAL, n_jobs], jobs[SIZE, n_jobs], jobs[REMAINING, n_jobs] = arrival_times[nxt], x, x
        jobs[WEIGHT, n_jobs] = s_n / x if slowdown else 1.0
        n_jobs += 1
        nxt += 1
    ints[N_JOBS], ints[NEXT_ARRIVAL] = n_jobs, nxt


@numba.njit(cache=True, inline="always")
def settle(ids, jobs, ints, floats, arrival_times, sizes, s_n, slowdown):
    """Admit the arrivals up to the clock; with no job present, idle until the next arrival (docs/envs/index.md)."""
    admit(ids, jobs, ints, arrival_times, sizes, floats[TIME], s_n, slowdown)
    if ints[N_JOBS] == 0 and ints[NEXT_ARRIVAL] < arrival_times.size:
        floats[TIME] = arrival_times[ints[NEXT_ARRIVAL]]
        admit(ids, jobs, ints, arrival_times, sizes, floats[TIME], s_n, slowdown)


@numba.njit(cache=True)
def start(ids, jobs, ints, floats, arrival_times, sizes, s_n, slowdown):
    """Start an episode on the stream ``arrival_times``, ``sizes``: the clock at its first arrival."""
    ints[:] = 0
    floats[:] = 0.0
    floats[TIME] = arrival_times[0] if arrival_times.size else 0.0
    settle(ids, jobs, ints, floats, arrival_times, sizes, s_n, slowdown)


@numba.njit(cache=True, **NO_NRT)
def apply_weights(action, window, jobs, ints, fractions):
    """Fractions ``jobs[THETA]`` from the env's action (``core.allocation``): slot weights for the
    ``ints[N_WINDOW]`` jobs of ``window``, the last entry for the group outside it.

    ``fractions``: the env's ``allocation="fractions"`` (a weight sum <= 1 is used as is, idling the rest).
    """
    n_jobs, n_window = ints[N_JOBS], ints[N_WINDOW]
    n_outside = n_jobs - n_window
    for j in range(n_jobs):
        jobs[THETA, j] = -1.0
    for s in range(n_window):
        jobs[THETA, window[s]] = action[s]
    total = 0.0
    for j in range(n_jobs):
        if jobs[THETA, j] < 0.0:
            jobs[THETA, j] = action[action.size - 1] / n_outside
        total += jobs[THETA, j]
    if total < MIN_ALLOCATION:  # all-zero or subnormal: EQUI
        for j in range(n_jobs):
            jobs[THETA, j] = 1.0 / n_jobs
    elif total > 1.0 or not fractions:
        for j in range(n_jobs):
            jobs[THETA, j] = jobs[THETA, j] / total


@numba.njit(cache=True, **NO_NRT)
def advance(ids, jobs, ints, floats, arrival_times, sizes, n_servers, p, s_n, slowdown):
    """Serve the jobs at fractions ``jobs[THETA]`` until the next arrival or departure (``sim.advance``).

    Completes, compacts, admits and accrues the metrics; the completed jobs are ``ids[DONE_ID]``,
    ``jobs[DONE_ARRIVAL]``, ``jobs[DONE_SIZE]``. Returns (event time, accrued objective, work, n_done).
    """
    n_jobs, now = ints[N_JOBS], floats[TIME]
    ints[EPOCHS] += 1
    ints[OVERFLOW] += n_jobs > ints[N_WINDOW]
    first, until_departure = -1, np.inf
    for j in range(n_jobs):
        rate = (jobs[THETA, j] * n_servers) ** p
        jobs[RATE, j] = rate
        if rate > 0.0:
            finish = jobs[REMAINING, j] / rate
            if finish < until_departure:
                first, until_departure = j, finish
    nxt = ints[NEXT_ARRIVAL]
    until_arrival = arrival_times[nxt] - now if nxt < arrival_times.size else np.inf
    elapsed = min(until_departure, until_arrival)
    accrued, work, kept, n_done, response_sum, slowdown_sum = 0.0, 0.0, 0, 0, floats[RESPONSE], floats[SLOWDOWN]
    event = now + elapsed
    for j in range(n_jobs):
        accrued += jobs[WEIGHT, j]
        remaining, size = jobs[REMAINING, j], jobs[SIZE, j]
        served = jobs[RATE, j] * elapsed
        left = remaining - served
        if left <= COMPLETION_TOLERANCE * size or (j == first and until_departure <= until_arrival):
            work += remaining
            response = event - jobs[ARRIVAL, j]
            response_sum += response
            slowdown_sum += response * s_n / size
            ids[DONE_ID, n_done] = ids[JOB_ID, j]
            jobs[DONE_ARRIVAL, n_done], jobs[DONE_SIZE, n_done] = jobs[ARRIVAL, j], size
            n_done += 1
        else:
            work += served
            ids[JOB_ID, kept], jobs[ARRIVAL, kept], jobs[SIZE, kept] = ids[JOB_ID, j], jobs[ARRIVAL, j], size
            jobs[REMAINING, kept], jobs[WEIGHT, kept] = left, jobs[WEIGHT, j]
            kept += 1
    accrued *= elapsed
    floats[RESPONSE], floats[SLOWDOWN] = response_sum, slowdown_sum
    floats[OBJECTIVE] += accrued
    floats[WORK] += work
    ints[N_COMPLETED] += n_done
    ints[N_JOBS], floats[TIME] = kept, event
    settle(ids, jobs, ints, floats, arrival_times, sizes, s_n, slowdown)
    return event, accrued, work, n_done


@numba.njit(cache=True)
def step(action, window, ids, jobs, ints, floats, arrival_times, sizes, n_servers, p, s_n, slowdown, fractions):
    """The env's step: validate ``action``, ``apply_weights`` and ``advance`` to the next epoch.

    Returns (status, event time, accrued objective, work, n_done); status 1 means an invalid action,
    and then nothing has been changed.
    """
    for value in action:
        if not (value >= 0.0 and value <= 1.0):  # also false for NaN
            return 1, floats[TIME], 0.0, 0.0, 0
    apply_weights(action, window, jobs, ints, fractions)
    event, accrued, work, n_done = advance(ids, jobs, ints, floats, arrival_times, sizes, n_servers, p, s_n, slowdown)
    return 0, event, accrued, work, n_done


@numba.njit(cache=True)
def observe(window, ids, jobs, ints, scale, obs):
    """Sort the window (least remaining first, stable), set ``ints[N_WINDOW]`` and fill the observation."""
    n_jobs, remaining, order = ints[N_JOBS], jobs[REMAINING], ids[ORDER]
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
            obs[3 * s + 2] = math.log1p(jobs[SIZE, j] / scale)
        else:
            outside_work += remaining[j]
    end = obs.size
    obs[end - 3] = math.log1p(n_jobs)
    obs[end - 2] = math.log1p(n_jobs - n_window)
    obs[end - 1] = math.log1p(outside_work / scale)
    ints[N_WINDOW] = n_window


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


@numba.njit(cache=True)
def reset_rows(rows, ids, jobs, ints, floats, window, obs, n_obs, arrival_times, sizes, s_n, slowdown, scale):
    """Start the episodes of copies ``rows`` (as FastCore's constructor); ``s_n`` holds each copy's s(N).

    ``obs[i, :n_obs]`` is the core's observation (scenario slots follow).
    """
    for r in range(rows.size):
        i = rows[r]
        start(ids[i], jobs[i], ints[i], floats[i], arrival_times[i], sizes[i], s_n[i], slowdown)
        observe(window[i], ids[i], jobs[i], ints[i], scale, obs[i, :n_obs])


@numba.njit(cache=True)
def step_rows(
    rows, actions, ids, jobs, ints, floats, window, obs, n_obs, rewards, terminated,
    arrival_times, sizes, n_servers, p, s_n, slowdown, scale, fractions,
):  # fmt: skip
    """One ``MalleableEnv.step`` for each copy in ``rows`` (actions already validated; p, s_n per copy)."""
    for r in range(rows.size):
        i = rows[r]
        _, _, accrued, _, _ = step(
            actions[i], window[i], ids[i], jobs[i], ints[i], floats[i], arrival_times[i], sizes[i],
            n_servers, p[i], s_n[i], slowdown, fractions,
        )  # fmt: skip
        rewards[i] = -accrued
        terminated[i] = ints[i, N_JOBS] == 0 and ints[i, NEXT_ARRIVAL] >= arrival_times.shape[1]
        observe(window[i], ids[i], jobs[i], ints[i], scale, obs[i, :n_obs])
