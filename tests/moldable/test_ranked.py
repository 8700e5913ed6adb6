"""The ranked action mode of Moldable-v0: candidate 0 is HRF-EASY's decision, the others are distinct valid ones.

An agent that always picks candidate 0 is the ``hrf-easy`` baseline, step for step (rewards, records,
episode metrics bit for bit) in the single and the batched env; the masks allow only candidates that
fit and repeat no earlier one; two decision epochs of small explicit job sets are worked by hand.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import baselines
from baselines.moldable import hrf_allocation
from schedenv.evaluation import evaluate
from schedenv.fastpath import supports
from schedenv.moldable import MoldableEnv, kernel
from schedenv.moldable.core import (
    CANDIDATE_FEATURES,
    GLOBAL_FEATURES,
    PAPER_ALPHA,
    PAPER_THRESHOLD,
    RELEASE_FEATURES,
    n_candidates,
    ranked_obs_length,
)

ENV = "schedenv/Moldable-v0"
TABLES = [  # runtime tables with holes (counts a job does not allow), staggered arrivals
    {"submit": 0.0, "runtimes": {1: 10, 2: 5}},
    {"submit": 0.0, "runtimes": {2: 8, 4: 3}},
    {"submit": 1.0, "runtimes": {1: 9, 3: 4}},
    {"submit": 2.0, "runtimes": {4: 6}},
    {"submit": 2.0, "L": 20.0, "A": 2.5, "sigma": 1.5},
    {"submit": 3.0, "runtimes": {1: 7, 2: 4, 3: 3}},
    {"submit": 9.0, "runtimes": {3: 2}},
]
SCENARIOS: list[dict[str, Any]] = [
    {"arrival_interval": "middle", "n_jobs": 120},
    {"arrival_interval": "heavy", "n_jobs": 120, "max_jobs": 8, "max_running": 4},
    {"n_procs": 32, "n_jobs": 60, "arrival_interval": 100.0, "observe_params": True},
    {"jobs": TABLES, "n_procs": 4, "max_jobs": 3},
]
IDS = ["cirne-middle", "cirne-heavy-window8", "cirne-m32", "tables"]
SEEDS = [0, 1, 5]


def baseline_episode(kwargs: dict[str, Any], seed: int) -> tuple[list[float], list[int], dict[str, float], list]:
    """The ``hrf-easy`` baseline on the flat env: rewards, flat actions, episode metrics and records."""
    env = gym.make(ENV, **kwargs)
    policy = baselines.make("hrf-easy")
    observation, _ = env.reset(seed=seed)
    policy.reset(env)
    rewards, actions, done = [], [], False
    while not done:
        action = policy.act(observation, env)
        observation, reward, done, _, info = env.step(action)
        rewards.append(reward)
        actions.append(int(action))
    return rewards, actions, info["episode_metrics"], env.unwrapped.records


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kwargs", SCENARIOS, ids=IDS)
def test_always_candidate_zero_is_hrf_easy(kwargs: dict[str, Any], seed: int) -> None:
    rewards, actions, metrics, records = baseline_episode(kwargs, seed)
    env = gym.make(ENV, action_mode="ranked", **kwargs)
    inner = env.unwrapped
    _, info = env.reset(seed=seed)
    for reward, action in zip(rewards, actions, strict=True):
        pair = inner.candidate(0)
        assert (inner.wait_action if pair is None else inner.encode(*pair)) == action
        assert info["action_mask"][0] == 1
        _, got, done, _, info = env.step(0)
        assert got == reward and not info["invalid_action"]
    assert done
    assert info["episode_metrics"] == metrics
    assert inner.records == records


@pytest.mark.parametrize("kwargs", SCENARIOS, ids=IDS)
def test_the_baseline_acts_as_candidate_zero_and_evaluates_alike(kwargs: dict[str, Any]) -> None:
    pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")
    from agents.warmstart import demonstrate

    """``from_flat`` maps HRF-EASY's decision to candidate 0, so ``evaluate`` (and a warm start) see the
    baseline itself; other baselines are projected onto the candidates, so only hrf-easy has a fast path."""
    demos = demonstrate(ENV, {"action_mode": "ranked", **kwargs}, "hrf-easy", iter(SEEDS), min_steps=1)
    assert (demos.actions == 0).all() and demos.masks is not None and demos.masks[:, 0].all()
    flat = evaluate(ENV, "hrf-easy", SEEDS[:2], **kwargs)
    ranked = evaluate(ENV, "hrf-easy", SEEDS[:2], action_mode="ranked", **kwargs)
    assert [e.metrics for e in ranked.episodes] == [e.metrics for e in flat.episodes]
    assert supports(ENV, "hrf-easy", action_mode="ranked", **kwargs)
    assert not supports(ENV, "rigid-easy", action_mode="ranked", **kwargs)
    assert supports(ENV, "rigid-easy", **kwargs)


def test_batched_always_candidate_zero_equals_the_baseline_replayed_on_the_batched_flat_env() -> None:
    kwargs: dict[str, Any] = {"arrival_interval": "heavy", "n_jobs": 80, "max_jobs": 8}
    num_envs, seed = 3, 20
    plans = [baseline_episode(kwargs, seed + i)[1] for i in range(num_envs)]
    ranked = gym.make_vec(ENV, num_envs, action_mode="ranked", **kwargs)
    flat = gym.make_vec(ENV, num_envs, **kwargs)
    ranked.reset(seed=seed)
    flat.reset(seed=seed)
    ended = np.zeros(num_envs, dtype=bool)
    for t in range(max(len(plan) for plan in plans)):
        actions = np.array([plan[t] if t < len(plan) else 0 for plan in plans])
        _, r_ranked, d_ranked, _, i_ranked = ranked.step(np.zeros(num_envs, dtype=np.int64))
        _, r_flat, d_flat, _, i_flat = flat.step(actions)
        live = ~ended
        np.testing.assert_array_equal(r_ranked[live], r_flat[live])
        np.testing.assert_array_equal(d_ranked[live], d_flat[live])
        assert not i_ranked["invalid_action"][live].any()
        for i in np.flatnonzero(d_ranked & live):
            for name, values in i_flat["episode_metrics"].items():
                assert i_ranked["episode_metrics"][name][i] == values[i], name
        ended |= d_ranked
    assert ended.all() and [len(plan) for plan in plans] == [len(plan) for plan in plans]


@pytest.mark.parametrize("kwargs", SCENARIOS, ids=IDS)
def test_masks_allow_only_distinct_candidates_that_fit(kwargs: dict[str, Any]) -> None:
    env = gym.make(ENV, action_mode="ranked", **kwargs)
    inner: MoldableEnv = env.unwrapped  # type: ignore[assignment]
    rng = np.random.default_rng(3)
    for seed in SEEDS[:2]:
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            assert env.observation_space.contains(observation)
            mask = info["action_mask"]
            flat_mask = inner._require_core().mask
            allowed = np.flatnonzero(mask)
            assert mask[0] == 1
            decisions = []
            for k in allowed.tolist():
                pair = inner.candidate(k)
                decision = inner.wait_action if pair is None else inner.encode(*pair)
                assert flat_mask[decision] == 1, (k, pair)
                decisions.append(decision)
            assert len(set(decisions)) == len(decisions)
            rows = observation[: CANDIDATE_FEATURES * inner.n_slots].reshape(-1, CANDIDATE_FEATURES)
            np.testing.assert_array_equal(rows[:, 0], mask)
            action = int(rng.choice(allowed)) if rng.random() < 0.7 else int(rng.integers(mask.size))
            observation, _, done, _, info = env.step(action)
            assert info["invalid_action"] == (mask[action] == 0)
    assert (info["action_mask"] == 1).all()


def table1(**kwargs: Any) -> MoldableEnv:
    """The HRF paper's Table 1 (3 jobs, 3 processors), ranked, window 3: 17 candidates."""
    jobs = [{"runtimes": {1: 10, 2: 5}}, {"runtimes": {1: 10, 2: 7}}, {"runtimes": {1: 10, 2: 9}}]
    return MoldableEnv(jobs=jobs, n_procs=3, max_jobs=3, action_mode="ranked", **kwargs)


