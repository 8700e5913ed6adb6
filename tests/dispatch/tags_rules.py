"""What the tests of the TAGS rules with a central first stage share: the preset's regime and a played trace."""

from __future__ import annotations

from baselines.dispatch import Tags
from schedenv.evaluation import evaluate
from schedenv.fastpath import run_fast
from schedenv.workloads import BoundedPareto

ENV_ID = "schedenv/Dispatch-v0"
PRESET_REGIME = {"load": 0.5, "size_dist": BoundedPareto.with_mean(3000.0, alpha=1.1, upper=1e7)}
"""The Dispatch preset's scenario (``schedenv.dispatch.preset``) with the env's default ladder."""


def played(policy: Tags, jobs: list[tuple[float, float]]) -> list[tuple[tuple[int, ...], float]]:
    """Hosts and completion of each job on the ladder [2, 4, inf], through the evaluation loop and the fast path
    (which must agree)."""
    records = evaluate(ENV_ID, policy, [0], jobs=jobs, time_limits=[2.0, 4.0]).episodes[0].records
    fast = run_fast(ENV_ID, policy, 0, keep_completions=True, jobs=jobs, time_limits=[2.0, 4.0]).records()
    assert fast == sorted(records, key=lambda record: record.job_id)
    return [(record.hosts, record.completion) for record in fast]
