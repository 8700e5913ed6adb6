"""Per-job records and running episode tallies of the dispatch family (TAGS paper, §1 and §5).

Metrics are kept as running sums so that a long episode keeps no per-job history (docs/envs/dispatch.md).
Definitions (x = size, T = response time):

- waiting time T - x: everything but the final, successful run (includes killed runs);
- queueing time: time spent in queues only, the W of the paper's analysis (Theorem 1, appendix);
- slowdown T / x, waiting slowdown (T - x) / x and queueing slowdown W / x (the paper's "slowdown");
- fairness (§4, TAGS-opt-fairness): mean slowdown per final host, and per size class, the classes
  being fixed size quantiles of the workload (0.5, 0.9, 0.99, 0.999), so that class 4 holds the
  largest 0.1% of jobs. A class or host no job finished in reports ``nan``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field

from schedenv.records import JobRecord

SIZE_CLASS_QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99, 0.999)
"""Quantiles of the size distribution separating the size classes of the fairness metrics."""


@dataclass(frozen=True, slots=True)
class DispatchRecord(JobRecord):
    """A finished job: the base fields plus the hosts it ran on, its wasted work and queueing time.

    ``slowdown`` is T / x; the final host is ``hosts[-1]``.
    """

    hosts: tuple[int, ...]
    wasted_work: float
    """Work lost to kills (the sum of the limits of its killed runs)."""
    queueing_time: float
    """Time spent waiting in host or central queues (excludes every run, killed or not)."""

    @property
    def waiting_time(self) -> float:
        """T - x."""
        return self.completion - self.arrival - self.size

    @property
    def waiting_slowdown(self) -> float:
        """(T - x) / x."""
        return self.waiting_time / self.size

    @property
    def queueing_slowdown(self) -> float:
        """W / x with W the queueing time: the slowdown of the paper's analysis."""
        return self.queueing_time / self.size


@dataclass
class EpisodeTally:
    """Running sums over finished jobs, from which ``metrics`` are computed at the episode's end."""

    n_hosts: int
    n_completed: int = 0
    response: float = 0.0
    waiting: float = 0.0
    queueing: float = 0.0
    slowdown: float = 0.0
    waiting_slowdown: float = 0.0
    queueing_slowdown: float = 0.0
    wasted: float = 0.0
    work: float = 0.0
    kills: int = 0
    first_arrival: float = math.inf
    class_bounds: tuple[float, ...] = ()
    """Upper size bounds of the size classes but the last (fixed per env, so keys never vary)."""
    busy: list[float] = field(default_factory=list)
    final_host: list[list[float]] = field(default_factory=list)
    """Per final host: [count, sum of slowdown] (the paper's fairness classes)."""
    size_class: list[list[float]] = field(default_factory=list)
    """Per size class: [count, sum of slowdown]."""

    def __post_init__(self) -> None:
        self.busy = [0.0] * self.n_hosts
        self.final_host = [[0.0, 0.0] for _ in range(self.n_hosts)]
        self.size_class = [[0.0, 0.0] for _ in range(len(self.class_bounds) + 1)]

    def add(self, record: DispatchRecord) -> None:
        """Count one finished job."""
        size = record.size
        response = record.completion - record.arrival
        self.n_completed += 1
        self.response += response
        self.waiting += response - size
        self.queueing += record.queueing_time
        self.slowdown += record.slowdown
        self.waiting_slowdown += (response - size) / size
        self.queueing_slowdown += record.queueing_time / size
        self.wasted += record.wasted_work
        self.work += size
        self.kills += len(record.hosts) - 1
        self.first_arrival = min(self.first_arrival, record.arrival)
        for entry in (self.final_host[record.hosts[-1]], self.size_class[bisect_left(self.class_bounds, size)]):
            entry[0] += 1.0
            entry[1] += record.slowdown

    def metrics(self, end_time: float) -> dict[str, float]:
        """Episode metrics; loads are busy time (wasted runs included) over the episode's span."""
        n = max(self.n_completed, 1)
        span = end_time - self.first_arrival if self.n_completed else 0.0
        metrics = {
            "n_completed": float(self.n_completed),
            "mean_response_time": self.response / n,
            "mean_waiting_time": self.waiting / n,
            "mean_queueing_time": self.queueing / n,
            "mean_slowdown": self.slowdown / n,
            "mean_waiting_slowdown": self.waiting_slowdown / n,
            "mean_queueing_slowdown": self.queueing_slowdown / n,
            "total_wasted_work": self.wasted,
            "wasted_work_fraction": self.wasted / self.work if self.work else 0.0,
            "kills_per_job": self.kills / n,
            "excess": self.wasted / span if span > 0 else 0.0,
            "makespan": end_time,
        }
        for host, busy in enumerate(self.busy):
            metrics[f"host_load_{host}"] = busy / span if span > 0 else 0.0
        for host, (count, total) in enumerate(self.final_host):
            metrics[f"mean_slowdown_final_host_{host}"] = total / count if count else math.nan
        for index, (count, total) in enumerate(self.size_class):
            metrics[f"mean_slowdown_size_class_{index}"] = total / count if count else math.nan
        return metrics
