"""Malleable parallel jobs (heSRPT paper, Berg et al. 2020): env ``schedenv/Malleable-v0``.

Every family folder has the same files with the same roles (``schedenv.malleable``, ``dispatch``,
``multiserver``, ``moldable``). Imports go one way: each of the first eight files imports only
files listed above it (the ``family-layout`` contract of ``lint-imports``).

=================  =============================================================================================
``workload.py``    explicit job lists (random workloads: ``schedenv.workloads``)
``sim.py``         the pure reference simulator (the specification of the dynamics)
``core.py``        ``ReferenceCore``: the env's action and observation over ``sim.py`` (the spec of ``fast.py``;
                   the env runs it for speedups other than k^p)
``kernel.py``      every numba kernel: transition, window and observation, batched rows, ``stable_order``
``metrics.py``     the env's ``episode_metrics``
``fast.py``        ``FastCore``: the env's compiled core, a thin object over ``kernel.py`` (s(k) = k^p)
``env.py``         the Gymnasium adapter ``MalleableEnv`` over ``FastCore``
``vector.py``      the native batched env (``vector_entry_point``) over ``kernel.py``
``render.py``      text and rgb_array rendering
=================  =============================================================================================

Beside the folder: the baselines' Python rules in ``baselines/malleable.py``, their compiled rules in
``baselines/kernels/malleable.py`` and the Gymnasium-free fast path in ``schedenv/fastpath/malleable.py``.
"""

from schedenv.malleable.sim import MalleableParams, MalleableState, StepOutcome, advance, initial_state

__all__ = ["MalleableParams", "MalleableState", "StepOutcome", "advance", "initial_state"]
