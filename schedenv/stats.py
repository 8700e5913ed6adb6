"""Confidence intervals and paired comparisons over independent seeds and training runs.

Each seed is one independent replication; intervals are Student-t 95% intervals over the
per-seed means (with one seed the half-width is reported as ``nan``, never as 0). For a learned
agent the unit of replication is the training run: ``ratio_of_means`` bootstraps runs, then test
seeds (docs/rl/index.md, "The headline statistic").
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


def ratio_interval(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """95% paired bootstrap interval of the ratio of means mean(a) / mean(b).

    Seeds are resampled together (a[i] with b[i]: the pairing of common random numbers), ``resamples``
    times with a fixed generator, and the 2.5% and 97.5% percentiles of the resampled ratios are
    returned: ``ratio_of_means`` with a single run. With one pair there is no spread to resample:
    the interval is (nan, nan).
    """
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"paired samples need equal 1-d shapes, got {first.shape} and {second.shape}")
    if first.size < 2:
        return float("nan"), float("nan")
    return ratio_of_means(first[None, :], second, resamples=resamples, seed=seed).ci95


@dataclass(frozen=True)
class RatioOfMeans:
    """The agent's mean cost over the reference's on the same seeds, with a 95% percentile interval."""

    ratio: float
    low: float
    high: float
    runs: int
    seeds: int

    @property
    def ci95(self) -> tuple[float, float]:
        """The interval as ``(low, high)``."""
        return self.low, self.high

    def __str__(self) -> str:
        return f"{self.ratio:.4f} [{self.low:.4f}, {self.high:.4f}]"


def ratio_of_means(
    runs: Sequence[Sequence[float]] | np.ndarray,
    reference: Sequence[float] | np.ndarray,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    block: int = 1_000,
) -> RatioOfMeans:
    """Ratio of means of a (runs x seeds) cost matrix to a reference on the same seeds, two-level paired bootstrap.

    The point estimate is ``runs.mean() / reference.mean()`` (that is, ``runs.sum()`` over
    ``n_runs * reference.sum()``): the mean cost over every run and seed over the reference's mean.
    Each of ``resamples`` bootstrap draws (one fixed generator) resamples the training runs with
    replacement, then the test seeds with replacement, the same seed indices for the agent and the
    reference (common random numbers), and recomputes the ratio; the interval is the 2.5%-97.5%
    percentile range, widened to contain the point estimate (which it misses only by rounding, when
    every resample gives the same ratio). Runs are the unit of replication in RL (Agarwal et al.
    2021; Henderson et al. 2018): when runs differ the interval spans them, where a bootstrap of
    episodes alone would not. With one run it is the paired bootstrap over seeds; with one run and
    one seed the interval is the point (there is nothing to resample).
    """
    costs = np.asarray(runs, dtype=float)
    base = np.asarray(reference, dtype=float)
    if costs.ndim != 2 or base.ndim != 1 or costs.shape[1] != base.size or costs.size == 0:
        raise ValueError(
            f"runs must be a non-empty (runs x seeds) matrix and reference one value per seed, got shapes "
            f"{costs.shape} and {base.shape}"
        )
    if not base.sum() > 0:
        raise ValueError(f"the reference's costs must have a positive sum, got {base.sum()!r}")
    n_runs, n_seeds = costs.shape
    rng = np.random.default_rng(seed)
    ratios = np.empty(resamples)
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        weights = rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=size) / n_runs  # (size, runs)
        columns = rng.integers(0, n_seeds, size=(size, n_seeds))
        pooled = weights @ costs  # each draw's run-averaged cost per seed: (size, seeds)
        numerator = np.take_along_axis(pooled, columns, axis=1).sum(axis=1)
        ratios[start : start + size] = numerator / base[columns].sum(axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    point = float(costs.mean() / base.mean())
    return RatioOfMeans(point, min(float(low), point), max(float(high), point), n_runs, n_seeds)


SEED_TIE = 1e-9
"""Costs within this (relative) of the reference's on a seed are equal to it (``seed_view``): an agent that plays
the reference's every decision (a clone) scores its cost to rounding (within about 1e-15), its metrics being
summed by other code."""


@dataclass(frozen=True)
class SeedView:
    """Where (run, test seed) pairs land against a reference on the same seed: the paired view that a ratio of means
    sums up (docs/rl/index.md, "The headline statistic")."""

    below: int
    """Pairs whose cost is below the reference's (beyond ``SEED_TIE``)."""
    equal: int
    """Pairs whose cost equals the reference's within ``SEED_TIE``."""
    above: int
    """Pairs whose cost is above the reference's (beyond ``SEED_TIE``)."""
    median_ratio: float
    """The median pair's cost over the reference's."""
    worst_ratio: float
    """The highest pair's cost over the reference's."""

    @property
    def counts(self) -> str:
        """``"below / equal / above"``: the three counts as the results tables print them."""
        return f"{self.below} / {self.equal} / {self.above}"

    def __str__(self) -> str:
        return (
            f"below on {self.below}, equal on {self.equal} and above on {self.above} of the "
            f"{self.below + self.equal + self.above} (run, test seed) pairs; the median pair's ratio "
            f"{self.median_ratio:.4f}"
        )


