"""The env's ``episode_metrics`` from the compiled core's running sums (``kernel``), for the batched
env, the env and the fast path: one tally, ``records.EpisodeTally``, computes them for every path.
"""

from __future__ import annotations

import numpy as np

from schedenv.dispatch.kernel import (
    BUSY,
    COUNT,
    FINAL_COUNT,
    FINAL_SUM,
    FIRST_ARRIVAL,
    KILLS,
    N_COMPLETED,
    RESPONSE,
    SUM,
    TIME,
)
from schedenv.dispatch.records import EpisodeTally


def tally_of(
    n_hosts: int, class_bounds: tuple[float, ...], hf: np.ndarray, si: np.ndarray, sf: np.ndarray, ct: np.ndarray
) -> EpisodeTally:
    """The ``EpisodeTally`` of one copy, from the kernels' running sums (``records``'s definitions)."""
    tally = EpisodeTally(n_hosts, class_bounds=tuple(class_bounds))
    (
        tally.response,
        tally.waiting,
        tally.queueing,
        tally.slowdown,
        tally.waiting_slowdown,
        tally.queueing_slowdown,
        tally.wasted,
        tally.work,
        tally.first_arrival,
    ) = (float(v) for v in sf[RESPONSE : FIRST_ARRIVAL + 1])
    tally.n_completed, tally.kills = int(si[N_COMPLETED]), int(si[KILLS])
    tally.busy = hf[BUSY].tolist()
    tally.final_host = [[float(c), float(s)] for c, s in zip(hf[FINAL_COUNT], hf[FINAL_SUM], strict=True)]
    tally.size_class = [[float(c), float(s)] for c, s in zip(ct[COUNT], ct[SUM], strict=True)]
    return tally


def episode_metrics(
    n_hosts: int, class_bounds: tuple[float, ...], hf: np.ndarray, si: np.ndarray, sf: np.ndarray, ct: np.ndarray
) -> dict[str, float]:
    """``episode_metrics`` of one copy through ``EpisodeTally.metrics`` itself, from the kernel's running sums."""
    return tally_of(n_hosts, class_bounds, hf, si, sf, ct).metrics(float(sf[TIME]))
