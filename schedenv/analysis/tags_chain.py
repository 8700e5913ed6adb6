"""Global search for TAGS cutoffs by dynamic programming over the appendix's host-by-host structure.

The appendix writes a job's waiting time as the sum of its visit waits at hosts 1..i, so exchanging
the sums gives

    E[S] = sum_j E[W_j^visit] E[X^-1; X > s_{j-1}],   E[W] = sum_j E[W_j^visit] P(X > s_{j-1}),

where E[W_j^visit] (the M/G/1 wait at host j, finite iff rho_j < 1) depends only on the host's own
interval (s_{j-1}, s_j]. Both objectives are therefore sums of terms over consecutive cutoff pairs,
and their minimum over cutoffs restricted to a grid is a shortest path through h - 1 layers of grid
points: O(h G^2) work for G grid points, exact on the grid, with the stability constraint (every
rho_j < 1) enforced term by term. ``tags_optimal_cutoffs`` polishes the result off the grid.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from schedenv.analysis.queueing import partial_moment
from schedenv.workloads import Distribution

ChainObjective = Literal["slowdown", "waiting_time"]


def chain_optimal_log_cutoffs(
    size_dist: Distribution, rate: float, n_hosts: int, log_grid: np.ndarray, objective: ChainObjective
) -> np.ndarray | None:
    """The log-cutoffs on ``log_grid`` (increasing) minimising E[S] or E[W] with every host load < 1.

    ``rate`` is the outside arrival rate lambda; ``n_hosts`` >= 2. Returns ``None`` when no grid
    choice is stable.
    """
    points = np.exp(log_grid)
    g = points.size
    cumulative = {k: np.array([partial_moment(size_dist, k, -math.inf, x) for x in points]) for k in (1, 2)}
    tail = np.array([partial_moment(size_dist, 0, x, math.inf) for x in points])
    totals = {k: partial_moment(size_dist, k, -math.inf, math.inf) for k in (1, 2)}
    weight_order = -1 if objective == "slowdown" else 0
    weight = np.array([partial_moment(size_dist, weight_order, x, math.inf) for x in points])
    weight_first = partial_moment(size_dist, weight_order, 0.0, math.inf)

    def term(first: np.ndarray, second: np.ndarray, host_weight: np.ndarray | float) -> np.ndarray:
        # The host's visit wait times its weight; inf when the host is unstable (load >= 1).
        load, moment2 = rate * first, rate * second
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value = np.where(load < 1.0, moment2 / (2.0 * (1.0 - load)) * host_weight, np.inf)
        return np.where(np.isnan(value), np.inf, value)  # 0 x inf: an empty host with an infinite weight

    # Host 1: interval (0, s_1]; cost[b] is the best total of hosts 1..j with s_j = points[b].
    cost = term(cumulative[1] + points * tail, cumulative[2] + points**2 * tail, weight_first)
    choices: list[np.ndarray] = []
    # A middle host's interval (points[a], points[b]] with a < b: rows a, columns b.
    upper = np.triu(np.ones((g, g), dtype=bool), k=1)
    first = cumulative[1][None, :] - cumulative[1][:, None] + (points * tail)[None, :]
    second = cumulative[2][None, :] - cumulative[2][:, None] + (points**2 * tail)[None, :]
    middle = np.where(upper, term(first, second, weight[:, None]), np.inf)
    for _ in range(n_hosts - 2):
        total = cost[:, None] + middle
        choices.append(np.argmin(total, axis=0))
        cost = total[choices[-1], np.arange(g)]
    # Host h: interval (s_{h-1}, inf), no cap.
    last = term(totals[1] - cumulative[1], totals[2] - cumulative[2], weight)
    final = cost + last
    if not np.isfinite(final).any():
        return None
    index = int(np.argmin(final))
    path = [index]
    for step in reversed(choices):
        index = int(step[index])
        path.append(index)
    return np.asarray(log_grid)[path[::-1]]