def seed_view(
    runs: Sequence[Sequence[float]] | Sequence[float] | np.ndarray, reference: Sequence[float] | np.ndarray
) -> SeedView:
    """The ``SeedView`` of a (runs x seeds) cost matrix, or of one run's costs, against ``reference`` (one cost per
    seed). The ratios are nan when a reference cost is not positive (a mean waiting time of 0, say); the counts
    are defined all the same."""
    costs = np.atleast_2d(np.asarray(runs, dtype=float))
    base = np.asarray(reference, dtype=float)
    if costs.ndim != 2 or base.ndim != 1 or costs.shape[1] != base.size or costs.size == 0:
        raise ValueError(
            f"runs must be a non-empty (runs x seeds) matrix or one run's costs, and reference one value per seed; "
            f"got shapes {np.shape(runs)} and {base.shape}"
        )
    tied = np.abs(costs - base) <= SEED_TIE * np.abs(base)
    ratios = costs / base if (base > 0).all() else np.full(costs.shape, np.nan)
    return SeedView(
        int((~tied & (costs < base)).sum()),
        int(tied.sum()),
        int((~tied & (costs > base)).sum()),
        float(np.median(ratios)),
        float(ratios.max()),
    )


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean of all entries of ``scores``: the mean of the middle 50% (25% trimmed each side).

    The aggregate Agarwal et al. (NeurIPS 2021, "Deep RL at the edge of the statistical precipice")
    recommend over the mean (outlier-robust) and the median (statistically efficient); computed as
    their ``rliable.metrics.aggregate_iqm`` does, with ``scipy.stats.trim_mean(..., 0.25)``.
    """
    return float(stats.trim_mean(np.asarray(scores, dtype=float).ravel(), proportiontocut=0.25))


def iqm_interval(scores: np.ndarray, *, resamples: int = 2_000, seed: int = 0) -> tuple[float, float, float]:
    """IQM of a (runs x tasks) score matrix with its 95% stratified bootstrap interval (Agarwal et al. 2021).

    Rows are independent training runs and columns distinct tasks (settings), never the episodes of
    one task: the stratified bootstrap resamples the runs with replacement independently within each
    task, as rliable's ``StratifiedBootstrap``, and the interval is the 2.5%-97.5% percentile range of
    the resampled IQMs. For one setting pass one column (each run's score, e.g. its ratio of means):
    the interval then resamples runs only. (rliable itself is not a dependency: its 1.2 release needs
    ``arch<8``, which fails to import beside pandas 3.)
    """
    data = np.asarray(scores, dtype=float)
    if data.ndim != 2 or data.size == 0:
        raise ValueError(f"scores must be a non-empty (runs x tasks) matrix, got shape {data.shape}")
    runs, tasks = data.shape
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, runs, size=(resamples, runs, tasks))
    resampled = data[rows, np.arange(tasks)]  # (resamples, runs, tasks)
    values = stats.trim_mean(resampled.reshape(resamples, -1), proportiontocut=0.25, axis=1)
    low, high = np.percentile(values, [2.5, 97.5])
    return iqm(data), float(low), float(high)
