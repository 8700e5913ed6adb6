"""Distributions, arrival processes, speedups and specs of ``schedenv.workloads`` against theory.

Statistical checks use fixed seeds and a stated tolerance of 5 standard errors (analytic
standard errors from the distributions' raw moments), so a pass is not luck and a real bias of
a few percent fails. Exact checks (closed forms, the TAGS paper's k ≈ 167) use 1e-9 or tighter.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats

from schedenv import workloads
from schedenv.workloads import (
    MAX_TAIL_INDEX,
    Amdahl,
    BoundedPareto,
    Choice,
    CustomSpeedup,
    Deterministic,
    Distribution,
    Empirical,
    Exponential,
    HyperExponential,
    Pareto,
    PoissonArrivals,
    Power,
    Speedup,
    Uniform,
    as_speedup,
    from_spec,
    offline_job_sizes,
    poisson_job_stream,
)

N_SAMPLES = 200_000
TOLERANCE_SE = 5.0


def _pareto_raw(alpha: float, scale: float) -> Callable[[int], float]:
    return lambda j: alpha * scale**j / (alpha - j)


def _hyperexp_raw(d: HyperExponential) -> Callable[[int], float]:
    return lambda j: math.factorial(j) * float(np.sum(d.probabilities * d.means**j))


def _uniform_raw(low: float, high: float) -> Callable[[int], float]:
    return lambda j: (high ** (j + 1) - low ** (j + 1)) / ((j + 1) * (high - low))


def _bounded_raw(d: BoundedPareto) -> Callable[[int], float]:
    return lambda j: d.partial_moment(j, d.lower, d.upper)


# (distribution, E[X^j] for j <= 4): every case has a finite fourth moment, so the sample
# variance has a finite standard error sqrt((mu4 - sigma^4) / n).
MOMENT_CASES: list[tuple[Distribution, Callable[[int], float]]] = [
    (Exponential(0.5), lambda j: math.factorial(j) * 0.5**j),
    (Exponential(3.0), lambda j: math.factorial(j) * 3.0**j),
    (Pareto(alpha=5.0), _pareto_raw(5.0, 1.0)),
    (Pareto(alpha=6.0, scale=2.5), _pareto_raw(6.0, 2.5)),
    (HyperExponential(mean=2.0, scv=4.0), _hyperexp_raw(HyperExponential(mean=2.0, scv=4.0))),
    (HyperExponential(mean=1.0, scv=10.0), _hyperexp_raw(HyperExponential(mean=1.0, scv=10.0))),
    (Uniform(0.0, 1.0), _uniform_raw(0.0, 1.0)),
    (Uniform(2.0, 7.0), _uniform_raw(2.0, 7.0)),
    (BoundedPareto(1.0, 100.0, 1.5), _bounded_raw(BoundedPareto(1.0, 100.0, 1.5))),
    (BoundedPareto(2.0, 50.0, 0.8), _bounded_raw(BoundedPareto(2.0, 50.0, 0.8))),
    (BoundedPareto(0.5, 20.0, 2.0), _bounded_raw(BoundedPareto(0.5, 20.0, 2.0))),
    (Choice([1.0, 2.0, 10.0], [0.5, 0.3, 0.2]), lambda j: 0.5 + 0.3 * 2.0**j + 0.2 * 10.0**j),
    (Empirical([1.0, 3.0, 3.0, 8.0]), lambda j: (1.0 + 2 * 3.0**j + 8.0**j) / 4),
]
MOMENT_IDS = [repr(d) for d, _ in MOMENT_CASES]

CONTINUOUS = [
    Exponential(2.0),
    Pareto(alpha=0.8),
    Pareto(alpha=1.5, scale=3.0),
    BoundedPareto(167.0, 1e10, 1.0),
    BoundedPareto(1.0, 100.0, 2.5),
    HyperExponential(mean=1.0, scv=10.0),
    HyperExponential(mean=5.0, scv=1.0),
    Uniform(1.0, 4.0),
]

ALL_DISTRIBUTIONS = [
    *CONTINUOUS,
    Deterministic(2.5),
    Choice([1.0, 4.0], [0.25, 0.75]),
    Empirical([0.5, 1.0, 7.0]),
]


def _central(raw: Callable[[int], float]) -> tuple[float, float, float]:
    m1, m2, m3, m4 = (raw(j) for j in range(1, 5))
    variance = m2 - m1**2
    mu4 = m4 - 4 * m1 * m3 + 6 * m1**2 * m2 - 3 * m1**4
    return m1, variance, mu4


# --------------------------------------------------------------------------- moments


@pytest.mark.parametrize(("dist", "raw"), MOMENT_CASES, ids=MOMENT_IDS)
def test_analytic_mean_and_variance_match_raw_moments(dist: Distribution, raw: Callable[[int], float]) -> None:
    mean, variance, _ = _central(raw)
    assert dist.mean == pytest.approx(mean, rel=1e-12)
    assert dist.variance == pytest.approx(variance, rel=1e-9)
    assert dist.second_moment() == pytest.approx(raw(2), rel=1e-9)
    assert dist.scv == pytest.approx(variance / mean**2, rel=1e-9)


@pytest.mark.parametrize(("dist", "raw"), MOMENT_CASES, ids=MOMENT_IDS)
def test_sample_mean_and_variance_within_five_standard_errors(dist: Distribution, raw: Callable[[int], float]) -> None:
    _, variance, mu4 = _central(raw)
    x = np.asarray(dist.sample(np.random.default_rng(12345), N_SAMPLES))
    assert x.shape == (N_SAMPLES,)
    assert (x > 0).all()
    se_mean = math.sqrt(variance / N_SAMPLES)
    se_variance = math.sqrt((mu4 - variance**2) / N_SAMPLES)
    assert abs(x.mean() - dist.mean) <= TOLERANCE_SE * se_mean
    assert abs(x.var(ddof=1) - dist.variance) <= TOLERANCE_SE * se_variance


def test_moment_check_detects_a_wrong_mean() -> None:
    """The 5-standard-error tolerance is tight enough to reject a 2% error in the mean."""
    x = Exponential(1.0).sample(np.random.default_rng(12345), N_SAMPLES)
    assert abs(x.mean() - 1.02) > TOLERANCE_SE * math.sqrt(1.0 / N_SAMPLES)


@pytest.mark.parametrize("dist", CONTINUOUS, ids=repr)
def test_cdf_matches_samples_kolmogorov_smirnov(dist: Distribution) -> None:
    x = dist.sample(np.random.default_rng(7), 5000)
    assert stats.kstest(x, dist.cdf).pvalue > 1e-3


@pytest.mark.parametrize(
    ("sampled", "claimed"),
    [
        (Pareto(alpha=1.5), Pareto(alpha=1.7)),
        (BoundedPareto(1.0, 100.0, 1.0), BoundedPareto(1.0, 100.0, 1.2)),
        (HyperExponential(1.0, 10.0), Exponential(1.0)),
    ],
    ids=repr,
)
def test_kolmogorov_smirnov_rejects_the_wrong_cdf(sampled: Distribution, claimed: Distribution) -> None:
    x = sampled.sample(np.random.default_rng(7), 5000)
    assert stats.kstest(x, claimed.cdf).pvalue < 1e-6


def test_cdf_boundaries() -> None:
    bp = BoundedPareto(2.0, 50.0, 1.3)
    assert bp.cdf([0.0, 2.0, 50.0, 1e9]).tolist() == pytest.approx([0.0, 0.0, 1.0, 1.0], abs=1e-15)
    pareto = Pareto(alpha=2.0, scale=3.0)
    assert pareto.cdf([1.0, 3.0, 6.0]).tolist() == pytest.approx([0.0, 0.0, 0.75])
    assert Exponential(2.0).cdf([-1.0, 0.0, 2.0]).tolist() == pytest.approx([0.0, 0.0, 1 - math.exp(-1)])
    assert Uniform(1.0, 3.0).cdf([0.0, 2.0, 5.0]).tolist() == pytest.approx([0.0, 0.5, 1.0])
    assert Deterministic(2.0).cdf([1.999, 2.0]).tolist() == [0.0, 1.0]
    hx = HyperExponential(mean=1.0, scv=5.0)
    assert float(hx.cdf(0.0)) == 0.0
    assert float(hx.cdf(1e6)) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("alpha", "mean_inf", "variance_inf"),
    [(0.8, True, True), (1.0, True, True), (1.5, False, True), (2.0, False, True), (2.5, False, False)],
)
def test_pareto_infinite_moments(alpha: float, mean_inf: bool, variance_inf: bool) -> None:
    d = Pareto(alpha=alpha, scale=2.0)
    assert math.isinf(d.mean) is mean_inf
    assert math.isinf(d.variance) is variance_inf
    assert math.isinf(d.scv) is variance_inf
    if not mean_inf:
        assert d.mean == pytest.approx(alpha * 2.0 / (alpha - 1))
    if not variance_inf:
        assert d.variance == pytest.approx(4.0 * alpha / ((alpha - 1) ** 2 * (alpha - 2)))


def test_pareto_draws_are_finite_and_above_scale() -> None:
    x = Pareto(alpha=0.8, scale=3.0).sample(np.random.default_rng(0), 100_000)
    assert np.isfinite(x).all()
    assert x.min() >= 3.0


def test_pareto_tail_index_range_keeps_every_draw_a_size() -> None:
    """The smallest allowed alpha puts the largest possible draw, 1 - U = 2^-53, just inside SCALE_RANGE."""
    least = 53 * math.log(2) / math.log(1e100 / 4.0)
    Pareto(alpha=least * (1 + 1e-12), scale=4.0)
    with pytest.raises(ValueError, match=f"alpha must be >= {math.ceil(least * 1e4) / 1e4:g} for this scale"):
        Pareto(alpha=least * (1 - 1e-12), scale=4.0)
    largest = 4.0 * (2.0**-53) ** (-1.0 / (least * (1 + 1e-12)))  # the sampling formula at 1 - U = 2^-53
    assert math.isfinite(largest) and 1e99 < largest <= 1e100
    steep = Pareto(alpha=MAX_TAIL_INDEX, scale=2.0)  # the largest tail index: finite moments, draws near the scale
    assert steep.variance == pytest.approx(4.0 * 1000 / (999**2 * 998), rel=1e-12)
    assert steep.sample(np.random.default_rng(0), 1000).max() < 2.0 * 1.04


def test_bounded_pareto_extremes_inside_the_ranges_sample_their_law() -> None:
    """Wide bounds with a small alpha (nearly log-uniform) and bounds only MIN_SPREAD apart stay exact."""
    wide = BoundedPareto(1e-100, 1e100, 1e-3)
    x = wide.sample(np.random.default_rng(1), 20_000)
    assert (x >= 1e-100).all() and (x <= 1e100).all()
    assert stats.kstest(np.log(x[:5000]), lambda v: wide.cdf(np.exp(v))).pvalue > 1e-3
    narrow = BoundedPareto(1.0, 1.0 + 2.2e-9, 0.5)  # 1 - (lower/upper)^alpha = 1.1e-9, just above MIN_SPREAD
    y = narrow.sample(np.random.default_rng(2), 20_000)
    assert ((y >= 1.0) & (y <= 1.0 + 2.2e-9)).all() and 0.49 < ((y - 1.0) / 2.2e-9).mean() < 0.51


# --------------------------------------------------------------------------- bounded Pareto


def test_with_mean_reproduces_the_tags_paper_lower_bound() -> None:
    """TAGS paper §4: mean 3000, alpha = 1, p = 10^10 gives k ≈ 167."""
    d = BoundedPareto.with_mean(3000, alpha=1.0, upper=1e10)
    assert 166.5 < d.lower < 168.5
    assert d.upper == 1e10
    assert d.mean == pytest.approx(3000.0, rel=1e-9)
    closed_form = d.lower * math.log(d.upper / d.lower) / (1 - d.lower / d.upper)
    assert closed_form == pytest.approx(3000.0, rel=1e-9)


@pytest.mark.parametrize("alpha", [0.3, 0.5, 1.1, 1.5, 2.0, 3.0, 10.0])
@pytest.mark.parametrize("upper", [1e7, 1e10])
def test_with_mean_hits_the_mean_for_every_alpha(alpha: float, upper: float) -> None:
    d = BoundedPareto.with_mean(3000, alpha=alpha, upper=upper)
    assert d.alpha == alpha
    assert d.lower < 3000 < d.upper
    assert d.mean == pytest.approx(3000.0, rel=1e-9)


def test_with_mean_rejects_a_mean_above_upper() -> None:
    with pytest.raises(ValueError, match=r"mean=3000\.0 .*upper=100"):
        BoundedPareto.with_mean(3000, alpha=1.0, upper=100.0)


def _density(d: BoundedPareto) -> Callable[[float], float]:
    a, k, p = d.alpha, d.lower, d.upper
    return lambda x: a * k**a * x ** (-a - 1) / (1 - (k / p) ** a)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("order", [0.0, 1.0, 2.0, 0.5, "alpha"])
def test_partial_moment_equals_numerical_integration(alpha: float, order: float | str) -> None:
    j = alpha if order == "alpha" else float(order)
    d = BoundedPareto(2.0, 100.0, alpha)
    f = _density(d)
    for low, high in [(3.0, 40.0), (2.0, 100.0), (10.0, 11.0)]:
        expected, _ = integrate.quad(lambda x, f=f, j=j: x**j * f(x), low, high, epsabs=0, epsrel=1e-12)
        assert d.partial_moment(j, low, high) == pytest.approx(expected, rel=1e-9)


def test_partial_moment_over_ten_decades_matches_log_space_integration() -> None:
    d = BoundedPareto.with_mean(3000, alpha=1.0, upper=1e10)
    f = _density(d)
    for j in (1.0, 2.0):
        expected, _ = integrate.quad(
            lambda u, j=j: math.exp(u) ** (j + 1) * f(math.exp(u)),
            math.log(d.lower),
            math.log(d.upper),
            limit=200,
            epsrel=1e-11,
        )
        assert d.partial_moment(j, 0.0, math.inf) == pytest.approx(expected, rel=1e-8)


def test_partial_moment_clips_to_support_and_adds_up() -> None:
    d = BoundedPareto(2.0, 100.0, 1.2)
    assert d.partial_moment(0, 0.0, 1e9) == pytest.approx(1.0, rel=1e-12)
    assert d.partial_moment(1, -5.0, 1e9) == pytest.approx(d.mean, rel=1e-12)
    assert d.partial_moment(1, 200.0, 300.0) == 0.0
    assert d.partial_moment(1, 50.0, 10.0) == 0.0
    pieces = d.partial_moment(2, 2.0, 7.0) + d.partial_moment(2, 7.0, 100.0)
    assert pieces == pytest.approx(d.partial_moment(2, 2.0, 100.0), rel=1e-12)
    assert d.partial_moment(0, 2.0, 7.0) == pytest.approx(float(d.cdf(7.0)), rel=1e-12)


def test_bounded_pareto_draws_stay_in_bounds() -> None:
    d = BoundedPareto(167.0, 1e10, 1.0)
    x = d.sample(np.random.default_rng(3), 100_000)
    assert x.min() >= 167.0
    assert x.max() <= 1e10


# --------------------------------------------------------------------------- hyperexponential, discrete


@pytest.mark.parametrize("scv", [1.0, 1.5, 4.0, 10.0, 100.0])
def test_hyperexponential_scv_is_exact(scv: float) -> None:
    d = HyperExponential(mean=3.0, scv=scv)
    q, m = d.probabilities, d.means
    assert q.sum() == pytest.approx(1.0, abs=1e-15)
    assert q[0] * m[0] == pytest.approx(q[1] * m[1], rel=1e-12)  # balanced means
    mean = float(q @ m)
    second = float(2 * q @ m**2)
    assert mean == pytest.approx(3.0, rel=1e-12)
    assert (second - mean**2) / mean**2 == pytest.approx(scv, rel=1e-12)
    assert d.scv == pytest.approx(scv, rel=1e-12)


def test_hyperexponential_with_scv_one_is_exponential() -> None:
    d = HyperExponential(mean=2.0, scv=1.0)
    assert d.means.tolist() == pytest.approx([2.0, 2.0])
    xs = np.linspace(0, 10, 11)
    assert d.cdf(xs) == pytest.approx(Exponential(2.0).cdf(xs), abs=1e-15)


def test_choice_values_frequencies_and_cdf() -> None:
    d = Choice([1.0, 4.0, 9.0], [0.2, 0.5, 0.3])
    assert d.mean == pytest.approx(0.2 + 2.0 + 2.7)
    assert d.variance == pytest.approx(0.2 * 1 + 0.5 * 16 + 0.3 * 81 - 4.9**2)
    x = d.sample(np.random.default_rng(1), N_SAMPLES)
    assert set(np.unique(x).tolist()) == {1.0, 4.0, 9.0}
    for value, p in zip([1.0, 4.0, 9.0], [0.2, 0.5, 0.3], strict=True):
        assert abs((x == value).mean() - p) <= TOLERANCE_SE * math.sqrt(p * (1 - p) / N_SAMPLES)
    assert d.cdf([0.5, 1.0, 5.0, 9.0]).tolist() == pytest.approx([0.0, 0.2, 0.7, 1.0])
    assert float(d.cdf(4.0)) == pytest.approx(0.7)
    uniform = Choice([2.0, 3.0])
    assert uniform.probabilities.tolist() == [0.5, 0.5]
    assert isinstance(uniform.sample(np.random.default_rng(0)), float)


def test_empirical_resamples_only_observed_values() -> None:
    data = [5.0, 1.0, 3.0, 3.0]
    d = Empirical(data)
    assert d.mean == pytest.approx(3.0)
    assert d.variance == pytest.approx(np.var(data))  # the resampling distribution: ddof = 0
    x = d.sample(np.random.default_rng(2), N_SAMPLES)
    assert set(np.unique(x).tolist()) == {1.0, 3.0, 5.0}
    assert abs((x == 3.0).mean() - 0.5) <= TOLERANCE_SE * math.sqrt(0.25 / N_SAMPLES)
    assert d.cdf([0.5, 1.0, 3.0, 4.0, 5.0]).tolist() == [0.0, 0.25, 0.75, 0.75, 1.0]
    assert isinstance(d.sample(np.random.default_rng(0)), float)


def test_deterministic() -> None:
    d = Deterministic(2.5)
    assert d.sample(np.random.default_rng(0)) == 2.5
    assert d.sample(np.random.default_rng(0), 4).tolist() == [2.5] * 4
    assert (d.mean, d.variance, d.scv) == (2.5, 0.0, 0.0)


# --------------------------------------------------------------------------- repr, errors, seeds


@pytest.mark.parametrize(
    "dist",
    [
        Exponential(2.0),
        Pareto(alpha=1.5, scale=2.0),
        BoundedPareto(167.5, 1e10, 1.0),
        HyperExponential(mean=3.0, scv=10.0),
        Deterministic(2.5),
        Uniform(0.5, 2.0),
        Choice([1.0, 2.0], [0.25, 0.75]),
        Power(0.5),
        Amdahl(0.9),
    ],
    ids=repr,
)
def test_repr_round_trips(dist: object) -> None:
    text = repr(dist)
    rebuilt: Any = eval(text, vars(workloads))
    assert type(rebuilt) is type(dist)
    assert repr(rebuilt) == text
    if isinstance(dist, Distribution) and isinstance(rebuilt, Distribution):
        assert rebuilt.mean == dist.mean
        assert rebuilt.variance == dist.variance


def test_repr_shows_the_parameters() -> None:
    assert repr(Pareto(alpha=0.8)) == "Pareto(alpha=0.8, scale=1.0)"
    assert repr(BoundedPareto(1.0, 100.0, 1.5)) == "BoundedPareto(lower=1.0, upper=100.0, alpha=1.5)"
    assert repr(Empirical([1.0, 2.0, 6.0])) == "Empirical(n=3, mean=3)"


NAN = float("nan")
BAD_PARAMETERS: list[tuple[Callable[[], object], str]] = [
    (lambda: Exponential(NAN), "mean=nan"),
    (lambda: Exponential(-1.0), "mean=-1.0"),
    (lambda: Exponential(0), "mean=0"),
    (lambda: Exponential(True), "mean=True"),
    (lambda: Exponential("1"), "mean='1'"),  # type: ignore[arg-type]
    (lambda: Exponential(math.inf), "mean=inf"),
    (lambda: Pareto(alpha=0), "alpha=0"),
    (lambda: Pareto(alpha=1.5, scale=-2), "scale=-2"),
    (lambda: Pareto(alpha=None), "alpha=None"),  # type: ignore[arg-type]
    (lambda: BoundedPareto(10.0, 10.0, 1.0), "upper=10.0"),
    (lambda: BoundedPareto(10.0, 5.0, 1.0), "upper=5.0"),
    (lambda: BoundedPareto(0.0, 5.0, 1.0), "lower=0.0"),
    (lambda: BoundedPareto(1.0, 5.0, NAN), "alpha=nan"),
    (lambda: BoundedPareto.with_mean(-3.0), "mean=-3.0"),
    (lambda: HyperExponential(mean=1.0, scv=0.5), "scv=0.5"),
    (lambda: HyperExponential(mean=False, scv=2.0), "mean=False"),
    (lambda: Deterministic(0.0), "value=0.0"),
    (lambda: Uniform(-1.0, 1.0), "low=-1.0"),
    (lambda: Uniform(2.0, 1.0), "high=1.0"),
    (lambda: Uniform(1.0, 1.0), "high=1.0"),
    (lambda: Uniform(NAN, 1.0), "low=nan"),
    (lambda: Choice([1.0, 2.0], [0.5, 0.6]), "probabilities=[0.5, 0.6]"),
    (lambda: Choice([1.0, 2.0], [1.0]), "probabilities=[1.0]"),
    (lambda: Choice([1.0, 2.0], [1.5, -0.5]), "probabilities=[1.5, -0.5]"),
    (lambda: Choice([1.0, 2.0], ["a", "b"]), "probabilities=['a', 'b']"),  # type: ignore[list-item]
    (lambda: Choice([1.0, -2.0]), "values[1]=-2.0"),
    (lambda: Choice([]), "values"),
    (lambda: Empirical([1.0, NAN]), "samples[1]=nan"),
    (lambda: Empirical([1.0, 0.0]), "samples[1]=0.0"),
    (lambda: Pareto(alpha=1e-300), "alpha=1e-300"),
    (lambda: Pareto(alpha=0.15), "alpha must be >= 0.1596"),  # draws up to 2^(53/0.15) > 1e100
    (lambda: Pareto(alpha=1e300), "alpha=1e+300"),
    (lambda: BoundedPareto(1e-300, 5.0, 1.0), "lower=1e-300"),
    (lambda: BoundedPareto(1.0, 1e300, 1.0), "upper=1e+300"),
    (lambda: BoundedPareto(1.0, 5.0, 1e300), "alpha=1e+300"),
    (lambda: BoundedPareto(1.0, 1e6, 1e-12), "alpha=1e-12 with lower=1.0 and upper=1000000.0"),
    (lambda: BoundedPareto(1.0, 1.0 + 1e-12, 1.0), "1 - (lower/upper)^alpha"),
    (lambda: BoundedPareto.with_mean(1e-300), "mean=1e-300"),
    (lambda: BoundedPareto.with_mean(3000.0, alpha=1e-3), "mean=3000.0 is not allowed with alpha=0.001"),
    (lambda: BoundedPareto.with_mean(3000.0, alpha=1e300), "alpha=1e+300"),
    (lambda: HyperExponential(mean=1.0, scv=1e300), "scv=1e+300"),
    (lambda: PoissonArrivals(0.0), "rate=0.0"),
    (lambda: PoissonArrivals(1e-300), "rate=1e-300"),
    (lambda: PoissonArrivals.for_load(1e-300, 1.0), "load=1e-300 with mean_size=1.0"),
    (lambda: PoissonArrivals.for_load(0.5, math.inf), "mean_size=inf"),
    (lambda: PoissonArrivals.for_load(-0.5, 1.0), "load=-0.5"),
    (lambda: PoissonArrivals.for_load(0.5, 1.0, capacity=0), "capacity=0"),
    (lambda: Power(0.0), "p=0.0"),
    (lambda: Power(1.5), "p=1.5"),
    (lambda: Power(True), "p=True"),
    (lambda: Amdahl(-0.1), "f=-0.1"),
    (lambda: Amdahl(1.1), "f=1.1"),
    (lambda: as_speedup("fast"), "speedup='fast'"),  # type: ignore[arg-type]
    (lambda: as_speedup(True), "speedup=True"),
    (lambda: offline_job_sizes(0, Exponential(1.0), np.random.default_rng(0)), "n_jobs=0"),
    (lambda: offline_job_sizes(2.0, Exponential(1.0), np.random.default_rng(0)), "n_jobs=2.0"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("build", "named"), BAD_PARAMETERS, ids=[named for _, named in BAD_PARAMETERS])
def test_bad_parameters_raise_value_error_naming_them(build: Callable[[], object], named: str) -> None:
    with pytest.raises(ValueError) as error:
        build()
    assert named in str(error.value)
    assert "not allowed" in str(error.value) or "must" in str(error.value)


def test_numpy_scalars_are_accepted_as_parameters() -> None:
    assert Uniform(np.int64(0), np.float64(2.0)).mean == 1.0  # type: ignore[arg-type]
    assert Exponential(np.float32(2.0)).mean == 2.0  # type: ignore[arg-type]
    speedup: Any = as_speedup(np.int64(1))  # type: ignore[arg-type]
    assert isinstance(speedup, Power)
    assert speedup.p == 1.0


@pytest.mark.parametrize("dist", ALL_DISTRIBUTIONS, ids=repr)
def test_same_seed_same_samples_and_no_global_rng(dist: Distribution) -> None:
    # The legacy global generator's state must not move: sampling uses only the rng it is given.
    global_state = np.random.get_state(legacy=False)  # noqa: NPY002
    python_state = random.getstate()
    first = dist.sample(np.random.default_rng(2024), 1000)
    second = dist.sample(np.random.default_rng(2024), 1000)
    other = dist.sample(np.random.default_rng(2025), 1000)
    single = dist.sample(np.random.default_rng(5))
    np.testing.assert_array_equal(first, second)
    if dist.variance > 0:
        assert not np.array_equal(first, other)
    assert isinstance(single, float)
    assert single == dist.sample(np.random.default_rng(5))
    np.testing.assert_equal(np.random.get_state(legacy=False), global_state)  # noqa: NPY002
    assert random.getstate() == python_state


# --------------------------------------------------------------------------- arrivals


@pytest.mark.parametrize(("load", "mean", "capacity"), [(0.8, 3.0, 1.0), (0.5, 2.0, 31.6227766), (0.95, 3000.0, 4.0)])
def test_for_load_rate_and_interarrival_mean(load: float, mean: float, capacity: float) -> None:
    arrivals = PoissonArrivals.for_load(load, mean, capacity=capacity)
    rate = load * capacity / mean
    assert arrivals.rate == pytest.approx(rate, rel=1e-15)
    gaps = arrivals.interarrival_times(np.random.default_rng(11), N_SAMPLES)
    assert abs(gaps.mean() - 1 / rate) <= TOLERANCE_SE * (1 / rate) / math.sqrt(N_SAMPLES)
    assert stats.kstest(gaps[:5000], Exponential(1 / rate).cdf).pvalue > 1e-3


def test_poisson_stream_times_do_not_depend_on_the_size_distribution() -> None:
    arrivals = PoissonArrivals(rate=2.0)
    times_a, sizes_a = poisson_job_stream(500, arrivals, Exponential(1.0), np.random.default_rng(4))
    times_b, sizes_b = poisson_job_stream(500, arrivals, Pareto(alpha=1.5), np.random.default_rng(4))
    np.testing.assert_array_equal(times_a, times_b)
    assert (np.diff(times_a) > 0).all()
    assert times_a[0] > 0
    assert sizes_a.shape == sizes_b.shape == (500,)
    assert sizes_b.min() >= 1.0


def test_offline_job_sizes() -> None:
    sizes = offline_job_sizes(7, Deterministic(3.0), np.random.default_rng(0))
    assert sizes.dtype == np.float64
    assert sizes.tolist() == [3.0] * 7


# --------------------------------------------------------------------------- speedups

GRID = np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 400)])


def _assert_concave_nondecreasing(s: Speedup, grid: np.ndarray = GRID) -> None:
    values = np.asarray(s(grid), dtype=float)
    assert values[0] == 0.0
    assert (np.diff(values) >= -1e-12).all()
    slopes = np.diff(values) / np.diff(grid)
    assert (np.diff(slopes) <= 1e-9 * (1 + np.abs(slopes[1:]))).all()


@pytest.mark.parametrize("p", [0.05, 0.5, 0.9, 1.0])
def test_power_speedup_values_and_derivative(p: float) -> None:
    s = Power(p)
    ks = np.array([0.25, 1.0, 2.0, 10.0, 1000.0])
    assert float(s(1.0)) == 1.0
    assert float(s(0.0)) == 0.0
    assert s(ks) == pytest.approx(ks**p, rel=1e-14)
    assert s.derivative(ks) == pytest.approx(p * ks ** (p - 1), rel=1e-14)
    numeric = Speedup.derivative(s, ks)
    assert numeric == pytest.approx(p * ks ** (p - 1), rel=1e-5)
    _assert_concave_nondecreasing(s)


def test_power_derivative_at_zero_is_infinite_for_sublinear() -> None:
    assert float(Power(0.5).derivative(0.0)) == math.inf
    assert float(Power(1.0).derivative(0.0)) == 1.0


@pytest.mark.parametrize("f", [0.0, 0.5, 0.9, 0.99, 1.0])
def test_amdahl_values_continuity_and_concavity(f: float) -> None:
    s = Amdahl(f)
    assert float(s(0.0)) == 0.0
    assert float(s(1.0)) == pytest.approx(1.0, abs=1e-15)
    for k in (2.0, 8.0, 100.0):
        assert float(s(k)) == pytest.approx(1.0 / ((1 - f) + f / k), rel=1e-14)
    assert float(s(0.3)) == pytest.approx(0.3)  # a fraction of one server runs at that rate
    eps = 1e-9
    assert abs(float(s(1 - eps)) - float(s(1 + eps))) < 1e-8
    assert float(s(1e12)) == pytest.approx(1.0 / (1 - f) if f < 1 else 1e12, rel=1e-6)
    _assert_concave_nondecreasing(s)
    ks = np.array([2.0, 5.0, 50.0])
    assert s.derivative(ks) == pytest.approx(f / ((1 - f) * ks + f) ** 2, rel=1e-5, abs=1e-12)


def test_amdahl_matches_hand_values() -> None:
    assert float(Amdahl(0.5)(2.0)) == pytest.approx(4.0 / 3.0)
    assert float(Amdahl(0.9)(10.0)) == pytest.approx(1.0 / 0.19)


def test_custom_speedup_accepts_concave_functions_and_evaluates_them() -> None:
    s = CustomSpeedup(math.sqrt, max_servers=1000.0, name="sqrt")
    ks = np.array([0.0, 1.0, 4.0, 9.0])
    assert s(ks).tolist() == pytest.approx([0.0, 1.0, 2.0, 3.0])
    assert repr(s) == "CustomSpeedup(name='sqrt')"
    amdahl = Amdahl(0.8)
    wrapped = CustomSpeedup(lambda k: float(amdahl(k)), max_servers=100.0)
    assert wrapped(ks) == pytest.approx(amdahl(ks))
    assert CustomSpeedup(lambda k: k, max_servers=1e6)(3.5) == 3.5  # linear: concave at the limit


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (lambda k: k**2, r"concave.*k=\d"),
        (lambda k: k / (1 + k**3), r"nondecreasing.*k=\d"),
        (lambda k: k + 1.0, r"s\(0\) = 0.*k=0"),
        (lambda k: math.inf if k > 5 else math.sqrt(k), r"finite.*k=[5-9]"),
        (lambda k: math.nan if k > 5 else math.sqrt(k), r"finite.*k=[5-9]"),
        (lambda k: math.log(k), r"fails at k=0"),
        (lambda k: 0.0, r"positive.*k=1000"),
        (lambda k: min(k, 1.0) + max(k - 10.0, 0.0), r"concave.*k=(9\.\d|10\.\d)"),
    ],
    ids=["convex", "decreasing", "offset", "inf", "nan", "raises", "zero", "kinked-up"],
)
def test_custom_speedup_rejects_invalid_functions_naming_k(function: Callable[[float], float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CustomSpeedup(function, max_servers=1000.0)


def test_custom_speedup_rejects_non_callables() -> None:
    with pytest.raises(ValueError, match=r"speedup=3 .*callable"):
        CustomSpeedup(3)  # type: ignore[arg-type]


def test_as_speedup() -> None:
    assert isinstance(as_speedup(0.5), Power)
    assert as_speedup(0.5).p == 0.5  # type: ignore[attr-defined]
    amdahl = Amdahl(0.5)
    assert as_speedup(amdahl) is amdahl
    custom = as_speedup(math.sqrt, max_servers=50.0)
    assert isinstance(custom, CustomSpeedup)
    assert float(custom(16.0)) == 4.0
    with pytest.raises(ValueError, match="concave"):
        as_speedup(lambda k: k**3, max_servers=50.0)
    with pytest.raises(ValueError, match=r"p=2\.0"):
        as_speedup(2.0)


# --------------------------------------------------------------------------- specs


def test_from_spec_builds_objects() -> None:
    pareto = from_spec({"type": "Pareto", "alpha": 0.8})
    assert isinstance(pareto, Pareto)
    assert (pareto.alpha, pareto.scale) == (0.8, 1.0)
    bp = from_spec({"type": "BoundedPareto.with_mean", "mean": 3000, "alpha": 1.0, "upper": 1e10})
    assert isinstance(bp, BoundedPareto)
    assert 166.5 < bp.lower < 168.5
    assert bp.mean == pytest.approx(3000.0, rel=1e-9)
    choice = from_spec({"type": "Choice", "values": [1, 2], "probabilities": [0.25, 0.75]})
    assert choice.mean == pytest.approx(1.75)
    assert from_spec({"type": "Amdahl", "f": 0.9}).f == 0.9
    assert from_spec({"type": "HyperExponential", "mean": 1.0, "scv": 10.0}).scv == pytest.approx(10.0)


@pytest.mark.parametrize("value", [3, 0.5, "hesrpt", None, [1.0, 2.0], {"alpha": 1.5}, {"n_jobs": 8}])
def test_from_spec_passes_plain_values_through(value: object) -> None:
    assert from_spec(value) is value


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "Pareot", "alpha": 1.5}, r"type='Pareot'.*did you mean 'Pareto'"),
        ({"type": "Exponentail", "mean": 1.0}, r"did you mean 'Exponential'"),
        ({"type": "BoundedPareto.with_man", "mean": 3000}, r"did you mean 'with_mean'"),
        ({"type": "Pareto.mean"}, r"type='Pareto\.mean'"),
        ({"type": "Pareto", "alfa": 1.5}, r"alfa=1\.5 .*did you mean 'alpha'"),
        ({"type": "Pareto"}, r"Pareto.*alpha"),
        ({"type": "Pareto", "alpha": -1.0}, r"alpha=-1\.0"),
    ],
)
def test_from_spec_errors_name_the_problem(spec: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_spec(spec)
