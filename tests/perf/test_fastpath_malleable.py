"""The compiled Malleable fast path gives the completion times of ``evaluate`` on the same seed."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from baselines.malleable import Knee
from schedenv.evaluation import evaluate
from schedenv.fastpath import FastRun, run_fast, supports
from schedenv.workloads import Exponential, Speedup

ENV = "schedenv/Malleable-v0"
POLICIES = ["hesrpt", "a-hesrpt", "equi", "srpt", "rs", "hell", "knee"]
CONFIGS: list[dict[str, Any]] = [
    {},
    {"mode": "online", "n_arrivals": 300, "load": 0.9, "max_jobs": 4, "speedup": 0.3},
    {"n_jobs": 40, "max_jobs": 8, "speedup": 0.99, "objective": "flow_time"},
    {"mode": "online", "n_arrivals": 200, "load": 0.5, "speedup": 1.0, "size_dist": Exponential(1.0)},
]


def completions_of_evaluate(policy: Any, seed: int, **kwargs: Any) -> tuple[np.ndarray, Any]:
    episode = evaluate(ENV, policy, [seed], **kwargs).episodes[0]
    completion = np.full(len(episode.records), np.nan)
    for record in episode.records:
        completion[record.job_id] = record.completion
    return completion, episode


def assert_same_episode(fast: FastRun, completion: np.ndarray, episode: Any) -> None:
    assert fast.completion is not None
    np.testing.assert_allclose(fast.completion, completion, rtol=1e-9)
    assert fast.n_steps == episode.n_steps
    assert fast.episode_return == pytest.approx(episode.episode_return, rel=1e-9)
    for name, value in episode.metrics.items():
        assert fast.metrics[name] == pytest.approx(value, rel=1e-9), name


@pytest.mark.parametrize("kwargs", CONFIGS, ids=["default", "online-window4", "offline-p099", "online-linear"])
@pytest.mark.parametrize("policy", POLICIES)
def test_fast_path_equals_evaluate(policy: str, kwargs: dict[str, Any]) -> None:
    assert supports(ENV, policy, **kwargs)
    completion, episode = completions_of_evaluate(policy, 5, **kwargs)
    fast = run_fast(ENV, policy, 5, keep_completions=True, **kwargs)
    assert_same_episode(fast, completion, episode)
    as_episode = fast.episode_result()
    assert [r.job_id for r in as_episode.records] == sorted(r.job_id for r in episode.records)
    by_id = {r.job_id: r for r in episode.records}
    for record in as_episode.records:
        assert record.slowdown == pytest.approx(by_id[record.job_id].slowdown, rel=1e-9)


FRACTIONS_CONFIGS: list[dict[str, Any]] = [
    {"n_jobs": 30, "max_jobs": 8, "n_servers": 20.0, "speedup": 0.3},
    {"n_jobs": 12, "max_jobs": 16, "speedup": 0.05, "objective": "flow_time"},
    {"mode": "online", "n_arrivals": 300, "load": 0.9, "max_jobs": 4, "speedup": 0.2},
    {"mode": "online", "n_arrivals": 300, "load": 0.7, "n_servers": 8.0, "speedup": 0.05, "objective": "flow_time"},
    {"mode": "online", "n_arrivals": 200, "load": 0.8, "max_jobs": 6, "speedup": 0.75},
]
"""``allocation="fractions"``: offline and online, with and without jobs outside the window, N below and
above the number of jobs (HELL as worded idles servers in the second and third, fills them in the first)."""


@pytest.mark.parametrize("kwargs", FRACTIONS_CONFIGS, ids=["off-N20", "off-p005", "on-window4", "on-N8", "on-p075"])
@pytest.mark.parametrize("policy", [*POLICIES, "hell-waterfill"])
def test_fast_path_equals_evaluate_in_fractions_mode(policy: str, kwargs: dict[str, Any]) -> None:
    kwargs = {**kwargs, "allocation": "fractions"}
    assert supports(ENV, policy, **kwargs)
    for seed in (0, 1, 2) if policy == "hell" else (7,):
        assert_same_episode(
            run_fast(ENV, policy, seed, keep_completions=True, **kwargs),
            *completions_of_evaluate(policy, seed, **kwargs),
        )


def test_hell_as_worded_idles_servers_on_the_fast_path() -> None:
    """N = 2, p = 0.3, jobs 1, 2, 3: one server each for the two shortest (rate 1), the third waits.

    Job 0 ends at 1 and job 2 takes its server; job 1 ends at 2, and job 2, alone with 2 left, keeps
    one server (the other idles) and ends at 4. The default mode gives job 2 both servers from t = 2:
    it ends at 2 + 2 / 2^0.3.
    """
    kwargs: dict[str, Any] = {"jobs": [1.0, 2.0, 3.0], "n_servers": 2.0, "speedup": 0.3}
    fast = run_fast(ENV, "hell", 0, keep_completions=True, allocation="fractions", **kwargs)
    np.testing.assert_allclose(fast.completion, [1.0, 2.0, 4.0], rtol=1e-12)
    assert fast.metrics["mean_response_time"] == pytest.approx(7.0 / 3.0, rel=1e-12)
    normalized = run_fast(ENV, "hell", 0, keep_completions=True, **kwargs)
    assert normalized.completion is not None
    np.testing.assert_allclose(normalized.completion, [1.0, 2.0, 2.0 + 2.0 / 2.0**0.3], rtol=1e-12)


@pytest.mark.parametrize("allocation", ["normalized", "fractions"])
def test_outside_jobs_without_servers_get_a_zero_group_weight(allocation: str) -> None:
    """KNEE spends every server inside the window here, so the group's weight is the sum of zeros: exactly 0.

    (Computing it as 1 minus the window's share once rounded it to -1e-16, which made rates NaN and the
    loop never end.)
    """
    kwargs = {
        "mode": "online", "n_arrivals": 600, "load": 3.0, "n_servers": 1e4, "speedup": 0.5, "max_jobs": 32,
        "allocation": allocation,
    }  # fmt: skip
    policy = Knee(alpha=1.5e-6)
    fast = run_fast(ENV, policy, 0, keep_completions=True, **kwargs)
    completion, episode = completions_of_evaluate(policy, 0, **kwargs)
    assert episode.metrics["overflow_fraction"] > 0.3
    assert_same_episode(fast, completion, episode)


def test_fast_path_draws_the_env_workload() -> None:
    kwargs = {"mode": "online", "n_arrivals": 50}
    env = gym.make(ENV, **kwargs)
    env.reset(seed=11)
    fast = run_fast(ENV, "equi", 11, keep_completions=True, **kwargs)
    np.testing.assert_array_equal(fast.arrival_times, env.unwrapped.params.arrival_times)
    np.testing.assert_array_equal(fast.sizes, env.unwrapped.params.sizes)


def test_knee_alpha_reaches_the_kernel() -> None:
    kwargs = {"mode": "online", "n_arrivals": 200, "speedup": 0.4}
    runs = [run_fast(ENV, Knee(alpha=a), 2, keep_completions=True, **kwargs) for a in (1e-6, 50.0)]
    for alpha, fast in zip((1e-6, 50.0), runs, strict=True):
        assert_same_episode(fast, *completions_of_evaluate(Knee(alpha=alpha), 2, **kwargs))
    assert runs[0].metrics["mean_slowdown"] != runs[1].metrics["mean_slowdown"]


def test_chunked_stream_equals_evaluate_on_the_same_jobs() -> None:
    """Chunk boundaries (state carried between kernel calls) change nothing but the draw."""
    kwargs = {"mode": "online", "n_arrivals": 400, "load": 0.95, "max_jobs": 6}
    fast = run_fast(ENV, "hesrpt", 3, chunk=37, keep_completions=True, **kwargs)
    assert fast.arrival_times is not None and fast.sizes is not None
    jobs = np.column_stack([fast.arrival_times, fast.sizes])
    completion, episode = completions_of_evaluate("hesrpt", 3, mode="online", jobs=jobs, max_jobs=6)
    assert_same_episode(fast, completion, episode)
    unchunked = run_fast(ENV, "hesrpt", 3, **kwargs)
    assert unchunked.metrics["mean_slowdown"] != fast.metrics["mean_slowdown"]  # a different stream


def test_job_arrays_grow_past_their_initial_capacity() -> None:
    kwargs = {"n_jobs": 2500, "max_jobs": 16}
    completion, episode = completions_of_evaluate("equi", 0, **kwargs)
    assert_same_episode(run_fast(ENV, "equi", 0, keep_completions=True, **kwargs), completion, episode)


def test_policy_fractions_without_env_emulation() -> None:
    """``emulate_env=False`` applies the float64 fractions; with no window overflow only float32 rounding differs."""
    kwargs = {"n_jobs": 12, "max_jobs": 16}
    completion, _ = completions_of_evaluate("hesrpt", 4, **kwargs)
    fast = run_fast(ENV, "hesrpt", 4, emulate_env=False, keep_completions=True, **kwargs)
    assert fast.completion is not None
    np.testing.assert_allclose(fast.completion, completion, rtol=1e-5)


def test_streamed_run_conserves_jobs_and_work() -> None:
    kwargs = {"mode": "online", "n_arrivals": 5000, "load": 0.8}
    fast = run_fast(ENV, "srpt", 1, chunk=500, **kwargs)
    assert fast.metrics["n_completed"] == 5000.0
    assert fast.n_events == 10000
    assert fast.completion is None
    # Slowdown T / (x / s(N)) >= 1 for every job, so its mean is too; SRPT gives s(N) to one job.
    assert fast.metrics["mean_slowdown"] >= 1.0


class Sqrt(Speedup):
    def __call__(self, servers: Any) -> Any:
        return np.sqrt(servers)

    def derivative(self, servers: Any) -> Any:
        return 0.5 / np.sqrt(servers)


def test_supports_and_refusals() -> None:
    assert not supports(ENV, "no-such-policy")
    assert not supports("schedenv/Dispatch-v0", "hesrpt")
    assert not supports(ENV, "hesrpt", speedup=Sqrt())
    with pytest.raises(ValueError, match="no compiled path"):
        run_fast(ENV, "hesrpt", 0, speedup=Sqrt())
    with pytest.raises(ValueError, match="chunk"):
        run_fast(ENV, "hesrpt", 0, chunk=0)
