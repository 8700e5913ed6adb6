"""Non-preemptive multi-host dispatch with unknown sizes (Harchol-Balter, TAGS, J. ACM 2002).

``sim`` is the pure event core, ``env`` the Gymnasium adapter (``schedenv/Dispatch-v0``);
``kernels`` is the core compiled with numba, which ``fastpath`` (baselines without the Gymnasium
shell) and ``vector`` (the native batched env of ``gym.make_vec``) run.
"""
