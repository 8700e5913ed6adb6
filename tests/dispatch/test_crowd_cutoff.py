"""``tags-cq-crowd-tuned``: TAGS with a central first stage whose new job's limit is lower while the long-job host
is occupied and the central queue is crowded (docs/baselines/dispatch.md, "tags-cq-crowd-tuned")."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from baselines.dispatch import (
    TagsCentralQueueCrowd,
    TagsCentralQueueCrowdTuned,
    TagsCentralQueueIdle,
    TagsCentralQueueIdleTuned,
)
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.sim import StateView
from schedenv.fastpath import evaluate_fast
from tests.dispatch.tags_rules import (
    ENV_ID,
    PRESET_REGIME,
    beats_on_development_seeds_and_is_tags_on_one_host,
    first_rungs_seen,
    mean_objective,
    played,
)


def test_a_new_job_gets_the_crowd_limit_only_while_the_long_job_host_is_occupied_and_jobs_wait() -> None:
    # Two hosts, ladder [2, 4, inf]; cutoff 4 (the idle host's too), and 2 when >= 1 job waits centrally while
    # host 1 is occupied. t=0: job 0 (size 100, host 1 idle: limit 4) runs on host 0, is killed at 4 and reruns on
    # host 1 (4 to 104). t=5: job 1 (size 3; nothing waits) gets 4 and runs on host 0 (5 to 8). t=6: job 2 (3;
    # nothing waits) gets 4 and waits centrally. t=7: job 3 (3; job 2 waits) gets 2. At 8 host 0 takes job 2 (8 to
    # 11), at 11 job 3, which limit 2 kills at 13: it reruns on host 1 after job 0 (104 to 107). With the
    # threshold above 1 job 3 keeps limit 4 and runs on host 0 (11 to 14).
    jobs = [(0.0, 100.0), (5.0, 3.0), (6.0, 3.0), (7.0, 3.0)]
    crowd = played(TagsCentralQueueCrowd(cutoffs=[4.0], idle_cutoff=4.0, crowd_cutoff=2.0, crowd_threshold=1), jobs)
    assert crowd == [((0, 1), 104.0), ((0,), 8.0), ((0,), 11.0), ((0, 1), 107.0)]
    calm = played(TagsCentralQueueCrowd(cutoffs=[4.0], idle_cutoff=4.0, crowd_cutoff=2.0, crowd_threshold=2), jobs)
    assert calm == [((0, 1), 104.0), ((0,), 8.0), ((0,), 11.0), ((0,), 14.0)]
    # Without a crowd cutoff the rule is TagsCentralQueueIdle.
    idle = TagsCentralQueueIdle(cutoffs=[4.0], idle_cutoff=4.0)
    assert played(TagsCentralQueueCrowd(cutoffs=[4.0], idle_cutoff=4.0, crowd_threshold=1), jobs) == played(idle, jobs)


def test_the_rule_acts_on_the_long_job_host_and_the_central_queue_at_every_decision() -> None:
    env = gym.make(ENV_ID, n_arrivals=3_000, **dict(PRESET_REGIME, load=0.7))
    ladder = env.unwrapped.time_limits
    policy = TagsCentralQueueCrowd(
        cutoffs=[ladder[6]], idle_cutoff=ladder[3], crowd_cutoff=ladder[5], crowd_threshold=2
    )

    def case(state: StateView) -> str:
        if not state.busy[1] and state.queue_length[1] == 0:
            return "idle"
        return "crowded" if state.central_length >= 2 else "other"

    seen = first_rungs_seen(env, policy, {"idle": 3, "crowded": 5, "other": 6}, case)
    assert min(seen.values()) > 50


def test_the_tuned_rungs_are_a_coordinate_minimum_no_worse_than_tags_cq_idle_tuned() -> None:
    """At the chosen cutoff, idle-host and crowd cutoffs and threshold, no single move of one of them lowers the
    mean total objective over ``TUNING_SEEDS`` (recomputed here); nor does ``tags-cq-idle-tuned``, where the search
    starts."""
    env = DispatchEnv(n_arrivals=1_500, **dict(PRESET_REGIME, load=0.7))
    policy = TagsCentralQueueCrowdTuned()
    policy.reset(env)
    objective = functools.partial(mean_objective, TagsCentralQueueCrowd, env)
    chosen = (policy.limit_indices[0], policy.idle_index, policy.crowd_index, policy.crowd_threshold)
    here = objective(chosen)
    n_finite = int(np.isfinite(env.time_limits).sum())
    for position, values in enumerate([range(n_finite)] * 3 + [TagsCentralQueueCrowd.CROWD_THRESHOLDS]):
        for value in values:
            assert here <= objective((*chosen[:position], value, *chosen[position + 1 :]))
    start = TagsCentralQueueIdleTuned()
    start.reset(env)
    assert here <= objective((start.limit_indices[0], start.idle_index, start.limit_indices[0], 8))


def test_on_development_seeds_it_beats_tags_cq_idle_tuned_at_load_0_7() -> None:
    """Chosen on ``TUNING_SEEDS``, the rule holds on development seeds (shorter episodes than the preset's, at
    load 0.7, where the central queue is crowded more often): a lower mean slowdown than ``tags-cq-idle-tuned``'s
    overall and on most seeds. On one host it is TAGS."""
    beats_on_development_seeds_and_is_tags_on_one_host("tags-cq-crowd-tuned", "tags-cq-idle-tuned", load=0.7)


def test_given_cutoffs_are_played_and_nothing_is_searched() -> None:
    given = {"cutoffs": [5000.0], "idle_cutoff": 2000.0, "crowd_cutoff": 800.0, "crowd_threshold": 3}
    kwargs = dict(PRESET_REGIME, n_arrivals=5_000)
    tuned = evaluate_fast(ENV_ID, TagsCentralQueueCrowdTuned(**given), range(3), **kwargs).values("mean_slowdown")
    rule = evaluate_fast(ENV_ID, TagsCentralQueueCrowd(**given), range(3), **kwargs).values("mean_slowdown")
    np.testing.assert_array_equal(tuned, rule)


def test_bad_settings_are_refused_naming_them() -> None:
    with pytest.raises(
        ValueError, match=r"crowd_cutoff=100.0 without cutoffs are not allowed for 'tags-cq-crowd-tuned'"
    ):
        TagsCentralQueueCrowdTuned(crowd_cutoff=100.0)
    with pytest.raises(ValueError, match="crowd_threshold"):
        TagsCentralQueueCrowd(crowd_threshold=0)
