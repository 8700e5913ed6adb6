"""The evaluation loop (``schedenv.evaluation``) and job records on hand-worked instances.

The hand-worked instance: two unit jobs at t = 0, N = 10 servers, s(k) = k^0.5, objective flow
time. heSRPT (Theorem 5) with m = 2 jobs and c = 1/(1 - p) = 2 gives the job finishing last
theta = 1 - (1/2)^2 = 75% of the servers and the other 25%; the first job finishes at
t1 = 1/sqrt(7.5), the second then holds all servers and finishes at
t2 = t1 + (1 - sqrt(2.5) t1) / sqrt(10), so the total flow time is t1 + t2 = 0.863950323522004.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import baselines
from schedenv.evaluation import Contender, EpisodeResult, EvaluationResult, as_contender, evaluate, run_episode
from schedenv.records import JobRecord, basic_metrics

ENV_ID = "schedenv/Malleable-v0"
HAND: dict[str, Any] = {"jobs": [1.0, 1.0], "n_servers": 10.0, "speedup": 0.5, "objective": "flow_time"}
T1 = 1.0 / math.sqrt(7.5)
T2 = T1 + (1.0 - math.sqrt(2.5) * T1) / math.sqrt(10.0)
TOTAL_FLOW_TIME = 0.863950323522004


class RecordingHeSRPT:
    """heSRPT that also keeps the allocation it chose at every epoch."""

    name = "recording-hesrpt"

    def __init__(self) -> None:
        self.policy: Any = baselines.make("hesrpt")
        self.allocations: list[np.ndarray] = []

    def reset(self, env: gym.Env) -> None:
        self.policy.reset(env)
        self.allocations = []

    def act(self, observation: Any, env: gym.Env) -> Any:
        inner = env.unwrapped
        self.allocations.append(self.policy.allocate(inner.state, inner.params))  # type: ignore[attr-defined]
        return self.policy.act(observation, env)


class NoAct:
    name = "no-act"

    def reset(self, env: gym.Env) -> None:
        return None


def test_hand_worked_instance_total_flow_time() -> None:
    assert pytest.approx(TOTAL_FLOW_TIME, rel=1e-14) == T1 + T2
    result = evaluate(ENV_ID, "hesrpt", [0, 1], **HAND)
    assert result.contender == "hesrpt"
    assert result.env_id == ENV_ID
    assert result.env_kwargs == HAND
    for episode in result.episodes:
        assert episode.metrics["mean_response_time"] == pytest.approx(TOTAL_FLOW_TIME / 2, rel=1e-12)
        assert episode.metrics["total_flow_time"] == pytest.approx(TOTAL_FLOW_TIME, rel=1e-12)
        assert episode.episode_return == pytest.approx(-TOTAL_FLOW_TIME, rel=1e-12)
        assert episode.n_steps == 2
        completions = sorted(r.completion for r in episode.records)
        assert completions == pytest.approx([T1, T2], rel=1e-12)
        assert sorted(r.job_id for r in episode.records) == [0, 1]
        assert all(r.arrival == 0.0 and r.size == 1.0 for r in episode.records)
    assert result.summary["mean_response_time"].mean == pytest.approx(TOTAL_FLOW_TIME / 2, rel=1e-12)
    assert result.summary["mean_response_time"].ci95 == pytest.approx(0.0, abs=1e-12)
    assert result.summary["return"].mean == pytest.approx(-TOTAL_FLOW_TIME, rel=1e-12)


def test_hand_worked_instance_allocates_75_and_25_percent() -> None:
    contender = RecordingHeSRPT()
    evaluate(ENV_ID, contender, [0], **HAND)
    first, second = contender.allocations
    assert sorted(first.tolist()) == pytest.approx([0.25, 0.75], abs=1e-12)
    assert second.tolist() == pytest.approx([1.0], abs=1e-12)


def test_equi_on_the_hand_worked_instance_is_worse() -> None:
    """EQUI gives each job 5 servers: both finish at 1/sqrt(5), total 2/sqrt(5) > heSRPT's."""
    result = evaluate(ENV_ID, "equi", [0], **HAND)
    assert result.episodes[0].metrics["total_flow_time"] == pytest.approx(2 / math.sqrt(5), rel=1e-12)
    assert 2 / math.sqrt(5) > TOTAL_FLOW_TIME


def test_unknown_baseline_suggests_near_matches() -> None:
    with pytest.raises(ValueError, match=r"unknown baseline 'hesrtp'.*did you mean 'hesrpt'"):
        evaluate(ENV_ID, "hesrtp", [0], **HAND)
    with pytest.raises(ValueError, match=r"did you mean 'equi'"):
        as_contender("eqi")


def test_contender_without_the_protocol_raises_type_error() -> None:
    with pytest.raises(TypeError, match="act"):
        evaluate(ENV_ID, NoAct(), [0], **HAND)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="contender="):
        as_contender(42)  # type: ignore[arg-type]
    assert isinstance(RecordingHeSRPT(), Contender)
    assert not isinstance(NoAct(), Contender)


def test_truncated_episode_raises() -> None:
    with pytest.raises(RuntimeError, match=r"seed 3 was truncated after 1 steps"):
        evaluate(ENV_ID, "hesrpt", [3], n_jobs=5, max_episode_steps=1)
    env = gym.wrappers.TimeLimit(gym.make(ENV_ID, n_jobs=5), max_episode_steps=2)
    with pytest.raises(RuntimeError, match="truncated"):
        run_episode(env, baselines.make("equi"), seed=0)


