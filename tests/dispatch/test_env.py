"""Dispatch env: a hand-worked trace, exact returns, invariants, masks, bad input, golden numbers."""

from __future__ import annotations

import math
import pickle
import tracemalloc
import warnings

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import baselines
import schedenv  # noqa: F401 - registers the env ids
from baselines.dispatch import (
    TUNING_SEEDS,
    Tags,
    TagsCentralQueue,
    TagsCentralQueueTuned,
    TagsCycleStealingTuned,
    TagsSlowdown,
    TagsSlowdownCycleStealing,
    TunedCutoffs,
    place_on_ladder,
)
from schedenv.dispatch.env import DispatchEnv, decode_action, encode_action
from schedenv.dispatch.records import DispatchRecord
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast, run_fast
from schedenv.workloads import BoundedPareto

ENV_ID = "schedenv/Dispatch-v0"
METRIC_OF = {
    "response_time": "mean_response_time",
    "waiting_time": "mean_waiting_time",
    "slowdown": "mean_slowdown",
    "waiting_slowdown": "mean_waiting_slowdown",
}


def test_hand_worked_trace() -> None:
    # Jobs (arrival, size): (0, 5), (1, 2), (2, 1); two hosts; ladder [3, inf].
    env = DispatchEnv(jobs=[(0, 5), (1, 2), (2, 1)], time_limits=[3.0], objective="response_time")
    env.reset(seed=0)
    rewards = []
    for destination, limit in ((0, 0), (0, 1), (env.central, 1)):
        _, reward, terminated, _, info = env.step(env.encode_action(destination, limit))
        rewards.append(reward)
        assert not terminated and info["completed"] == []
    # At t = 3 host 0 kills job 0 (5 > 3) and starts queued job 1; job 0 now needs a decision.
    assert info["killed"] and info["time"] == 3.0 and env.pending_job.exceeded == 0
    assert env.action_masks().tolist() == [0, 1] * 3
    _, reward, terminated, _, info = env.step(env.encode_action(1, 1))
    rewards.append(reward)
    assert terminated
    done = {r.job_id: r for r in info["completed"]}
    assert (done[2].completion, done[1].completion, done[0].completion) == (3.0, 5.0, 8.0)
    assert done[0].hosts == (0, 1) and done[0].wasted_work == 3.0 and done[0].queueing_time == 0.0
    assert done[1].hosts == (0,) and done[1].queueing_time == 2.0
    assert done[2].hosts == (1,) and done[2].slowdown == 1.0
    assert rewards == [-1.0, -2.0, -3.0, -7.0]  # 3 jobs' response times: 8 + 4 + 1 = 13
    assert info["episode_metrics"]["mean_response_time"] == pytest.approx(13 / 3)
    assert info["episode_metrics"]["excess"] == pytest.approx(3.0 / 8.0)


@pytest.mark.parametrize("objective", list(METRIC_OF))
@pytest.mark.parametrize("policy", ["tags-slowdown", "shortest-queue"])
def test_return_is_minus_the_total_objective(objective: str, policy: str) -> None:
    result = evaluate(ENV_ID, policy, seeds=[3], objective=objective, n_arrivals=400, load=0.7)
    episode = result.episodes[0]
    total = episode.metrics[METRIC_OF[objective]] * episode.metrics["n_completed"]
    assert episode.episode_return == pytest.approx(-total, rel=1e-9)
    assert episode.metrics["n_completed"] == 400


