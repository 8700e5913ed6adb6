"""The compiled Dispatch fast path gives the completion times, return and metrics of ``evaluate``."""

from __future__ import annotations

import math
import tracemalloc
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from baselines.dispatch import POLICIES, Tags
from schedenv.analysis.queueing_mmk import erlang_c_mean_response_time
from schedenv.evaluation import EpisodeResult, evaluate
from schedenv.fastpath import run_fast, supports
from schedenv.fastpath.dispatch import DispatchFastRun
from schedenv.mmk import simulate_mmk_fcfs
from schedenv.workloads import BoundedPareto, Exponential

ENV = "schedenv/Dispatch-v0"
CONFIGS: list[dict[str, Any]] = [
    {"size_known": True, "n_arrivals": 400},
    {"size_known": True, "n_hosts": 3, "load": 0.8, "objective": "waiting_slowdown", "n_arrivals": 300},
    {"size_known": True, "n_hosts": 4, "load": 0.7, "objective": "waiting_time", "max_jobs": 1, "n_arrivals": 300},
    {
        "size_known": True,
        "n_hosts": 3,
        "load": 0.6,
        "objective": "response_time",
        "size_dist": BoundedPareto.with_mean(10.0, alpha=1.5, upper=1e5),
        "n_arrivals": 300,
    },
]


def completions(episode: EpisodeResult) -> np.ndarray:
    completion = np.full(len(episode.records), np.nan)
    for record in episode.records:
        completion[record.job_id] = record.completion
    return completion


def assert_same_episode(fast: DispatchFastRun, episode: EpisodeResult) -> None:
    """Bit-identical: the kernel performs the simulator's float operations in the same order."""
    np.testing.assert_array_equal(fast.completion, completions(episode))
    assert fast.n_steps == episode.n_steps
    assert fast.episode_return == episode.episode_return
    assert fast.metrics.keys() == episode.metrics.keys()
    for name, value in episode.metrics.items():
        assert fast.metrics[name] == value or (math.isnan(value) and math.isnan(fast.metrics[name])), name
    by_id = {record.job_id: record for record in episode.records}
    assert fast.records() == [by_id[j] for j in range(len(by_id))]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=["default", "3hosts-waitslow", "4hosts-waiting", "pareto15-response"])
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_fast_path_equals_evaluate(policy: str, kwargs: dict[str, Any]) -> None:
    assert supports(ENV, policy, **kwargs)
    episode = evaluate(ENV, policy, [5], **kwargs).episodes[0]
    assert_same_episode(run_fast(ENV, policy, 5, keep_completions=True, **kwargs), episode)


def test_tags_kills_are_simulated() -> None:
    """TAGS restarts jobs: the fast path reports the kills and wasted work the env does."""
    kwargs = CONFIGS[0]
    fast = run_fast(ENV, "tags-slowdown", 2, keep_completions=True, **kwargs)
    assert fast.runs is not None and fast.runs.max() >= 2
    assert fast.metrics["kills_per_job"] > 0 and fast.metrics["total_wasted_work"] > 0
    assert fast.n_events == 2 * 400 + int((fast.runs - 1).sum())
    assert_same_episode(fast, evaluate(ENV, "tags-slowdown", [2], **kwargs).episodes[0])


def test_custom_tags_cutoffs_reach_the_kernel() -> None:
    kwargs = {"n_arrivals": 300, "load": 0.7}
    runs = [run_fast(ENV, Tags(cutoffs=[c]), 1, keep_completions=True, **kwargs) for c in (100.0, 1e5)]
    for cut, fast in zip((100.0, 1e5), runs, strict=True):
        assert_same_episode(fast, evaluate(ENV, Tags(cutoffs=[cut]), [1], **kwargs).episodes[0])
    assert runs[0].metrics["kills_per_job"] > runs[1].metrics["kills_per_job"]


@pytest.mark.parametrize("objective", ["slowdown", "waiting_slowdown"])
def test_exact_resummation_after_a_tiny_job_leaves(objective: str) -> None:
    """A tiny job's 1/x dominates the slowdown weight; its departure triggers the simulator's fsum."""
    jobs = [(0.0, 1.0), (0.1, 1e-9), (0.2, 2.0), (0.3, 3.0), (0.35, 1e-7), (0.4, 0.5), (3.0, 1.0)]
    kwargs = {"jobs": jobs, "n_hosts": 1, "objective": objective, "time_limits": [0.75]}
    for policy in ("central-queue", "tags-slowdown"):
        episode = evaluate(ENV, policy, [0], **kwargs).episodes[0]
        assert_same_episode(run_fast(ENV, policy, 0, keep_completions=True, **kwargs), episode)


