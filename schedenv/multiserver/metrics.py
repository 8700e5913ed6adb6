"""Episode metrics of the multiserver-job queue, shared by the env and the fast path."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedenv.multiserver.sim import MultiserverJobRecord
from schedenv.records import basic_metrics


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
    metrics = basic_metrics(records)
    span = max(end - start, 0.0)
    if records:
        response = np.fromiter((r.completion - r.arrival for r in records), float, len(records))
        duration = np.fromiter((r.duration for r in records), float, len(records))
        metrics["mean_waiting_time"] = float((response - duration).mean())
    else:
        metrics["mean_waiting_time"] = float("nan")
    metrics["utilisation"] = busy_server_time / (n_servers * span) if span > 0 else float("nan")
    metrics["mean_number_in_system"] = total_flow_time / span if span > 0 else float("nan")
    metrics["total_flow_time"] = total_flow_time
    metrics["makespan"] = end
    return metrics