def _check_queues(env: DispatchEnv) -> None:
    sim = env.sim
    for queue in (*sim.queues, sim.central):
        enqueued = [job.enqueued for job in queue]
        assert enqueued == sorted(enqueued)  # FCFS: a queue's order is its joining order


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_invariants_under_random_valid_actions(data: st.DataObject) -> None:
    n_hosts = data.draw(st.integers(1, 3))
    n_jobs = data.draw(st.integers(1, 12))
    arrivals = data.draw(st.lists(st.floats(0, 20), min_size=n_jobs, max_size=n_jobs))
    sizes = data.draw(st.lists(st.floats(0.1, 10), min_size=n_jobs, max_size=n_jobs))
    ladder = sorted(set(data.draw(st.lists(st.floats(0.2, 8), min_size=1, max_size=4))))
    objective = data.draw(st.sampled_from(list(METRIC_OF)))
    env = DispatchEnv(
        n_hosts=n_hosts,
        jobs=list(zip(arrivals, sizes, strict=True)),
        time_limits=ladder,
        objective=objective,
        max_jobs=2,
    )
    env.reset(seed=0)
    limits: dict[int, list[float]] = {}
    destinations: dict[int, list[int]] = {}
    records: list[DispatchRecord] = []
    total_return, terminated = 0.0, False
    while not terminated:
        allowed = np.flatnonzero(env.action_masks())
        action = int(data.draw(st.sampled_from(allowed.tolist())))
        destination, limit = env.decode_action(action)
        job = env.pending_job.job_id
        limits.setdefault(job, []).append(float(env.time_limits[limit]))
        destinations.setdefault(job, []).append(destination)
        obs, reward, terminated, _, info = env.step(action)
        assert env.observation_space.contains(obs) and reward <= 0.0
        records += info["completed"]
        total_return += reward
        assert env.sim.next_arrival == len(records) + info["n_jobs"]  # no job lost
        _check_queues(env)
    assert sorted(r.job_id for r in records) == list(range(n_jobs))
    for record in records:
        runs = limits[record.job_id]
        assert len(record.hosts) == len(runs) <= env.n_limits
        assert all(limit < record.size for limit in runs[:-1]) and record.size <= runs[-1]
        assert record.wasted_work == pytest.approx(sum(runs[:-1]))
        for host, destination in zip(record.hosts, destinations[record.job_id], strict=True):
            assert destination in (host, env.central)
        # A job is always queued or running: T = queueing + wasted runs + x.
        assert record.response_time == pytest.approx(record.queueing_time + record.wasted_work + record.size)
    busy = sum(env.sim.tally.busy)
    assert busy == pytest.approx(sum(sizes) + sum(r.wasted_work for r in records))
    objective_total = sum(
        {
            "response_time": r.response_time,
            "waiting_time": r.waiting_time,
            "slowdown": r.slowdown,
            "waiting_slowdown": r.waiting_slowdown,
        }[objective]
        for r in records
    )
    assert total_return == pytest.approx(-objective_total, rel=1e-9, abs=1e-9)


def test_encode_and_decode_are_inverse() -> None:
    for action in range(4 * 7):
        assert encode_action(*decode_action(action, 7), 7) == action


def test_masks_forbid_only_limits_already_exceeded() -> None:
    env = DispatchEnv(jobs=[(0, 10)], time_limits=[1, 2, 4])
    env.reset(seed=0)
    assert env.action_masks().all()
    env.step(env.encode_action(0, 1))  # killed at 2: limits 1 and 2 are now useless
    assert env.unwrapped.pending_job.exceeded == 1
    assert env.action_masks().reshape(3, 4).tolist() == [[0, 0, 1, 1]] * 3


@pytest.mark.parametrize("action", [-1, 10**6, 1.5, math.nan, np.array([0, 1]), True, "0"])
def test_bad_actions_raise_and_leave_the_state_unchanged(action: object) -> None:
    env = DispatchEnv(n_arrivals=50)
    obs, _ = env.reset(seed=1)
    before = env.state
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    assert repr(env.state) == repr(before)
    np.testing.assert_array_equal(env._require_core().observation(), obs)
    env.step(env.encode_action(0, env.n_limits - 1))  # still usable


