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
    response = np.fromiter((r.completion - r.arrival for r in records), float, len(records))
    slowdown = np.fromiter((r.slowdown for r in records), float, len(records))
    return completion_means(response, slowdown)


def completion_means(response: np.ndarray, slowdown: np.ndarray) -> dict[str, float]:
    """``basic_metrics`` from the completed jobs' response times and slowdowns (NaN means when there are none)."""
    if not response.size:
        return {"n_completed": 0.0, "mean_response_time": float("nan"), "mean_slowdown": float("nan")}
    return {
        "n_completed": float(response.size),
        "mean_response_time": float(response.mean()),
        "mean_slowdown": float(slowdown.mean()),
    }


class CompletedJobs:
    """An episode's finished jobs as ``basic_metrics`` needs them: two float64 numbers a job (16 bytes)
    instead of a ``JobRecord`` object (about 200 bytes), so a long episode's memory stays small.

    ``metrics()`` equals ``basic_metrics`` of the same records bit for bit (the same values, summed
    in the same order by the same NumPy reduction).
    """

    def __init__(self) -> None:
        self._values = np.empty((2, 256))
        self.count = 0

    def extend(self, records: Sequence[JobRecord]) -> None:
        """Append the response times and slowdowns of ``records``."""
        needed = self.count + len(records)
        if needed > self._values.shape[1]:
            grown = np.empty((2, max(needed, 2 * self._values.shape[1])))
            grown[:, : self.count] = self._values[:, : self.count]
            self._values = grown
        for offset, record in enumerate(records):
            self._values[0, self.count + offset] = record.completion - record.arrival
            self._values[1, self.count + offset] = record.slowdown
        self.count = needed

    def metrics(self) -> dict[str, float]:
        """``basic_metrics`` of every record appended."""
        return completion_means(self._values[0, : self.count], self._values[1, : self.count])
