"""Student-t intervals and paired comparisons of ``schedenv.stats`` against hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schedenv.stats import Interval, PairedComparison, mean_interval, paired_comparison

T_975_DF4 = 2.7764451051977987  # Student-t 0.975 quantile, 4 degrees of freedom (tables)
T_975_DF2 = 4.302652729749464  # ... 2 degrees of freedom


def test_mean_interval_matches_hand_computed_t_interval() -> None:
    interval = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    # mean 3, sample standard deviation sqrt(2.5), n = 5
    assert interval.mean == 3.0
    assert interval.n == 5
    assert interval.ci95 == pytest.approx(T_975_DF4 * math.sqrt(2.5) / math.sqrt(5), rel=1e-12)
    assert interval.ci95 == pytest.approx(1.96324316, rel=1e-8)


def test_mean_interval_uses_the_sample_standard_deviation() -> None:
    values = np.array([10.0, 12.0, 17.0])
    interval = mean_interval(values)
    sd = math.sqrt(((values - 13.0) ** 2).sum() / 2)  # ddof = 1
    assert interval.mean == 13.0
    assert interval.ci95 == pytest.approx(T_975_DF2 * sd / math.sqrt(3), rel=1e-12)


def test_constant_values_have_zero_half_width() -> None:
    interval = mean_interval([4.0, 4.0, 4.0, 4.0])
    assert (interval.mean, interval.ci95, interval.n) == (4.0, 0.0, 4)


def test_one_replication_has_nan_half_width_never_zero() -> None:
    interval = mean_interval([7.5])
    assert interval.mean == 7.5
    assert interval.n == 1
    assert math.isnan(interval.ci95)
    assert str(interval) == "7.5"


def test_no_replications() -> None:
    interval = mean_interval([])
    assert interval.n == 0
    assert math.isnan(interval.mean)
    assert math.isnan(interval.ci95)


def test_interval_text() -> None:
    assert str(Interval(1.23456789, 0.0123456, 10)) == "1.23457 ± 0.0123"


def test_empirical_coverage_of_the_95_percent_interval() -> None:
    """Over 2000 replications of n = 8 normal draws, the t interval covers the true mean ~95%.

    The binomial standard error of the coverage over 2000 replications is 0.0049, so [0.93, 0.97]
    is a 4-standard-error band; a z interval (too narrow at n = 8: ~92% coverage) would fail it.
    """
    rng = np.random.default_rng(20240)
    true_mean = 3.0
    samples = rng.normal(true_mean, 2.0, size=(2000, 8))
    covered = 0
    for row in samples:
        interval = mean_interval(row)
        covered += abs(interval.mean - true_mean) <= interval.ci95
    coverage = covered / len(samples)
    assert 0.93 <= coverage <= 0.97


def test_paired_comparison_values() -> None:
    comparison = paired_comparison([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert isinstance(comparison, PairedComparison)
    assert comparison.ratio == 2.0
    assert comparison.difference.mean == 2.0  # differences 1, 2, 3
    assert comparison.difference.ci95 == pytest.approx(T_975_DF2 * 1.0 / math.sqrt(3), rel=1e-12)
    assert comparison.difference.n == 3
    assert str(comparison) == f"diff 2 ± {comparison.difference.ci95:.3g}, ratio 2"


def test_pairing_removes_the_common_noise() -> None:
    """Paired differences of strongly correlated samples give a far narrower interval."""
    rng = np.random.default_rng(5)
    common = rng.normal(100.0, 30.0, size=20)
    a = common + 1.0 + rng.normal(0.0, 0.1, size=20)
    b = common
    paired = paired_comparison(a, b).difference
    assert paired.mean == pytest.approx(1.0, abs=0.1)
    assert paired.ci95 < 0.1
    assert paired.ci95 < mean_interval(a).ci95 / 100


def test_paired_comparison_ratio_of_means_not_mean_of_ratios() -> None:
    comparison = paired_comparison([1.0, 9.0], [1.0, 3.0])
    assert comparison.ratio == pytest.approx(2.5)  # 5 / 2, whereas the mean of ratios is 2.0


def test_paired_comparison_zero_reference_gives_nan_ratio() -> None:
    assert math.isnan(paired_comparison([1.0, 2.0], [0.0, 0.0]).ratio)


def test_paired_comparison_needs_equal_shapes() -> None:
    with pytest.raises(ValueError, match=r"equal shapes.*\(3,\).*\(2,\)"):
        paired_comparison([1.0, 2.0, 3.0], [1.0, 2.0])


def test_ratio_interval_is_exact_for_proportional_pairs_and_brackets_the_ratio() -> None:
    from schedenv.stats import ratio_interval

    b = np.array([1.0, 2.0, 3.0, 10.0])
    low, high = ratio_interval(2.5 * b, b)
    assert low == pytest.approx(2.5) and high == pytest.approx(2.5)  # every resample has ratio 2.5
    rng = np.random.default_rng(1)
    a = b * rng.uniform(0.9, 1.3, size=4)
    low, high = ratio_interval(a, b)
    assert low < a.mean() / b.mean() < high
    assert all(np.isnan(ratio_interval([1.0], [2.0])))
    with pytest.raises(ValueError, match="equal 1-d shapes"):
        ratio_interval([1.0, 2.0], [1.0])


def test_iqm_trims_a_quarter_each_side_and_its_interval_brackets_it() -> None:
    from schedenv.stats import iqm, iqm_interval

    # 8 values: the middle 4 (3, 4, 5, 6) survive the 25% trim; the outlier 1000 does not matter
    assert iqm(np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 1000.0]])) == pytest.approx(4.5)
    scores = np.random.default_rng(0).normal(1.0, 0.1, size=(3, 100))
    point, low, high = iqm_interval(scores)
    assert low < point < high and high - low < 0.1
    constant = np.ones((3, 10))
    assert iqm_interval(constant) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="runs x tasks"):
        iqm_interval(np.ones(5))


def test_ratio_of_means_point_estimate_is_sum_over_sum() -> None:
    from schedenv.stats import ratio_of_means

    runs = np.array([[1.0, 9.0, 2.0], [3.0, 1.0, 4.0]])
    reference = np.array([2.0, 3.0, 5.0])
    result = ratio_of_means(runs, reference)
    assert result.ratio == pytest.approx(20.0 / (2 * 10.0), rel=1e-15)  # not the mean of per-seed ratios
    assert (result.runs, result.seeds) == (2, 3)
    assert result.low <= result.ratio <= result.high


def test_one_run_with_the_reference_costs_gives_the_exact_ratio_as_a_point() -> None:
    from schedenv.stats import ratio_of_means

    reference = np.array([1.0, 5.0, 2.0, 40.0, 3.0])
    same = ratio_of_means(reference[None, :], reference)
    assert (same.ratio, same.low, same.high) == (1.0, 1.0, 1.0)
    scaled = ratio_of_means(1.25 * reference[None, :], reference)  # every resample has ratio 1.25
    assert scaled.ratio == pytest.approx(1.25) and scaled.ci95 == pytest.approx((1.25, 1.25))


def test_runs_that_differ_widen_the_interval_to_their_spread_unlike_the_episode_bootstrap() -> None:
    """Runs at exactly 1x, 2x and 3x the reference on every seed: seed resampling cannot move any run's ratio,
    so the spread is the runs'. Three draws of runs all give run 1 with probability 1/27 = 3.7% > 2.5% (all run 3
    alike), so the percentile interval is exactly [1, 3]; the episode-level bootstrap of the pooled costs sees no
    spread at all."""
    from schedenv.stats import ratio_interval, ratio_of_means

    reference = np.random.default_rng(3).lognormal(0.0, 1.0, size=50)
    runs = np.stack([k * reference for k in (1.0, 2.0, 3.0)])
    result = ratio_of_means(runs, reference)
    assert result.ratio == pytest.approx(2.0, rel=1e-12)
    assert result.ci95 == pytest.approx((1.0, 3.0), rel=1e-12)
    pooled = ratio_interval(runs.mean(axis=0), reference)
    assert pooled == pytest.approx((2.0, 2.0), rel=1e-12)


def test_ratio_of_means_is_invariant_to_scaling_both_costs_and_seeded() -> None:
    from schedenv.stats import ratio_of_means

    rng = np.random.default_rng(11)
    reference = rng.lognormal(0.0, 1.0, size=40)
    runs = reference * rng.uniform(0.8, 1.4, size=(4, 40))
    first = ratio_of_means(runs, reference)
    scaled = ratio_of_means(1e6 * runs, 1e6 * reference)
    assert scaled.ratio == pytest.approx(first.ratio, rel=1e-12)
    assert scaled.ci95 == pytest.approx(first.ci95, rel=1e-12)
    assert ratio_of_means(runs, reference) == first  # same generator seed, same interval
    assert ratio_of_means(runs, reference, seed=1) != first
    assert first.low < first.ratio < first.high


def test_ratio_of_means_refuses_mismatched_shapes_and_a_zero_reference() -> None:
    from schedenv.stats import ratio_of_means

    with pytest.raises(ValueError, match=r"\(runs x seeds\).*\(2, 3\) and \(2,\)"):
        ratio_of_means(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="positive sum"):
        ratio_of_means(np.ones((1, 2)), np.zeros(2))


def test_the_seed_view_counts_each_run_and_seed_against_the_reference_on_that_seed() -> None:
    """Two runs on four seeds, reference 1, 2, 3, 4. Run 0 costs 0.5x, 1x, 1.2x and 2x it (ratio of means 1.41:
    one win and one tie inside it), run 1 1.3x on every seed. Pairs by ratio: 0.5, 1, 1.2, 1.3 x 4, 2."""
    from schedenv.stats import SeedView, seed_view

    reference = [1.0, 2.0, 3.0, 4.0]
    runs = [[0.5, 2.0, 3.6, 8.0], [1.3, 2.6, 3.9, 5.2]]
    view = seed_view(runs, reference)
    assert (view.below, view.equal, view.above) == (1, 1, 6)
    assert view.median_ratio == pytest.approx(1.3) and view.worst_ratio == pytest.approx(2.0)
    assert (
        str(view)
        == "below on 1, equal on 1 and above on 6 of the 8 (run, test seed) pairs; the median pair's ratio 1.3000"
    )
    assert view.counts == "1 / 1 / 6"
    one = seed_view(runs[0], reference)  # one run's costs
    assert one == SeedView(1, 1, 2, pytest.approx(1.1), pytest.approx(2.0))


def test_a_clone_ties_on_every_seed_however_its_last_bits_fall() -> None:
    from schedenv.stats import SEED_TIE, seed_view

    reference = np.array([1.0, 2.0, 3.0, 4.0])
    rounded = reference * (1.0 + np.array([2e-16, -4e-16, 0.0, 1e-12]))  # a clone's costs, summed elsewhere
    assert (seed_view(rounded, reference).below, seed_view(rounded, reference).equal) == (0, 4)
    beyond = reference * (1.0 + 10 * SEED_TIE * np.array([1.0, -1.0, 1.0, 1.0]))
    view = seed_view(beyond, reference)
    assert (view.below, view.equal, view.above) == (1, 0, 3)


def test_the_seed_view_refuses_mismatched_shapes_and_counts_without_ratios_against_a_zero_cost() -> None:
    from schedenv.stats import seed_view

    with pytest.raises(ValueError, match=r"one value per seed; got shapes \(2, 3\) and \(2,\)"):
        seed_view(np.ones((2, 3)), np.ones(2))
    view = seed_view([1.0, 0.0, 2.0], [1.0, 0.0, 1.0])  # a waiting time of 0 on the second seed, matched
    assert (view.below, view.equal, view.above) == (0, 2, 1)
    assert math.isnan(view.median_ratio) and math.isnan(view.worst_ratio)
