"""What the multiserver fast path needs to run a baseline compiled (``baselines/multiserver.py``).

A multiserver baseline that is an order plus a packing describes itself as a ``KernelSpec``
(``MultiserverPolicy.kernel_spec``); ``decide`` is that rule compiled, and
``schedenv.fastpath.multiserver`` runs it in a numba loop with the family's one transition
(``schedenv.multiserver.kernel.advance``), whose packings are the env's own (its ``"priority"``
action mode packs with them too).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from schedenv.multiserver.kernel import DURATION, N_JOBS, NEED, REMAINING, pack, smallest_first


@dataclass(frozen=True)
class KernelSpec:
    """What the compiled loop needs to run a policy: its order, its packing and their tables."""

    order: str
    """"srpt", "arrival" or "gittins"."""
    packing: str
    """"serverfilling", "firstfit", "greedy" or "maxweight"."""
    need_values: np.ndarray = field(default_factory=lambda: np.ones(1, dtype=np.int64))
    """Sorted need values (rows of the rank tables; columns of the MaxWeight table)."""
    table: np.ndarray = field(default_factory=lambda: np.zeros((1, 1), dtype=np.int64))
    """MaxWeight count vectors (``packing.maxweight_table``)."""
    rank_ages: np.ndarray = field(default_factory=lambda: np.zeros((1, 2)))
    """Gittins: the age grid of each need value (one row per ``need_values`` entry)."""
    rank_values: np.ndarray = field(default_factory=lambda: np.zeros((1, 2)))
    """Gittins: the ranks on that grid."""


ORDERS = {"srpt": 0, "arrival": 1, "gittins": 2}
"""Order codes of ``decide``: least remaining size k_j r_j / k first, arrival order, Gittins rank."""


@njit(cache=True, inline="always")
def decide(
    order, packing, class_of, table, rank_ages, rank_values, counts, jobs_i, jobs_f, ints, served, keys, ordered,
    scratch, k,
):  # fmt: skip
    """The service set of an order-and-pack policy over every job present, as ``MultiserverPolicy.service_set``
    chooses it: positions in ``served``; returns how many.

    ``order``: an ``ORDERS`` code (stable: ties keep arrival order; Gittins ranks interpolated in the
    age, one rank table per need class); ``packing``: a ``kernel.PACKINGS`` code. ``class_of[need]``
    is a need's class (a row of the rank tables, a column of the MaxWeight ``table``); ``counts``
    (one entry per class), ``keys`` and ``ordered`` (one entry per job) and ``scratch`` (k entries) are
    scratch space.
    """
    m = ints[N_JOBS]
    # ServerFilling's prefix holds at most k jobs and greedy stops within k + 1: only those are ordered.
    count = m if packing in (1, 3) else min(m, k + 1)
    if order == 1:
        for p in range(count):
            ordered[p] = p
    else:
        if order == 0:
            for p in range(m):
                keys[p] = jobs_i[NEED, p] * jobs_f[REMAINING, p]
        else:
            for p in range(m):
                c = class_of[jobs_i[NEED, p]]
                age = jobs_i[NEED, p] * (jobs_f[DURATION, p] - jobs_f[REMAINING, p]) / k
                keys[p] = np.interp(age, rank_ages[c], rank_values[c])
        smallest_first(keys, m, count, ordered)
    if packing == 3:
        counts[:] = 0
        for p in range(m):
            counts[class_of[jobs_i[NEED, p]]] += 1
    return pack(packing, ordered, count, jobs_i[NEED], k, table, counts, class_of, served, scratch)
