"""The global TAGS cutoff search (``tags_optimal_cutoffs``, ``tags_chain``) against exhaustive references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize

from schedenv.analysis.queueing import support_bracket
from schedenv.analysis.tags import _score, paper_size_dist, server_expansion, tags_analysis, tags_optimal_cutoffs
from schedenv.analysis.tags_chain import chain_optimal_log_cutoffs
from schedenv.workloads import BoundedPareto, Distribution, Empirical


def _multistart_reference(size_dist: Distribution, load: float, h: int, objective: str, starts: int) -> float:
    """Best score of Nelder-Mead (restarted until it stops improving) from seeded uniform log-cutoff starts."""
    low, high = (math.log(v) for v in support_bracket(size_dist))
    best = math.inf
    for start in np.sort(np.random.default_rng(1).uniform(low, high, size=(starts, h - 1)), axis=1):
        point, score = start, _score(start, size_dist, load, h, objective)
        for _ in range(4):
            found = optimize.minimize(
                _score,
                point,
                args=(size_dist, load, h, objective),
                method="Nelder-Mead",
                options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 8000 * (h - 1)},
            )
            if not found.fun < score - 1e-13:
                break
            point, score = np.sort(found.x), float(found.fun)
        best = min(best, score)
    return best


def _old_grid_search(size_dist: Distribution, load: float, h: int, objective: str) -> float:
    """The previous optimiser (8 grid points per axis from 5 hosts, Nelder-Mead from the best 3): its best score."""
    low, high = (math.log(v) for v in support_bracket(size_dist))
    points = {1: 80, 2: 30, 3: 14}.get(h - 1, 8)
    axis = np.linspace(low, high, points + 2)[1:-1]
    grid = np.array(list(itertools.combinations(axis, h - 1)))
    scores = np.array([_score(p, size_dist, load, h, objective) for p in grid])
    return min(
        float(
            optimize.minimize(
                _score,
                start,
                args=(size_dist, load, h, objective),
                method="Nelder-Mead",
                options={"xatol": 1e-7, "fatol": 1e-10, "maxiter": 4000 * (h - 1)},
            ).fun
        )
        for start in grid[np.argsort(scores)[:3]]
    )


def _instance(h: int) -> tuple[Distribution, float]:
    rng = np.random.default_rng(100 + h)
    return paper_size_dist(float(rng.uniform(0.4, 2.0)), float(rng.choice([1e7, 1e10]))), float(rng.uniform(0.2, 0.5))


@pytest.mark.parametrize("objective", ["slowdown", "waiting_time"])
@pytest.mark.parametrize("h", [2, 3, 4, *(pytest.param(h, marks=pytest.mark.slow) for h in range(5, 9))])
def test_optimum_matches_a_multistart_reference_and_never_loses_to_the_old_grid(h: int, objective: str) -> None:
    size_dist, load = _instance(h)
    found = tags_optimal_cutoffs(size_dist, load, h, objective)  # type: ignore[arg-type]
    score = _score(np.log(found.cutoffs), size_dist, load, h, objective)
    reference = _multistart_reference(size_dist, load, h, objective, starts=6 if h > 4 else 10)
    assert found.stable
    assert math.expm1(score - reference) <= 1e-9
    assert score <= _old_grid_search(size_dist, load, h, objective) + 1e-12


def test_chain_search_is_exact_on_its_grid() -> None:
    # The dynamic programme's grid optimum equals brute force over every increasing grid triple (4 hosts).
    size_dist, load, h = BoundedPareto(1.0, 1e6, 0.9), 0.4, 4
    log_grid = np.linspace(0.5, math.log(1e6) - 0.5, 14)
    rate = load * h / size_dist.mean
    for objective, key in (("slowdown", "mean_slowdown"), ("waiting_time", "mean_waiting_time")):
        chosen = chain_optimal_log_cutoffs(size_dist, rate, h, log_grid, objective)  # type: ignore[arg-type]
        assert chosen is not None
        values = [
            getattr(result, key) if (result := tags_analysis(np.exp(c), size_dist, load, h)).stable else math.inf
            for c in itertools.combinations(log_grid, h - 1)
        ]
        best = getattr(tags_analysis(np.exp(chosen), size_dist, load, h), key)
        assert best == pytest.approx(min(values), rel=1e-9)


def test_search_is_deterministic() -> None:
    size_dist = paper_size_dist(0.7)
    first = tags_optimal_cutoffs(size_dist, 0.3, 5)
    assert np.array_equal(first.cutoffs, tags_optimal_cutoffs(size_dist, 0.3, 5).cutoffs)


def test_old_local_optimum_at_five_hosts_is_escaped() -> None:
    # 2 hosts at load 0.7, alpha 0.2, expanded to 5 hosts: the old grid stopped at E[S] = 19.3 with a
    # first cutoff of 1e-42; the optimum is below 0.03, so 3 extra hosts suffice (§6.1, Fig. 13: 3).
    size_dist = paper_size_dist(0.2)
    assert tags_optimal_cutoffs(size_dist, 0.7 * 2 / 5, 5).mean_slowdown < 0.03
    assert server_expansion("tags-slowdown", size_dist, 0.7, 2) == 3


def test_an_optimum_is_searched_once_per_law_load_hosts_and_objective_and_shared_read_only() -> None:
    """A TAGS baseline resets every episode; the search (about 0.1 s) runs once per process and law."""
    size_dist = paper_size_dist(1.1, upper=1e7)
    first = tags_optimal_cutoffs(size_dist, 0.5, 2)
    assert tags_optimal_cutoffs(paper_size_dist(1.1, upper=1e7), 0.5, 2) is first  # an equal law: the same entry
    assert tags_optimal_cutoffs(size_dist, 0.5, 2, "waiting_time") is not first
    assert tags_optimal_cutoffs(size_dist, 0.4, 2).cutoffs[0] != first.cutoffs[0]
    with pytest.raises(ValueError, match="read-only"):
        first.cutoffs[0] = 1.0


def test_two_empirical_laws_with_the_same_count_and_mean_are_different_cache_keys() -> None:
    one, other = Empirical([1.0, 2.0, 9.0]), Empirical([3.0, 4.0, 5.0])
    assert repr(one) == repr(other) and one.identity != other.identity
    assert Empirical([9.0, 1.0, 2.0]).identity == one.identity  # the samples are a multiset
    assert tags_optimal_cutoffs(one, 0.3, 2) is not tags_optimal_cutoffs(other, 0.3, 2)
