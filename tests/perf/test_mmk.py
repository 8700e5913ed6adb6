"""The compiled M/M/k FCFS reference against Erlang-C (statistical tolerance, never timing)."""

from __future__ import annotations

import math

import pytest

from schedenv.analysis.queueing_mmk import (
    erlang_c_mean_response_time,
    erlang_c_mean_waiting_time,
    erlang_c_wait_probability,
)
from schedenv.mmk import simulate_mmk_fcfs


def test_erlang_c_hand_values() -> None:
    # M/M/1: P(wait) = rho, E[T] = 1 / (mu - lambda).
    assert erlang_c_wait_probability(0.6, 1.0, 1) == pytest.approx(0.6)
    assert erlang_c_mean_response_time(0.6, 1.0, 1) == pytest.approx(2.5)
    # M/M/2 with a = 1: C = a^2 / (2 - a) / (1 + a + a^2 / (2 - a)) = 1/3; E[W] = C / (2 - 1).
    assert erlang_c_wait_probability(1.0, 1.0, 2) == pytest.approx(1.0 / 3.0)
    assert erlang_c_mean_waiting_time(1.0, 1.0, 2) == pytest.approx(1.0 / 3.0)


def test_erlang_c_refuses_an_unstable_queue() -> None:
    with pytest.raises(ValueError, match="unstable"):
        erlang_c_wait_probability(8.0, 1.0, 8)


@pytest.mark.parametrize(("k", "rho"), [(1, 0.7), (8, 0.9), (3, 0.5)])
def test_kernel_matches_erlang_c(k: int, rho: float) -> None:
    lam, mu = rho * k, 1.0
    run = simulate_mmk_fcfs(lam, mu, k, 400_000, seed=k, warmup=20_000)
    expected = erlang_c_mean_response_time(lam, mu, k)
    # Batch-means errors at these loads over 4e5 jobs are well under 1.5% (5 sigma or more).
    assert run.mean_response_time == pytest.approx(expected, rel=0.015)
    assert run.mean_waiting_time == pytest.approx(erlang_c_mean_waiting_time(lam, mu, k), rel=0.04)
    assert run.mean_response_time - run.mean_waiting_time == pytest.approx(1.0 / mu, rel=0.01)
    assert run.n_events == 2 * 400_000
    assert run.n_jobs == 380_000


def test_kernel_is_deterministic_per_seed() -> None:
    a, b = (simulate_mmk_fcfs(7.2, 1.0, 8, 10_000, seed=3) for _ in range(2))
    assert a.mean_response_time == b.mean_response_time
    assert math.isfinite(a.mean_response_time)
    with pytest.raises(ValueError, match="warmup"):
        simulate_mmk_fcfs(7.2, 1.0, 8, 100, seed=0, warmup=100)
