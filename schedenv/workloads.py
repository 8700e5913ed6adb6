"""Workloads: size distributions, arrival processes, speedup functions and job sets.

Distributions are small validated objects in the style of Ciw: ``sample(rng, size)`` draws from
the ``numpy.random.Generator`` it is given (never a global one), ``mean`` and ``variance`` are
analytic, ``repr`` shows the parameters, and bad parameters raise ``ValueError`` naming them.

Speedup functions map a (possibly fractional) number of servers ``k >= 0`` to a service rate,
as in the heSRPT paper (Berg, Vesilo, Harchol-Balter, §2): a job of size ``x`` on ``k`` servers
completes after ``x / s(k)``.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from schedenv.validation import (
    MAX_JOBS,
    SCALE_RANGE,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    check_sampled,
    check_scale,
    check_scale_array,
    suggest,
)

FloatArray = np.ndarray


def _exp(x: float) -> float:
    """exp(x), inf beyond the float range instead of OverflowError."""
    return math.exp(x) if x < 709.0 else math.inf


MAX_TAIL_INDEX = 1000.0
"""Largest Pareto tail index alpha: a Pareto law with alpha = 1000 is already within 0.1 % of its lower
bound (use ``Deterministic`` instead); above it the moment formulas cancel digits ((alpha - 1)^2 (alpha - 2)
overflows at alpha near 5e102, and BoundedPareto's alpha log k terms grow without bound)."""

MIN_SPREAD = 1e-9
"""Smallest 1 - (lower/upper)^alpha a BoundedPareto may have: its inverse-transform draw scales U by it,
and float64 rounding (1e-16) must stay small against it (1e-7 relative here)."""

MAX_HYPEREXPONENTIAL_SCV = 1e8
"""Largest C² of the balanced-means hyperexponential: its rare phase has probability about 1 / (2 C²),
computed as 1 - q1, which keeps about 1e-8 relative precision at C² = 1e8."""


def check_tail_index(name: str, value: Any) -> float:
    """Return ``value`` if it is a tail index alpha in (0, ``MAX_TAIL_INDEX``]."""
    alpha = check_positive(name, value)
    if alpha > MAX_TAIL_INDEX:
        raise ValueError(
            f"{name}={value!r} is not allowed; a tail index must lie in (0, {MAX_TAIL_INDEX:g}] (above it the law is "
            "a point mass within 0.1 %: use Deterministic)"
        )
    return alpha


class Distribution(ABC):
    """A nonnegative random variable (job size, duration or inter-arrival time)."""

    @abstractmethod
    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        """Draw ``size`` values (an array) or one value (a float) when ``size`` is None."""

    @property
    @abstractmethod
    def mean(self) -> float:
        """E[X] (``inf`` when it does not exist)."""

    @property
    @abstractmethod
    def variance(self) -> float:
        """Var[X] (``inf`` when it does not exist)."""

    @property
    def scv(self) -> float:
        """Squared coefficient of variation C² = Var[X] / E[X]² (``inf`` when Var[X] is)."""
        return math.inf if math.isinf(self.variance) else self.variance / self.mean**2

    def cdf(self, x: Any) -> Any:
        """P[X <= x] (vectorised)."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form cdf")

    def second_moment(self) -> float:
        """E[X²]."""
        return self.variance + self.mean**2

    @property
    def identity(self) -> str:
        """A string equal for two distributions exactly when they are the same law (a cache key): the exact repr."""
        return repr(self)


class Exponential(Distribution):
    """Exponential with the given ``mean``."""

    def __init__(self, mean: float) -> None:
        self._mean = check_scale("mean", mean)

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        return rng.exponential(self._mean, size)

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def variance(self) -> float:
        return self._mean**2

    def cdf(self, x: Any) -> Any:
        return -np.expm1(-np.maximum(np.asarray(x, dtype=float), 0.0) / self._mean)

    def __repr__(self) -> str:
        return f"Exponential(mean={self._mean!r})"


class Pareto(Distribution):
    """Pareto type I: P[X > x] = (scale / x)^alpha for x >= scale.

    The heSRPT paper's Fig. 5 uses alpha = 0.8 (infinite mean) and Fig. 6 alpha = 1.5, with the
    scale unstated; we default to scale = 1.
    """

    def __init__(self, alpha: float, scale: float = 1.0) -> None:
        self.alpha = check_tail_index("alpha", alpha)
        self.scale = check_scale("scale", scale)
        # The largest draw is scale * 2^(53 / alpha), as 1 - U >= 2^-53 (``sample``); it must stay a size.
        room = math.log(SCALE_RANGE[1] / self.scale)
        if 53.0 * math.log(2.0) / self.alpha > room:
            least = math.ceil(53.0 * math.log(2.0) / room * 1e4) / 1e4 if room > 0 else math.inf  # rounded up
            raise ValueError(
                f"alpha={alpha!r} is not allowed with scale={scale!r}: the largest draw, scale * 2^(53/alpha), would "
                f"exceed {SCALE_RANGE[1]:g} (SCALE_RANGE); alpha must be >= {least:g} for this scale"
            )

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        # Inverse transform on 1 - U in (0, 1] keeps every draw finite.
        return self.scale * (1.0 - rng.random(size)) ** (-1.0 / self.alpha)

    @property
    def mean(self) -> float:
        return math.inf if self.alpha <= 1 else self.alpha * self.scale / (self.alpha - 1)

    @property
    def variance(self) -> float:
        if self.alpha <= 2:
            return math.inf
        a = self.alpha
        return self.scale**2 * a / ((a - 1) ** 2 * (a - 2))

    def cdf(self, x: Any) -> Any:
        x = np.asarray(x, dtype=float)
        return np.where(x < self.scale, 0.0, 1.0 - (self.scale / np.maximum(x, self.scale)) ** self.alpha)

    def __repr__(self) -> str:
        return f"Pareto(alpha={self.alpha!r}, scale={self.scale!r})"


class BoundedPareto(Distribution):
    """Bounded Pareto B(k, p, alpha) of the TAGS paper (Harchol-Balter, §4).

    Density f(x) = alpha k^alpha x^(-alpha-1) / (1 - (k/p)^alpha) on [k, p]; here
    ``lower`` = k, ``upper`` = p.
    """

    def __init__(self, lower: float, upper: float, alpha: float) -> None:
        self.lower = check_scale("lower", lower)
        self.upper = check_scale("upper", upper)
        self.alpha = check_tail_index("alpha", alpha)
        if not self.upper > self.lower:
            raise ValueError(f"upper={upper!r} is not allowed; it must exceed lower={lower!r}")
        # ``sample`` scales U by 1 - (k/p)^alpha: below MIN_SPREAD float64 rounding swamps it.
        spread = -math.expm1(self.alpha * math.log(self.lower / self.upper))
        if spread < MIN_SPREAD:
            raise ValueError(
                f"alpha={alpha!r} with lower={lower!r} and upper={upper!r} is not allowed: 1 - (lower/upper)^alpha = "
                f"{spread:.3g} is below {MIN_SPREAD:g}, so float64 draws would collapse onto lower; widen "
                "[lower, upper] or raise alpha"
            )

    @classmethod
    def for_moments(cls, lower: float, upper: float, alpha: float) -> BoundedPareto:
        """B(lower, upper, alpha) without the range checks, to read its moments only.

        Root searches over the lower bound (``with_mean``, ``schedenv.analysis.tags.paper_size_dist``)
        visit bounds far below ``SCALE_RANGE``, where the moments (computed in logs) are still exact;
        draw only from a law built by the constructor.
        """
        law = cls.__new__(cls)
        law.lower, law.upper, law.alpha = lower, upper, alpha
        return law

    @classmethod
    def with_mean(cls, mean: float, alpha: float = 1.0, upper: float = 1e10) -> BoundedPareto:
        """The B(k, upper, alpha) whose mean is ``mean``, solving for the lower bound k.

        The TAGS paper fixes the mean at 3000 and the upper bound at 10^10 or 10^7; for
        alpha = 1 and upper = 10^10 this gives k ≈ 167.
        """
        mean = check_scale("mean", mean)
        alpha = check_tail_index("alpha", alpha)
        upper = check_scale("upper", upper)
        if not mean < upper:
            raise ValueError(f"mean={mean!r} is not allowed; it must be below upper={upper!r}")

        def excess(log_lower: float) -> float:
            return math.log(cls.for_moments(math.exp(log_lower), upper, alpha).mean) - math.log(mean)

        low, high = math.log(upper) - 700.0, math.log(mean)
        if not excess(low) < 0:  # the mean only falls as k does; here it is still above the target
            smallest = cls.for_moments(math.exp(low), upper, alpha).mean
            raise ValueError(
                f"mean={mean!r} is not allowed with alpha={alpha!r} and upper={upper!r}: no lower bound gives it (even "
                f"lower={math.exp(low):.3g} gives a mean of {smallest:.6g}); raise the mean or alpha, or lower upper"
            )
        lower = math.exp(optimize.brentq(excess, low, high, xtol=1e-14))
        if not lower >= SCALE_RANGE[0]:
            raise ValueError(
                f"mean={mean!r} is not allowed with alpha={alpha!r} and upper={upper!r}: it needs a lower bound of "
                f"{lower:.3g}, below {SCALE_RANGE[0]:g} (SCALE_RANGE); raise the mean or alpha, or lower upper"
            )
        return cls(lower, upper, alpha)

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        u = rng.random(size)
        ratio = (self.lower / self.upper) ** self.alpha
        return self.lower * (1.0 - u * (1.0 - ratio)) ** (-1.0 / self.alpha)

    def partial_moment(self, order: float, low: float, high: float) -> float:
        """E[X^order ; low < X <= high], the integral of x^order f(x) over (low, high]."""
        a, k = self.alpha, self.lower
        low, high = max(low, k), min(high, self.upper)
        if high <= low:
            return 0.0
        # In logs: k^alpha underflows (and high^e overflows) for the tiny lower bounds that
        # with_mean's root search visits, e.g. k = 1e-295 with alpha = 2.
        log_norm = math.log(a) + a * math.log(k) - math.log(-math.expm1(a * math.log(k / self.upper)))
        log_ratio = math.log(high / low)
        e = order - a
        if math.isclose(order, a):
            return _exp(log_norm) * log_ratio
        if e > 0:  # high^e - low^e = high^e (1 - (low/high)^e)
            return _exp(log_norm + e * math.log(high)) * -math.expm1(-e * log_ratio) / e
        return _exp(log_norm + e * math.log(low)) * -math.expm1(e * log_ratio) / -e

    @property
    def mean(self) -> float:
        return self.partial_moment(1.0, self.lower, self.upper)

    @property
    def variance(self) -> float:
        return self.partial_moment(2.0, self.lower, self.upper) - self.mean**2

    def cdf(self, x: Any) -> Any:
        x = np.clip(np.asarray(x, dtype=float), self.lower, self.upper)
        return (1.0 - (self.lower / x) ** self.alpha) / (1.0 - (self.lower / self.upper) ** self.alpha)

    def __repr__(self) -> str:
        return f"BoundedPareto(lower={self.lower!r}, upper={self.upper!r}, alpha={self.alpha!r})"


class HyperExponential(Distribution):
    """Two-phase hyperexponential with the given ``mean`` and C² >= 1 (balanced means).

    Phase i is chosen with probability q_i and has mean m_i, with q_1 m_1 = q_2 m_2 (the usual
    "balanced means" fit, e.g. Whitt 1982); this is how the ServerFilling paper's Fig. 4 workload
    with C² = 10 is produced.
    """

    def __init__(self, mean: float, scv: float) -> None:
        self._mean = check_scale("mean", mean)
        self._scv = check_positive("scv", scv)
        if not 1 <= self._scv <= MAX_HYPEREXPONENTIAL_SCV:
            raise ValueError(
                f"scv={scv!r} is not allowed; a hyperexponential needs 1 <= C² <= {MAX_HYPEREXPONENTIAL_SCV:g} "
                "(beyond, its rare phase's probability, about 1 / (2 C²), loses its digits to float64 rounding)"
            )
        q1 = 0.5 * (1.0 + math.sqrt((self._scv - 1.0) / (self._scv + 1.0)))
        self.probabilities = np.array([q1, 1.0 - q1])
        self.means = self._mean / (2.0 * self.probabilities)

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        phase_means = np.where(rng.random(size) < self.probabilities[0], self.means[0], self.means[1])
        draw = rng.exponential(1.0, size) * phase_means
        return float(draw) if size is None else draw

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def variance(self) -> float:
        return self._scv * self._mean**2

    def cdf(self, x: Any) -> Any:
        x = np.maximum(np.asarray(x, dtype=float), 0.0)
        return 1.0 - sum(q * np.exp(-x / m) for q, m in zip(self.probabilities, self.means, strict=True))

    def __repr__(self) -> str:
        return f"HyperExponential(mean={self._mean!r}, scv={self._scv!r})"


class Deterministic(Distribution):
    """Always ``value``."""

    def __init__(self, value: float) -> None:
        self.value = check_scale("value", value)

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        return self.value if size is None else np.full(size, self.value)

    @property
    def mean(self) -> float:
        return self.value

    @property
    def variance(self) -> float:
        return 0.0

    def cdf(self, x: Any) -> Any:
        return np.where(np.asarray(x, dtype=float) >= self.value, 1.0, 0.0)

    def __repr__(self) -> str:
        return f"Deterministic(value={self.value!r})"


class Uniform(Distribution):
    """Uniform on [low, high] with 0 <= low < high."""

    def __init__(self, low: float, high: float) -> None:
        self.low = check_nonnegative("low", low)
        self.high = check_scale("high", high)
        if not self.high > self.low:
            raise ValueError(f"high={high!r} is not allowed; it must exceed low={low!r}")

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        return rng.uniform(self.low, self.high, size)

    @property
    def mean(self) -> float:
        return 0.5 * (self.low + self.high)

    @property
    def variance(self) -> float:
        return (self.high - self.low) ** 2 / 12.0

    def cdf(self, x: Any) -> Any:
        return np.clip((np.asarray(x, dtype=float) - self.low) / (self.high - self.low), 0.0, 1.0)

    def __repr__(self) -> str:
        return f"Uniform(low={self.low!r}, high={self.high!r})"


class Choice(Distribution):
    """A discrete distribution over positive ``values`` (uniform unless ``probabilities`` given)."""

    def __init__(self, values: Sequence[float], probabilities: Sequence[float] | None = None) -> None:
        self.values = check_scale_array("values", values)
        if probabilities is None:
            self.probabilities = np.full(self.values.size, 1.0 / self.values.size)
        else:
            try:
                probs = np.asarray(probabilities, dtype=float)
            except (TypeError, ValueError) as error:
                raise ValueError(f"probabilities={probabilities!r} is not allowed; they must be numbers") from error
            if probs.shape != self.values.shape or (probs < 0).any() or not np.isfinite(probs).all():
                raise ValueError(
                    f"probabilities={probabilities!r} is not allowed; it needs one nonnegative "
                    f"finite entry per value ({self.values.size})"
                )
            if not math.isclose(probs.sum(), 1.0, rel_tol=1e-9):
                raise ValueError(f"probabilities={probabilities!r} is not allowed; they must sum to 1")
            self.probabilities = probs / probs.sum()

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        index = rng.choice(self.values.size, size=size, p=self.probabilities)
        return self.values[index] if size is not None else float(self.values[index])

    @property
    def mean(self) -> float:
        return float(self.values @ self.probabilities)

    @property
    def variance(self) -> float:
        return float(((self.values - self.mean) ** 2) @ self.probabilities)

    def cdf(self, x: Any) -> Any:
        x = np.asarray(x, dtype=float)
        return (self.probabilities * (self.values <= x[..., None])).sum(axis=-1)

    def __repr__(self) -> str:
        return f"Choice(values={self.values.tolist()!r}, probabilities={self.probabilities.tolist()!r})"


class Empirical(Distribution):
    """Resampling (with replacement) from observed positive ``samples``, e.g. a trace's sizes."""

    def __init__(self, samples: Sequence[float]) -> None:
        self.samples = np.sort(check_scale_array("samples", samples))

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        index = rng.integers(0, self.samples.size, size)
        return self.samples[index] if size is not None else float(self.samples[index])

    @property
    def mean(self) -> float:
        return float(self.samples.mean())

    @property
    def variance(self) -> float:
        return float(self.samples.var())

    def cdf(self, x: Any) -> Any:
        return np.searchsorted(self.samples, np.asarray(x, dtype=float), side="right") / self.samples.size

    def __repr__(self) -> str:
        return f"Empirical(n={self.samples.size}, mean={self.mean:.6g})"

    @functools.cached_property
    def identity(self) -> str:
        """The samples' digest (the repr shows only their count and mean), hashed once: a TAGS baseline
        reads it at every reset."""
        return f"Empirical(sha256={hashlib.sha256(self.samples.tobytes()).hexdigest()})"


@dataclass(frozen=True)
class PoissonArrivals:
    """A Poisson arrival process of the given ``rate`` (arrivals per unit time)."""

    rate: float

    def __post_init__(self) -> None:
        check_scale("rate", self.rate)

    @classmethod
    def for_load(cls, load: float, mean_size: float, capacity: float = 1.0) -> PoissonArrivals:
        """The rate lambda with lambda * mean_size / capacity = load.

        ``capacity`` is the family's service capacity: s(N) for malleable jobs (heSRPT paper
        §5.3), h hosts for dispatch (TAGS footnote 2), 1 for the multiserver size s = k d / k.
        """
        load = check_positive("load", load)
        mean_size = check_positive("mean_size", mean_size)
        capacity = check_positive("capacity", capacity)
        rate = load * capacity / mean_size
        low, high = SCALE_RANGE
        if not low <= rate <= high:
            raise ValueError(
                f"load={load!r} with mean_size={mean_size!r} and capacity={capacity!r} is not allowed: the arrival "
                f"rate load * capacity / mean_size = {rate:.3g} must lie in [{low:g}, {high:g}] (SCALE_RANGE)"
            )
        return cls(rate=rate)

    def interarrival_times(self, rng: np.random.Generator, size: int) -> FloatArray:
        """``size`` i.i.d. exponential gaps of mean 1 / rate."""
        return rng.exponential(1.0 / self.rate, size)


class Speedup(ABC):
    """A speedup function s(k): the service rate of a job holding k servers (k >= 0)."""

    @abstractmethod
    def __call__(self, servers: Any) -> Any:
        """s(k), vectorised over arrays; s(0) = 0."""

    def derivative(self, servers: Any) -> Any:
        """s'(k) (central difference unless a subclass knows the closed form)."""
        k = np.asarray(servers, dtype=float)
        h = np.maximum(1e-6 * k, 1e-9)
        return (self(k + h) - self(np.maximum(k - h, 0.0))) / (k + h - np.maximum(k - h, 0.0))


class Power(Speedup):
    """s(k) = k^p with 0 < p <= 1 (heSRPT paper §2; p = 1 is embarrassingly parallel)."""

    def __init__(self, p: float) -> None:
        self.p = check_probability("p", p, open_low=True, open_high=False)

    def __call__(self, servers: Any) -> Any:
        return np.power(servers, self.p)

    def derivative(self, servers: Any) -> Any:
        with np.errstate(divide="ignore"):  # s'(0) = inf for p < 1
            return self.p * np.power(servers, self.p - 1.0)

    def __repr__(self) -> str:
        return f"Power(p={self.p!r})"


class Amdahl(Speedup):
    """Amdahl's law with parallel fraction f: s(k) = 1 / ((1 - f) + f / k) for k >= 1.

    Below one server the job runs at rate k (a fraction of one server), which keeps s concave,
    increasing and continuous with s(0) = 0.
    """

    def __init__(self, f: float) -> None:
        self.f = check_probability("f", f, open_low=False, open_high=False)

    def __call__(self, servers: Any) -> Any:
        k = np.asarray(servers, dtype=float)
        with np.errstate(divide="ignore"):
            above = 1.0 / ((1.0 - self.f) + self.f / np.maximum(k, 1.0))
        return np.where(k >= 1.0, above, k)

    def __repr__(self) -> str:
        return f"Amdahl(f={self.f!r})"


class CustomSpeedup(Speedup):
    """A user's callable s(k), checked on a grid up to ``max_servers`` at construction.

    It must give s(0) = 0, finite values, and be nondecreasing and concave (the heSRPT paper's
    standing assumptions, §2); a violation names the first offending point.
    """

    def __init__(self, function: Callable[[Any], Any], max_servers: float = 1e6, name: str = "custom") -> None:
        if not callable(function):
            raise ValueError(f"speedup={function!r} is not allowed; it must be callable")
        self.function = function
        self.name = name
        grid = np.concatenate([[0.0], np.geomspace(1e-3, check_positive("max_servers", max_servers), 200)])
        values = np.array([_evaluate_speedup(function, name, k) for k in grid])
        if not np.isfinite(values).all():
            k = grid[int(np.argmin(np.isfinite(values)))]
            raise ValueError(f"speedup {name!r} must be finite; s(k) = {values[~np.isfinite(values)][0]} at k={k:.6g}")
        if abs(values[0]) > 1e-12:
            raise ValueError(f"speedup {name!r} must give s(0) = 0, got s(k) = {float(values[0])!r} at k=0")
        if not values[-1] > 0:
            raise ValueError(
                f"speedup {name!r} must be positive for k > 0; s(k) = {float(values[-1])!r} at k={grid[-1]:.6g}"
            )
        rises = np.diff(values)
        falls = rises < -1e-9 * np.abs(values[1:]).max()
        if falls.any():
            k = grid[1 + int(np.argmax(falls))]
            raise ValueError(f"speedup {name!r} must be nondecreasing; it falls at k={k:.6g}")
        slopes = rises / np.diff(grid)
        steepens = np.diff(slopes) > 1e-6 * (1.0 + np.abs(slopes[1:]))
        if steepens.any():
            k = grid[1 + int(np.argmax(steepens))]
            raise ValueError(f"speedup {name!r} must be concave; its slope rises near k={k:.6g}")

    def __call__(self, servers: Any) -> Any:
        k = np.asarray(servers, dtype=float)
        return np.vectorize(lambda v: _evaluate_speedup(self.function, self.name, v), otypes=[float])(k)

    def __repr__(self) -> str:
        return f"CustomSpeedup(name={self.name!r})"


def _evaluate_speedup(function: Callable[[Any], Any], name: str, servers: float) -> float:
    """``float(function(servers))``; whatever the user's callable raises becomes a ValueError naming the
    speedup and the server count it was called with, chained to the original error."""
    try:
        return float(function(servers))
    except Exception as error:
        raise ValueError(
            f"speedup {name!r} ({function!r}) fails at k={float(servers):.6g}: {type(error).__name__}: {error}"
        ) from error


def as_speedup(speedup: float | Speedup | Callable[[Any], Any], max_servers: float = 1e6) -> Speedup:
    """A float p means ``Power(p)``; a ``Speedup`` passes through; a callable is validated."""
    if isinstance(speedup, Speedup):
        return speedup
    if isinstance(speedup, (int, float, np.integer, np.floating)) and not isinstance(speedup, bool):
        try:
            return Power(float(speedup))
        except ValueError as error:
            raise ValueError(f"speedup={speedup!r} is not allowed (a float means Power(p)): {error}") from None
    if callable(speedup):
        return CustomSpeedup(speedup, max_servers=max_servers)
    raise ValueError(
        f"speedup={speedup!r} is not allowed; pass a float p in (0, 1] (s(k) = k^p), "
        "a Speedup object (Power, Amdahl) or a callable s(k)"
    )


def draw_sizes(name: str, law: Distribution, rng: np.random.Generator, count: int) -> FloatArray:
    """``count`` draws of ``law`` (the argument ``name``), through the sampled-value gate ``check_sampled``.

    Every family draws its sizes and durations here, so a user's distribution returning NaN, 0, a
    negative, an infinite or an out-of-range value is refused once, with one message, in every family.
    """
    return check_sampled(name, law.sample(rng, count), count, source=law)


def offline_job_sizes(n_jobs: int, size_dist: Distribution, rng: np.random.Generator) -> FloatArray:
    """``n_jobs`` i.i.d. sizes, all present at time 0 (the heSRPT paper's offline setting, §5.2)."""
    return draw_sizes("size_dist", size_dist, rng, check_int("n_jobs", n_jobs, maximum=MAX_JOBS))


def poisson_job_stream(
    n_arrivals: int, arrivals: PoissonArrivals, size_dist: Distribution, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Arrival times and sizes of ``n_arrivals`` jobs of a Poisson stream starting at t = 0.

    Gaps are drawn before sizes, so two streams from equal seeds agree whatever is done with them.
    """
    n = check_int("n_arrivals", n_arrivals, maximum=MAX_JOBS)
    times = np.cumsum(arrivals.interarrival_times(rng, n))
    sizes = draw_sizes("size_dist", size_dist, rng, n)
    return times, sizes


def poisson_job_chunks(
    n_arrivals: int, arrivals: PoissonArrivals, size_dist: Distribution, rng: np.random.Generator, chunk: int
) -> Iterator[tuple[FloatArray, FloatArray]]:
    """``poisson_job_stream`` drawn lazily, ``chunk`` jobs at a time (each chunk's gaps, then its sizes),
    in flat memory; one chunk, hence the very same stream, when ``n_arrivals <= chunk``."""
    left, clock = n_arrivals, 0.0
    while left:
        m = min(chunk, left)
        times, sizes = poisson_job_stream(m, arrivals, size_dist, rng)
        times = clock + times
        clock, left = float(times[-1]), left - m
        yield times, sizes


class DowneySpeedup(Speedup):
    """Downey's speedup model (Downey 1997, "A model for speedup of parallel programs"; docs/envs/moldable.md).

    ``A`` is the job's average parallelism (A >= 1) and ``sigma`` its variance in parallelism
    (sigma >= 0; 0 is linear speedup up to A). For n >= 1 processors:

    - sigma <= 1: S(n) = A n / (A + sigma (n - 1) / 2) for n <= A,
      S(n) = A n / (sigma (A - 1/2) + n (1 - sigma / 2)) for A <= n <= 2A - 1, S(n) = A beyond;
    - sigma >= 1: S(n) = n A (sigma + 1) / (sigma (n + A - 1) + A) for n <= A + A sigma - sigma,
      S(n) = A beyond.

    The pieces meet continuously at the breakpoints, S(1) = 1 and S(n) <= min(n, A). Below one
    processor the job runs at rate n (a fraction of one processor), so S(0) = 0 as every
    ``Speedup`` requires. A job of sequential runtime L runs for L / S(n) on n processors (the
    HRF paper, §2.2). :meth:`formula` broadcasts over arrays of ``A`` and ``sigma`` as well.

    >>> s = DowneySpeedup(A=8.0, sigma=0.5)
    >>> float(s(1)), float(s(20))
    (1.0, 8.0)
    """

    def __init__(self, A: float, sigma: float) -> None:
        self.A = check_scale("A", A)
        if self.A < 1.0:
            raise ValueError(f"A={A!r} is not allowed; the average parallelism must be >= 1")
        self.sigma = check_nonnegative("sigma", sigma)
        if self.sigma > SCALE_RANGE[1]:
            raise ValueError(f"sigma={sigma!r} is not allowed; it must lie in [0, {SCALE_RANGE[1]:g}] (SCALE_RANGE)")

    @staticmethod
    def formula(servers: Any, A: Any, sigma: Any) -> Any:
        """S(n; A, sigma), broadcasting ``servers``, ``A`` and ``sigma`` against each other."""
        n = np.asarray(servers, dtype=float)
        a = np.asarray(A, dtype=float)
        s = np.asarray(sigma, dtype=float)
        m = np.maximum(n, 1.0)
        low = s <= 1.0
        # Every branch is evaluated everywhere; a branch's denominator may vanish only where that
        # branch is not selected (e.g. the low-variance pieces at sigma > 2), so those warnings are moot.
        with np.errstate(divide="ignore", invalid="ignore"):
            first = a * m / (a + s * (m - 1.0) / 2.0)
            second = a * m / (s * (a - 0.5) + m * (1.0 - s / 2.0))
            high = m * a * (s + 1.0) / (s * (m + a - 1.0) + a)
        low_value = np.where(m <= a, first, np.where(m <= 2.0 * a - 1.0, second, a))
        high_value = np.where(m <= a + a * s - s, high, a)
        value = np.where(low, low_value, high_value)
        return np.where(n >= 1.0, value, np.maximum(n, 0.0))

    def __call__(self, servers: Any) -> Any:
        return self.formula(servers, self.A, self.sigma)

    def __repr__(self) -> str:
        return f"DowneySpeedup(A={self.A!r}, sigma={self.sigma!r})"


def from_spec(spec: Any) -> Any:
    """Build a distribution or speedup from a JSON/YAML-friendly spec, leaving other values alone.

    ``{"type": "Pareto", "alpha": 1.5}`` gives ``Pareto(alpha=1.5)``; ``{"type": "BoundedPareto.with_mean",
    "mean": 3000, "alpha": 1.1}`` calls the constructor named; lists and plain values pass through.
    This is how ``schedenv evaluate --env-kwargs`` and the YAML configs name workloads.
    """
    if not (isinstance(spec, dict) and "type" in spec):
        return spec
    name, _, method = str(spec["type"]).partition(".")
    kwargs = {key: value for key, value in spec.items() if key != "type"}
    target = _SPEC_TYPES.get(name)
    if target is None:
        raise ValueError(
            f"type={spec['type']!r} is not a known workload object{suggest(name, _SPEC_TYPES)}; "
            f"known types: {sorted(_SPEC_TYPES)}"
        )
    constructors = [
        m for m in dir(target) if not m.startswith("_") and isinstance(inspect.getattr_static(target, m), classmethod)
    ]
    if method and method not in constructors:
        raise ValueError(
            f"type={spec['type']!r} is not allowed; {name} has the constructors {constructors}"
            f"{suggest(method, constructors)}"
        )
    factory = getattr(target, method) if method else target
    parameters = inspect.signature(factory).parameters
    for key, value in kwargs.items():
        if key not in parameters:
            raise ValueError(
                f"{key}={value!r} is not a parameter of {spec['type']}{suggest(key, parameters)}; "
                f"its parameters are {list(parameters)}"
            )
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as error:
        raise ValueError(f"{spec['type']}: {error}; its parameters are {list(parameters)}") from error
    return factory(**kwargs)


_SPEC_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Exponential,
        Pareto,
        BoundedPareto,
        HyperExponential,
        Deterministic,
        Uniform,
        Choice,
        Empirical,
        Power,
        Amdahl,
    )
}
