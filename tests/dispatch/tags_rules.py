"""What the tests of the TAGS rules with a central first stage share: the preset's regime, a played trace, the
rungs a rule gives new jobs over many decisions, and a rule's mean objective on ``TUNING_SEEDS``."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np

from baselines.dispatch import TUNING_SEEDS, Tags
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.sim import StateView
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast, run_fast
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


def first_rungs_seen(
    env: gym.Env, policy: Tags, rungs: dict[str, int], case: Callable[[StateView], str]
) -> dict[str, int]:
    """Play 2,000 decisions of ``policy`` from seed 4: every new job must join the central queue at the rung
    ``rungs[case(state)]``, every killed job move on to the long-job host with no limit; how often each case came."""
    inner = env.unwrapped
    last = len(inner.time_limits) - 1
    observation, _ = env.reset(seed=4)
    policy.reset(env)
    seen = dict.fromkeys(rungs, 0)
    for _ in range(2_000):
        action = policy.act(observation, env)
        destination, limit = inner.decode_action(int(action))
        if not inner.pending_job.hosts:  # a new job: the central queue, with the state's rung
            kind = case(inner.state)
            assert (destination, limit) == (inner.central, rungs[kind])
            seen[kind] += 1
        else:  # a killed job: on to the long-job host, with no limit
            assert destination == 1 and limit == last
        observation, _, terminated, _, _ = env.step(action)
        assert not terminated
    return seen


def mean_objective(rule: type[Tags], env: DispatchEnv, rungs: tuple[int, ...]) -> float:
    """Mean total objective over ``TUNING_SEEDS`` of ``rule`` at ``rungs`` (``rule.at_rungs``), on the fast path."""
    policy = rule.at_rungs(env.time_limits, rungs)
    kwargs = {"load": env.load, "size_dist": env.size_dist, "n_arrivals": env.n_arrivals}
    played = evaluate_fast(ENV_ID, policy, TUNING_SEEDS, **kwargs)
    return -float(np.mean([episode.episode_return for episode in played.episodes]))


def beats_on_development_seeds_and_is_tags_on_one_host(name: str, other: str, **kwargs: object) -> None:
    """The registered rule ``name`` has a lower mean slowdown than ``other`` over development seeds 0-7 of
    20,000-arrival episodes (``kwargs`` over the preset's regime), and on at least 6 of them; on one host it plays
    TAGS-slowdown's episodes exactly."""
    scenario = {**PRESET_REGIME, "n_arrivals": 20_000, **kwargs}
    seeds = range(8)
    ours = evaluate_fast(ENV_ID, name, seeds, **scenario).values("mean_slowdown")
    theirs = evaluate_fast(ENV_ID, other, seeds, **scenario).values("mean_slowdown")
    assert ours.mean() < theirs.mean() and (ours < theirs).sum() >= 6
    one = dict(scenario, n_hosts=1, n_arrivals=2_000)
    np.testing.assert_array_equal(
        evaluate_fast(ENV_ID, name, seeds, **one).values("mean_slowdown"),
        evaluate_fast(ENV_ID, "tags-slowdown", seeds, **one).values("mean_slowdown"),
    )
