"""The compiled Moldable fast path gives exactly the episodes of ``evaluate`` on the same seed."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import schedenv  # noqa: F401
from baselines.moldable import POLICIES
from schedenv.evaluation import evaluate
from schedenv.fastpath import moldable as moldable_fastpath
from schedenv.fastpath import run_fast, supports

ENV = "schedenv/Moldable-v0"
COVERED = ["hrf-fcfs", "hrf-easy", "rigid-fcfs", "rigid-easy"]
TABLES = [
    {"submit": 0.0, "runtimes": {1: 10, 2: 5}},
    {"submit": 0.0, "runtimes": {1: 10, 2: 7}},
    {"submit": 0.0, "runtimes": {1: 10, 2: 9}},
    {"submit": 3.0, "runtimes": {2: 8, 3: 6}, "requested": 3},
    {"submit": 3.0, "L": 20.0, "A": 2.5, "sigma": 1.5},
]
CONFIGS: list[dict[str, Any]] = [
    {},
    {"arrival_interval": "heavy", "max_jobs": 4},
    # more queued jobs than the queue's first capacity: the kernel stops, the queue grows, it resumes
    {"n_procs": 16, "n_jobs": 150, "arrival_interval": 40.0, "max_jobs": 8},
    {"jobs": TABLES, "n_procs": 3, "max_jobs": 2},
]


def assert_same_episode(policy: Any, seed: int, **kwargs: Any) -> None:
    episode = evaluate(ENV, policy, [seed], **kwargs).episodes[0]
    fast = moldable_fastpath.run(gym.make(ENV, **kwargs).unwrapped, policy, seed, keep_completions=True)
    assert fast.metrics == episode.metrics  # bit for bit: same decisions, same completion order
    assert (fast.episode_return, fast.n_steps) == (episode.episode_return, episode.n_steps)
    assert fast.records() == sorted(episode.records, key=lambda record: record.job_id)
    assert fast.completion is not None and fast.completion.tolist() == [r.completion for r in fast.records()]


@pytest.mark.parametrize("config", range(len(CONFIGS)))
@pytest.mark.parametrize("name", COVERED)
def test_fast_path_equals_evaluate(name: str, config: int) -> None:
    assert_same_episode(POLICIES[name](), 7, **CONFIGS[config])


@pytest.mark.parametrize("name", ["hrf-easy", "hrf-fcfs"])
def test_fast_path_follows_hrf_parameters(name: str) -> None:
    """alpha and threshold reach the kernel (the paper's §6.3 grid), and they change the schedule."""
    kwargs = {"arrival_interval": "heavy", "n_jobs": 120}
    tight, loose = POLICIES[name](alpha=0.5, threshold=0.4), POLICIES[name](alpha=1.2, threshold=1.0)
    assert_same_episode(tight, 1, **kwargs)
    assert_same_episode(loose, 1, **kwargs)
    env = gym.make(ENV, **kwargs).unwrapped
    a, b = moldable_fastpath.run(env, tight, 1), moldable_fastpath.run(env, loose, 1)
    assert a.metrics["ART"] > b.metrics["ART"]  # fewer processors per job: longer runtimes


def test_registry_routes_covered_policies_only() -> None:
    for name in COVERED:
        assert supports(ENV, name)
        assert supports(ENV, POLICIES[name](alpha=0.7))
    for name in ("sbmgrdy-easy", "sbmfair-fcfs", "schfair-easy", "no-such-policy"):
        assert not supports(ENV, name)
    run = run_fast(ENV, "hrf-easy", 2, n_jobs=60)
    assert run.metrics == evaluate(ENV, "hrf-easy", [2], n_jobs=60).episodes[0].metrics
    with pytest.raises(ValueError, match="no compiled path"):
        run_fast(ENV, "sbmgrdy-easy", 0)
