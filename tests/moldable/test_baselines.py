"""The HRF paper's schedulers: Algorithm 1, the §4.1 example, FCFS and EASY invariants, choices."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import baselines
from baselines.moldable import (
    PAPER_POLICIES,
    POLICIES,
    REFERENCE,
    MoldablePolicy,
    ProcessorProfile,
    fair_limit,
    greedy_count,
    hrf_allocation,
    shortest_runtime_count,
)
from schedenv.analysis import list_schedule
from schedenv.evaluation import evaluate, run_episode
from schedenv.moldable import MoldableEnv
from schedenv.moldable.sim import MoldableView
from schedenv.tuning import tune_hrf
from schedenv.workloads import DowneySpeedup

ENV_ID = "schedenv/Moldable-v0"
TABLE1 = [{"runtimes": {1: 10, 2: 5}}, {"runtimes": {1: 10, 2: 7}}, {"runtimes": {1: 10, 2: 9}}]
TABLE1_ROWS = np.array([[10.0, 5.0, np.inf], [10.0, 7.0, np.inf], [10.0, 9.0, np.inf]])
STRATEGIES = {"A": (2, 2, 1), "B": (2, 1, 2), "C": (1, 2, 2)}
PAPER_ATT = {"A": 9.0, "B": 29 / 3, "C": 11.0}


class FixedEasy(MoldablePolicy):
    """Test helper: fixed counts per job, EASY selection (jobs start as soon as they fit)."""

    name = "fixed-easy"
    scheme = "fixed"
    selection = "easy"
    fixed: ClassVar[dict[int, int]] = {}

    def counts(self, view: MoldableView) -> np.ndarray:
        return np.array([self.fixed[int(j)] for j in view.queue_job[: view.window_size]], dtype=np.int64)


def test_registry_names_and_reference() -> None:
    assert baselines.reference(ENV_ID) == REFERENCE == "hrf-easy"
    expected = {f"{s}-{sel}" for s in ("hrf", "sbmgrdy", "sbmfair", "schfair", "rigid") for sel in ("fcfs", "easy")}
    assert set(baselines.available(ENV_ID)) == expected
    assert len(PAPER_POLICIES) == 8
    for name in expected:
        policy = baselines.make(name, alpha=0.8, threshold=0.5)
        assert policy.name == name and "HRF paper" in (type(policy).__doc__ or "")


def test_hrf_chooses_strategy_a_in_the_table1_example() -> None:
    # budget 5 = alpha m with alpha = 5/3, m = 3; each job's first processor counts inside it (§4.1)
    counts = hrf_allocation(TABLE1_ROWS, np.ones(3, dtype=np.int64), 3, alpha=5 / 3, threshold=2 / 3)
    assert tuple(counts) == STRATEGIES["A"]


@pytest.mark.parametrize("strategy", ["A", "B", "C"])
def test_figure3_strategies_give_the_papers_att(strategy: str) -> None:
    counts = STRATEGIES[strategy]
    runtimes = [TABLE1_ROWS[j, c - 1] for j, c in enumerate(counts)]
    _, completion = list_schedule(runtimes, counts, 3)
    assert completion.mean() == pytest.approx(PAPER_ATT[strategy])
    FixedEasy.fixed = dict(enumerate(counts))
    result = evaluate(ENV_ID, FixedEasy(), [0], jobs=TABLE1, n_procs=3, max_jobs=3)
    assert result.episodes[0].metrics["ATT"] == pytest.approx(PAPER_ATT[strategy])


def test_hrf_easy_runs_strategy_a_and_hrf_fcfs_reallocates_at_the_next_turn() -> None:
    kwargs: dict[str, Any] = {"jobs": TABLE1, "n_procs": 3, "max_jobs": 3}
    easy = evaluate(ENV_ID, POLICIES["hrf-easy"](alpha=5 / 3, threshold=2 / 3), [0], **kwargs).episodes[0]
    assert easy.metrics["ATT"] == pytest.approx(9.0)
    assert sorted((r.job_id, r.procs, r.start) for r in easy.records) == [(0, 2, 0.0), (1, 2, 5.0), (2, 1, 0.0)]
    # FCFS: J3 may not pass J2; at t = 5 a new turn gives the budget to {J2, J3}, so J3 gets 2 and waits
    fcfs = evaluate(ENV_ID, POLICIES["hrf-fcfs"](alpha=5 / 3, threshold=2 / 3), [0], **kwargs).episodes[0]
    assert sorted((r.job_id, r.procs, r.start) for r in fcfs.records) == [(0, 2, 0.0), (1, 2, 5.0), (2, 2, 12.0)]


def test_hrf_budget_counts_initial_processors_and_respects_the_cap() -> None:
    rows = np.array([10.0 / DowneySpeedup(64, 0.0)(np.arange(1, 17))] * 3)
    counts = hrf_allocation(rows, np.ones(3, dtype=np.int64), 16, alpha=0.75, threshold=0.25)
    assert counts.sum() == 12 and counts.max() <= 4
    # budget below the number of jobs: no extra processor at all
    assert hrf_allocation(rows, np.ones(3, dtype=np.int64), 16, alpha=0.1, threshold=1.0).tolist() == [1, 1, 1]
    # a job whose runtime stops falling (zero revenue) gets no more processors
    flat = np.array([[8.0, 4.0, 4.0, 4.0], [8.0, 7.0, 6.5, 6.2]])
    assert hrf_allocation(flat, np.ones(2, dtype=np.int64), 4, alpha=2.0, threshold=1.0).tolist() == [2, 4]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.floats(1, 8), st.floats(0, 2), st.floats(1, 100)), min_size=2, max_size=3), st.integers(0, 6)
)
def test_hrf_maximises_total_shortening_for_downey_jobs(params: list, extra: int) -> None:
    m = 6
    rows = np.array([L / DowneySpeedup(A, s)(np.arange(1, m + 1)) for A, s, L in params])
    n = len(params)
    counts = hrf_allocation(rows, np.ones(n, dtype=np.int64), m, alpha=(n + extra) / m, threshold=1.0)
    gain = sum(rows[i, 0] - rows[i, c - 1] for i, c in enumerate(counts))
    best = max(
        sum(rows[i, 0] - rows[i, c - 1] for i, c in enumerate(combo))
        for combo in itertools.product(range(1, m + 1), repeat=n)
        if sum(combo) <= n + extra
    )
    assert gain == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_greedy_turnaround_estimate_waits_for_more_processors_when_it_pays() -> None:
    # 4 processors, a job holding 3 until t = 10; T(1) = 30, T(4) = 8
    profile = ProcessorProfile(0.0, 1, np.array([10.0]), np.array([3]))
    row = np.array([30.0, 20.0, 14.0, 8.0])
    assert profile.earliest_starts(np.array([1, 2, 4])).tolist() == [0.0, 10.0, 10.0]
    assert greedy_count(row, 1, 4, profile) == 4  # 10 + 8 < 0 + 30
    assert greedy_count(row, 1, 2, profile) == 1  # limited: 0 + 30 vs 10 + 20 -> tie goes to fewer
    # FCFS placement of a job ahead moves the estimate
    assert profile.place(1, 50.0) == 0.0
    assert profile.earliest_starts(np.array([1])).tolist() == [10.0]


@pytest.mark.parametrize("selection", ["fcfs", "easy"])
def test_sbmgrdy_takes_the_shortest_runtime_within_the_cap_as_worded(selection: str) -> None:
    # HRF §3.1: SbmGrdy's choice is "almost equivalent to the shortest runtime" (submit time), §6.3: "every job
    # occupies as many resources as possible". 4 processors, cap 4. Job 0 runs on 3 until t = 10. Job 1 takes 4
    # (T = 8, not 1 processor at T = 12 although that would end sooner: 0 + 12 < 10 + 8) and starts at 10. Job 2
    # ties T(2) = T(4) = 6 and takes 2; it waits for job 1 (FCFS, and EASY cannot backfill 2 > 1 free): 18..24.
    jobs = [{"runtimes": {3: 10.0}}, {"runtimes": {1: 12.0, 4: 8.0}}, {"runtimes": {2: 6.0, 4: 6.0}}]
    env = gym.make(ENV_ID, jobs=jobs, n_procs=4)
    episode = run_episode(env, POLICIES[f"sbmgrdy-{selection}"](threshold=1.0), seed=0)
    records = sorted((r.job_id, r.procs, r.start, r.completion) for r in episode.records)
    assert records == [(0, 3, 0.0, 10.0), (1, 4, 10.0, 18.0), (2, 2, 18.0, 24.0)]
    assert episode.metrics["ATT"] == pytest.approx((10 + 18 + 24) / 3)
    row = np.array([12.0, np.inf, np.inf, 8.0])
    assert shortest_runtime_count(row, 1, 4) == 4
    assert shortest_runtime_count(row, 1, 2) == 1  # the threshold's cap binds
    assert shortest_runtime_count(np.array([np.inf, 6.0, np.inf, 6.0]), 2, 4) == 2  # equal runtimes: fewer


def test_fair_limit_shares_the_budget_by_sequential_runtime() -> None:
    assert fair_limit(300.0, 400.0, 1, 128, 1.0, 115) == 96
    assert fair_limit(300.0, 400.0, 1, 128, 1.0, 64) == 64
    assert fair_limit(1.0, 1e6, 2, 128, 1.0, 115) == 2


def test_rigid_uses_requested_counts() -> None:
    jobs = [{"L": 100.0, "A": 3.0, "sigma": 0.5, "requested": 2}, {"runtimes": {1: 9.0, 4: 3.0}, "requested": 1}]
    result = evaluate(ENV_ID, "rigid-easy", [0], jobs=jobs, n_procs=4)
    assert sorted((r.job_id, r.procs) for r in result.episodes[0].records) == [(0, 2), (1, 1)]


def _workload(draw_jobs: list) -> list[dict]:
    return [{"submit": float(sub), "L": float(L), "A": float(A), "sigma": float(s)} for sub, L, A, s in draw_jobs]


job_lists = st.lists(
    st.tuples(st.integers(0, 60), st.floats(1, 400), st.floats(1, 8), st.floats(0, 2)), min_size=2, max_size=14
)
property_settings = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@property_settings
@given(job_lists, st.sampled_from([p for p in POLICIES if p.endswith("-fcfs")]), st.floats(0.3, 1.5))
def test_fcfs_never_starts_a_job_ahead_of_an_earlier_one(draw: list, name: str, alpha: float) -> None:
    env = gym.make(ENV_ID, jobs=_workload(draw), n_procs=8, max_jobs=16)
    episode = run_episode(env, POLICIES[name](alpha=alpha, threshold=0.75), seed=0)
    records = sorted(episode.records, key=lambda r: (r.arrival, r.job_id))
    starts = [r.start for r in records]
    assert starts == sorted(starts)


@property_settings
@given(job_lists, st.sampled_from([p for p in POLICIES if p.endswith("-easy")]), st.floats(0.3, 1.5))
def test_easy_never_delays_the_head_reservation(draw: list, name: str, alpha: float) -> None:
    env = gym.make(ENV_ID, jobs=_workload(draw), n_procs=8, max_jobs=16)
    policy = POLICIES[name](alpha=alpha, threshold=0.75)
    episode = run_episode(env, policy, seed=0)
    started = {r.job_id: r for r in episode.records}
    for job, procs, reserved in policy.reservations:
        assert started[job].procs == procs
        assert started[job].start <= reserved + 1e-9
    assert len(started) == len(draw)


def test_easy_beats_fcfs_on_average_and_hrf_beats_greedy() -> None:
    kwargs: dict[str, Any] = {"n_procs": 32, "n_jobs": 60, "arrival_interval": 1000.0 * 128 / 32 / 1.0}
    att = {name: evaluate(ENV_ID, name, range(4), **kwargs).values("ATT").mean() for name in PAPER_POLICIES}
    for scheme in ("hrf", "sbmgrdy", "sbmfair", "schfair"):
        assert att[f"{scheme}-easy"] <= att[f"{scheme}-fcfs"] * 1.02
    assert att["hrf-fcfs"] < att["sbmgrdy-fcfs"]


def test_tune_hrf_returns_the_grid_minimum() -> None:
    result = tune_hrf("fcfs", alphas=(0.5, 1.0), thresholds=(0.5, 1.0), seeds=range(2), n_procs=16, n_jobs=15)
    assert set(result.table) == {(0.5, 0.5), (0.5, 1.0), (1.0, 0.5), (1.0, 1.0)}
    assert result.best_att == min(result.table.values())
    assert result.table[(result.best_alpha, result.best_threshold)] == result.best_att
    with pytest.raises(ValueError, match="selection"):
        tune_hrf("sjf")


def test_policy_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="threshold"):
        POLICIES["hrf-easy"](threshold=1.5)
    with pytest.raises(ValueError, match="alpha"):
        POLICIES["hrf-easy"](alpha=0.0)


def test_reference_finishes_a_default_episode_with_every_job() -> None:
    env = MoldableEnv()
    episode = run_episode(env, POLICIES[REFERENCE](), seed=0)
    assert episode.metrics["n_completed"] == 200.0 and len(episode.records) == 200


@pytest.mark.parametrize("name", ["sbmgrdy-easy", "sbmfair-fcfs", "schfair-easy", "hrf-easy"])
def test_baselines_act_the_same_in_the_factored_action_mode(name: str) -> None:
    """A baseline decides in flat actions and answers in the env's space: both modes give one schedule."""
    kwargs = {"n_jobs": 30, "arrival_interval": "heavy"}
    flat = evaluate("schedenv/Moldable-v0", name, [3], keep_records=False, **kwargs)
    factored = evaluate("schedenv/Moldable-v0", name, [3], keep_records=False, action_mode="factored", **kwargs)
    assert factored.episodes[0].metrics == flat.episodes[0].metrics
    assert factored.episodes[0].metrics["n_completed"] == 30
