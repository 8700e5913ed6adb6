"""Episode metrics of the moldable family (the env's ``episode_metrics``), shared by the env and the fast path.

The batched env accumulates the same sums per completion in ``kernel.step_rows`` (equal to rounding).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedenv.moldable.sim import MoldableJobRecord
from schedenv.records import basic_metrics


def episode_metrics(
    records: Sequence[MoldableJobRecord], n_procs: int, overflow_epochs: int, epochs: int
) -> dict[str, float]:
    """The env's ``episode_metrics`` (see Information) from an episode's records, in completion order."""
    metrics = basic_metrics(records)
    waiting = np.fromiter((r.start - r.arrival for r in records), float, len(records))
    runtime = np.fromiter((r.completion - r.start for r in records), float, len(records))
    procs = np.fromiter((r.procs for r in records), float, len(records))
    first = min(r.arrival for r in records)
    last = max(r.completion for r in records)
    metrics["ATT"] = metrics["mean_response_time"]
    metrics["AWT"] = metrics["mean_waiting_time"] = float(waiting.mean())
    metrics["ART"] = metrics["mean_runtime"] = float(runtime.mean())
    metrics["utilisation"] = float(procs @ runtime / (n_procs * (last - first))) if last > first else 0.0
    metrics["makespan"] = last - first
    metrics["overflow_fraction"] = overflow_epochs / max(epochs, 1)
    return metrics
