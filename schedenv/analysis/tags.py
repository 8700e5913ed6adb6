"""TAGS analysis (Harchol-Balter, "Task assignment with unknown duration", J. ACM 2002, appendix).

Host i (1-based) runs every job up to its cutoff s_i (s_0 = lowest size, s_h = largest). Jobs
whose final destination is host i have sizes in (s_{i-1}, s_i]; every job larger than s_i also
visits host i and uses s_i of it. With the paper's one approximation (Poisson arrivals into every
host, which §5.1 argues makes the result an upper bound) each host is an M/G/1 FCFS queue:

    rho_i = lambda (E[X; s_{i-1} < X <= s_i] + s_i P(X > s_i))
    E[W_i^visit] = lambda (E[X^2; s_{i-1} < X <= s_i] + s_i^2 P(X > s_i)) / (2 (1 - rho_i))
    E[W_i] = sum_{j <= i} E[W_j^visit],   E[S_i] = E[W_i] E[1/X | final host i]
    E[W] = sum_i p_i E[W_i],   E[S] = sum_i p_i E[S_i]
    Excess_a = sum_i rho_i - h rho = Excess_b = sum_{i >= 2} lambda P(X > s_{i-1}) s_{i-1}

W is the time spent in queues (killed runs are not counted, as in the appendix); S = W / X.

Server expansion (§6.1), which compares TAGS with Random and Least-Work-Remaining (``queueing``),
is here too: hosts to add at a fixed arrival rate until the mean slowdown <= 3.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize

from schedenv.analysis.queueing import lwr_analysis, moment, partial_moment, support_bracket
from schedenv.analysis.tags_chain import ChainObjective, chain_optimal_log_cutoffs
from schedenv.validation import SCALE_RANGE, check_choice, check_int, check_positive
from schedenv.workloads import BoundedPareto, Distribution

TagsObjective = Literal["slowdown", "waiting_time", "fairness"]

FAIRNESS_TIEBREAK = 1e-3
"""Weight of log mean slowdown added to the fairness spread, to pick the best equalising cutoffs."""

SEARCH_GRID_POINTS = 240
"""Log-spaced cutoff candidates of the dynamic-programming search in ``tags_optimal_cutoffs``."""

SEARCH_RANDOM_STARTS = 3
"""Seeded random starts (seed ``SEARCH_SEED``) that ``tags_optimal_cutoffs`` also polishes."""

SEARCH_SEED = 0
"""Seed of those random starts, so that the search is deterministic."""

OPTIMA_CACHED = 256
"""Optima ``tags_optimal_cutoffs`` keeps per process (keyed by law, load, hosts and objective), so that a
TAGS baseline resetting for every episode searches once: the search takes about 0.1 s, an episode 1 ms."""
_OPTIMA: dict[tuple[str, float, int, str], TagsAnalysis] = {}


@dataclass(frozen=True)
class TagsAnalysis:
    """The appendix's quantities for one set of cutoffs; per-host arrays are ordered host 1..h."""

    cutoffs: np.ndarray
    """The interior cutoffs s_1 < ... < s_{h-1} (host h runs jobs to completion)."""
    final_fractions: np.ndarray
    """p_i: fraction of jobs whose final destination is host i."""
    visit_fractions: np.ndarray
    """p_i^visit: fraction of jobs that visit host i."""
    host_loads: np.ndarray
    """rho_i^visit."""
    host_waiting_times: np.ndarray
    """E[W_i]: total queueing time of jobs whose final host is i."""
    host_slowdowns: np.ndarray
    """E[S_i] (``nan`` for a host no job ends at): equal across hosts under TAGS-opt-fairness."""
    mean_waiting_time: float
    mean_slowdown: float
    excess: float
    excess_a: float
    """Excess as the sum of host loads minus h rho."""
    excess_b: float
    """Excess as sum_{i >= 2} lambda_i^visit s_{i-1}."""
    stable: bool
    """Every host load is below 1 (otherwise the means are ``inf``)."""
    mean_response_time: float
    """E[W] + E[X] + Excess / lambda (the mean work lost to kills per job)."""


