"""The multiserver-job queue (Grosof et al., POMACS 2022): ``schedenv/MultiserverJob-v0``.

Every family folder has the same files with the same roles (``schedenv.malleable``, ``dispatch``,
``multiserver``, ``moldable``). Imports go one way: each of the first eight files imports only
files listed above it (the ``family-layout`` contract of ``lint-imports``).

=================  =============================================================================================
``workload.py``    the (need, size or duration) laws, explicit job lists, the observed scenario parameters
``sim.py``         the pure reference simulator (the specification of the dynamics)
``core.py``        none: the reference translation (window, observation, service set over ``sim.py``) is
                   ``Reference`` in ``tests/multiserver/test_fast_core.py``, which checks ``fast.py`` against it
``kernel.py``      every numba kernel: the one transition ``advance`` on the state layout ``MultiserverArrays``,
                   the env's step, observation and batched rows (the fast path loops ``advance`` too)
``metrics.py``     the env's ``episode_metrics``
``fast.py``        ``FastCore``: the env's compiled core, a thin object over ``kernel.py``
``env.py``         the Gymnasium adapter ``MultiserverJobEnv`` over ``FastCore``
``vector.py``      the native batched env (``vector_entry_point``) over ``kernel.py``
``render.py``      text and rgb_array rendering
``packing.py``     (family-specific) ServerFilling / DivisorFilling / first-fit / greedy / MaxWeight in numpy
``gittins.py``     (family-specific) the Gittins rank of §5
``srpt1.py``       (family-specific) the resource-pooled SRPT-1 lower bound
``trace.py``       (family-specific) the Alibaba GPU trace and SWF replay
=================  =============================================================================================

Beside the folder: the baselines' Python rules in ``baselines/multiserver.py``, their compiled rules in
``baselines/kernels/multiserver.py`` and the Gymnasium-free fast path in ``schedenv/fastpath/multiserver.py``.
The load sweeps of the paper's figures are in ``benchmarks/reproduce/multiserver_sweeps.py``.
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
