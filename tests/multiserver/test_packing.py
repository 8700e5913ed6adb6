"""The packing procedures against the paper's lemmas (Lemma 3.1, Theorem C.1) and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedenv.multiserver.packing import (
    divisorfilling,
    firstfit,
    greedy,
    largest_prime_factor,
    maxweight,
    maxweight_table,
    pack,
    serverfilling,
)


@st.composite
def power_of_two_instance(draw: st.DrawFn) -> tuple[int, np.ndarray]:
    k = 2 ** draw(st.integers(0, 6))
    exponents = draw(st.lists(st.integers(0, int(np.log2(k))), min_size=0, max_size=40))
    return k, np.array([2**e for e in exponents], dtype=np.int64)


@given(power_of_two_instance())
@settings(max_examples=300, deadline=None)
def test_lemma_3_1_serverfilling_fills_every_server_when_jobs_need_k(instance: tuple[int, np.ndarray]) -> None:
    k, needs = instance
    chosen = serverfilling(needs, k)
    used = int(needs[chosen].sum())
    assert used <= k and np.unique(chosen).size == chosen.size
    if needs.sum() >= k:
        assert used == k
    else:
        assert chosen.size == needs.size  # everyone fits: all jobs are served


@given(power_of_two_instance())
@settings(max_examples=200, deadline=None)
def test_corollary_3_1_serverfilling_only_serves_among_the_first_k_jobs(instance: tuple[int, np.ndarray]) -> None:
    k, needs = instance
    chosen = serverfilling(needs, k)
    assert (chosen < k).all()  # |M| <= k: relevant work efficiency


DIVISIBLE_K = [5, 6, 7, 10, 12, 14, 15, 18, 20, 24, 30, 36]
"""k with largest prime factor 2 or 3 (Case 2) and >= 5 (Case 3), and primes."""


@st.composite
def divisible_instance(draw: st.DrawFn) -> tuple[int, np.ndarray]:
    k = draw(st.sampled_from(DIVISIBLE_K))
    divisors = [d for d in range(1, k + 1) if k % d == 0]
    needs = draw(st.lists(st.sampled_from(divisors), min_size=k, max_size=2 * k))
    return k, np.array(needs, dtype=np.int64)


@given(divisible_instance())
@settings(max_examples=400, deadline=None)
def test_theorem_c_1_divisorfilling_uses_exactly_k_servers_with_k_jobs(instance: tuple[int, np.ndarray]) -> None:
    k, needs = instance
    chosen = divisorfilling(needs, k, top_up=False)
    assert int(needs[chosen].sum()) == k
    assert (chosen < k).all()  # item 1: a subset of the k jobs of least remaining size


@pytest.mark.parametrize("k", DIVISIBLE_K)
def test_theorem_c_1_on_adversarial_needs_with_few_ones(k: int) -> None:
    # Few need-1 jobs force Cases 2 and 3; every divisor above 1 appears.
    divisors = [d for d in range(2, k + 1) if k % d == 0] or [1]
    rng = np.random.default_rng(k)
    for _ in range(200):
        needs = rng.choice(divisors, size=k)
        assert int(needs[divisorfilling(needs, k, top_up=False)].sum()) == k


def test_divisorfilling_cases_are_the_ones_of_appendix_c() -> None:
    assert [largest_prime_factor(k) for k in (1, 2, 6, 12, 10, 14, 35, 7)] == [1, 2, 3, 3, 5, 7, 7, 7]
    # Case 2, k = 6: no need-1 job; 2|M2| = 2*2 >= 3|M3| = 3*1, so the even jobs are served.
    needs = np.array([2, 3, 2, 6, 6, 6])
    assert int(needs[divisorfilling(needs, 6, top_up=False)].sum()) == 6
    # A lone need-1 job is never served by the bare procedure (Case 2 recurses on M2 = {}).
    assert divisorfilling(np.array([1]), 8, top_up=False).size == 0
    assert divisorfilling(np.array([1]), 8).tolist() == [0]


def test_hand_worked_packings() -> None:
    needs = np.array([1, 4, 2, 8, 1])
    # ServerFilling: prefix 1+4+2+8 >= 8, then by need 8 first: only the need-8 job (position 3).
    assert serverfilling(needs, 8).tolist() == [3]
    # Greedy stops at the need-8 job; first fit skips it and adds the last need-1 job.
    assert greedy(needs, 8).tolist() == [0, 1, 2]
    assert firstfit(needs, 8).tolist() == [0, 1, 2, 4]
    assert pack("firstfit", needs, 8).tolist() == [0, 1, 2, 4]
    with pytest.raises(ValueError, match="packing='best'"):
        pack("best", needs, 8)


@given(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=0, max_size=9))
@settings(max_examples=150, deadline=None)
def test_maxweight_is_exact_against_brute_force(need_list: list[int]) -> None:
    needs = np.array(need_list, dtype=np.int64)
    values = np.array([1, 2, 4, 8])
    counts = {v: need_list.count(v) for v in values.tolist()}
    chosen = maxweight(needs, 8, values, maxweight_table(values, 8))
    assert int(needs[chosen].sum()) <= 8
    best = max(
        (
            sum(counts[needs[i]] for i in subset)
            for r in range(len(need_list) + 1)
            for subset in itertools.combinations(range(len(need_list)), r)
            if needs[list(subset)].sum() <= 8
        ),
        default=0,
    )
    assert sum(counts[int(n)] for n in needs[chosen]) == best


def test_maxweight_refuses_huge_enumerations() -> None:
    with pytest.raises(ValueError, match="exact only for small k"):
        maxweight_table(np.array([1, 2, 3, 4, 5]), 200, limit=1000)
