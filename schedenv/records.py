"""Typed per-job records (the Ciw way: each finished job leaves a record; metrics come after).

Every family's record extends :class:`JobRecord` with its own fields (hosts visited, processor
count, ...). Records are immutable and slotted so that long runs that keep them stay compact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class JobRecord:
    """What every family records about a finished job.

    ``slowdown`` is the family's own definition (documented in its env): for malleable jobs
    T / (x / s(N)); for single-server-like families T / x.
    """

    job_id: int
    arrival: float
    size: float
    completion: float
    slowdown: float

    @property
    def response_time(self) -> float:
        """T = completion - arrival (also called flow time or turnaround time)."""
        return self.completion - self.arrival

    def as_dict(self) -> dict[str, Any]:
        """The record as a plain dict (for JSON and CSV output), response time included."""
        row = asdict(self)
        row["response_time"] = self.response_time
        return row


def basic_metrics(records: Sequence[JobRecord]) -> dict[str, float]:
    """Mean response time and mean slowdown over ``records``, plus their count."""
    if not records:
        return {"n_completed": 0.0, "mean_response_time": float("nan"), "mean_slowdown": float("nan")}
    response = np.fromiter((r.completion - r.arrival for r in records), float, len(records))
    slowdown = np.fromiter((r.slowdown for r in records), float, len(records))
    return {
        "n_completed": float(len(records)),
        "mean_response_time": float(response.mean()),
        "mean_slowdown": float(slowdown.mean()),
    }
