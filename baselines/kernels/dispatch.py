"""The dispatch baselines' rules compiled with numba (``baselines/dispatch.py``), on the arrays of
``schedenv.dispatch.kernel``.

``decide`` gives the (destination, limit index) that Central-Queue, Random, Round-Robin,
Shortest-Queue, Least-Work-Remaining, SITA-E and TAGS (Harchol-Balter, J. ACM 2002, §1-§4), and
TAGS with cycle stealing (``tags-slowdown-cs``, ``tags-cs-tuned``, ``tags-cq-tuned``,
``tags-cq-idle-tuned``, ``tags-cq-crowd-tuned``), choose for the pending job; ``schedenv.fastpath.dispatch``
fuses it with the compiled event core. The Python policies stay the specification (``tests/perf`` compares completion
times). Compiled without numba's runtime, as the core is (``NO_NRT``: no allocation here).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from baselines import dispatch as rules
from schedenv.dispatch.kernel import COUNTER, JOB_ID, LENGTH, NO_NRT, RUNS, SIZE, TIME, bisect_left, host_work

CENTRAL_QUEUE, RANDOM, ROUND_ROBIN, SHORTEST_QUEUE, LEAST_WORK, SITA_E, TAGS, TAGS_CS, TAGS_CQ, TAGS_CQ_IDLE = range(10)
TAGS_CQ_CROWD = 10
"""Policy codes of ``decide`` (``baselines/dispatch.py``)."""

TAGS_RULES = (TAGS, TAGS_CS, TAGS_CQ, TAGS_CQ_IDLE, TAGS_CQ_CROWD)
"""Policy codes that play TAGS's ladder indices per attempt (``tags_limits``), followed by the rule's
``kernel_rungs``: TAGS_CQ_IDLE's idle long-job host's first rung; TAGS_CQ_CROWD's, then the crowded central
queue's first rung and the crowd threshold."""

SIZE_AWARE = (LEAST_WORK, SITA_E)
"""Policy codes that read job sizes (the env needs ``size_known=True`` for them)."""

_CODES: dict[type, int] = {
    rules.CentralQueue: CENTRAL_QUEUE,
    rules.RandomDispatch: RANDOM,
    rules.RoundRobin: ROUND_ROBIN,
    rules.ShortestQueue: SHORTEST_QUEUE,
    rules.LeastWorkRemaining: LEAST_WORK,
    rules.SitaE: SITA_E,
    rules.Tags: TAGS,
    rules.TagsSlowdown: TAGS,
    rules.TagsWaiting: TAGS,
    rules.TagsFair: TAGS,
    rules.TagsSlowdownCycleStealing: TAGS_CS,
    rules.TagsCycleStealingTuned: TAGS_CS,
    rules.TagsCentralQueue: TAGS_CQ,
    rules.TagsCentralQueueTuned: TAGS_CQ,
    rules.TagsCentralQueueIdle: TAGS_CQ_IDLE,
    rules.TagsCentralQueueIdleTuned: TAGS_CQ_IDLE,
    rules.TagsCentralQueueCrowd: TAGS_CQ_CROWD,
    rules.TagsCentralQueueCrowdTuned: TAGS_CQ_CROWD,
}


def policy_code(policy: Any) -> int | None:
    """The kernel code of a dispatch baseline object, or None if it has no compiled rule."""
    return _CODES.get(type(policy))


@numba.njit(cache=True, inline="always", **NO_NRT)
def _long_idle(hi, qs):
    """The last (long-job) host idles with nothing queued there (``baselines.dispatch._long_host_idle``)."""
    last = hi.size - 1
    return hi[last] < 0 and qs[LENGTH, last] == 0


@numba.njit(cache=True, inline="always", **NO_NRT)
def _steals(hi, qs):
    """Cycle stealing may take the last host: it is idle, with nothing queued there or at the dispatcher."""
    return _long_idle(hi, qs) and qs[LENGTH, hi.size] == 0


@numba.njit(cache=True, inline="always", **NO_NRT)
def decide(policy, slot, jf, ji, hf, hi, qs, si, sf, n_limits, cutoffs, tags_limits, choices, id_offset):
    """The (destination, limit index) of baseline ``policy`` for the pending ``slot`` (``baselines/dispatch.py``).

    ``choices`` are RANDOM's pre-drawn hosts of the chunk's jobs; ``cutoffs`` SITA-E's size cutoffs;
    ``tags_limits`` TAGS's ladder index per attempt, then the rule's ``kernel_rungs`` (``TAGS_RULES``).
    """
    n_hosts = hi.size
    last = n_limits - 1
    if policy == CENTRAL_QUEUE:
        return n_hosts, last
    if policy == RANDOM:
        return choices[ji[slot, JOB_ID] - id_offset], last
    if policy == ROUND_ROBIN:
        si[COUNTER] += 1
        return (si[COUNTER] - 1) % n_hosts, last
    if policy == SITA_E:
        return bisect_left(cutoffs, jf[slot, SIZE]), last
    if policy in TAGS_RULES:
        attempt = ji[slot, RUNS]
        if attempt == 0 and policy == TAGS_CQ:
            return n_hosts, tags_limits[0]
        if attempt == 0 and policy in (TAGS_CQ_IDLE, TAGS_CQ_CROWD):
            if _long_idle(hi, qs):
                return n_hosts, tags_limits[n_hosts]
            if policy == TAGS_CQ_CROWD and qs[LENGTH, n_hosts] >= tags_limits[n_hosts + 2]:  # a crowded queue
                return n_hosts, tags_limits[n_hosts + 1]
            return n_hosts, tags_limits[0]
        if policy == TAGS_CS and attempt == 0 and hi[0] >= 0 and _steals(hi, qs):
            return n_hosts - 1, last
        return attempt, tags_limits[attempt]
    best, best_key = 0, np.inf
    for host in range(n_hosts):
        if policy == SHORTEST_QUEUE:
            key = float(qs[LENGTH, host] + (hi[host] >= 0))
        else:
            key = host_work(host, hf, hi, sf[TIME])
        if key < best_key:
            best, best_key = host, key
    return best, last
