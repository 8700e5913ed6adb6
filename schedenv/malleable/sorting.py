"""An allocation-free stable argsort for compiled code: the env's window and the baselines' kernels.

The env's window holds the ``max_jobs`` jobs of least remaining size (ties by arrival order), and
heSRPT and KNEE rank jobs the same way; all of them need ``np.argsort(kind="mergesort")``'s order
without allocating on every event.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def stable_order(keys, n, order):
    """Fill ``order[:n]`` with the stable ascending order of ``keys[:n]`` (as a mergesort argsort)."""
    if n > 24:
        order[:n] = np.argsort(keys[:n], kind="mergesort")
        return
    for i in range(n):  # insertion sort: no allocation, fast for the few jobs usually present
        j = i
        while j > 0 and keys[order[j - 1]] > keys[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
