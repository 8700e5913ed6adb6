"""Confidence intervals and paired comparisons over independent seeds.

Each seed is one independent replication; intervals are Student-t 95% intervals over the
per-seed means (with one seed the half-width is reported as ``nan``, never as 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` replications with its 95% half-width ``ci95``."""

    mean: float
    ci95: float
    n: int

    def __str__(self) -> str:
        if math.isnan(self.ci95):
            return f"{self.mean:.6g}"
        return f"{self.mean:.6g} ± {self.ci95:.3g}"


def mean_interval(values: Sequence[float] | np.ndarray) -> Interval:
    """Student-t 95% interval of the mean of independent replications ``values``."""
    data = np.asarray(values, dtype=float)
    n = int(data.size)
    if n == 0:
        return Interval(float("nan"), float("nan"), 0)
    mean = float(data.mean())
    if n == 1:
        return Interval(mean, float("nan"), 1)
    half = float(stats.t.ppf(0.975, n - 1) * data.std(ddof=1) / math.sqrt(n))
    return Interval(mean, half, n)


@dataclass(frozen=True)
class PairedComparison:
    """Contender ``a`` against reference ``b`` on the same seeds (common random numbers)."""

    difference: Interval
    ratio: float

    def __str__(self) -> str:
        return f"diff {self.difference}, ratio {self.ratio:.4g}"


def paired_comparison(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> PairedComparison:
    """The per-seed difference a - b with its interval, and the ratio of means mean(a) / mean(b)."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if first.shape != second.shape:
        raise ValueError(f"paired samples need equal shapes, got {first.shape} and {second.shape}")
    ratio = float(first.mean() / second.mean()) if second.size and second.mean() != 0 else float("nan")
    return PairedComparison(mean_interval(first - second), ratio)
