"""What the multiserver fast path needs to run a baseline compiled (``baselines/multiserver.py``).

A multiserver baseline that is an order plus a packing describes itself as a ``KernelSpec``
(``MultiserverPolicy.kernel_spec``); ``schedenv.fastpath.multiserver`` then runs it in the numba
loop of ``schedenv.multiserver.kernel``, whose orders and packings are the env's own (its
``"priority"`` action mode packs with them too).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