def test_masked_action_raises_and_leaves_the_state_unchanged() -> None:
    env = DispatchEnv(jobs=[(0, 10), (5, 1)], time_limits=[1, 2], invalid_action="raise")
    env.reset(seed=0)
    env.step(env.encode_action(0, 0))
    snapshot = repr(env.state)
    with pytest.raises(ValueError, match="masked"):
        env.step(env.encode_action(1, 0))
    assert repr(env.state) == snapshot


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"time_limits": [3.0, 2.0]}, "strictly increasing"),
        ({"time_limits": [1.0, 1.0]}, "strictly increasing"),
        ({"time_limits": [-1.0, 2.0]}, "> 0"),
        ({"jobs": [(0.0, -1.0)]}, "size"),
        ({"jobs": [(0.0, 1.0, 2.0)]}, "pairs"),
        ({"n_hosts": 0}, "n_hosts"),
        ({"objective": "slowdwn"}, "did you mean 'slowdown'"),
        ({"size_known": "yes"}, "size_known"),
        ({"load": -0.5}, "load"),
    ],
)
def test_bad_construction_arguments_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(ENV_ID, **kwargs)


def test_load_at_or_above_one_warns() -> None:
    with pytest.warns(UserWarning, match="no dispatch policy is stable"):
        DispatchEnv(load=1.0)


def test_size_aware_baselines_need_known_sizes() -> None:
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    for name in ("least-work-remaining", "sita-e"):
        with pytest.raises(ValueError, match="size_known=True"):
            baselines.make(name).reset(env)


def test_sita_e_sends_jobs_by_size_interval() -> None:
    result = evaluate(ENV_ID, "sita-e", seeds=[0], size_known=True, n_hosts=3, n_arrivals=300)
    policy = baselines.make("sita-e")
    env = gym.make(ENV_ID, size_known=True, n_hosts=3)
    env.reset(seed=0)
    policy.reset(env)
    for record in result.episodes[0].records:
        assert record.hosts == (int(np.searchsorted(policy.cutoffs, record.size)),)


def test_tags_cutoffs_are_placed_on_the_ladder_strictly_increasing() -> None:
    ladder = np.array([1.0, 10.0, 100.0, math.inf])
    assert place_on_ladder([12.0, 15.0], ladder) == [1, 2, 3]
    assert place_on_ladder([1e6, 1e7], ladder) == [1, 2, 3]
    with pytest.raises(ValueError, match="finite limits"):
        place_on_ladder([1.0, 2.0, 3.0, 4.0], ladder)


def test_tags_sends_attempt_j_to_host_j() -> None:
    result = evaluate(
        ENV_ID, "tags-slowdown", seeds=[0], n_hosts=3, load=0.3, n_arrivals=500, size_dist=BoundedPareto(1.0, 1e4, 1.0)
    )
    records = result.episodes[0].records
    assert all(r.hosts == tuple(range(len(r.hosts))) for r in records)
    assert max(len(r.hosts) for r in records) >= 2  # some jobs were killed and moved on


def test_cycle_stealing_sends_a_new_job_to_the_idle_last_host_only_while_host_0_is_busy() -> None:
    # Jobs (arrival, size): (0, 5), (1, 2), (2, 1), (6, 1); two hosts; ladder [3, inf]; TAGS cutoff 3.
    # t=0: host 0 idle -> TAGS (host 0, limit 3). t=1: host 0 busy, host 1 idle and empty -> host 1, no
    # limit (ends at 3). t=2: both busy -> TAGS (queued at host 0). t=3: job 0 killed -> host 1 (3 to 8);
    # job 2 starts on host 0 (3 to 4). t=6: host 0 idle -> TAGS. Plain TAGS would queue job 1 at host 0.
    jobs, ladder = [(0, 5), (1, 2), (2, 1), (6, 1)], [3.0]
    stolen = evaluate(ENV_ID, TagsSlowdownCycleStealing(cutoffs=[3.0]), [0], jobs=jobs, time_limits=ladder)
    plain = evaluate(ENV_ID, TagsSlowdown(cutoffs=[3.0]), [0], jobs=jobs, time_limits=ladder)
    by_id = {r.job_id: r for r in stolen.episodes[0].records}
    assert [by_id[j].hosts for j in range(4)] == [(0, 1), (1,), (0,), (0,)]
    assert [by_id[j].completion for j in range(4)] == [8.0, 3.0, 4.0, 7.0]
    tags = {r.job_id: r for r in plain.episodes[0].records}
    assert [tags[j].hosts for j in range(4)] == [(0, 1), (0,), (0,), (0,)]
    assert [tags[j].completion for j in range(4)] == [8.0, 5.0, 6.0, 7.0]


