"""Workload input of the dispatch family: the TAGS paper's size law and explicit job lists.

Harchol-Balter, "Task assignment with unknown duration", J. ACM 2002, §3: Bounded Pareto sizes with
mean 3000 and upper bound 10^10. The arrival process (Poisson) and the size laws themselves are the
shared ones of ``schedenv.workloads``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedenv.validation import as_real_array, check_scale_array, check_time_resolution
from schedenv.workloads import BoundedPareto

DEFAULT_ALPHA = 1.1
"""Default Bounded Pareto exponent: the paper's plots span 0.2-2; measured workloads give about 1 (§3)."""


def default_size_dist() -> BoundedPareto:
    """The paper's workload: Bounded Pareto with mean 3000 and upper bound 10^10 (§3), alpha = 1.1."""
    return BoundedPareto.with_mean(3000.0, alpha=DEFAULT_ALPHA, upper=1e10)


def parse_jobs(jobs: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Explicit (arrival, size) pairs, kept in arrival order (stable for ties)."""
    if jobs is None:
        return None
    array = as_real_array("jobs", jobs)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0:
        raise ValueError(
            f"jobs with shape {array.shape} is not allowed; give a non-empty list of (arrival, size) pairs"
        )
    arrivals, sizes = array[:, 0], array[:, 1]
    bad = ~(np.isfinite(sizes) & (sizes > 0))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"jobs[{index}] has size {sizes[index]!r}; every size must be finite and > 0")
    if not (np.isfinite(arrivals).all() and (arrivals >= 0).all()):
        raise ValueError("jobs[:, 0] (arrival times) must be finite and >= 0")
    check_scale_array("jobs[:, 1] (sizes)", sizes)
    check_time_resolution("jobs", arrivals, sizes)
    order = np.argsort(arrivals, kind="stable")
    return arrivals[order].copy(), sizes[order].copy()
