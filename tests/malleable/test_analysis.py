"""heSRPT closed forms (Theorems 5 and 6) against hand-worked values and the simulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schedenv.analysis import hesrpt_allocation, hesrpt_mean_slowdown, hesrpt_weighted_flow_time
from schedenv.malleable.sim import MalleableParams, advance, initial_state, is_done
from schedenv.workloads import Power


def simulate_hesrpt(sizes: np.ndarray, p: float, n_servers: float, objective: str) -> float:
    """Total objective of heSRPT run through the pure simulator (no closed form involved)."""
    params = MalleableParams(n_servers, Power(p), objective, np.zeros(sizes.size), sizes)
    state, total = initial_state(params), 0.0
    while not is_done(params, state):
        theta = hesrpt_allocation(state.remaining, p, weights=np.asarray(state.weight))
        state, outcome = advance(params, state, theta)
        total += outcome.accrued_objective
    return total


def test_section1_example_splits_75_25() -> None:
    # §1: N = 10, two unit jobs, s(k) = k^0.5, flow time: 75% / 25% (order by input on ties).
    np.testing.assert_allclose(hesrpt_allocation([1.0, 1.0], 0.5, "flow_time"), [0.25, 0.75], rtol=1e-15)


def test_section1_example_total_flow_time_by_hand() -> None:
    # Job B on 7.5 servers finishes at 1/sqrt(7.5); job A, on 2.5 servers until then and 10 after,
    # finishes at t_B + (1 - sqrt(2.5) t_B) / sqrt(10).
    t_b = 1 / math.sqrt(7.5)
    t_a = t_b + (1 - math.sqrt(2.5) * t_b) / math.sqrt(10)
    assert hesrpt_weighted_flow_time([1.0, 1.0], 0.5, 10.0, "flow_time") == pytest.approx(t_a + t_b, rel=1e-14)


def test_fractions_sum_to_one_and_grow_as_size_shrinks() -> None:
    sizes = np.array([5.0, 1.0, 3.0, 2.0, 4.0])
    for p in (0.05, 0.5, 0.9):
        theta = hesrpt_allocation(sizes, p)
        assert theta.sum() == pytest.approx(1.0, abs=1e-14)
        assert (np.diff(theta[np.argsort(-sizes)]) > 0).all()


def test_p_one_is_srpt_and_small_p_approaches_equal_split() -> None:
    sizes = [3.0, 1.0, 2.0]
    np.testing.assert_array_equal(hesrpt_allocation(sizes, 1.0, "flow_time"), [0.0, 1.0, 0.0])
    # p -> 0: theta_i -> z-differences of the identity, i.e. equal shares for flow time.
    np.testing.assert_allclose(hesrpt_allocation(sizes, 1e-6, "flow_time"), [1 / 3] * 3, atol=1e-5)


def test_theorem6_total_for_p_one_is_srpt_total() -> None:
    sizes = np.array([3.0, 1.0, 2.0])
    # SRPT with all 10 servers at rate 10: completions 0.1, 0.3, 0.6.
    assert hesrpt_weighted_flow_time(sizes, 1.0, 10.0, "flow_time") == pytest.approx(1.0, rel=1e-14)


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.8, 0.95])
@pytest.mark.parametrize("objective", ["slowdown", "flow_time"])
def test_theorem6_equals_simulated_theorem5(p: float, objective: str) -> None:
    sizes = np.random.default_rng(11).pareto(1.2, 25) + 1.0
    assert simulate_hesrpt(sizes, p, 500.0, objective) == pytest.approx(
        hesrpt_weighted_flow_time(sizes, p, 500.0, objective), rel=1e-10
    )


@pytest.mark.parametrize("p", [0.99, 0.999, 0.9999])
def test_p_near_one_stays_finite_and_accurate(p: float) -> None:
    sizes = np.geomspace(1.0, 1e4, 200)[::-1]
    c = 1 / (1 - p)
    with np.errstate(over="ignore"):
        naive = np.cumsum(1e6**p / sizes) ** c  # the textbook form overflows here
    assert not np.isfinite(naive).all()
    theta = hesrpt_allocation(sizes, p)
    assert np.isfinite(theta).all() and theta.sum() == pytest.approx(1.0, abs=1e-12)
    total = hesrpt_weighted_flow_time(sizes, p, 1e6)
    assert math.isfinite(total)
    assert simulate_hesrpt(sizes, p, 1e6, "slowdown") == pytest.approx(total, rel=1e-9)
    # Continuity at p = 1 (SRPT): the total converges as p -> 1.
    assert total == pytest.approx(hesrpt_weighted_flow_time(sizes, 1.0, 1e6), rel=5 * (1 - p) * math.log(1e6))


def test_mean_slowdown_is_at_least_one() -> None:
    # No job can beat running alone on all N servers.
    sizes = np.random.default_rng(3).exponential(1.0, 40)
    assert hesrpt_mean_slowdown(sizes, 0.5, 100.0) > 1.0


@pytest.mark.parametrize("p", [0.0, -0.5, 1.5, float("nan")])
def test_p_outside_unit_interval_is_refused(p: float) -> None:
    with pytest.raises(ValueError, match="p="):
        hesrpt_allocation([1.0, 2.0], p)


def test_weights_that_do_not_favor_small_jobs_are_refused_by_theorem6() -> None:
    with pytest.raises(ValueError, match="favor small jobs"):
        hesrpt_weighted_flow_time([1.0, 2.0], 0.5, 10.0, weights=np.array([1.0, 5.0]))


def test_nonpositive_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"sizes\[1\]"):
        hesrpt_allocation([1.0, 0.0], 0.5)
