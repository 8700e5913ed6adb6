"""The Gittins rank of the blind multiserver-job setting (Grosof et al. 2022, §5.1).

A job of server need i and age a (size already served, §3.1) has rank

    rank_i(a) = inf_{b > a} E[min(S_i, b) - a | S_i > a] / P[S_i <= b | S_i > a]
              = inf_{b > a} (G(b) - G(a)) / (F(b) - F(a)),   G(x) = E[min(S_i, x)] = int_0^x (1 - F),

where S_i is the size law of need-i jobs. It is computed numerically from the law's ``cdf``: on
a grid of ages (0, then 1200 geometric points from 1e-6 times the mean size up to the age where
1 - F falls below 1e-6) G is integrated interval by interval with Simpson's rule (so every
difference G(b) - G(a) has a small *relative* error), and for every grid age the infimum is
taken over the grid points b above it (an O(n^2) array operation done once per law). Ages
between grid points interpolate linearly; ages beyond the grid keep the last rank. Ranks are
rounded to 6 significant digits, so a memoryless law gives exactly equal ranks (the
exponential's rank is its mean at every age) and ties fall back on arrival order. The policies
build one table per need (S_i = S for a size law independent of the need; S_i = i D / k for a
duration law; the empirical per-need sizes for an explicit job set).
"""

from __future__ import annotations

import math

import numpy as np

from schedenv.workloads import Distribution, draw_sizes

GRID_POINTS = 1200
SIGNIFICANT_DIGITS = 6


class GittinsRank:
    """rank(age) for one size law S_i, tabulated on an age grid at construction."""

    def __init__(self, size_dist: Distribution) -> None:
        scale = size_dist.mean
        if not math.isfinite(scale):
            scale = float(np.median(draw_sizes("size_dist", size_dist, np.random.default_rng(0), 4097)))
        grid = np.concatenate([[0.0], np.geomspace(1e-6 * scale, _tail_age(size_dist, scale), GRID_POINTS - 1)])
        cdf = self._cdf(size_dist, grid)
        middle = self._cdf(size_dist, 0.5 * (grid[1:] + grid[:-1]))
        pieces = np.diff(grid) / 6.0 * ((1.0 - cdf[:-1]) + 4.0 * (1.0 - middle) + (1.0 - cdf[1:]))
        integral = np.concatenate([[0.0], np.cumsum(pieces)])
        gain = cdf[None, :] - cdf[:, None]
        cost = integral[None, :] - integral[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.triu(np.ones_like(gain, dtype=bool), 1) & (gain > 1e-14), cost / gain, np.inf)
        ranks = ratio.min(axis=1)
        # Past the last point where some completion probability remains, keep the last finite rank.
        finite = np.isfinite(ranks)
        last = ranks[finite][-1] if finite.any() else scale
        ranks = np.where(finite, ranks, last)
        self.ages = grid
        self.ranks = _round_significant(ranks)
        self.size_dist = size_dist

    @staticmethod
    def _cdf(size_dist: Distribution, x: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(size_dist.cdf(x), dtype=np.float64), 0.0, 1.0)

    def __call__(self, ages: np.ndarray) -> np.ndarray:
        """Ranks of jobs with the given ages (vectorised)."""
        return np.interp(np.asarray(ages, dtype=np.float64), self.ages, self.ranks)

    def __repr__(self) -> str:
        return f"GittinsRank({self.size_dist!r})"


def _tail_age(size_dist: Distribution, scale: float) -> float:
    """An age beyond which 1 - F < 1e-6 (doubling from the scale; at most 2^60 times it)."""
    age = scale
    for _ in range(60):
        if 1.0 - float(size_dist.cdf(age)) < 1e-6:
            break
        age *= 2.0
    return age


def _round_significant(values: np.ndarray) -> np.ndarray:
    magnitude = np.floor(np.log10(np.abs(values)))
    factor = 10.0 ** (SIGNIFICANT_DIGITS - 1 - magnitude)
    return np.round(values * factor) / factor
