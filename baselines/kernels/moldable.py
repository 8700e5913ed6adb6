"""The moldable baselines' decision rules compiled with numba (``baselines/moldable.py``), on the state
arrays of the env's compiled core (``schedenv.moldable.kernel``).

``decide`` lives in ``schedenv.moldable.kernel`` (the env's ranked action mode computes HRF-EASY's
decision with it, and the envs sit below the baselines); this module maps policy objects to its codes.
``decide`` returns the env action of ``MoldablePolicy.act`` for HRF (Algorithm 1 once per allocation
turn, over all queued jobs; HRF paper §5) and Rigid (requested counts), with FCFS or EASY selection
(§3.2; the head's count frozen in its reservation), for any alpha and threshold. The heap of
Algorithm 1 becomes a list of the queued jobs kept in the heap's (-revenue, position) order (ties to
the earlier job), each runtime evaluated once (``kernel._hrf_turn``). ``schedenv.fastpath.moldable``
fuses it with the env's step; the Python policies stay the specification (``tests/perf`` compares
records, ``tests/moldable/test_ranked.py`` the counts of every turn).
"""

from __future__ import annotations

from typing import Any

from baselines.moldable import POLICIES
from schedenv.moldable.kernel import HRF, RIGID, decide, initial_policy_state

__all__ = ["decide", "initial_policy_state", "policy_code"]


def policy_code(policy: Any) -> tuple[int, bool, float, float] | None:
    """(scheme, EASY?, alpha, threshold) of a covered moldable baseline object, or None."""
    name = getattr(policy, "name", None)
    if name not in POLICIES or type(policy) is not POLICIES[name]:
        return None
    scheme = {"hrf": HRF, "rigid": RIGID}.get(policy.scheme)
    if scheme is None:
        return None
    return scheme, policy.selection == "easy", float(policy.alpha), float(policy.threshold)
