"""Non-preemptive multi-host dispatch with unknown sizes (Harchol-Balter, TAGS, J. ACM 2002).

``sim`` is the pure event core, ``env`` the Gymnasium adapter (``schedenv/Dispatch-v0``);
``kernels`` is the core compiled with numba, which ``vector`` (the native batched env of
``gym.make_vec``) and ``schedenv.fastpath.dispatch`` (baselines without the Gymnasium shell) run;
``metrics`` turns its running sums into the env's ``episode_metrics``.
"""
