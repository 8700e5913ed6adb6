"""A toy family for ``tests/test_family_registry.py``: one folder plus one registry entry.

A single server and a queue of jobs; at each decision epoch the server runs one of the first two
queued jobs to completion. Nothing outside this folder names it: the test registers it with
``schedenv.family.register`` and every consumer (CLI list, fast-path dispatch, evaluate, the
leaderboard) picks it up from the registry.
"""
