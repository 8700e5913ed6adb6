"""Moldable baselines without the Gymnasium shell: one compiled loop per episode (docs/baselines/index.md).

The loop fuses a policy's decision rule (``baselines.kernels.moldable.decide``) with the env's
compiled step (``schedenv.moldable.kernel.step``), so every decision goes through exactly what
``env.step`` does; per-job records, metrics, the return and the step count equal those of
``schedenv.evaluation.evaluate`` on the same seed (``tests/perf``). The job set is drawn by the
env's own ``reset(seed)``.

Covered (``baselines/moldable.py``, HRF paper §3, §5): ``hrf-fcfs``, ``hrf-easy`` (Algorithm 1 once
per allocation turn, over all queued jobs) and ``rigid-fcfs``, ``rigid-easy`` (requested counts),
with FCFS or EASY selection, for any alpha and threshold. The turnaround-estimate schemes
(sbmgrdy, sbmfair, schfair) run through ``evaluate``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from baselines.kernels.moldable import decide, initial_policy_state, policy_code
from schedenv.fastpath.result import FastRun
from schedenv.moldable.core import PAPER_ALPHA, PAPER_THRESHOLD
from schedenv.moldable.fast import FastCore
from schedenv.moldable.kernel import (
    ACCRUED,
    ADVANCE,
    D_END,
    D_JOB,
    HRF,
    INVALID,
    MAX_JOBS,
    N_DONE,
    N_QUEUED,
    NEED_QUEUE,
    OK,
    WORK_ROWS,
    is_done,
    live_queue,
    step,
)
from schedenv.moldable.metrics import episode_metrics
from schedenv.moldable.sim import MoldableJobRecord

# episode counters: steps, epochs, overflow epochs, records written
C_STEPS, C_EPOCHS, C_OVERFLOW, C_RECORDS = range(4)


@numba.njit(cache=True)
def _episode(
    scheme, easy, alpha, threshold, policy, turn_of, count_of, work, counts, counters, totals, records,
    ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, mask,
):  # fmt: skip
    """Decide and step until the episode ends (``OK``); stops early with ``INVALID`` (the policy chose a
    masked action, which the env would refuse) or ``NEED_QUEUE`` (finish the step with ``ADVANCE`` on a
    bigger queue, account for it, call again)."""
    while not is_done(ints):
        action = decide(
            scheme,
            easy,
            alpha,
            threshold,
            ints,
            floats,
            live_queue(ints, queue),
            running,
            tables,
            policy,
            turn_of,
            count_of,
            work,
            counts,
        )
        status = step(action, ints, floats, queue, running, arrivals_f, arrivals_i, tables, done, obs, mask)
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
    if not is_done(ints):
        counters[C_EPOCHS] += 1
        counters[C_OVERFLOW] += ints[N_QUEUED] > ints[MAX_JOBS]


@dataclass(repr=False)
class MoldableFastRun(FastRun):
    """A moldable fast-path episode; ``job_records`` are the env's records in completion order."""

    job_records: list[MoldableJobRecord] = field(default_factory=list)

    def records(self) -> list[MoldableJobRecord]:  # type: ignore[override]
        """The env's ``MoldableJobRecord`` of every job, in job-id order (needs ``keep_completions=True``)."""
        if self.completion is None:
            raise ValueError("records need a run with keep_completions=True")
        return sorted(self.job_records, key=lambda record: record.job_id)


OPTIONS = frozenset({"keep_completions"})
"""The options of ``schedenv.fastpath.run_fast`` that ``run`` takes (the env's exact job set and decisions)."""


def supports(agent: Any, env_kwargs: dict[str, Any]) -> bool:
    """True when the baseline object ``agent`` has a compiled path on ``Moldable-v0`` with ``env_kwargs``.

    Every configuration, except that in ``action_mode="ranked"`` a policy acts through the env's
    candidates (projected onto the nearest one when its decision is not among them), so only the
    paper policy, whose decision is always candidate 0, runs here.
    """
    code = policy_code(agent)
    if env_kwargs.get("action_mode") == "ranked":
        return code == (HRF, True, PAPER_ALPHA, PAPER_THRESHOLD)
    return code is not None


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
    policy_state = initial_policy_state()
    turn_of, count_of = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    counts = np.zeros(inner.max_jobs, dtype=np.int64)
    counters, totals = np.array([0, 1, int(core.n_queued > inner.max_jobs), 0], dtype=np.int64), np.zeros(1)
    records = np.zeros((n, 6))
    while True:
        arrays = core._kernel_arrays()
        work = np.empty((WORK_ROWS, core._queue.shape[0]))
        status = _episode(
            scheme, easy, alpha, threshold, policy_state, turn_of, count_of, work, counts, counters, totals,
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
