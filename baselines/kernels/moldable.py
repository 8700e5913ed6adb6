"""The moldable baselines' decision rules compiled with numba (``baselines/moldable.py``), on the state
arrays of the env's compiled core (``schedenv.moldable.kernel``).

``decide`` returns the env action of ``MoldablePolicy.act`` for HRF (Algorithm 1 once per allocation
turn, over all queued jobs; HRF paper §5) and Rigid (requested counts), with FCFS or EASY selection
(§3.2; the head's count frozen in its reservation), for any alpha and threshold. The heap of
Algorithm 1 becomes a scan for the highest revenue (ties to the earlier job, as the heap's
(-revenue, position) order gives). ``schedenv.fastpath.moldable`` fuses it with the env's step; the
Python policies stay the specification (``tests/perf`` compares records).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from baselines.moldable import POLICIES
from schedenv.moldable.kernel import (
    FREE,
    MAX_JOBS,
    N_PROCS,
    N_QUEUED,
    N_RUNNING,
    Q_JOB,
    Q_N_MIN,
    Q_REQUESTED,
    R_END,
    R_PROCS,
    TIME,
    runtime,
)

HRF, RIGID = 0, 1
"""Allocation scheme codes."""
# policy state: allocation turn and EASY reservation (job -1: none)
P_TURN_TIME, P_TURN, P_RES_JOB, P_RES_PROCS, P_RES_TIME = range(5)


def policy_code(policy: Any) -> tuple[int, bool, float, float] | None:
    """(scheme, EASY?, alpha, threshold) of a covered moldable baseline object, or None."""
    name = getattr(policy, "name", None)
    if name not in POLICIES or type(policy) is not POLICIES[name]:
        return None
    scheme = {"hrf": HRF, "rigid": RIGID}.get(policy.scheme)
    if scheme is None:
        return None
    return scheme, policy.selection == "easy", float(policy.alpha), float(policy.threshold)


def initial_policy_state() -> np.ndarray:
    """``decide``'s state at the start of an episode: no allocation turn yet, no EASY reservation."""
    return np.array([-np.inf, 0.0, -1.0, 0.0, 0.0])


@numba.njit(cache=True)
def _hrf_turn(ints, queue, tables, alpha, threshold, turn, turn_of, count_of, revenue):
    """Algorithm 1 over every queued job (``baselines.moldable.hrf_allocation``); counts go to ``count_of``."""
    m, q = ints[N_PROCS], ints[N_QUEUED]
    extra = np.int64(math.floor(alpha * m + 1e-9))
    cap = min(m, np.int64(math.ceil(threshold * m - 1e-9)))
    for i in range(q):
        job = np.int64(queue[i, Q_JOB])
        x = np.int64(queue[i, Q_N_MIN])
        turn_of[job], count_of[job] = turn, x
        extra -= x
        revenue[i] = _revenue(queue, tables, i, x, cap)
    while extra > 0:
        best = -1
        for i in range(q):
            if revenue[i] > 0.0 and (best < 0 or revenue[i] > revenue[best]):
                best = i
        if best < 0:
            break
        job = np.int64(queue[best, Q_JOB])
        count_of[job] += 1
        extra -= 1
        revenue[best] = _revenue(queue, tables, best, count_of[job], cap)


@numba.njit(cache=True)
def _revenue(queue, tables, i, x, cap):
    """RP(x) = T(x) - T(x + 1) (HRF §4.2); -inf at the cap or when x + 1 is not allowed."""
    if x >= cap:
        return -np.inf
    following = runtime(queue[i], x + 1, tables)
    if not following < np.inf:
        return -np.inf
    return runtime(queue[i], x, tables) - following


@numba.njit(cache=True)
def decide(
    scheme, easy, alpha, threshold, ints, floats, queue, running, tables, policy, turn_of, count_of, revenue, counts
):
    """The env action of ``MoldablePolicy.act`` for the current state."""
    m, now, free = ints[N_PROCS], floats[TIME], ints[FREE]
    w = min(ints[N_QUEUED], ints[MAX_JOBS])
    if scheme == HRF:
        turn = np.int64(policy[P_TURN])
        fresh = now != policy[P_TURN_TIME]
        for i in range(w):
            fresh = fresh or turn_of[np.int64(queue[i, Q_JOB])] != turn
        if fresh:
            turn += 1
            policy[P_TURN_TIME], policy[P_TURN] = now, turn
            _hrf_turn(ints, queue, tables, alpha, threshold, turn, turn_of, count_of, revenue)
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
            n = ints[N_RUNNING]
            by_end = np.argsort(running[:n, R_END])
            for k in range(n):
                if available >= need:
                    break
                available += np.int64(running[by_end[k], R_PROCS])
                shadow = max(now, running[by_end[k], R_END])
            policy[P_RES_JOB], policy[P_RES_PROCS], policy[P_RES_TIME] = head, need, shadow
        shadow, need = policy[P_RES_TIME], np.int64(policy[P_RES_PROCS])
        spare = free - need
        for r in range(ints[N_RUNNING]):
            if running[r, R_END] <= shadow:
                spare += np.int64(running[r, R_PROCS])
        for slot in range(1, w):
            procs = counts[slot]
            if procs > free:
                continue
            if now + runtime(queue[slot], procs, tables) <= shadow or procs <= spare:
                return slot * m + procs - 1
    return ints[MAX_JOBS] * m
