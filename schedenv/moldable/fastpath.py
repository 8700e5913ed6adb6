"""Moldable baselines without the Gymnasium shell: one compiled loop per episode (DESIGN §7).

The loop fuses a policy's decision rule with the env's compiled step (``fast._step``), so every
decision goes through exactly what ``env.step`` does; per-job records, metrics, the return and the
step count equal those of ``schedenv.evaluation.evaluate`` on the same seed (``tests/perf``).
The job set is drawn by the env's own ``reset(seed)``.

Covered (``baselines/moldable.py``, HRF paper §3, §5): ``hrf-fcfs``, ``hrf-easy`` (Algorithm 1 once
per allocation turn, over all queued jobs) and ``rigid-fcfs``, ``rigid-easy`` (requested counts),
with FCFS or EASY selection (the head's count frozen in its reservation), for any alpha and
threshold. The heap of Algorithm 1 becomes a scan for the highest revenue (ties to the earlier
job, as the heap's (-revenue, position) order gives). The turnaround-estimate schemes (sbmgrdy,
sbmfair, schfair) run through ``evaluate``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from schedenv.malleable.fastpath import FastRun
from schedenv.moldable.env import episode_metrics
from schedenv.moldable.fast import (
    ACCRUED,
    ADVANCE,
    D_END,
    D_JOB,
    FREE,
    INVALID,
    MAX_JOBS,
    N_DONE,
    N_PROCS,
    N_QUEUED,
    N_RUNNING,
    NEED_QUEUE,
    OK,
    Q_JOB,
    Q_N_MIN,
    Q_REQUESTED,
    Q_RUNTIME,
    R_END,
    R_PROCS,
    TIME,
    FastCore,
    _is_done,
    _step,
)
from schedenv.moldable.sim import MoldableJobRecord

HRF, RIGID = 0, 1
"""Allocation scheme codes."""
# policy state: allocation turn and EASY reservation (job -1: none)
P_TURN_TIME, P_TURN, P_RES_JOB, P_RES_PROCS, P_RES_TIME = range(5)
# episode counters: steps, epochs, overflow epochs, records written
C_STEPS, C_EPOCHS, C_OVERFLOW, C_RECORDS = range(4)


@numba.njit(cache=True)
def _hrf_turn(ints, queue, alpha, threshold, turn, turn_of, count_of, revenue):
    """Algorithm 1 over every queued job (``baselines.moldable.hrf_allocation``); counts go to ``count_of``."""
    m, q = ints[N_PROCS], ints[N_QUEUED]
    extra = np.int64(math.floor(alpha * m + 1e-9))
    cap = min(m, np.int64(math.ceil(threshold * m - 1e-9)))
    for i in range(q):
        job = np.int64(queue[i, Q_JOB])
        x = np.int64(queue[i, Q_N_MIN])
        turn_of[job], count_of[job] = turn, x
        extra -= x
        revenue[i] = _revenue(queue, i, x, cap)
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
        revenue[best] = _revenue(queue, best, count_of[job], cap)


@numba.njit(cache=True)
def _revenue(queue, i, x, cap):
    """RP(x) = T(x) - T(x + 1) (HRF §4.2); -inf at the cap or when x + 1 is not allowed."""
    if x >= cap or not queue[i, Q_RUNTIME + x] < np.inf:
        return -np.inf
    return queue[i, Q_RUNTIME + x - 1] - queue[i, Q_RUNTIME + x]


@numba.njit(cache=True)
def _decide(scheme, easy, alpha, threshold, ints, floats, queue, running, policy, turn_of, count_of, revenue, counts):
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
            _hrf_turn(ints, queue, alpha, threshold, turn, turn_of, count_of, revenue)
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
            if now + queue[slot, Q_RUNTIME + procs - 1] <= shadow or procs <= spare:
                return slot * m + procs - 1
    return ints[MAX_JOBS] * m


@numba.njit(cache=True)
def _episode(
    scheme, easy, alpha, threshold, policy, turn_of, count_of, revenue, counts, counters, totals, records,
    ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, mask,
):  # fmt: skip
    """Decide and step until the episode ends (``OK``); stops early with ``INVALID`` (the policy chose a
    masked action, which the env would refuse) or ``NEED_QUEUE`` (finish the step with ``ADVANCE`` on a
    bigger queue, account for it, call again)."""
    while not _is_done(ints):
        action = _decide(
            scheme, easy, alpha, threshold, ints, floats, queue, running, policy, turn_of, count_of, revenue, counts
        )
        status = _step(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, mask)
        if status != OK:  # INVALID, or NEED_QUEUE: the decision is applied, arrivals wait for a bigger queue
            return status
        _account(ints, floats, done, counters, totals, records)
    return OK


@numba.njit(cache=True)
def _account(ints, floats, done, counters, totals, records):
    """What ``run_episode`` and the env count for one finished step."""
    totals[0] += -floats[ACCRUED]
    counters[C_STEPS] += 1
    first = counters[C_RECORDS]
    for d in range(ints[N_DONE]):
        records[first + d] = done[d]
    counters[C_RECORDS] = first + ints[N_DONE]
    if not _is_done(ints):
        counters[C_EPOCHS] += 1
        counters[C_OVERFLOW] += ints[N_QUEUED] > ints[MAX_JOBS]


@dataclass
class MoldableFastRun(FastRun):
    """A moldable fast-path episode; ``job_records`` are the env's records in completion order."""

    job_records: list[MoldableJobRecord] = field(default_factory=list)

    def records(self) -> list[MoldableJobRecord]:  # type: ignore[override]
        """The env's ``MoldableJobRecord`` of every job, in job-id order (needs ``keep_completions=True``)."""
        if self.completion is None:
            raise ValueError("records need a run with keep_completions=True")
        return sorted(self.job_records, key=lambda record: record.job_id)