@pytest.mark.parametrize("env_kwargs", [{"n_jobs": 6}, {"mode": "online", "n_arrivals": 60, "load": 0.7}])
def test_common_random_numbers_across_contenders(env_kwargs: dict[str, Any]) -> None:
    seeds = [11, 12]
    first = evaluate(ENV_ID, "hesrpt", seeds, **env_kwargs)
    second = evaluate(ENV_ID, "equi", seeds, **env_kwargs)
    for a, b in zip(first.episodes, second.episodes, strict=True):
        assert a.seed == b.seed
        jobs_a = {r.job_id: (r.arrival, r.size) for r in a.records}
        jobs_b = {r.job_id: (r.arrival, r.size) for r in b.records}
        assert jobs_a == jobs_b
        assert len(jobs_a) == a.metrics["n_completed"]
    sizes_11 = {r.size for r in first.episodes[0].records}
    sizes_12 = {r.size for r in first.episodes[1].records}
    assert sizes_11 != sizes_12  # different seeds, different workloads


def test_same_seeds_give_identical_results() -> None:
    a = evaluate(ENV_ID, "equi", [5, 6, 7], n_jobs=5)
    b = evaluate(ENV_ID, "equi", [5, 6, 7], n_jobs=5)
    assert [e.metrics for e in a.episodes] == [e.metrics for e in b.episodes]
    assert [e.episode_return for e in a.episodes] == [e.episode_return for e in b.episodes]


def test_paired_compare_against_the_reference() -> None:
    seeds = [0, 1, 2, 3]
    reference = evaluate(ENV_ID, "hesrpt", seeds, n_jobs=6)
    equi = evaluate(ENV_ID, "equi", seeds, n_jobs=6)
    mine, theirs = equi.values("mean_slowdown"), reference.values("mean_slowdown")
    assert (mine >= theirs - 1e-12).all()  # heSRPT is optimal offline for mean slowdown (Theorem 5)
    comparison = equi.compare(reference, "mean_slowdown")
    assert comparison.ratio == pytest.approx(mine.mean() / theirs.mean(), rel=1e-12)
    assert comparison.difference.mean == pytest.approx((mine - theirs).mean(), rel=1e-12)
    assert comparison.difference.n == 4
    assert comparison.ratio > 1.0
    assert reference.compare(reference, "mean_slowdown").ratio == 1.0
    by_return = equi.compare(reference, "return")
    assert by_return.difference.mean == pytest.approx((equi.values("return") - reference.values("return")).mean())


def test_compare_uses_only_common_seeds() -> None:
    a = evaluate(ENV_ID, "equi", [0, 1, 2], n_jobs=4)
    b = evaluate(ENV_ID, "hesrpt", [1, 2, 3], n_jobs=4)
    comparison = a.compare(b, "mean_slowdown")
    assert comparison.difference.n == 2
    expected = (a.values("mean_slowdown")[1:] - b.values("mean_slowdown")[:2]).mean()
    assert comparison.difference.mean == pytest.approx(expected, rel=1e-12)
    c = evaluate(ENV_ID, "hesrpt", [8], n_jobs=4)
    with pytest.raises(ValueError, match="no seeds"):
        a.compare(c, "mean_slowdown")


def test_values_summary_and_errors() -> None:
    result = evaluate(ENV_ID, "hesrpt", [0, 1, 2], keep_records=False, n_jobs=4)
    assert all(e.records == [] for e in result.episodes)
    assert [e.seed for e in result.episodes] == [0, 1, 2]
    slowdowns = result.values("mean_slowdown")
    assert result.summary["mean_slowdown"].mean == pytest.approx(slowdowns.mean())
    assert result.summary["mean_slowdown"].n == 3
    np.testing.assert_allclose(result.values("return"), -result.values("total_slowdown"), rtol=1e-9)
    with pytest.raises(KeyError, match=r"'no_such_metric'.*known"):
        result.values("no_such_metric")
    with pytest.raises(ValueError, match="seeds is empty"):
        evaluate(ENV_ID, "hesrpt", [], n_jobs=4)


def test_evaluation_result_without_episodes() -> None:
    empty = EvaluationResult(ENV_ID, "x", {}, [])
    assert empty.values("return").size == 0
    assert set(empty.summary) == {"return"}
    assert empty.summary["return"].n == 0
    episode = EpisodeResult(seed=0, metrics={"m": 1.0}, episode_return=-1.0, n_steps=1)
    assert episode.records == []


def test_job_record_fields_and_metrics() -> None:
    records = [
        JobRecord(job_id=0, arrival=1.0, size=2.0, completion=4.0, slowdown=1.5),
        JobRecord(job_id=1, arrival=0.0, size=1.0, completion=1.0, slowdown=1.0),
    ]
    assert records[0].response_time == 3.0
    assert records[0].as_dict() == {
        "job_id": 0,
        "arrival": 1.0,
        "size": 2.0,
        "completion": 4.0,
        "slowdown": 1.5,
        "response_time": 3.0,
    }
    assert basic_metrics(records) == {"n_completed": 2.0, "mean_response_time": 2.0, "mean_slowdown": 1.25}
    empty = basic_metrics([])
    assert empty["n_completed"] == 0.0
    assert math.isnan(empty["mean_response_time"])
    with pytest.raises(AttributeError):
        records[0].size = 3.0  # type: ignore[misc]


def test_a_baseline_of_another_family_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'random' is not a baseline of schedenv/Malleable-v0"):
        evaluate("schedenv/Malleable-v0", "random", [0], n_jobs=3)