def test_table1_candidates_by_hand() -> None:
    """Budget floor(1.0 x 3) = 3 = the three initial counts: HRF gives every job 1 processor and starts the
    head (candidate 0). Each job's widths are HRF's count 1 (allowed, except the head's, which repeats
    candidate 0), then 1 again (fitted, halved, smallest: repeats, masked), and its fastest count 2.
    Nothing runs and nothing is still to arrive: no wait. After the head starts on 2, one processor is
    free: the head (job 1) on 1, job 2 on 1, or wait."""
    env = table1()
    observation, info = env.reset(seed=0)
    assert env.action_space == gym.spaces.Discrete(17) and n_candidates(3) == 17
    assert [env.candidate(k) for k in range(17)] == [(0, 1)] + [
        (slot, procs) for slot in range(3) for procs in (1, 1, 1, 1, 2)
    ] + [None]
    np.testing.assert_array_equal(info["action_mask"], [1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0])
    scale = env.time_scale  # the mean job size: (10 + 10 + 10) / 3
    np.testing.assert_allclose(
        observation[:8], [1, 1, 0, math.log1p(10 / scale), 1 / 3, math.log1p(10 / scale), 1, 0], rtol=1e-6
    )
    np.testing.assert_allclose(observation[8 * 5 : 8 * 6], [1, 1, 0, math.log1p(10 / scale), 2 / 3,
                                                            math.log1p(5 / scale), 1, 0], rtol=1e-6)  # fmt: skip
    observation, _, _, _, info = env.step(5)
    assert env.state.free == 1 and env.state.queue_job.tolist() == [1, 2]
    assert env.candidate(0) == (0, 1) and env.candidate(5) == (0, 1) and env.candidate(10) == (1, 1)
    np.testing.assert_array_equal(info["action_mask"], [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    assert env.from_flat(env.encode(1, 1)) == 6 and env.from_flat(env.wait_action) == 16
    assert env.from_flat(env.encode(1, 2)) == 6  # not a candidate: the nearest allowed width of the job


def test_easy_reservation_by_hand() -> None:
    """m = 4. Job 0 (only 3 processors) starts at 0 and ends at 10. At 1 job 1 (only 4) and job 2 (only 1,
    5 s) arrive: HRF's counts [4, 1]; the head cannot start, its reservation is 4 processors at the
    shadow time 10 with 1 + 3 - 4 = 0 extra; job 2 ends at 6 <= 10, so HRF-EASY backfills it
    (candidate 0), which repeats all of job 2's widths; job 1 has no width that fits; wait is allowed."""
    jobs = [
        {"submit": 0.0, "runtimes": {3: 10}},
        {"submit": 1.0, "runtimes": {4: 10}},
        {"submit": 1.0, "runtimes": {1: 5}},
    ]
    env = MoldableEnv(jobs=jobs, n_procs=4, max_jobs=3, max_running=2, action_mode="ranked", invalid_action="raise")
    _, info = env.reset(seed=0)
    assert env.candidate(0) == (0, 3)
    observation, _, _, _, info = env.step(0)
    assert env.state.time == 1.0 and env.candidate(0) == (1, 1)
    mask = np.zeros(17, dtype=np.int8)
    mask[[0, 16]] = 1
    np.testing.assert_array_equal(info["action_mask"], mask)
    assert [env.candidate(k) for k in range(1, 6)] == [(0, 4), (0, 0), (0, 4), (0, 4), (0, 0)]
    assert [env.candidate(k) for k in range(6, 11)] == [(1, 1)] * 5
    scale = env.time_scale
    reservation = observation[8 * 17 + GLOBAL_FEATURES + RELEASE_FEATURES * 2 :]
    np.testing.assert_allclose(reservation, [1.0, math.log1p(9 / scale), 0.0], rtol=1e-6)
    assert observation[8 * 6 + 6] == 1.0  # job 2 on 1 ends by the shadow time: keeps the reservation
    assert observation[8 * 1 + 6] == 1.0 and observation[8 * 1 + 4] == 1.0  # the head on its 4 processors
    with pytest.raises(ValueError, match=r"action=1 .*is masked"):
        env.step(1)
    _, _, _, _, info = env.step(16)  # wait: job 0 ends at 10, the head starts on 4
    assert env.state.time == 10.0 and env.candidate(0) == (0, 4)


def test_a_masked_candidate_falls_back_to_candidate_zero_with_the_penalty() -> None:
    env = table1(invalid_action="penalty", invalid_action_penalty=2.5)
    twin = table1()
    env.reset(seed=0)
    twin.reset(seed=0)
    _, reward, _, _, info = env.step(1)  # a repeat of candidate 0: masked
    _, expected, _, _, _ = twin.step(0)
    assert info["invalid_action"] and reward == expected - 2.5
    assert env.state.queue_job.tolist() == twin.state.queue_job.tolist() == [1, 2]


def test_default_spaces_as_documented() -> None:
    """162 candidates (1 + 5 x 32 + 1); 8 x 162 + 7 + 2 x 16 + 3 = 1338 observation entries (+ 4 parameters)."""
    env = MoldableEnv(action_mode="ranked")
    assert env.action_space == gym.spaces.Discrete(162)
    assert env.observation_space.shape == (1338,)
    assert MoldableEnv(action_mode="ranked", observe_params=True).observation_space.shape == (1342,)
    assert (env.n_slots, env.slot_features) == (162, CANDIDATE_FEATURES)


def test_bad_arguments_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"action_mode=.ranks.*.ranked."):
        MoldableEnv(action_mode="ranks")
    env = table1()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="index=17"):
        env.candidate(17)
    with pytest.raises(ValueError, match="out of range"):
        env.step(17)
    flat = MoldableEnv(jobs=[{"runtimes": {1: 10}}], n_procs=2)
    flat.reset(seed=0)
    with pytest.raises(ValueError, match="candidate\\(\\) needs action_mode='ranked'"):
        flat.candidate(0)


