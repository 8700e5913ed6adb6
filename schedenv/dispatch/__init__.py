"""Non-preemptive multi-host dispatch with unknown sizes (Harchol-Balter, TAGS, J. ACM 2002).

``sim`` is the pure event core, ``env`` the Gymnasium adapter (``schedenv/Dispatch-v0``).
"""
