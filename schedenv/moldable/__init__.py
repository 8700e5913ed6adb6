"""Moldable jobs (HRF paper, Wu et al. CF'15): env ``schedenv/Moldable-v0``.

Every family folder has the same files with the same roles (``schedenv.malleable``, ``dispatch``,
``multiserver``, ``moldable``). Imports go one way: each of the first eight files imports only
files listed above it (the ``family-layout`` contract of ``lint-imports``).

=================  =============================================================================================
``workload.py``    Cirne's job model, Downey speedups, explicit jobs and SWF traces
``sim.py``         the pure reference simulator ``MoldableSim`` (the specification of the dynamics)
``core.py``        ``ReferenceCore``: the env's observation and mask over ``sim.py`` (the spec of ``fast.py``)
``kernel.py``      every numba kernel: transition, observation, mask, fallback, HRF-EASY, candidates, batches
``metrics.py``     the env's ``episode_metrics``
``fast.py``        ``FastCore``: the env's compiled core, a thin object over ``kernel.py``
``env.py``         the Gymnasium adapter ``MoldableEnv`` over ``FastCore``
``vector.py``      the native batched env (``vector_entry_point``) over ``kernel.py``
``render.py``      text and rgb_array (Gantt) rendering
=================  =============================================================================================

Beside the folder: the baselines' Python rules in ``baselines/moldable.py``, their compiled rules in
``baselines/kernels/moldable.py`` and the Gymnasium-free fast path in ``schedenv/fastpath/moldable.py``.
"""

from schedenv.moldable.env import MoldableEnv, decode_action, encode_action
from schedenv.moldable.sim import MoldableJobRecord, MoldableSim, MoldableView
from schedenv.moldable.workload import LOADS, CirneWorkload, MoldableJobSet, parse_jobs

__all__ = [
    "LOADS",
    "CirneWorkload",
    "MoldableEnv",
    "MoldableJobRecord",
    "MoldableJobSet",
    "MoldableSim",
    "MoldableView",
    "decode_action",
    "encode_action",
    "parse_jobs",
]
