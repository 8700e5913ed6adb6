"""The compiled helpers the families' kernels share (``schedenv.kernels``)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from schedenv.kernels import move_entries


@numba.njit
def _moved(flat: np.ndarray, to: int, start: int, count: int) -> np.ndarray:
    move_entries(flat, to, start, count)
    return flat


@pytest.mark.parametrize(
    ("to", "start", "count"),
    [(0, 14, 56), (3, 17, 40), (14, 0, 56), (20, 5, 30), (7, 7, 10), (9, 30, 0), (0, 1, 69)],
    ids=["up-rows", "up-overlap", "down-rows", "down-overlap", "in-place", "nothing", "up-by-one"],
)
def test_move_entries_copies_as_through_a_temporary_whatever_the_overlap(to: int, start: int, count: int) -> None:
    flat = np.arange(70, dtype=np.float64) * 1.5 - 3.0
    want = flat.copy()
    want[to : to + count] = flat[start : start + count].copy()  # numpy copies an overlapping source first
    got = _moved(flat.copy(), to, start, count)
    np.testing.assert_array_equal(got, want)
    outside = np.ones(70, dtype=bool)
    outside[to : to + count] = False
    np.testing.assert_array_equal(got[outside], flat[outside])  # nothing outside the destination moves


def test_move_entries_moves_int8_entries_by_their_own_size() -> None:
    flat = np.arange(16, dtype=np.int8)
    got = _moved(flat.copy(), 2, 5, 6)
    assert got.tolist() == [0, 1, 5, 6, 7, 8, 9, 10, 8, 9, 10, 11, 12, 13, 14, 15]
