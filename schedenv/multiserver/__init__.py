"""The multiserver-job queue (Grosof, Scully, Harchol-Balter, Scheller-Wolf, POMACS 2022).

``sim`` is the pure event core, ``env`` the Gymnasium adapter (``schedenv/MultiserverJob-v0``),
``workload`` the (need, size or duration) laws, ``packing`` the ServerFilling / DivisorFilling /
first-fit / greedy / MaxWeight procedures, ``gittins`` the Gittins rank of §5, ``srpt1`` the
resource-pooled SRPT-1 lower bound, ``kernel`` the numba loop that ``schedenv.fastpath.multiserver``
runs a policy in without the Gymnasium shell, ``fast`` is the env's compiled step (one numba call
per epoch, checked step by step against ``sim``) and ``trace`` the Alibaba GPU trace replay. The
load sweeps of the paper's figures are in ``benchmarks/reproduce/multiserver_sweeps.py``.
"""

from schedenv.multiserver.sim import MultiserverJobRecord, MultiserverParams, MultiserverState, advance, initial_state
from schedenv.multiserver.srpt1 import srpt1_completion_times, srpt1_mean_response_time

__all__ = [
    "MultiserverJobRecord",
    "MultiserverParams",
    "MultiserverState",
    "advance",
    "initial_state",
    "srpt1_completion_times",
    "srpt1_mean_response_time",
]
