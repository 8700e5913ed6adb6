"""Schrage-Miller (SRPT M/G/1), the Theorem 4.1 gap bound and the simulated SRPT-1 system."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from schedenv.analysis import sfs_gap_bound, srpt_mg1_response_time
from schedenv.multiserver.srpt1 import srpt1_completion_times, srpt1_mean_response_time
from schedenv.workloads import Exponential, HyperExponential, Uniform


def schrage_miller_exponential_by_quad(rate: float) -> float:
    """An independent evaluation for Exp(1) sizes, with the density and scipy.quad."""

    def rho(x: float) -> float:
        return rate * (1.0 - math.exp(-x) - x * math.exp(-x))

    def response(x: float) -> float:
        second = 2.0 - math.exp(-x) * (x * x + 2.0 * x + 2.0)
        waiting = rate * (second + x * x * math.exp(-x)) / (2.0 * (1.0 - rho(x)) ** 2)
        return waiting + integrate.quad(lambda t: 1.0 / (1.0 - rho(t)), 0.0, x)[0]

    return integrate.quad(lambda x: response(x) * math.exp(-x), 0.0, 60.0, limit=200)[0]


@pytest.mark.parametrize("rate", [0.3, 0.7, 0.9])
def test_schrage_miller_matches_an_independent_quadrature(rate: float) -> None:
    assert srpt_mg1_response_time(Exponential(1.0), rate) == pytest.approx(
        schrage_miller_exponential_by_quad(rate), rel=1e-5
    )


def test_schrage_miller_limits_and_orderings() -> None:
    law = Exponential(2.0)
    # Light traffic: no waiting, E[T] -> E[S].
    assert srpt_mg1_response_time(law, 1e-6) == pytest.approx(2.0, rel=1e-4)
    # SRPT beats processor sharing, E[S] / (1 - rho), at every load.
    for rho in (0.5, 0.8, 0.95):
        assert srpt_mg1_response_time(law, rho / 2.0) < 2.0 / (1.0 - rho)
    # Deterministic-like sizes: SRPT = FCFS in the limit of equal sizes; Uniform(0.99, 1.01) at
    # rho = 0.5 is close to the M/D/1 value 1 + rho / (2 (1 - rho)) = 1.5.
    assert srpt_mg1_response_time(Uniform(0.99, 1.01), 0.5) == pytest.approx(1.5, rel=5e-3)
    # Higher variability at equal mean and load helps SRPT less than it hurts FCFS, but E[T] >= E[S].
    assert srpt_mg1_response_time(HyperExponential(1.0, 10.0), 0.9) > 1.0


def test_schrage_miller_refuses_unstable_loads() -> None:
    with pytest.raises(ValueError, match="stable only below 1"):
        srpt_mg1_response_time(Exponential(1.0), 1.0)
    with pytest.raises(ValueError, match="arrival_rate"):
        srpt_mg1_response_time(Exponential(1.0), -1.0)


def test_sfs_gap_bound_is_theorem_4_1() -> None:
    # (k - 1) / lambda * ((e + 1) ln(1 / (1 - rho)) + e) for k = 8, lambda = 0.5, rho = 0.5.
    expected = 7 / 0.5 * ((math.e + 1) * math.log(2.0) + math.e)
    assert sfs_gap_bound(8, 0.5, 0.5) == pytest.approx(expected, rel=1e-12)
    assert sfs_gap_bound(1, 0.5, 0.5) == 0.0  # one server: SFS-1 is SRPT-1
    assert sfs_gap_bound(8, 1.0, 0.99) > sfs_gap_bound(8, 1.0, 0.9)
    with pytest.raises(ValueError, match="load"):
        sfs_gap_bound(8, 1.0, 1.0)
    with pytest.raises(ValueError, match="n_servers"):
        sfs_gap_bound(0, 1.0, 0.5)


def test_srpt1_hand_worked_example() -> None:
    # Job 0 (size 3) at t = 0 is preempted at t = 1 by job 1 (size 1), which ends at 2;
    # job 2 (size 0.5) arrives at 2.5 with job 0's remaining 2 - 0.5 = 1.5 > 0.5, so it preempts.
    completion = srpt1_completion_times(np.array([0.0, 1.0, 2.5]), np.array([3.0, 1.0, 0.5]))
    np.testing.assert_allclose(completion, [4.5, 2.0, 3.0])


def test_simulated_srpt1_matches_schrage_miller() -> None:
    rng = np.random.default_rng(2024)
    rate, n = 0.8, 200_000
    arrivals = np.cumsum(rng.exponential(1.0 / rate, n))
    sizes = rng.exponential(1.0, n)
    simulated = srpt1_mean_response_time(arrivals, sizes)
    # 200k arrivals at rho = 0.8: the batch-means error is about 1-2%; allow 5%.
    assert simulated == pytest.approx(srpt_mg1_response_time(Exponential(1.0), rate), rel=0.05)


def test_srpt1_rejects_mismatched_inputs() -> None:
    with pytest.raises(ValueError, match="equal 1-D shapes"):
        srpt1_completion_times(np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="nondecreasing"):
        srpt1_completion_times(np.array([1.0, 0.0]), np.ones(2))
