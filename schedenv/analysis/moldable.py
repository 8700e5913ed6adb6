"""Closed forms for moldable jobs: Downey's speedup and the HRF paper's §4.1 list schedules.

Downey (1997): S(n; A, sigma), see :class:`schedenv.workloads.DowneySpeedup`; the runtime of a job of
sequential runtime L on n processors is L / S(n) (HRF paper §2.2). ``list_schedule`` computes, for
jobs all present at t = 0 with fixed processor counts, the schedule in which each job starts as
soon as it fits, in list order (a job that fits never waits for an earlier one that does not):
the rule behind the three strategies of the HRF paper's Figure 3 (ATT 9, 9.67 and 11).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from schedenv.validation import check_int, check_positive_array
from schedenv.workloads import DowneySpeedup


def downey_speedup(n: Any, A: Any, sigma: Any) -> Any:
    """S(n; A, sigma) (Downey 1997; docs/envs/moldable.md), broadcasting its arguments."""
    return DowneySpeedup.formula(n, A, sigma)


def downey_runtime(L: Any, n: Any, A: Any, sigma: Any) -> Any:
    """T(n) = L / S(n; A, sigma) for n >= 1 (HRF paper §2.2)."""
    return np.asarray(L, dtype=float) / DowneySpeedup.formula(np.maximum(np.asarray(n, dtype=float), 1.0), A, sigma)


def list_schedule(runtimes: Sequence[float], procs: Sequence[int], n_procs: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and completion times when jobs (all at t = 0) start as soon as they fit, in list order.

    At t = 0 and at every completion, each waiting job, in list order, starts if its count fits
    in the free processors.
    """
    durations = check_positive_array("runtimes", runtimes)
    counts = [check_int("procs", int(p)) for p in procs]
    m = check_int("n_procs", n_procs)
    if len(counts) != durations.size or max(counts) > m:
        raise ValueError(f"procs={list(procs)!r} needs one count <= n_procs={m} per runtime")
    start = np.full(durations.size, np.nan)
    waiting = list(range(durations.size))
    running: list[tuple[float, int]] = []
    now, free = 0.0, m
    while waiting:
        for job in list(waiting):
            if counts[job] <= free:
                start[job] = now
                free -= counts[job]
                heapq.heappush(running, (now + float(durations[job]), counts[job]))
                waiting.remove(job)
        if waiting:
            now, released = heapq.heappop(running)
            free += released
            while running and running[0][0] == now:
                free += heapq.heappop(running)[1]
    return start, start + durations