def test_cycle_stealing_beats_tags_slowdown_in_the_dispatch_preset_regime() -> None:
    """At the preset's load 0.5 (Bounded Pareto, alpha 1.1, p = 10^7, two hosts; shorter episodes), stealing
    the long-job host's idle cycles lowers TAGS-opt-slowdown's mean slowdown on every one of 8 seeds, and
    the two agree exactly on one host, where there is nothing to steal."""
    kwargs = {"load": 0.5, "size_dist": BoundedPareto.with_mean(3000.0, alpha=1.1, upper=1e7), "n_arrivals": 20_000}
    seeds = range(8)
    stolen = evaluate_fast(ENV_ID, "tags-slowdown-cs", seeds, **kwargs).values("mean_slowdown")
    tags = evaluate_fast(ENV_ID, "tags-slowdown", seeds, **kwargs).values("mean_slowdown")
    assert (stolen < tags).all() and stolen.mean() < 0.95 * tags.mean()
    one = dict(kwargs, n_hosts=1, n_arrivals=2_000)
    np.testing.assert_array_equal(
        evaluate_fast(ENV_ID, "tags-slowdown-cs", seeds, **one).values("mean_slowdown"),
        evaluate_fast(ENV_ID, "tags-slowdown", seeds, **one).values("mean_slowdown"),
    )


def test_a_central_first_stage_binds_new_jobs_late_and_caps_stolen_runs_at_the_cutoff() -> None:
    # Two hosts, ladder [3, inf], cutoff 3; new jobs join the central queue with limit 3.
    # Late binding: (0, 2) runs on host 0 until 2; (0.5, 1) is taken by the idle host 1 (0.5 to 1.5); (0.6, 1)
    # waits centrally and host 1, free first, takes it (1.5 to 2.5). Stealing at dispatch queues it at host 0
    # (2 to 3). The cap: (0.5, 4) taken by host 1 is killed at 3.5 and reruns there to completion (3.5 to
    # 7.5), where stealing at dispatch runs it without a limit (0.5 to 4.5).
    def played(policy: Tags, jobs: list[tuple[float, float]]) -> list[tuple[tuple[int, ...], float]]:
        records = evaluate(ENV_ID, policy, [0], jobs=jobs, time_limits=[3.0]).episodes[0].records
        fast = run_fast(ENV_ID, policy, 0, keep_completions=True, jobs=jobs, time_limits=[3.0]).records()
        assert fast == sorted(records, key=lambda record: record.job_id)  # hosts (1, 1) included
        return [(record.hosts, record.completion) for record in fast]

    late = [(0.0, 2.0), (0.5, 1.0), (0.6, 1.0)]
    assert played(TagsCentralQueue(cutoffs=[3.0]), late) == [((0,), 2.0), ((1,), 1.5), ((1,), 2.5)]
    assert played(TagsSlowdownCycleStealing(cutoffs=[3.0]), late) == [((0,), 2.0), ((1,), 1.5), ((0,), 3.0)]
    capped = [(0.0, 2.0), (0.5, 4.0)]
    assert played(TagsCentralQueue(cutoffs=[3.0]), capped) == [((0,), 2.0), ((1, 1), 7.5)]
    assert played(TagsSlowdownCycleStealing(cutoffs=[3.0]), capped) == [((0,), 2.0), ((1,), 4.5)]


