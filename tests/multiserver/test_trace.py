"""Replaying the Alibaba GPU trace of 2023 (skipped when ../shared/traces/ does not hold it) and SWF traces."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from schedenv.evaluation import evaluate
from schedenv.multiserver.trace import ALIBABA_GPU_TRACE, read_alibaba_gpu_trace, read_swf_jobs, scale_to_load
from schedenv.traces import read_swf

needs_alibaba = pytest.mark.skipif(
    not ALIBABA_GPU_TRACE.is_file(), reason=f"Alibaba GPU trace absent at {ALIBABA_GPU_TRACE} (see the shared README)"
)


@needs_alibaba
def test_reader_keeps_the_scheduled_gpu_tasks() -> None:
    arrivals, needs, durations = read_alibaba_gpu_trace()
    # 8,152 tasks: 1,088 CPU-only and 897 never scheduled (Pending) are dropped; 16 + 15 + 44 multi-GPU tasks.
    assert arrivals.size == 6203
    assert set(np.unique(needs).tolist()) <= {1, 2, 4, 8}
    assert (np.diff(arrivals) >= 0).all() and arrivals[0] == 0.0 and (durations > 0).all()


@needs_alibaba
def test_scaling_gives_the_requested_load() -> None:
    arrivals, needs, durations = read_alibaba_gpu_trace()
    scaled = scale_to_load(arrivals, needs, durations, 8, 0.7)
    total_size = float((needs * durations).sum()) / 8
    assert total_size / (scaled[-1] - scaled[0]) == pytest.approx(0.7, rel=1e-12)
    np.testing.assert_allclose(np.diff(scaled) / np.diff(scaled).sum(), np.diff(arrivals) / np.diff(arrivals).sum())


@needs_alibaba
def test_trace_replay_in_the_env() -> None:
    result = evaluate("schedenv/MultiserverJob-v0", "serverfilling-srpt", seeds=[0], trace="alibaba", n_arrivals=800)
    assert result.episodes[0].metrics["n_completed"] == 800
    with pytest.raises(ValueError, match="n_servers=4 is too small"):
        gym.make("schedenv/MultiserverJob-v0", trace="alibaba", n_servers=4, n_arrivals=7000)
    with pytest.raises(ValueError, match="at most one of jobs and trace"):
        gym.make("schedenv/MultiserverJob-v0", trace="alibaba", jobs=[(1, 1.0)])
    with pytest.raises(FileNotFoundError, match="not part of the repository"):
        gym.make("schedenv/MultiserverJob-v0", trace="/nonexistent.csv")


SWF_FIXTURE = Path(__file__).parent / "fixtures" / "small.swf"


@pytest.mark.parametrize(("n_servers", "expected"), [(8, {16: 1, 32: 2, 64: 4, 100: 8, 128: 8}), (6, {64: 3, 100: 6})])
def test_swf_replay_scales_processors_to_divisors_of_k(n_servers: int, expected: dict[int, int]) -> None:
    trace = read_swf(SWF_FIXTURE)
    arrivals, needs, durations = read_swf_jobs(SWF_FIXTURE, n_servers)
    assert arrivals.size == len(trace) - 2  # the cancelled job and the one without processors are dropped
    assert all(n_servers % int(v) == 0 for v in np.unique(needs))
    requested = trace.column("requested_processors")
    usable = (trace.column("run_time") > 0) & (requested > 0)
    for procs, need in expected.items():
        assert set(needs[requested[usable] == procs].tolist()) == {need}
    np.testing.assert_array_equal(durations, trace.column("run_time")[usable])


def test_swf_replay_in_the_env_with_divisorfilling() -> None:
    result = evaluate(
        "schedenv/MultiserverJob-v0", "divisorfilling-srpt", seeds=[0], trace=str(SWF_FIXTURE), n_servers=6, load=0.8
    )
    assert result.episodes[0].metrics["n_completed"] == 58
