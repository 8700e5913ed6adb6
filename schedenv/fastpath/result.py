"""What one fast-path episode returns, shared by the families' fast paths (docs/baselines/index.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedenv.evaluation import EpisodeResult, headline_metrics
from schedenv.records import JobRecord

DEFAULT_CHUNK = 1 << 20
"""Jobs drawn at a time; runs of at most this many arrivals use the env's exact job stream."""


@dataclass(repr=False)
class FastRun:
    """One fast-path episode: the env's ``episode_metrics``, the return, and optional completions."""

    seed: int
    metrics: dict[str, float]
    episode_return: float
    n_steps: int
    n_events: int
    """Arrivals plus departures simulated."""
    seconds: float
    """Wall time of the run (workload draw included)."""
    arrival_times: np.ndarray | None = None
    sizes: np.ndarray | None = None
    completion: np.ndarray | None = None
    """Completion time per job id (``keep_completions=True`` only)."""
    speedup_at_n: float = 1.0

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(seed={self.seed}, n_steps={self.n_steps}, n_events={self.n_events}, "
            f"seconds={self.seconds:.3g}, {headline_metrics(self.metrics)})"
        )

    def episode_result(self) -> EpisodeResult:
        """The run as ``evaluate`` reports an episode (records only with ``keep_completions=True``)."""
        records = self.records() if self.completion is not None else []
        return EpisodeResult(self.seed, dict(self.metrics), self.episode_return, self.n_steps, records)

    def records(self) -> list[JobRecord]:
        """The env's ``JobRecord`` of every job, in job-id order (needs ``keep_completions=True``)."""
        if self.completion is None or self.arrival_times is None or self.sizes is None:
            raise ValueError("records need a run with keep_completions=True")
        s_n = self.speedup_at_n
        return [
            JobRecord(j, a, x, c, (c - a) * s_n / x)
            for j, (a, x, c) in enumerate(
                zip(self.arrival_times.tolist(), self.sizes.tolist(), self.completion.tolist(), strict=True)
            )
        ]