PRESET_REGIME = {"load": 0.5, "size_dist": BoundedPareto.with_mean(3000.0, alpha=1.1, upper=1e7)}
"""The Dispatch preset's scenario (``schedenv.dispatch.preset``) with the env's default ladder."""

TUNED = [TagsCycleStealingTuned, TagsCentralQueueTuned]


def _total_objective(env: DispatchEnv, rule: type[Tags], cutoffs: list[float]) -> float:
    """Mean total objective of the TAGS ``rule`` at ``cutoffs`` over ``TUNING_SEEDS`` (``evaluate``'s numbers)."""
    kwargs = {"n_hosts": env.n_hosts, "load": env.load, "size_dist": env.size_dist, "n_arrivals": env.n_arrivals}
    played = evaluate_fast(ENV_ID, rule(cutoffs=cutoffs), TUNING_SEEDS, **kwargs)
    return -float(np.mean([episode.episode_return for episode in played.episodes]))


@pytest.mark.parametrize("tuned", TUNED)
def test_tuned_cutoffs_are_the_best_rung_of_the_ladder_on_the_tuning_seeds(tuned: type[TunedCutoffs]) -> None:
    """With two hosts the search is exhaustive: the chosen rung's mean total objective over ``TUNING_SEEDS``
    (recomputed here rung by rung) is the lowest of every finite rung's."""
    env = DispatchEnv(n_arrivals=1_500, **PRESET_REGIME)
    policy = tuned()
    policy.reset(env)
    chosen = _total_objective(env, tuned.rule, list(policy.cutoffs))
    finite = env.time_limits[np.isfinite(env.time_limits)]
    others = [_total_objective(env, tuned.rule, [c]) for c in finite if c != policy.cutoffs[0]]
    assert len(others) == finite.size - 1 and chosen < min(others)
    assert policy.limit_indices[-1] == env.time_limits.size - 1  # the last host runs to completion


@pytest.mark.parametrize("tuned", TUNED)
def test_tuned_cutoffs_on_three_hosts_stop_where_no_single_cutoff_move_helps(tuned: type[TunedCutoffs]) -> None:
    env = DispatchEnv(n_hosts=3, n_arrivals=1_000, **PRESET_REGIME)
    policy = tuned()
    policy.reset(env)
    first, second, last = policy.limit_indices
    assert first < second < last == env.time_limits.size - 1
    here = _total_objective(env, tuned.rule, list(policy.cutoffs))
    neighbours = [(first - 1, second), (first + 1, second), (first, second - 1), (first, second + 1)]
    n_finite = int(np.isfinite(env.time_limits).sum())
    for a, b in neighbours:
        if 0 <= a < b < n_finite:
            assert here <= _total_objective(env, tuned.rule, list(env.time_limits[[a, b]]))


@pytest.mark.parametrize("tuned", TUNED)
def test_tuned_cutoffs_on_a_fixed_job_list_are_its_best_rung(tuned: type[TunedCutoffs]) -> None:
    """A replayed job list has one episode: the tuned rung is the one whose replay has the least total objective."""
    rng = np.random.default_rng(3)
    jobs = list(zip(np.cumsum(rng.exponential(2.0, 300)), BoundedPareto(0.5, 200.0, 1.1).sample(rng, 300), strict=True))
    ladder = [1.0, 3.0, 10.0, 30.0]
    policy = tuned()
    policy.reset(DispatchEnv(jobs=jobs, time_limits=ladder))

    def total(cutoff: float) -> float:
        return (
            -evaluate(ENV_ID, tuned.rule(cutoffs=[cutoff]), [0], jobs=jobs, time_limits=ladder)
            .episodes[0]
            .episode_return
        )

    totals = {cutoff: total(cutoff) for cutoff in ladder}
    assert policy.cutoffs[0] == min(totals, key=totals.__getitem__)
    assert len(set(totals.values())) == len(ladder)  # the rungs differ: the choice is not a tie


