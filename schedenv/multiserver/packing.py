"""Packing procedures of the multiserver-job policies (Grosof et al. 2022, §3.2, §6, Appendix C).

Each takes the server needs of candidate jobs *in priority order* (most urgent first: SRPT,
arrival or Gittins order) and the number of servers k, and returns the positions (into that
order) of the jobs to serve, whose total need is at most k. They are pure numpy functions, shared
by the env's ``priority`` action mode, the baselines and the fast path.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

PACKINGS: tuple[str, ...] = ("serverfilling", "firstfit", "greedy")
"""The packings the env's ``priority`` mode offers."""


def is_power_of_two(value: int) -> bool:
    """True for 1, 2, 4, 8, ..."""
    return value >= 1 and value & (value - 1) == 0


def serverfilling(needs: np.ndarray, n_servers: int) -> np.ndarray:
    """ServerFilling (§3.2): take the shortest prefix M of the order whose needs sum to >= k (all
    jobs if none), then serve M's jobs by decreasing need (ties: priority order) until the next
    one does not fit. In the power-of-two setting this fills all k servers whenever M exists
    (Lemma 3.1)."""
    needs = np.asarray(needs)
    if needs.size == 0:
        return np.empty(0, dtype=np.int64)
    prefix = int(np.searchsorted(np.cumsum(needs), n_servers)) + 1
    members = needs[:prefix]
    by_need = np.argsort(-members, kind="stable")  # ties keep the priority order
    fits = np.cumsum(members[by_need]) <= n_servers
    # Cumulative needs increase, so the jobs that fit form a prefix: stop at the first misfit.
    return np.sort(by_need[: int(fits.sum())])


def greedy(needs: np.ndarray, n_servers: int) -> np.ndarray:
    """GreedySRPT's packing (§6): serve jobs in order until one does not fit, then stop."""
    needs = np.asarray(needs)
    return np.flatnonzero(np.cumsum(needs) <= n_servers)


def firstfit(needs: np.ndarray, n_servers: int) -> np.ndarray:
    """FirstFitSRPT's packing (§6): go down the order, serving every job that still fits (skipping
    the ones that do not) until the servers are full or the jobs run out."""
    needs = np.asarray(needs)
    chosen: list[int] = []
    free, start = n_servers, 0
    while free > 0 and start < needs.size:
        fitting = needs[start:] <= free
        if not fitting.any():
            break
        position = start + int(np.argmax(fitting))
        chosen.append(position)
        free -= int(needs[position])
        start = position + 1
    return np.asarray(chosen, dtype=np.int64)


def pack(packing: str, needs: np.ndarray, n_servers: int) -> np.ndarray:
    """Dispatch to ``serverfilling``, ``firstfit`` or ``greedy`` by name."""
    if packing == "serverfilling":
        return serverfilling(needs, n_servers)
    if packing == "firstfit":
        return firstfit(needs, n_servers)
    if packing == "greedy":
        return greedy(needs, n_servers)
    raise ValueError(f"packing={packing!r} is not allowed; choose one of {list(PACKINGS)}")


def largest_prime_factor(value: int) -> int:
    """The largest prime factor of ``value`` >= 2 (1 for ``value`` = 1)."""
    largest, factor = 1, 2
    while factor * factor <= value:
        while value % factor == 0:
            largest, value = factor, value // factor
        factor += 1
    return max(largest, value) if value > 1 else largest


def divisorfilling(needs: np.ndarray, n_servers: int, top_up: bool = True) -> np.ndarray:
    """DivisorFilling (Appendix C.1) for needs that divide k, in all three cases.

    M is the first k jobs of the order. Case 1 (at least k/6 jobs of need 1 in M): serve M by
    decreasing need until the next does not fit, then fill with M's need-1 jobs. Case 2
    (k = 2^a 3^b): recurse on the even-need jobs M2 with k/2 and halved needs if 2|M2| >= 3|M3|,
    else on the odd-need jobs above 1, M3, with k/3. Case 3 (largest prime factor p >= 5): recurse
    on the jobs whose need p divides if p|Mp| >= k; otherwise extract up to p subproblems of k/p
    servers from the jobs of need > 1 not divisible by p. With >= k jobs present it serves exactly
    k servers (Theorem C.1).

    With fewer than k jobs the procedure can leave servers idle although jobs fit (a lone need-1
    job in Case 2 is never served, which would stall the system). We then top the set up with the
    jobs of M that still fit, first-fit in priority order. This never drops a job the procedure
    chose and changes nothing when >= k jobs are present (all k servers are then full).
    ``top_up=False`` gives the paper's procedure alone.
    """
    needs = np.asarray(needs, dtype=np.int64)
    chosen = np.zeros(needs.size, dtype=bool)
    chosen[_divisorfilling(needs, np.arange(needs.size), n_servers)] = True
    free = n_servers - int(needs[chosen].sum()) if top_up else 0
    for position in np.flatnonzero(~chosen[:n_servers]).tolist():
        if free == 0:
            break
        if needs[position] <= free:
            chosen[position] = True
            free -= int(needs[position])
    return np.flatnonzero(chosen)


