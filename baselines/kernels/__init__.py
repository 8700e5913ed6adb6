"""The baselines' decision rules compiled with numba, one module per family, for ``schedenv.fastpath``.

Each module maps a baseline object to its kernel (``policy_code``, or the policy's own
``kernel_spec()`` for the multiserver family) and holds the compiled rule that the family's fast
path fuses with the env's event step. The Python policies in ``baselines/<family>.py`` stay the
specification; ``tests/perf`` checks that both give the same completion times.
"""