def paper_size_dist(alpha: float, upper: float = 1e10, mean: float = 3000.0) -> BoundedPareto:
    """The paper's B(k, p, alpha) with E[X] = ``mean`` (3000) and p = ``upper`` (10^10 or 10^7, §3 and §7).

    k is solved in log space on a bracket where k^alpha stays representable for every alpha in
    (0, 2] (for alpha = 1: k ≈ 167 at p = 10^10 and k ≈ 287 at p = 10^7).
    """
    alpha = check_positive("alpha", alpha)
    upper = check_positive("upper", upper)
    mean = check_positive("mean", mean)
    if not mean < upper:
        raise ValueError(f"mean={mean!r} is not allowed; it must be below upper={upper!r}")

    def gap(log_lower: float) -> float:
        return math.log(BoundedPareto.for_moments(math.exp(log_lower), upper, alpha).mean) - math.log(mean)

    floor = max(math.log(upper) - 700.0, -600.0 / alpha)
    lower = math.exp(optimize.brentq(gap, floor, math.log(mean), xtol=1e-14))
    if not lower >= SCALE_RANGE[0]:
        raise ValueError(
            f"alpha={alpha!r} is not allowed with mean={mean!r} and upper={upper!r}: it needs a lower bound of "
            f"{lower:.3g}, below {SCALE_RANGE[0]:g} (SCALE_RANGE); raise alpha"
        )
    return BoundedPareto(lower, upper, alpha)


def _host_terms(
    size_dist: Distribution, cutoffs: list[float], rate: float
) -> tuple[list[float], list[float], list[float], list[float], list[float], list[float]]:
    """Per host: p_i, p_i^visit, rho_i, lambda E[X^2 visit], E[X^-1; final host i], P(X > s_{i-1})."""
    bounds = [0.0, *cutoffs, math.inf]
    finals, visits, loads, second, inverse, tails = [], [], [], [], [], []
    tail_after = [partial_moment(size_dist, 0, s, math.inf) for s in bounds[1:-1]] + [0.0]
    for i in range(len(bounds) - 1):
        low, high = bounds[i], bounds[i + 1]
        p_final = partial_moment(size_dist, 0, low, high)
        beyond = tail_after[i]
        capped = high if math.isfinite(high) else 0.0
        finals.append(p_final)
        visits.append(p_final + beyond)
        loads.append(rate * (partial_moment(size_dist, 1, low, high) + capped * beyond))
        second.append(rate * (partial_moment(size_dist, 2, low, high) + capped**2 * beyond))
        inverse.append(partial_moment(size_dist, -1, low, high) if p_final > 0 else 0.0)
        tails.append(tail_after[i - 1] if i > 0 else 1.0)
    return finals, visits, loads, second, inverse, tails


def tags_analysis(cutoffs: object, size_dist: Distribution, load: float, n_hosts: int) -> TagsAnalysis:
    """The appendix's formulas for TAGS with interior cutoffs s_1 < ... < s_{h-1}, any h (``n_hosts``).

    ``load`` is the system load lambda E[X] / h (footnote 2).
    """
    h = check_int("n_hosts", n_hosts)
    load = check_positive("load", load)
    cuts = np.asarray(cutoffs, dtype=np.float64).ravel()
    if cuts.size != h - 1:
        raise ValueError(f"cutoffs has {cuts.size} entries; TAGS on n_hosts={h} needs h - 1 = {h - 1} interior cutoffs")
    if not (np.isfinite(cuts).all() and (cuts > 0).all() and (np.diff(cuts) > 0).all()):
        raise ValueError(f"cutoffs={cuts.tolist()!r} is not allowed; they must be finite, > 0 and strictly increasing")
    rate = load * h / size_dist.mean
    finals, visits, loads, second, inverse, tails = _host_terms(size_dist, cuts.tolist(), rate)
    stable = max(loads) < 1.0
    visit_waits = [s / (2.0 * (1.0 - r)) if r < 1.0 else math.inf for s, r in zip(second, loads, strict=True)]
    waits = np.cumsum(visit_waits)
    with np.errstate(invalid="ignore", divide="ignore"):
        host_slowdowns = np.where(np.asarray(finals) > 0, waits * np.asarray(inverse) / np.asarray(finals), np.nan)
    mean_wait = _weighted(waits, finals)
    mean_slowdown = _weighted(waits, inverse)
    excess_a = sum(loads) - h * load
    excess_b = sum(rate * tails[i] * cuts[i - 1] for i in range(1, h))
    response = mean_wait + size_dist.mean + excess_b / rate
    return TagsAnalysis(
        cuts,
        np.array(finals),
        np.array(visits),
        np.array(loads),
        waits,
        host_slowdowns,
        mean_wait,
        mean_slowdown,
        excess_b,
        excess_a,
        excess_b,
        bool(stable),
        response,
    )


def _weighted(values: np.ndarray, weights: list[float]) -> float:
    """sum_i w_i v_i, where a zero weight cancels an infinite value (a host no job ends at)."""
    return float(sum(w * v for v, w in zip(values, weights, strict=True) if w > 0))


