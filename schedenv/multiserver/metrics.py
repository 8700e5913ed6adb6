"""Episode metrics of the multiserver-job queue, shared by the env, its batched twin and the fast path."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedenv.multiserver.sim import MultiserverJobRecord
from schedenv.records import completion_means


def episode_metrics(
    records: Sequence[MultiserverJobRecord],
    n_servers: int,
    start: float,
    end: float,
    busy_server_time: float,
    total_flow_time: float,
) -> dict[str, float]:
    """Mean response time, slowdown (T / d) and waiting time (T - d), utilisation (busy
    server-time over k x the episode's span from the first arrival to the last completion), the
    time-average number in system (total flow time over the span), and totals."""
    n = len(records)
    response = np.fromiter((r.completion - r.arrival for r in records), float, n)
    slowdown = np.fromiter((r.slowdown for r in records), float, n)
    duration = np.fromiter((r.duration for r in records), float, n)
    return metrics_of_completions(
        response, slowdown, duration, n_servers, start, end, busy_server_time, total_flow_time
    )


def metrics_of_completions(
    response: np.ndarray,
    slowdown: np.ndarray,
    duration: np.ndarray,
    n_servers: int,
    start: float,
    end: float,
    busy_server_time: float,
    total_flow_time: float,
) -> dict[str, float]:
    """``episode_metrics`` from the completed jobs' response times, slowdowns and durations (arrays
    in completion order, as the batched env keeps them instead of records)."""
    metrics = completion_means(response, slowdown)
    metrics["mean_waiting_time"] = float((response - duration).mean()) if response.size else float("nan")
    span = max(end - start, 0.0)
    metrics["utilisation"] = busy_server_time / (n_servers * span) if span > 0 else float("nan")
    metrics["mean_number_in_system"] = total_flow_time / span if span > 0 else float("nan")
    metrics["total_flow_time"] = total_flow_time
    metrics["makespan"] = end
    return metrics
