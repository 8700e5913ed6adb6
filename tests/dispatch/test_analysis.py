"""Closed forms of the TAGS paper (appendix, Theorem 1, §5.1, §6.1): hand-worked values and identities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from schedenv.analysis.queueing import (
    erlang_c,
    lwr_analysis,
    mg1_slowdown,
    mg1_waiting_time,
    moment,
    partial_moment,
    random_analysis,
    sita_e_cutoffs,
)
from schedenv.analysis.tags import paper_size_dist, server_expansion, tags_analysis, tags_optimal_cutoffs
from schedenv.workloads import BoundedPareto, Choice, Deterministic, Exponential


def test_with_mean_reproduces_the_papers_lower_bounds_at_alpha_one() -> None:
    # §7: k = 167 for p = 10^10 and k = 287 for p = 10^7 (mean 3000, alpha = 1).
    assert round(BoundedPareto.with_mean(3000, alpha=1.0, upper=1e10).lower) == 168
    assert BoundedPareto.with_mean(3000, alpha=1.0, upper=1e10).lower == pytest.approx(167.555, abs=1e-3)
    assert BoundedPareto.with_mean(3000, alpha=1.0, upper=1e7).lower == pytest.approx(286.819, abs=1e-3)
    assert paper_size_dist(1.0, 1e7).lower == pytest.approx(286.819, abs=1e-3)


@pytest.mark.parametrize("alpha", [0.2, 0.6, 1.5, 2.0])
def test_paper_size_dist_keeps_the_mean_at_3000_with_k_at_most_1500(alpha: float) -> None:
    dist = paper_size_dist(alpha)
    assert dist.mean == pytest.approx(3000.0, rel=1e-9)
    assert 0 < dist.lower <= 1500.01  # the unbounded Pareto needs k = 1500 at alpha = 2


def test_two_point_example_matches_a_hand_computation() -> None:
    # Sizes 1 or 10 (1/2 each), cutoff 5, h = 2, load 0.5 -> lambda = 0.5 * 2 / 5.5.
    lam = 1.0 / 5.5
    result = tags_analysis([5.0], Choice([1.0, 10.0]), 0.5, 2)
    rho1, rho2 = lam * (0.5 * 1 + 0.5 * 5), lam * 0.5 * 10
    w1 = lam * (0.5 * 1 + 0.5 * 25) / (2 * (1 - rho1))
    w2 = w1 + lam * 0.5 * 100 / (2 * (1 - rho2))
    np.testing.assert_allclose(result.host_loads, [rho1, rho2])
    assert result.mean_waiting_time == pytest.approx(0.5 * w1 + 0.5 * w2)
    assert result.mean_slowdown == pytest.approx(0.5 * w1 / 1 + 0.5 * w2 / 10)
    assert result.excess == pytest.approx(lam * 0.5 * 5)
    np.testing.assert_allclose(result.host_slowdowns, [w1, w2 / 10])


def test_one_host_tags_is_pollaczek_khinchine() -> None:
    dist = BoundedPareto(1.0, 1e4, 1.3)
    result = tags_analysis([], dist, 0.6, 1)
    assert result.mean_waiting_time == pytest.approx(mg1_waiting_time(0.6 / dist.mean, dist), rel=1e-12)
    assert result.mean_slowdown == pytest.approx(mg1_slowdown(0.6 / dist.mean, dist), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    alpha=st.floats(0.3, 2.0),
    n_hosts=st.integers(2, 5),
    load=st.floats(0.05, 0.9),
    # Percent positions on the log scale: distinct integers give strictly increasing cutoffs (floats a ulp
    # apart, which hypothesis once drew, collapse to one cutoff).
    positions=st.lists(st.integers(1, 99), min_size=4, max_size=4, unique=True),
)
def test_both_excess_definitions_agree(alpha: float, n_hosts: int, load: float, positions: list[int]) -> None:
    dist = paper_size_dist(alpha, 1e7)
    logs = np.sort(np.array(positions[: n_hosts - 1])) / 100.0
    cutoffs = np.exp(math.log(dist.lower) + logs * (math.log(dist.upper) - math.log(dist.lower)))
    result = tags_analysis(cutoffs, dist, load, n_hosts)
    assert result.excess_a == pytest.approx(result.excess_b, rel=1e-7, abs=1e-12)
    assert result.final_fractions.sum() == pytest.approx(1.0)


def test_partial_moments_match_numerical_integration() -> None:
    dist = Exponential(2.0)
    for order in (-1, 0, 1, 2):
        exact, _ = integrate.quad(lambda x, o=order: x**o * math.exp(-x / 2.0) / 2.0, 0.5, 7.0)
        assert partial_moment(dist, order, 0.5, 7.0) == pytest.approx(exact, rel=1e-8)
    assert moment(Deterministic(4.0), -1) == pytest.approx(0.25)
    assert moment(BoundedPareto(1.0, 100.0, 1.5), 2) == pytest.approx(BoundedPareto(1.0, 100.0, 1.5).second_moment())


def test_erlang_c_and_lwr_variants() -> None:
    assert erlang_c(2, 1.0) == pytest.approx(1.0 / 3.0)
    assert erlang_c(1, 0.7) == pytest.approx(0.7)
    dist = BoundedPareto(1.0, 1e3, 1.5)
    pk = mg1_waiting_time(0.5 / dist.mean, dist)
    # Lee-Longton is exact for h = 1; the paper's printed factor E[X^2]/E[X]^2 doubles it.
    assert lwr_analysis(dist, 0.5, 1).mean_waiting_time == pytest.approx(pk)
    assert lwr_analysis(dist, 0.5, 1, variant="lee-longton").mean_waiting_time == pytest.approx(pk)
    assert lwr_analysis(dist, 0.5, 1, variant="paper").mean_waiting_time == pytest.approx(2 * pk)
    assert lwr_analysis(dist, 0.5, 4).mean_waiting_time < lwr_analysis(dist, 0.5, 2).mean_waiting_time


def test_random_is_independent_of_the_host_count_at_fixed_load() -> None:
    dist = paper_size_dist(1.0)
    assert random_analysis(dist, 0.3, 2) == random_analysis(dist, 0.3, 4)


def test_sita_e_cutoffs_split_the_load_equally() -> None:
    dist = BoundedPareto(1.0, 1e6, 1.1)
    cuts = sita_e_cutoffs(dist, 3)
    shares = [partial_moment(dist, 1, lo, hi) for lo, hi in zip([0, *cuts], [*cuts, math.inf], strict=True)]
    np.testing.assert_allclose(shares, dist.mean / 3, rtol=1e-9)


@pytest.mark.parametrize("objective", ["slowdown", "waiting_time"])
def test_optimal_cutoffs_beat_their_neighbours(objective: str) -> None:
    dist = paper_size_dist(1.0, 1e7)
    best = tags_optimal_cutoffs(dist, 0.5, 2, objective=objective)  # type: ignore[arg-type]
    key = "mean_slowdown" if objective == "slowdown" else "mean_waiting_time"
    for factor in (0.8, 0.95, 1.05, 1.25):
        other = tags_analysis(best.cutoffs * factor, dist, 0.5, 2)
        assert getattr(best, key) <= getattr(other, key) * (1 + 1e-9)
    assert best.stable and (best.host_loads < 1).all()


def test_fair_cutoffs_equalise_the_per_host_slowdowns() -> None:
    for h in (2, 3):
        fair = tags_optimal_cutoffs(paper_size_dist(1.0), 0.3, h, objective="fairness")
        assert fair.host_slowdowns.max() / fair.host_slowdowns.min() < 1.01


def test_tags_beats_lwr_by_orders_of_magnitude_at_alpha_one() -> None:
    # §5: at alpha ≈ 1 (2 hosts, load 0.5), TAGS-opt-slowdown beats LWR by over 4 orders of magnitude:
    # 8.5e3 at alpha = 1 and 2.6e4 at alpha = 0.9 with the default (Lee-Longton) LWR, 1.7e4 at 1 with the printed form.
    for alpha, ratio in ((1.0, 10**3.9), (0.9, 1e4)):
        dist = paper_size_dist(alpha)
        tags = tags_optimal_cutoffs(dist, 0.5, 2).mean_slowdown
        assert lwr_analysis(dist, 0.5, 2).mean_slowdown / tags > ratio
        assert lwr_analysis(dist, 0.5, 2, variant="paper").mean_slowdown / tags > 1e4


def test_no_stable_cutoffs_raises() -> None:
    # Equal sizes at load 0.6 on 2 hosts: whichever cutoff, one host must carry load 1.2.
    with pytest.raises(ValueError, match="no stable TAGS cutoffs"):
        tags_optimal_cutoffs(Deterministic(1.0), 0.6, 2)


def test_tags_analysis_rejects_bad_cutoffs() -> None:
    with pytest.raises(ValueError, match="interior cutoffs"):
        tags_analysis([1.0, 2.0], paper_size_dist(1.0), 0.5, 2)
    with pytest.raises(ValueError, match="strictly increasing"):
        tags_analysis([5.0, 2.0], paper_size_dist(1.0), 0.5, 3)


def test_lwr_default_reproduces_the_papers_worked_example() -> None:
    # §6.1: 2 hosts at load 0.7, alpha = 0.6; LWR needs 13 hosts (11 added) for mean slowdown <= 3.
    # The default (Lee-Longton) form gives E[S] = 2.38 at 13 hosts and 24.4 at 12; the printed one 4.76 at 13.
    dist = paper_size_dist(0.6)
    rate = 0.7 * 2 / dist.mean
    assert server_expansion("least-work-remaining", dist, 0.7, 2) == 13 - 2
    assert lwr_analysis(dist, rate * dist.mean / 13, 13).mean_slowdown == pytest.approx(2.3783, rel=1e-4)
    assert lwr_analysis(dist, rate * dist.mean / 12, 12).mean_slowdown > 3
    assert lwr_analysis(dist, rate * dist.mean / 13, 13, variant="paper").mean_slowdown > 3


def test_server_expansion_random_matches_its_closed_form() -> None:
    # Random's slowdown at h hosts is a / (h - b) with b = lambda E[X], a = lambda E[X^2] E[1/X] / 2.
    dist = paper_size_dist(1.5)
    rate = 0.7 * 2 / dist.mean
    a, b = rate * dist.second_moment() * moment(dist, -1) / 2, rate * dist.mean
    expected = math.floor(b + a / 3.0) + 1 - 2
    assert server_expansion("random", dist, 0.7, 2) == expected


def test_server_expansion_orders_tags_before_lwr_before_random() -> None:
    # §6.1 (2 hosts at load 0.7): TAGS needs no more than 2 extra hosts except at alpha = 0.2.
    dist = paper_size_dist(1.0)
    tags = server_expansion("tags-slowdown", dist, 0.7, 2)
    lwr = server_expansion("least-work-remaining", dist, 0.7, 2)
    random = server_expansion("random", dist, 0.7, 2)
    assert tags <= 2 and tags < lwr < random