def _score(log_cuts: np.ndarray, size_dist: Distribution, load: float, h: int, objective: str) -> float:
    if np.abs(log_cuts).max() > 300.0:  # keeps s_i^2 representable (and > 0) in the host terms
        return 1e6
    cuts = np.exp(np.sort(log_cuts))
    if (np.diff(cuts) <= 0).any():
        return 1e6
    result = tags_analysis(cuts, size_dist, load, h)
    if not result.stable:
        # Lead the search back toward stability: the further over 1, the worse.
        return 1e3 + 1e3 * float(np.maximum(result.host_loads - 1.0, 0.0).sum())
    if objective == "waiting_time":
        return math.log(max(result.mean_waiting_time, 1e-300))
    log_slowdown = math.log(max(result.mean_slowdown, 1e-300))
    if objective == "slowdown":
        return log_slowdown
    per_host = np.log(np.maximum(result.host_slowdowns[result.final_fractions > 0], 1e-300))
    return float(per_host.max() - per_host.min()) + FAIRNESS_TIEBREAK * log_slowdown


def tags_optimal_cutoffs(
    size_dist: Distribution, load: float, n_hosts: int, objective: TagsObjective = "slowdown"
) -> TagsAnalysis:
    """The cutoffs that optimise ``objective`` under the appendix's analysis, with their analysis.

    The paper used Mathematica (and hand tuning beyond 2 hosts, §6). Here the search is global and
    deterministic: E[S] and E[W] are sums of per-host terms over consecutive cutoff pairs (see
    ``tags_chain``), so their exact minimum over ``SEARCH_GRID_POINTS`` log-spaced cutoffs inside
    the support is found by dynamic programming in O(h G^2); that point, the three best points of a
    coarse grid (80, 30, 14 then 8 points per axis for 1, 2, 3 and more cutoffs) and
    ``SEARCH_RANDOM_STARTS`` seeded random log-cutoff vectors are each polished by Nelder-Mead
    (restarted once from where it stops), subject to every host load < 1, and the best is kept.
    Objectives: ``"slowdown"`` minimises E[S], ``"waiting_time"`` minimises E[W], and
    ``"fairness"`` (TAGS-opt-fairness, §4) minimises the spread max_i log E[S_i] - min_i log E[S_i]
    of the per-host slowdowns (zero when they are equal), plus ``FAIRNESS_TIEBREAK`` x log E[S] to
    choose among equalising cutoffs; it is not a sum over hosts, so both dynamic-programming optima
    serve as its starts. Raises ``ValueError`` when no stable cutoffs exist: every TAGS
    configuration overloads a host (high load; the paper's §5.3 and §6 run into this at load 0.7).
    An optimum is searched once per process and law, load, host count and objective (``OPTIMA_CACHED``):
    later calls return the same result, whose arrays are read-only.
    """
    h = check_int("n_hosts", n_hosts)
    load = check_positive("load", load)
    check_choice("objective", objective, ("slowdown", "waiting_time", "fairness"))
    key = (size_dist.identity, load, h, objective)
    found = _OPTIMA.get(key)
    if found is None:
        found = _search_cutoffs(size_dist, load, h, objective)
        if len(_OPTIMA) >= OPTIMA_CACHED:
            _OPTIMA.clear()
        _OPTIMA[key] = found
    return found


def _search_cutoffs(size_dist: Distribution, load: float, h: int, objective: TagsObjective) -> TagsAnalysis:
    """The search of ``tags_optimal_cutoffs`` (arguments checked), its result's arrays made read-only."""
    if h == 1:
        return _frozen(tags_analysis([], size_dist, load, 1))
    low, high = (math.log(v) for v in support_bracket(size_dist))
    starts = _grid_starts(low, high, size_dist, load, h, objective)
    log_grid = np.linspace(low, high, SEARCH_GRID_POINTS + 2)[1:-1]
    rate = load * h / size_dist.mean
    chain_objectives: tuple[ChainObjective, ...] = (
        ("slowdown", "waiting_time") if objective == "fairness" else (objective,)
    )
    for chain_objective in chain_objectives:
        found = chain_optimal_log_cutoffs(size_dist, rate, h, log_grid, chain_objective)
        if found is not None:
            starts.append(found)
    rng = np.random.default_rng(SEARCH_SEED)
    starts += list(np.sort(rng.uniform(low, high, size=(SEARCH_RANDOM_STARTS, h - 1)), axis=1))
    candidates = [_polish(start, size_dist, load, h, objective) for start in starts]
    best = min(candidates, key=lambda c: c[0])[1]
    result = tags_analysis(np.exp(best), size_dist, load, h)
    if not result.stable:
        raise ValueError(
            f"no stable TAGS cutoffs found for n_hosts={h}, load={load!r}, size_dist={size_dist!r}: every cutoff "
            "choice searched leaves some host with load >= 1 (the restarts' excess work is too much); lower the load "
            "or add hosts"
        )
    return _frozen(result)