def test_tuned_cutoffs_hold_on_other_seeds_and_the_central_first_stage_is_best() -> None:
    """Chosen on ``TUNING_SEEDS``, the cutoffs hold on development seeds: in the preset's regime (shorter
    episodes) stealing at the tuned rung beats it at TAGS-slowdown's rung by more than 5%, and the central
    first stage at its tuned rung beats tuned stealing on each of 8 seeds. Given explicit cutoffs a tuned rule
    searches nothing and equals its rule at them; on one host both are TAGS."""
    kwargs = dict(PRESET_REGIME, n_arrivals=20_000)
    seeds = range(8)
    cs_tuned = evaluate_fast(ENV_ID, "tags-cs-tuned", seeds, **kwargs).values("mean_slowdown")
    stolen = evaluate_fast(ENV_ID, "tags-slowdown-cs", seeds, **kwargs).values("mean_slowdown")
    cq_tuned = evaluate_fast(ENV_ID, "tags-cq-tuned", seeds, **kwargs).values("mean_slowdown")
    assert cs_tuned.mean() < 0.95 * stolen.mean()
    assert (cq_tuned < cs_tuned).all()
    one = dict(kwargs, n_hosts=1, n_arrivals=2_000)
    plain = evaluate_fast(ENV_ID, "tags-slowdown", seeds, **one).values("mean_slowdown")
    for tuned in TUNED:
        given = evaluate_fast(ENV_ID, tuned(cutoffs=[500.0]), range(3), **kwargs).values("mean_slowdown")
        rule = evaluate_fast(ENV_ID, tuned.rule(cutoffs=[500.0]), range(3), **kwargs).values("mean_slowdown")
        np.testing.assert_array_equal(given, rule)
        np.testing.assert_array_equal(evaluate_fast(ENV_ID, tuned.name, seeds, **one).values("mean_slowdown"), plain)


def test_memory_stays_flat_over_a_long_episode() -> None:
    env = DispatchEnv(n_arrivals=12000, load=0.3, size_dist=BoundedPareto(1.0, 100.0, 1.5), max_jobs=0)
    env.reset(seed=0)
    action = env.encode_action(env.central, env.n_limits - 1)
    tracemalloc.start()
    for _ in range(2000):
        env.step(action)
    early = tracemalloc.get_traced_memory()[0]
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(action)
    late = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert late - early < 100_000
    assert not env.sim.present and not env.sim.central


def test_render_modes() -> None:
    env = DispatchEnv(n_arrivals=20, render_mode="ansi")
    env.reset(seed=0)
    env.step(env.encode_action(0, 0))
    assert "host 0" in env.render() and "central queue" in env.render()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        picture = DispatchEnv(n_arrivals=20, render_mode="rgb_array")
        picture.reset(seed=0)
        image = picture.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3


def test_pickled_env_continues_identically() -> None:
    env = DispatchEnv(n_arrivals=100)
    env.reset(seed=4)
    env.step(env.encode_action(0, 3))
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(20):
        a, b = env.step(env.encode_action(1, env.n_limits - 1)), clone.step(clone.encode_action(1, clone.n_limits - 1))
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]


def test_metric_keys_do_not_depend_on_the_seed() -> None:
    result = evaluate(ENV_ID, "tags-slowdown", seeds=range(3), n_arrivals=200)
    assert len({tuple(sorted(e.metrics)) for e in result.episodes}) == 1


def test_golden_numbers() -> None:
    # Seeded regression values (not theory): default env, TAGS-opt-slowdown and Central-Queue, seed 0.
    tags = evaluate(ENV_ID, "tags-slowdown", seeds=[0]).episodes[0].metrics
    central = evaluate(ENV_ID, "central-queue", seeds=[0]).episodes[0].metrics
    assert tags["mean_slowdown"] == pytest.approx(GOLDEN["tags"], rel=1e-9)
    assert central["mean_slowdown"] == pytest.approx(GOLDEN["central"], rel=1e-9)


GOLDEN = {"tags": 13.27513340052143, "central": 1.812732747329936}
