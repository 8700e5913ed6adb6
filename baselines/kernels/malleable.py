"""Numba versions of the malleable baselines' allocation rules (``baselines/malleable.py``), s(k) = k^p.

Each kernel fills ``theta[:n]`` with the fractions the Python policy's ``allocate`` returns for the
``n`` jobs present (arrays in arrival order). The formulas and tie rules are those of the Python
policies, which stay the specification (the fast-path tests compare completion times).
``schedenv.fastpath.malleable`` fuses ``allocate`` with the env's event step.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from baselines import malleable
from schedenv.malleable.kernel import stable_order

HESRPT, EQUI, SRPT, RS, HELL, KNEE, HELL_WATERFILL = 0, 1, 2, 3, 4, 5, 6
"""Policy codes of ``allocate`` (HELL as worded, ``Hell``; HELL_WATERFILL, ``HellWaterFill``)."""

_CODES: dict[type, int] = {
    malleable.HeSRPT: HESRPT,
    malleable.AdaptiveHeSRPT: HESRPT,
    malleable.Equi: EQUI,
    malleable.SRPT: SRPT,
    malleable.RS: RS,
    malleable.Hell: HELL,
    malleable.HellWaterFill: HELL_WATERFILL,
    malleable.Knee: KNEE,
}


def policy_code(policy: Any) -> tuple[int, float] | None:
    """(kernel code, KNEE's alpha) of a malleable baseline object, or None if it has no kernel."""
    code = _CODES.get(type(policy))
    if code is None:
        return None
    return code, float(getattr(policy, "alpha", 1.0))


@numba.njit(cache=True)
def _hesrpt(remaining, weight, n, p, theta, order, z):
    """Theorem 5 in ratio form, as ``schedenv.analysis.hesrpt.hesrpt_allocation``."""
    for j in range(n):
        z[j] = -remaining[j]
    stable_order(z, n, order)  # largest first, ties by position
    acc = 0.0
    for i in range(n):
        acc += weight[order[i]]
        z[i] = acc
    if p == 1.0:
        for j in range(n):
            theta[j] = 0.0
        theta[order[n - 1]] = 1.0
        return
    c = 1.0 / (1.0 - p)
    for i in range(n):
        upper = math.exp(c * math.log(z[i] / z[n - 1]))
        factor = 1.0 if i == 0 else -math.expm1(c * math.log(z[i - 1] / z[i]))
        theta[order[i]] = upper * factor


@numba.njit(cache=True)
def _all_to(theta, n, best):
    for j in range(n):
        theta[j] = 0.0
    theta[best] = 1.0


@numba.njit(cache=True)
def _hell(remaining, n, n_servers, theta, order):
    """HELL as worded for s(k) = k^p with p < 1/2: one server each, least remaining first, the rest idle."""
    k = min(1.0, n_servers)
    stable_order(remaining, n, order)
    for i in range(n):
        theta[order[i]] = min(max(n_servers - k * i, 0.0), k) / n_servers


@numba.njit(cache=True)
def _hell_waterfill(remaining, n, p, theta):
    """HELL water-filled for s(k) = k^p: SRPT for p >= 1/2, else k_i proportional to R_i^(-1/(1-2p))."""
    top = -np.inf
    for j in range(n):
        theta[j] = -math.log(remaining[j]) / (1.0 - 2.0 * p)
        top = max(top, theta[j])
    total = 0.0
    for j in range(n):
        theta[j] = math.exp(theta[j] - top)
        total += theta[j]
    for j in range(n):
        theta[j] /= total


@numba.njit(cache=True)
def _knee(remaining, n, p, alpha, n_servers, theta, order, knees):
    """KNEE: lowest knee first, each capped by the servers left; shares in proportion to servers."""
    low = 1e-9 * n_servers
    for j in range(n):
        knees[j] = max((p * remaining[j] / alpha) ** (1.0 / (1.0 + p)), low)
    stable_order(knees, n, order)
    before, total = 0.0, 0.0
    for i in range(n):
        j = order[i]
        theta[j] = min(max(n_servers - before, 0.0), knees[j])
        before += knees[j]
        total += theta[j]
    for j in range(n):
        theta[j] /= total


@numba.njit(cache=True)
def allocate(policy, remaining, size, weight, n, p, alpha, n_servers, theta, order, scratch):
    """Fill ``theta[:n]`` with the allocation of ``policy`` (one of the codes above).

    ``order`` (int64) and ``scratch`` (float64) are work arrays of at least ``n`` entries.
    """
    if policy == HESRPT:
        _hesrpt(remaining, weight, n, p, theta, order, scratch)
    elif policy == EQUI:
        for j in range(n):
            theta[j] = 1.0 / n
    elif policy == SRPT or (policy in (HELL, HELL_WATERFILL) and p >= 0.5):
        best = 0
        for j in range(1, n):
            if remaining[j] < remaining[best]:
                best = j
        _all_to(theta, n, best)
    elif policy == RS:
        best, key = 0, remaining[0] * size[0]
        for j in range(1, n):
            if remaining[j] * size[j] < key:
                best, key = j, remaining[j] * size[j]
        _all_to(theta, n, best)
    elif policy == HELL:
        _hell(remaining, n, n_servers, theta, order)
    elif policy == HELL_WATERFILL:
        _hell_waterfill(remaining, n, p, theta)
    else:
        _knee(remaining, n, p, alpha, n_servers, theta, order, scratch)