def _frozen(result: TagsAnalysis) -> TagsAnalysis:
    """``result`` with read-only arrays: a cached optimum is shared by every caller."""
    for value in vars(result).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return result


def _grid_starts(
    low: float, high: float, size_dist: Distribution, load: float, h: int, objective: str
) -> list[np.ndarray]:
    """The three best increasing points of a coarse grid of log-cutoffs (none when the grid has no such point)."""
    points = {1: 80, 2: 30, 3: 14}.get(h - 1, 8)
    if h - 1 > points:
        return []
    axis = np.linspace(low, high, points + 2)[1:-1]
    grid = np.array(list(itertools.combinations(axis, h - 1)))
    scores = np.array([_score(point, size_dist, load, h, objective) for point in grid])
    return list(grid[np.argsort(scores)[:3]])


def _polish(
    start: np.ndarray, size_dist: Distribution, load: float, h: int, objective: str
) -> tuple[float, np.ndarray]:
    """Nelder-Mead on the log-cutoffs from ``start``, restarted once where it stops: (score, sorted log-cutoffs)."""
    point = np.asarray(start, dtype=np.float64)
    score = _score(point, size_dist, load, h, objective)
    for _ in range(2):
        found = optimize.minimize(
            _score,
            point,
            args=(size_dist, load, h, objective),
            method="Nelder-Mead",
            options={"xatol": 1e-7, "fatol": 1e-10, "maxiter": 4000 * (h - 1)},
        )
        if float(found.fun) <= score:
            point, score = np.sort(found.x), float(found.fun)
    return score, point


def _first_host_count(slowdown: Callable[[int], float], start: int, target: float, max_hosts: int) -> int:
    """Smallest h >= start with slowdown(h) <= target (slowdown nonincreasing in h), by doubling then bisection."""
    if slowdown(start) <= target:
        return start
    low, high = start, start + 1
    while slowdown(high) > target:
        if high >= max_hosts:
            raise ValueError(f"mean slowdown stays above {target} up to max_hosts={max_hosts}; raise max_hosts")
        low, high = high, min(2 * high, max_hosts)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if slowdown(middle) <= target else (middle, high)
    return high


def server_expansion(
    policy: Literal["random", "least-work-remaining", "tags-slowdown"],
    size_dist: Distribution,
    load: float,
    n_hosts: int,
    target: float = 3.0,
    max_hosts: int = 10**15,
) -> int:
    """Hosts to add, at the arrival rate of ``n_hosts`` hosts at ``load``, until mean slowdown <= ``target`` (§6.1).

    The slowdown is the paper's W / X. TAGS uses optimal-slowdown cutoffs for every host count
    (searched one host at a time, up to 64 hosts); LWR its M/G/h form (doubling, then bisection);
    Random its closed form, whose answer can be astronomically large (about 10^27 hosts at alpha 0.2).
    """
    check_choice("policy", policy, ("random", "least-work-remaining", "tags-slowdown"))
    h0 = check_int("n_hosts", n_hosts)
    rate = check_positive("load", load) * h0 / size_dist.mean
    target = check_positive("target", target)

    def slowdown(h: int) -> float:
        load_h = rate * size_dist.mean / h
        if policy == "least-work-remaining":
            return lwr_analysis(size_dist, load_h, h).mean_slowdown
        try:
            return tags_optimal_cutoffs(size_dist, load_h, h, objective="slowdown").mean_slowdown
        except ValueError:
            return math.inf

    if policy == "random":
        # Random's slowdown at h hosts is a / (h - b): b = lambda E[X], a = lambda E[X^2] E[1/X] / 2.
        a = rate * size_dist.second_moment() * moment(size_dist, -1) / 2.0
        return max(h0, math.floor(rate * size_dist.mean + a / target) + 1) - h0
    if policy == "tags-slowdown":
        for h in range(h0, min(max_hosts, 64) + 1):
            if slowdown(h) <= target:
                return h - h0
        raise ValueError(f"TAGS mean slowdown stays above {target} up to 64 hosts")
    return _first_host_count(slowdown, h0, target, max_hosts) - h0
