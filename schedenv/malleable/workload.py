"""Workload input of the malleable family: explicit job lists (the heSRPT paper's model, §3).

The random workloads (Poisson arrivals, size laws, speedups) are the shared ones of
``schedenv.workloads``; the env draws an episode from them in ``MalleableEnv._draw_episode``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedenv.validation import as_real_array, check_scale_array, check_time_resolution


def parse_jobs(jobs: Any, mode: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Explicit jobs: sizes (offline, all at t = 0) or (arrival, size) pairs (either mode)."""
    if jobs is None:
        return None
    array = as_real_array("jobs", jobs)
    if array.ndim == 1:
        sizes = check_scale_array("jobs", array)
        check_time_resolution("jobs", np.zeros(1), sizes)
        return np.zeros(sizes.size), sizes
    if array.ndim == 2 and array.shape[1] == 2 and array.shape[0] > 0:
        arrivals, sizes = array[:, 0], check_scale_array("jobs[:, 1] (sizes)", array[:, 1])
        if not (np.isfinite(arrivals).all() and (arrivals >= 0).all() and (np.diff(arrivals) >= 0).all()):
            raise ValueError("jobs[:, 0] (arrival times) must be finite, >= 0 and nondecreasing")
        if mode == "offline" and arrivals.any():
            raise ValueError("mode='offline' needs every arrival time to be 0; use mode='online' for later arrivals")
        check_time_resolution("jobs", arrivals, sizes)
        return arrivals.copy(), sizes
    raise ValueError(
        f"jobs with shape {array.shape} is not allowed; give a list of sizes or a list of (arrival, size) pairs"
    )
