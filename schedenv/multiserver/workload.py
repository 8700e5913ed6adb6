"""Workloads of the multiserver-job queue (Grosof et al. 2022, §3.1 and §6).

A job has a server need K and a duration D; its size is S = K D / k. A workload fixes K's law
and either S's law (independent of K, as in the paper's Figs. 2-4: "size exponentially
distributed, independent of the number of servers required") or D's law (independent of K, so
S = K D / k grows with the need). Load is rho = lambda E[S].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedenv.validation import as_real_array, check_int, check_positive, check_scale_array, check_time_resolution
from schedenv.workloads import Choice, Distribution, Empirical, PoissonArrivals, draw_sizes


class ScaledDistribution(Distribution):
    """``factor`` times a ``base`` random variable (the size k_j D / k of a need-k_j job)."""

    def __init__(self, base: Distribution, factor: float) -> None:
        self.base = base
        self.factor = check_positive("factor", factor)

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        return self.factor * self.base.sample(rng, size)

    @property
    def mean(self) -> float:
        return self.factor * self.base.mean

    @property
    def variance(self) -> float:
        return self.factor**2 * self.base.variance

    def cdf(self, x: Any) -> Any:
        return self.base.cdf(np.asarray(x, dtype=float) / self.factor)

    def __repr__(self) -> str:
        return f"ScaledDistribution({self.base!r}, factor={self.factor!r})"


def parse_server_needs(server_needs: Any, n_servers: int) -> Choice:
    """Server needs as a ``Choice``: a sequence of values (uniform) or a ``Choice`` of integers."""
    if isinstance(server_needs, Choice):
        law = server_needs
    elif isinstance(server_needs, Distribution):
        raise ValueError(
            f"server_needs={server_needs!r} is not allowed; give a sequence of integers or a schedenv.workloads.Choice"
        )
    else:
        values = as_real_array("server_needs", server_needs)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"server_needs={server_needs!r} is not allowed; give a non-empty sequence of integers")
        if not (np.isfinite(values) & (values >= 1)).all():
            raise ValueError(
                f"server_needs={server_needs!r} is not allowed; "
                f"every need must be an integer in 1..n_servers={n_servers}"
            )
        law = Choice(values.tolist())
    values = law.values
    if not (np.isfinite(values).all() and (values == np.round(values)).all()):
        raise ValueError(f"server_needs values {values.tolist()} are not allowed; every need must be an integer")
    too_big = values[(values < 1) | (values > n_servers)]
    if too_big.size:
        raise ValueError(
            f"server_needs={values.tolist()} is not allowed: server need {too_big[0]:g} lies outside "
            f"1..n_servers={n_servers} (a job cannot use more servers than exist)"
        )
    return law


@dataclass(frozen=True)
class MultiserverWorkload:
    """The law of (K, D): server needs and either sizes or durations, both independent of K."""

    n_servers: int
    server_needs: Choice
    size_dist: Distribution | None
    """Law of S = K D / k (independent of K), or None when ``duration_dist`` is given."""
    duration_dist: Distribution | None
    """Law of D (independent of K), or None when ``size_dist`` is given."""

    @property
    def need_values(self) -> np.ndarray:
        """The possible server needs (int64)."""
        return self.server_needs.values.astype(np.int64)

    @property
    def mean_size(self) -> float:
        """E[S] = E[K] E[D] / k or the size law's mean."""
        if self.size_dist is not None:
            return self.size_dist.mean
        assert self.duration_dist is not None
        return self.server_needs.mean * self.duration_dist.mean / self.n_servers

    def size_distribution(self, need: int) -> Distribution:
        """S_i, the size law of a job of server need ``need`` (used by the Gittins rank, §5.1)."""
        if self.size_dist is not None:
            return self.size_dist
        assert self.duration_dist is not None
        return ScaledDistribution(self.duration_dist, need / self.n_servers)

    @property
    def size_scv(self) -> float:
        """Var[S] / E[S]^2, the squared coefficient of variation of the size (inf for a heavy tail).
        With a duration law, S = K D / k and K, D independent: E[S^2] = E[K^2] E[D^2] / k^2."""
        if self.size_dist is not None:
            return self.size_dist.variance / self.size_dist.mean**2
        assert self.duration_dist is not None
        need, duration = self.server_needs, self.duration_dist
        second = (need.variance + need.mean**2) * (duration.variance + duration.mean**2)
        return second / (need.mean * duration.mean) ** 2 - 1.0

    def arrival_rate(self, load: float) -> float:
        """lambda with lambda E[S] = load (§3.1)."""
        mean = self.mean_size
        if not math.isfinite(mean):
            raise ValueError(f"the mean size is infinite, so load={load!r} is undefined; use a finite-mean law")
        return PoissonArrivals.for_load(load, mean).rate

    def draw(self, rng: np.random.Generator, n_arrivals: int, load: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Arrival times, server needs and durations of ``n_arrivals`` Poisson arrivals.

        Draw order (fixed, so equal seeds give equal streams): gaps, then sizes or durations,
        then needs.
        """
        n = check_int("n_arrivals", n_arrivals)
        times = np.cumsum(PoissonArrivals(self.arrival_rate(load)).interarrival_times(rng, n))
        sized = self.size_dist is not None
        name, law = ("size_dist", self.size_dist) if sized else ("duration_dist", self.duration_dist)
        assert law is not None
        draws = draw_sizes(name, law, rng, n)
        needs = np.asarray(self.server_needs.sample(rng, n), dtype=np.float64).astype(np.int64)
        durations = draws * self.n_servers / needs if self.size_dist is not None else draws
        return times, needs, durations


PARAMETERS = 7
"""Length of ``scenario_params``."""
SCV_CAP = 100.0
"""Size variabilities above this squared coefficient of variation (heavy tails) show as the cap."""
PARAMETERS_HIGH = (np.inf, np.inf, 1.0, 1.0, 1.0, math.log1p(SCV_CAP), 1.0)
"""Upper bounds of ``scenario_params`` (all are >= 0)."""


def scenario_params(n_servers: int, load: float, server_needs: Choice, size_scv: float, size_known: bool) -> np.ndarray:
    """The scenario as O(1) numbers, for an agent trained across scenarios (float32, in order):
    log2(k) / 10 (k = 1024 gives 1), the load rho, E[K] / k, std(K) / k, the largest need / k,
    log1p(Var[S] / E[S]^2) with the ratio capped at ``SCV_CAP``, and 1 if sizes are known else 0."""
    k = float(n_servers)
    scv = max(size_scv, 0.0) if size_scv <= SCV_CAP else SCV_CAP  # rounding below 0; inf and NaN to the cap
    largest = float(server_needs.values[server_needs.probabilities > 0].max())
    values = (
        math.log2(k) / 10.0,
        load,
        server_needs.mean / k,
        math.sqrt(server_needs.variance) / k,
        largest / k,
        math.log1p(scv),
        1.0 if size_known else 0.0,
    )
    return np.array(values, dtype=np.float32)


def empirical_need_sizes(needs: np.ndarray, sizes: np.ndarray, n_servers: int) -> dict[int, Distribution]:
    """Per-need empirical size laws of an explicit job set or trace (for the Gittins rank)."""
    return {int(v): Empirical(sizes[needs == v]) for v in np.unique(needs)}


def parse_jobs(jobs: Any, n_servers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Explicit jobs: (need, duration) pairs at t = 0 or (arrival, need, duration) triples.

    Returns arrival times (sorted, stable), needs and durations.
    """
    array = as_real_array("jobs", jobs)
    if array.ndim != 2 or array.shape[1] not in (2, 3) or array.shape[0] == 0:
        raise ValueError(
            f"jobs with shape {array.shape} is not allowed; give a non-empty list of (need, duration) pairs "
            "or (arrival, need, duration) triples"
        )
    if array.shape[1] == 2:
        array = np.column_stack([np.zeros(array.shape[0]), array])
    arrivals, needs, durations = array[:, 0], array[:, 1], array[:, 2]
    if not (np.isfinite(arrivals).all() and (arrivals >= 0).all()):
        raise ValueError("jobs arrival times must be finite and >= 0")
    bad_need = (needs != np.round(needs)) | (needs < 1) | (needs > n_servers) | ~np.isfinite(needs)
    if bad_need.any():
        i = int(np.flatnonzero(bad_need)[0])
        raise ValueError(f"jobs[{i}] has server need {needs[i]:g}; needs must be integers in 1..n_servers={n_servers}")
    bad_duration = ~(np.isfinite(durations) & (durations > 0))
    if bad_duration.any():
        i = int(np.flatnonzero(bad_duration)[0])
        raise ValueError(f"jobs[{i}] has duration {durations[i]:g}; durations must be finite and > 0")
    check_scale_array("jobs[:, -1] (durations)", durations)
    check_time_resolution("jobs", arrivals, durations)
    order = np.argsort(arrivals, kind="stable")
    return arrivals[order].copy(), needs[order].astype(np.int64), durations[order].copy()
