"""Non-preemptive multi-host dispatch with unknown sizes (TAGS, J. ACM 2002): ``schedenv/Dispatch-v0``.

Every family folder has the same files with the same roles (``schedenv.malleable``, ``dispatch``,
``multiserver``, ``moldable``). Imports go one way: each of the first eight files imports only
files listed above it (the ``family-layout`` contract of ``lint-imports``).

=================  =============================================================================================
``workload.py``    the paper's size law and explicit job lists (arrivals and laws: ``schedenv.workloads``)
``sim.py``         the pure reference simulator ``DispatchSim`` (the specification of the dynamics)
``core.py``        ``ReferenceCore``: the env's observation and mask over ``sim.py`` (the spec of ``fast.py``)
``kernel.py``      every numba kernel: the event core on flat arrays, observation, batched rows
``metrics.py``     the env's ``episode_metrics`` from the kernel's running sums
``fast.py``        ``FastCore``: the env's compiled core, a thin object over ``kernel.py``
``env.py``         the Gymnasium adapter ``DispatchEnv`` over ``FastCore``
``vector.py``      the native batched env (``vector_entry_point``) over ``kernel.py``
``render.py``      text and rgb_array rendering
``records.py``     (family-specific) ``DispatchRecord`` and ``EpisodeTally``, shared by ``sim.py`` and ``metrics.py``
``preset.py``      (family-specific) the benchmark preset's env arguments and test-seed count (constants only)
=================  =============================================================================================

Beside the folder: the baselines' Python rules in ``baselines/dispatch.py``, their compiled rules in
``baselines/kernels/dispatch.py`` and the Gymnasium-free fast path in ``schedenv/fastpath/dispatch.py``.
"""