TIES = [  # equal tables (equal revenues: ties go to the earlier job), holes, and Downey jobs, arriving in bursts
    {"submit": float(j // 4), **spec}
    for j, spec in enumerate(
        [
            {"runtimes": {1: 12, 2: 6, 3: 4, 4: 3, 6: 2}},
            {"runtimes": {1: 12, 2: 6, 4: 3, 8: 1.5}},
            {"runtimes": {1: 12, 2: 6, 3: 4, 4: 3, 6: 2}},
            {"L": 10.0, "A": 3.0, "sigma": 0.5},
            {"runtimes": {2: 12, 4: 6, 6: 4}},
            {"L": 10.0, "A": 3.0, "sigma": 0.5},
            {"runtimes": {1: 24, 2: 12, 3: 8, 4: 6}},
            {"L": 30.0, "A": 6.0, "sigma": 2.0},
        ]
        * 6
    )
]
TURN_SCENARIOS: list[dict[str, Any]] = [
    {"jobs": TIES, "n_procs": 8, "max_jobs": 4},
    {"arrival_interval": "heavy", "n_jobs": 80, "max_jobs": 8},
]


def turn_states(kwargs: dict[str, Any], seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """A ranked episode with random candidates: at each epoch the allocation turn's counts (``count_of`` of
    the queued jobs), the queue rows, whether the turn was taken at this epoch over exactly these jobs,
    and the env's ints; checks nothing itself."""
    env = gym.make(ENV, action_mode="ranked", **kwargs)
    inner: MoldableEnv = env.unwrapped  # type: ignore[assignment]
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    states, done = [], False
    while not done:
        core = inner._require_core()
        ints, policy = core._ints.copy(), core._policy.copy()
        q = int(ints[kernel.N_QUEUED])
        queue = core.queued_rows()[:q].copy()
        current = policy[kernel.P_TURN_TIME] == inner.state.time and policy[kernel.P_TURN_JOBS] == q
        counts = core._count_of[queue[:, kernel.Q_JOB].astype(np.int64)].copy()
        states.append((ints, queue, counts, np.array([current, int(policy[kernel.P_TURN])])))
        _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    return states


@pytest.mark.parametrize("kwargs", TURN_SCENARIOS, ids=["ties-tables", "cirne-heavy"])
def test_each_allocation_turn_is_algorithm_1_over_the_queued_jobs(kwargs: dict[str, Any]) -> None:
    """Whenever the policy's turn was taken at this epoch over exactly the queued jobs (a full turn, or a
    new turn over the very jobs of the previous one, which keeps their counts), the counts are the
    Python specification's (``hrf_allocation``, its heap recomputing every revenue); both kinds occur."""
    checked = repeats = 0
    for seed in SEEDS[:2]:
        env = gym.make(ENV, **kwargs)
        env.reset(seed=seed)
        tables, m = kernel.arrival_arrays(env.unwrapped.job_set)[2], env.unwrapped.n_procs
        previous: tuple[int, list[int]] = (-1, [])
        for _, queue, counts, (current, turn) in turn_states(kwargs, seed):
            jobs = queue[:, kernel.Q_JOB].astype(np.int64).tolist()
            if not (current and queue.size):
                continue
            runtimes = kernel.runtime_rows(queue, tables, m)
            expected = hrf_allocation(runtimes, queue[:, kernel.Q_N_MIN], m, PAPER_ALPHA, PAPER_THRESHOLD)
            np.testing.assert_array_equal(counts, expected)
            checked += 1
            repeats += previous == (turn - 1, jobs)
            previous = (turn, jobs)
    assert checked > 50 and repeats > 0


@pytest.mark.parametrize(("alpha", "threshold"), [(0.5, 0.9), (1.0, 0.3), (1.7, 1.0), (1.0, 0.5), (1.0, 0.9)])
def test_the_compiled_turn_equals_the_heap_for_any_budget_and_cap(alpha: float, threshold: float) -> None:
    """``_hrf_turn`` (a list kept in revenue order, each runtime evaluated once) against ``hrf_allocation``
    on the queues of a ranked episode with tied revenues and runtime tables with holes; then, resumed from
    those counts, over what is left after some jobs start (the counts of a turn over those jobs alone)."""
    kwargs = TURN_SCENARIOS[0]
    env = gym.make(ENV, **kwargs)
    env.reset(seed=0)
    tables, m, n = kernel.arrival_arrays(env.unwrapped.job_set)[2], env.unwrapped.n_procs, len(TIES)
    rng = np.random.default_rng(1)
    checked = resumed = 0
    for ints, queue, _, _ in turn_states(kwargs, 4):
        q = queue.shape[0]
        if not q:
            continue
        turn_of, count_of = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
        work = np.full((kernel.WORK_ROWS, q), np.nan)
        kernel._hrf_turn(ints, queue, tables, alpha, threshold, 3, turn_of, count_of, work, False)
        jobs = queue[:, kernel.Q_JOB].astype(np.int64)
        expected = hrf_allocation(kernel.runtime_rows(queue, tables, m), queue[:, kernel.Q_N_MIN], m, alpha, threshold)
        np.testing.assert_array_equal(count_of[jobs], expected)
        assert (turn_of[jobs] == 3).all() and (np.delete(turn_of, jobs) == -1).all()
        checked += 1
        kept = np.sort(rng.permutation(q)[: rng.integers(1, q + 1)])  # the others start
        left, left_ints = queue[kept], ints.copy()
        left_ints[kernel.N_QUEUED] = kept.size
        kernel._hrf_turn(left_ints, left, tables, alpha, threshold, 4, turn_of, count_of, work, True)
        expected = hrf_allocation(kernel.runtime_rows(left, tables, m), left[:, kernel.Q_N_MIN], m, alpha, threshold)
        np.testing.assert_array_equal(count_of[jobs[kept]], expected)
        assert (turn_of[jobs[kept]] == 4).all()
        resumed += kept.size < q
    assert checked > 30 and resumed > 20


@pytest.mark.parametrize("kwargs", [*SCENARIOS, TURN_SCENARIOS[0]], ids=[*IDS, "ties-tables"])
def test_candidates_after_the_window_are_waits_with_no_features(kwargs: dict[str, Any]) -> None:
    """At every epoch the candidates of slots outside the window are waits with all-zero features, the wait's
    features after its first are zero, and so is the reservation of an epoch without one: also after the
    window shrank (the kernel clears only the slots it last filled)."""
    env = gym.make(ENV, action_mode="ranked", **kwargs)
    inner: MoldableEnv = env.unwrapped  # type: ignore[assignment]
    rng = np.random.default_rng(8)
    last, shrank = inner.n_slots - 1, 0
    for seed in SEEDS[:2]:
        observation, info = env.reset(seed=seed)
        done, before = False, 0
        while not done:
            w = inner.state.window_size
            shrank += w < before
            before = w
            rows = observation[: CANDIDATE_FEATURES * inner.n_slots].reshape(-1, CANDIDATE_FEATURES)
            assert (rows[1 + 5 * w : last] == 0).all() and (rows[last, 1:] == 0).all()
            assert all(inner.candidate(k) is None for k in range(1 + 5 * w, last + 1))
            core = inner._require_core()
            end = ranked_obs_length(inner.max_jobs, inner.max_running)  # then the scenario parameters, if any
            reservation = observation[end - 3 : end]
            if core._policy[kernel.P_RES_JOB] != inner.state.queue_job[0]:
                assert (reservation == 0).all()
            observation, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert shrank > 0


def test_a_revenue_that_falls_to_a_tie_yields_to_the_earlier_job() -> None:
    """By hand, m = 4 (budget 4, cap 4): job 0 has RP(1) = 9 - 6 = 3, job 1 RP(1) = 12 - 6 = 6, RP(2) = 6 - 3 = 3.
    Job 1 takes the first extra processor; its RP(2) = 3 ties job 0's RP(1) = 3 and the earlier job, 0,
    takes the second: counts [2, 2] (the heap's, not [1, 3])."""
    jobs = [{"runtimes": {1: 9, 2: 6, 3: 5}}, {"runtimes": {1: 12, 2: 6, 3: 3}}]
    env = MoldableEnv(jobs=jobs, n_procs=4, max_jobs=2, action_mode="ranked")
    env.reset(seed=0)
    core = env._require_core()
    queue, tables = core.queued_rows()[:2].copy(), kernel.arrival_arrays(env.job_set)[2]
    runtimes = kernel.runtime_rows(queue, tables, 4)
    assert hrf_allocation(runtimes, queue[:, kernel.Q_N_MIN], 4, 1.0, 0.9).tolist() == [2, 2]
    turn_of, count_of = np.full(2, -1, dtype=np.int64), np.zeros(2, dtype=np.int64)
    kernel._hrf_turn(core._ints, queue, tables, 1.0, 0.9, 1, turn_of, count_of, np.zeros((kernel.WORK_ROWS, 2)), False)
    assert count_of.tolist() == [2, 2] and turn_of.tolist() == [1, 1]
    assert env.candidate(0) == (0, 2)  # HRF-EASY starts the head on its 2


@pytest.mark.parametrize("kwargs", SCENARIOS, ids=IDS)
def test_each_candidates_log_runtime_is_its_definition(kwargs: dict[str, Any]) -> None:
    """Feature 5 of a start candidate is float32(log1p(T(procs) / time_scale)) of its window job, 0 where T is
    inf, whether the kernel computes it or reads the fastest count's from the queue row."""
    env = gym.make(ENV, action_mode="ranked", **kwargs)
    inner: MoldableEnv = env.unwrapped  # type: ignore[assignment]
    rng = np.random.default_rng(7)
    checked = one_processor = 0
    observation, info = env.reset(seed=2)
    done = False
    while not done:
        state = inner.state
        rows = observation[: CANDIDATE_FEATURES * inner.n_slots].reshape(-1, CANDIDATE_FEATURES)
        for k in range(inner.n_slots):
            pair = inner.candidate(k)
            if pair is None or pair[1] == 0:
                continue
            slot, procs = pair
            at = state.queue_runtime[slot, procs - 1]
            want = np.float32(math.log1p(at / inner.time_scale)) if at < np.inf else np.float32(0.0)
            assert rows[k, 5] == want, (k, slot, procs)
            checked += 1
            one_processor += procs == 1
        allowed = np.flatnonzero(info["action_mask"])
        observation, _, done, _, info = env.step(int(rng.choice(allowed)))
    assert checked > 100 and ("jobs" in kwargs or one_processor > 10)


def test_the_paper_policy_return_is_what_stepping_a_copy_with_candidate_0_returns() -> None:
    """For every allowed candidate at 40 decisions of an episode (the agent taking candidates 0, 1, 2 in turn where
    allowed): the compiled return of that candidate, then candidate 0 to the end, equals stepping a deep copy so, to
    rounding, and leaves the env as it was."""
    env = gym.make(ENV, action_mode="ranked", n_jobs=60, arrival_interval="heavy", reward_scale=0.001)
    env.reset(seed=7)
    checked = 0
    for decision in range(40):
        mask = env.unwrapped.action_masks()
        for action in np.flatnonzero(mask).tolist():
            fast = env.unwrapped.paper_policy_return(action)
            trial = copy.deepcopy(env)
            step = trial.step(action)
            total, done = float(step[1]), step[2] or step[3]
            while not done:
                step = trial.step(0)
                total, done = total + float(step[1]), step[2] or step[3]
            assert fast == pytest.approx(total, rel=1e-12, abs=1e-12)
            checked += 1
        np.testing.assert_array_equal(env.unwrapped.action_masks(), mask)  # unchanged by the trials
        choice = decision % 3 if mask[decision % 3] else 0
        _, _, terminated, truncated, _ = env.step(choice)
        if terminated or truncated:
            break
    assert checked > 100


def test_the_paper_policy_return_refuses_a_masked_candidate_and_other_modes() -> None:
    env = gym.make(ENV, action_mode="ranked", n_jobs=20)
    env.reset(seed=0)
    masked = int(np.flatnonzero(env.unwrapped.action_masks() == 0)[0])
    with pytest.raises(ValueError, match=rf"action={masked} is masked now"):
        env.unwrapped.paper_policy_return(masked)
    flat = gym.make(ENV, n_jobs=20)
    flat.reset(seed=0)
    with pytest.raises(ValueError, match=r"needs action_mode='ranked'; action_mode='flat'"):
        flat.unwrapped.paper_policy_return(0)
