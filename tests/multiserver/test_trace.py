"""Replaying the Alibaba GPU trace of 2023 (shipped with the package) and SWF traces."""

from __future__ import annotations

import gzip
import hashlib
from importlib.resources import files
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from schedenv.evaluation import evaluate
from schedenv.multiserver.trace import ALIBABA_GPU_TRACE, read_alibaba_gpu_trace, read_swf_jobs, scale_to_load
from schedenv.traces import read_swf

UPSTREAM_SHA256 = "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8"
"""openb_pod_list_default.csv of alibaba/clusterdata, as schedenv/data/README.md records it."""


def test_the_shipped_trace_is_the_upstream_file_byte_for_byte() -> None:
    csv_bytes = gzip.decompress(ALIBABA_GPU_TRACE.read_bytes())
    assert len(csv_bytes) == 575_468
    assert hashlib.sha256(csv_bytes).hexdigest() == UPSTREAM_SHA256
    assert UPSTREAM_SHA256 in (files("schedenv") / "data" / "README.md").read_text(encoding="utf-8")


def test_reader_keeps_the_scheduled_gpu_tasks() -> None:
    arrivals, needs, durations = read_alibaba_gpu_trace()
    # 8,152 tasks: 1,088 CPU-only ones and 861 GPU tasks never scheduled (no scheduled_time) are dropped.
    assert arrivals.size == 6203
    values, counts = np.unique(needs, return_counts=True)
    assert dict(zip(values.tolist(), counts.tolist(), strict=True)) == {1: 6129, 2: 15, 4: 15, 8: 44}
    assert (np.diff(arrivals) >= 0).all() and arrivals[0] == 0.0 and (durations > 0).all()
    # Rows of the CSV: openb-pod-0000 (1 GPU, created at 0, scheduled at 0, deleted at 12537496), the first
    # 8-GPU task openb-pod-0017 (9437497, 9437497, 10769854) and the last one, openb-pod-8151 (12901761,
    # 12901762, 12901792).
    assert (arrivals[0], needs[0], durations[0]) == (0.0, 1, 12_537_496.0)
    first_eight = int(np.flatnonzero(needs == 8)[0])
    assert (first_eight, arrivals[first_eight], durations[first_eight]) == (15, 9_437_497.0, 1_332_357.0)
    assert (arrivals[-1], needs[-1], durations[-1]) == (12_901_761.0, 1, 30.0)
    assert float((needs * durations).sum()) == 214_603_958.0  # GPU-seconds


def test_an_explicit_path_reads_the_plain_or_compressed_csv(tmp_path: Path) -> None:
    plain, packed = tmp_path / "trace.csv", tmp_path / "trace.csv.gz"
    plain.write_bytes(b"\xef\xbb\xbf" + gzip.decompress(ALIBABA_GPU_TRACE.read_bytes()))  # with a byte-order mark
    packed.write_bytes(ALIBABA_GPU_TRACE.read_bytes())
    shipped = read_alibaba_gpu_trace()
    for path in (plain, str(packed)):
        for mine, theirs in zip(read_alibaba_gpu_trace(path), shipped, strict=True):
            np.testing.assert_array_equal(mine, theirs)
    with pytest.raises(FileNotFoundError, match=r"'/nonexistent\.csv' not found"):
        read_alibaba_gpu_trace("/nonexistent.csv")


def test_scaling_gives_the_requested_load() -> None:
    arrivals, needs, durations = read_alibaba_gpu_trace()
    scaled = scale_to_load(arrivals, needs, durations, 8, 0.7)
    total_size = float((needs * durations).sum()) / 8
    assert total_size / (scaled[-1] - scaled[0]) == pytest.approx(0.7, rel=1e-12)
    np.testing.assert_allclose(np.diff(scaled) / np.diff(scaled).sum(), np.diff(arrivals) / np.diff(arrivals).sum())


def test_trace_replay_in_the_env() -> None:
    result = evaluate("schedenv/MultiserverJob-v0", "serverfilling-srpt", seeds=[0], trace="alibaba", n_arrivals=800)
    assert result.episodes[0].metrics["n_completed"] == 800
    with pytest.raises(ValueError, match="n_servers=4 is too small"):
        gym.make("schedenv/MultiserverJob-v0", trace="alibaba", n_servers=4, n_arrivals=7000)
    with pytest.raises(ValueError, match="at most one of jobs and trace"):
        gym.make("schedenv/MultiserverJob-v0", trace="alibaba", jobs=[(1, 1.0)])
    with pytest.raises(FileNotFoundError, match=r"'/nonexistent\.csv' not found"):
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
