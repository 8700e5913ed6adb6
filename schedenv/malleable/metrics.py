"""Episode metrics of the malleable family (the env's ``episode_metrics``).

The env computes them from its records here; for the batched env (``vector.py``) and the fast path
(``schedenv.fastpath.malleable``) the compiled transition (``kernel.advance``) accumulates the same
sums per completion.
"""

from __future__ import annotations

from schedenv.records import CompletedJobs

METRICS = (
    "n_completed",
    "mean_response_time",
    "mean_slowdown",
    "total_flow_time",
    "total_slowdown",
    "makespan",
    "overflow_fraction",
)
"""The env's ``episode_metrics`` keys."""


def episode_metrics(completed: CompletedJobs, makespan: float, overflow_epochs: int, epochs: int) -> dict[str, float]:
    """The env's ``episode_metrics`` (see its Information) from an episode's finished jobs.

    ``makespan`` is the time of the last completion; ``overflow_fraction`` is the share of the
    ``epochs`` decision epochs with jobs outside the window.
    """
    metrics = completed.metrics()
    n = metrics["n_completed"]
    metrics["total_flow_time"] = metrics["mean_response_time"] * n
    metrics["total_slowdown"] = metrics["mean_slowdown"] * n
    metrics["makespan"] = makespan
    metrics["overflow_fraction"] = overflow_epochs / max(epochs, 1)
    return metrics