def test_job_pool_grows_past_its_initial_capacity() -> None:
    """An overloaded host keeps more than 256 jobs (the initial pool) waiting."""
    kwargs = {"load": 1.6, "n_arrivals": 1500, "objective": "response_time"}
    with pytest.warns(UserWarning, match="load"):
        episode = evaluate(ENV, "round-robin", [3], **kwargs).episodes[0]
    with pytest.warns(UserWarning, match="load"):
        fast = run_fast(ENV, "round-robin", 3, keep_completions=True, **kwargs)
    assert_same_episode(fast, episode)


def test_fast_path_draws_the_env_workload() -> None:
    env = gym.make(ENV, n_arrivals=60)
    env.reset(seed=11)
    fast = run_fast(ENV, "central-queue", 11, keep_completions=True, n_arrivals=60)
    np.testing.assert_array_equal(fast.arrival_times, env.unwrapped.sim.params.arrivals)
    np.testing.assert_array_equal(fast.sizes, env.unwrapped.sim.params.sizes)


@pytest.mark.parametrize("policy", ["tags-waiting", "shortest-queue"])
def test_chunked_stream_equals_evaluate_on_the_same_jobs(policy: str) -> None:
    """Chunk boundaries (state carried between kernel calls, kills across them) change only the draw."""
    kwargs = {"n_arrivals": 500, "load": 0.8, "n_hosts": 2}
    fast = run_fast(ENV, policy, 3, chunk=37, keep_completions=True, **kwargs)
    assert fast.arrival_times is not None and fast.sizes is not None
    jobs = np.column_stack([fast.arrival_times, fast.sizes])
    episode = evaluate(ENV, policy, [3], jobs=jobs, n_hosts=2, load=0.8).episodes[0]
    np.testing.assert_array_equal(fast.completion, completions(episode))
    for name in ("mean_slowdown", "mean_response_time", "kills_per_job", "total_wasted_work"):
        assert fast.metrics[name] == episode.metrics[name], name
    unchunked = run_fast(ENV, policy, 3, **kwargs)
    assert unchunked.metrics["mean_slowdown"] != fast.metrics["mean_slowdown"]  # a different stream


def test_dispatch_central_queue_is_mmk_fcfs() -> None:
    """M/M/8 at rho = 0.9 as the central queue agrees with Erlang-C and with the dedicated M/M/k kernel."""
    lam, k, n = 7.2, 8, 2_000_000
    fast = run_fast(
        ENV,
        "central-queue",
        1,
        n_hosts=k,
        load=0.9,
        size_dist=Exponential(1.0),
        n_arrivals=n,
        objective="response_time",
    )
    expected = erlang_c_mean_response_time(lam, 1.0, k)
    # Measured over 8 seeds, E[T] from 2e6 jobs (empty start) has a standard deviation of 1.2% here,
    # E[W] (about half of E[T]) of 2.5%: the tolerances are about 3.5 standard deviations.
    assert fast.metrics["mean_response_time"] == pytest.approx(expected, rel=0.04)
    assert fast.metrics["mean_queueing_time"] == pytest.approx(expected - 1.0, rel=0.09)
    reference = simulate_mmk_fcfs(lam, 1.0, k, n, seed=2)
    assert fast.metrics["mean_response_time"] == pytest.approx(reference.mean_response_time, rel=0.05)
    assert fast.metrics["mean_response_time"] - fast.metrics["mean_queueing_time"] == pytest.approx(1.0, rel=0.005)
    assert fast.n_events == 2 * n and fast.metrics["n_completed"] == n


def _peak_bytes(n_arrivals: int, chunk: int) -> int:
    # Compile first (a cold numba cache costs tens of MB of compiler memory): measure the run, not the compiler.
    run_fast(ENV, "tags-slowdown", 0, chunk=chunk, n_arrivals=100, load=0.7)
    tracemalloc.start()
    try:
        run = run_fast(ENV, "tags-slowdown", 0, chunk=chunk, n_arrivals=n_arrivals, load=0.7)
        assert run.metrics["n_completed"] == n_arrivals
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_streamed_memory_is_flat() -> None:
    small, large = _peak_bytes(20_000, 4096), _peak_bytes(400_000, 4096)
    assert large < small + 2_000_000  # 20x the arrivals, not 20x the memory


@pytest.mark.slow
def test_ten_million_arrivals_in_flat_memory() -> None:
    assert _peak_bytes(10**7, 1 << 16) < 40_000_000


def test_supports_and_refusals() -> None:
    assert supports(ENV, "central-queue")
    assert not supports(ENV, "least-work-remaining")  # needs sizes
    assert supports(ENV, "sita-e", size_known=True)
    assert not supports(ENV, "hesrpt")
    with pytest.raises(ValueError, match="no compiled path"):
        run_fast(ENV, "sita-e", 0)