def _divisorfilling(needs: np.ndarray, positions: np.ndarray, k: int) -> list[int]:
    members, member_needs = positions[:k], needs[:k]
    if members.size == 0:
        return []
    ones = member_needs == 1
    if int(ones.sum()) * 6 >= k:
        by_need = np.lexsort((np.arange(members.size), -member_needs))
        cumulative = np.cumsum(member_needs[by_need])
        taken = by_need[: int((cumulative <= k).sum())]
        free = k - int(member_needs[taken].sum())
        spare_ones = [i for i in np.flatnonzero(ones) if i not in set(taken.tolist())][:free]
        return [int(members[i]) for i in (*taken.tolist(), *spare_ones)]
    p = largest_prime_factor(k)
    if p <= 3:
        even = member_needs % 2 == 0
        odd = (member_needs % 2 == 1) & (member_needs > 1)
        factor, subset = (2, even) if 2 * int(even.sum()) >= 3 * int(odd.sum()) else (3, odd)
        return _divisorfilling(member_needs[subset] // factor, members[subset], k // factor)
    divisible = member_needs % p == 0
    if p * int(divisible.sum()) >= k:
        return _divisorfilling(member_needs[divisible] // p, members[divisible], k // p)
    rest = ~divisible & (member_needs > 1)
    rest_needs, rest_members = member_needs[rest], members[rest]
    served: list[int] = []
    for _ in range(p):
        if rest_members.size == 0:
            break
        chosen = _divisorfilling(rest_needs[: k // p], rest_members[: k // p], k // p)
        if not chosen:
            break
        served.extend(chosen)
        keep = ~np.isin(rest_members, chosen)
        rest_needs, rest_members = rest_needs[keep], rest_members[keep]
    return served


def maxweight_table(need_values: np.ndarray, n_servers: int, limit: int = 1_000_000) -> np.ndarray:
    """Every feasible count vector c (c_i jobs of need ``need_values[i]``, sum c_i n_i <= k).

    Rows are sorted by decreasing servers used, so that among equal weights MaxWeight prefers the
    fuller packing. Raises ``ValueError`` when there would be more than ``limit`` rows.
    """
    values = [int(v) for v in need_values]
    n_rows = math.prod(n_servers // v + 1 for v in values)
    if n_rows > limit:
        raise ValueError(
            f"maxweight enumerates {n_rows} count vectors for n_servers={n_servers} and needs {values}; "
            f"it is exact only for small k (at most {limit} vectors)"
        )
    grid = np.array(list(itertools.product(*(range(n_servers // v + 1) for v in values))), dtype=np.int64)
    grid = grid.reshape(-1, len(values))
    used = grid @ np.asarray(values, dtype=np.int64)
    feasible = grid[used <= n_servers]
    return feasible[np.argsort(-(feasible @ np.asarray(values)), kind="stable")]


def maxweight(needs: np.ndarray, n_servers: int, need_values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """MaxWeight (§6, [24]): each job weighs the number of jobs present with its server need;
    serve the feasible set of maximum total weight.

    All jobs of a need class weigh the same, so a set is fixed by how many jobs c_i of each class
    it serves: with N_i jobs of class i present, the value is sum c_i N_i over count vectors with
    c_i <= N_i and sum c_i n_i <= k. ``table`` (``maxweight_table``) lists every such vector; the
    best feasible row is found with one matrix product (exact, no heuristic bin packing). Within a
    class the jobs earliest in the given order are served.
    """
    needs = np.asarray(needs)
    counts = (needs[:, None] == need_values[None, :]).sum(axis=0)
    feasible = (table <= counts).all(axis=1)
    values = np.where(feasible, table @ counts, -1)
    best = table[int(np.argmax(values))]
    chosen = [np.flatnonzero(needs == value)[:count] for value, count in zip(need_values, best, strict=True)]
    return np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)