def policy_code(policy: Any) -> tuple[int, bool, float, float] | None:
    """(scheme, EASY?, alpha, threshold) of a covered moldable baseline object, or None."""
    from baselines.moldable import POLICIES

    name = getattr(policy, "name", None)
    if name not in POLICIES or type(policy) is not POLICIES[name]:
        return None
    scheme = {"hrf": HRF, "rigid": RIGID}.get(policy.scheme)
    if scheme is None:
        return None
    return scheme, policy.selection == "easy", float(policy.alpha), float(policy.threshold)


def run(inner: Any, policy: Any, seed: int, *, keep_completions: bool = False) -> MoldableFastRun:
    """One episode of ``policy`` on the unwrapped moldable env ``inner`` (its job set for ``seed``)."""
    started = time.perf_counter()
    found = policy_code(policy)
    if found is None:
        raise ValueError(f"no compiled path for moldable policy {policy!r}")
    scheme, easy, alpha, threshold = found
    inner.reset(seed=int(seed))
    jobs = inner.job_set
    core = FastCore(jobs, inner.max_jobs, inner.time_scale)
    n = jobs.n_jobs
    policy_state = np.array([-np.inf, 0.0, -1.0, 0.0, 0.0])
    turn_of, count_of = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    counts = np.zeros(inner.max_jobs, dtype=np.int64)
    counters, totals = np.array([0, 1, int(core.n_queued > inner.max_jobs), 0], dtype=np.int64), np.zeros(1)
    records = np.zeros((n, 6))
    while True:
        arrays = core._kernel_arrays()
        revenue = np.empty(core._queue.shape[0])
        status = _episode(
            scheme, easy, alpha, threshold, policy_state, turn_of, count_of, revenue, counts, counters, totals,
            records, *arrays,
        )  # fmt: skip
        if status == INVALID:
            raise ValueError(f"{policy!r} chose an action that does not fit (the env would refuse it)")
        if status != NEED_QUEUE:
            break
        core._run(ADVANCE)
        _account(core._ints, core._floats, core._done, counters, totals, records)
    job_records = [
        MoldableJobRecord(int(job), submit, size, end, (end - submit) / (end - start), start, int(procs))
        for job, submit, size, start, end, procs in records.tolist()
    ]
    metrics = episode_metrics(job_records, inner.n_procs, int(counters[C_OVERFLOW]), int(counters[C_EPOCHS]))
    result = MoldableFastRun(
        int(seed), metrics, float(totals[0]), int(counters[C_STEPS]), 2 * n, time.perf_counter() - started
    )
    if keep_completions:
        completion = np.empty(n)
        completion[records[:, D_JOB].astype(np.int64)] = records[:, D_END]
        result.arrival_times, result.sizes, result.completion = jobs.submit, jobs.size, completion
        result.job_records = job_records
    return result
