"""Downey's speedup model (docs/envs/moldable.md; Downey 1997) as used by the HRF paper (§2.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedenv.analysis import downey_runtime, downey_speedup
from schedenv.workloads import DowneySpeedup, Speedup

parallelism = st.floats(min_value=1.0, max_value=256.0)
variance = st.floats(min_value=0.0, max_value=4.0)


@given(parallelism, variance)
def test_one_processor_gives_speedup_one(A: float, sigma: float) -> None:
    assert float(DowneySpeedup(A, sigma)(1)) == pytest.approx(1.0, rel=1e-12)


@given(parallelism, variance)
def test_bounded_by_n_and_A_and_nondecreasing(A: float, sigma: float) -> None:
    n = np.arange(1, math.ceil(2 * A + A * sigma) + 2, dtype=float)
    s = DowneySpeedup(A, sigma)(n)
    assert (s <= np.minimum(n, A) * (1 + 1e-12)).all()
    assert (np.diff(s) >= -1e-12).all()
    assert s[-1] == pytest.approx(A)


@settings(max_examples=50)
@given(st.floats(min_value=1.5, max_value=200.0), st.floats(min_value=0.01, max_value=0.99))
def test_low_variance_continuous_at_both_breakpoints(A: float, sigma: float) -> None:
    s = DowneySpeedup(A, sigma)
    for point in (A, 2 * A - 1):
        eps = 1e-9 * point
        assert float(s(point - eps)) == pytest.approx(float(s(point + eps)), rel=1e-7)
    assert float(s(2 * A - 1)) == pytest.approx(A, rel=1e-12)


@settings(max_examples=50)
@given(st.floats(min_value=1.5, max_value=200.0), st.floats(min_value=1.01, max_value=4.0))
def test_high_variance_continuous_at_breakpoint(A: float, sigma: float) -> None:
    s = DowneySpeedup(A, sigma)
    point = A + A * sigma - sigma
    eps = 1e-9 * point
    assert float(s(point - eps)) == pytest.approx(float(s(point + eps)), rel=1e-7)
    assert float(s(point)) == pytest.approx(A, rel=1e-12)


def test_hand_values_in_both_regimes() -> None:
    # sigma <= 1, n <= A: A n / (A + sigma (n - 1) / 2) = 32 / 8.75
    assert float(DowneySpeedup(8, 0.5)(4)) == pytest.approx(32 / 8.75)
    # sigma <= 1, A <= n <= 2A - 1: A n / (sigma (A - 1/2) + n (1 - sigma / 2)) = 80 / (3.75 + 7.5)
    assert float(DowneySpeedup(8, 0.5)(10)) == pytest.approx(80 / 11.25)
    # sigma >= 1: n A (sigma + 1) / (sigma (n + A - 1) + A) = 80 / 24.5
    assert float(DowneySpeedup(8, 1.5)(4)) == pytest.approx(80 / 24.5)
    # sigma = 0 is linear up to A, then flat
    assert DowneySpeedup(8, 0.0)(np.array([3.0, 8.0, 20.0])).tolist() == [3.0, 8.0, 8.0]


def test_both_formulas_agree_at_sigma_one() -> None:
    n = np.arange(1.0, 40.0)
    below = DowneySpeedup.formula(n, 8.0, 1.0 - 1e-12)
    above = DowneySpeedup.formula(n, 8.0, 1.0 + 1e-12)
    np.testing.assert_allclose(below, above, rtol=1e-9)


def test_is_a_speedup_with_zero_at_zero_and_vectorised_parameters() -> None:
    s = DowneySpeedup(4.0, 0.5)
    assert isinstance(s, Speedup)
    assert float(s(0.0)) == 0.0 and float(s(0.5)) == 0.5
    grid = downey_speedup(np.array([[1.0], [4.0]]), np.array([2.0, 4.0, 8.0]), 0.5)
    assert grid.shape == (2, 3)
    assert grid[1].tolist() == pytest.approx([2.0, 4.0 * 4 / (4 + 0.75), 32 / (8 + 0.75)])
    assert float(downey_runtime(100.0, 4, 4.0, 0.5)) == pytest.approx(100.0 / float(s(4)))
    assert "A=4.0" in repr(s)


@pytest.mark.parametrize(("A", "sigma", "word"), [(0.5, 1.0, "A="), (math.nan, 1.0, "A="), (4.0, -0.1, "sigma=")])
def test_bad_parameters_name_themselves(A: float, sigma: float, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        DowneySpeedup(A, sigma)
