"""Job sets, the Cirne-style generator and SWF traces (HRF paper §6.1.2; docs/envs/moldable.md)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from schedenv.moldable.workload import CirneWorkload, parse_jobs, power_of_two_request
from schedenv.traces import SWFTrace, parse_swf, read_swf, replay_jobs, trace_from_records, write_swf


def test_runtime_table_rows_and_sizes() -> None:
    jobs = parse_jobs([{"submit": 3, "runtimes": {2: 8, 4: 5}}, {"L": 100, "A": 4, "sigma": 0.0}], n_procs=4)
    rows = jobs.runtime_rows(np.array([0, 1]))
    assert rows[0].tolist() == [math.inf, 8.0, math.inf, 5.0]
    assert rows[1].tolist() == pytest.approx([100, 50, 100 / 3, 25])
    assert jobs.size.tolist() == [16.0, 100.0]  # n_min T(n_min), and L
    assert jobs.requested.tolist() == [4, 4]  # least-runtime count; power of two nearest A
    assert jobs.submit.tolist() == [3.0, 0.0]


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"runtimes": {1: 5, 2: 6}}, "increases from 5.0 s on 1 to 6.0 s on 2"),
        ({"runtimes": {1: 5, 8: 1}}, "processor count 8, above n_procs=4"),
        ({"runtimes": {1: 0}}, r"\[1\]=0 is not allowed"),
        ({"runtimes": {1: -3.0}}, "is not allowed"),
        ({"L": -1, "A": 2, "sigma": 1}, "'L'"),
        ({"L": 10, "A": 0.5, "sigma": 1}, "A=0.5"),
        ({"L": 10, "A": 2}, "needs 'runtimes'"),
        ({"runtime": {1: 5}}, "did you mean 'runtimes'"),
        ({"runtimes": {1: 5}, "L": 3}, "both"),
        ({"runtimes": {1: 5}, "requested": 2}, "do not list that count"),
        ({"runtimes": {1: 5}, "submit": -1}, "submit"),
    ],
)
def test_bad_jobs_are_refused_with_the_reason(job: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_jobs([job], n_procs=4)


def test_power_of_two_request_is_nearest_in_log_scale() -> None:
    assert power_of_two_request(np.array([1.0, 2.9, 3.0, 100.0, 1000.0]), 128).tolist() == [1, 4, 4, 128, 128]


def test_cirne_generator_follows_its_documented_distributions() -> None:
    workload = CirneWorkload(arrival_interval=600.0)
    jobs = workload.sample(np.random.default_rng(1), 20000, 128)
    gaps = np.diff(jobs.submit)
    assert jobs.submit[0] == 0.0
    assert gaps.mean() == pytest.approx(600.0, rel=0.03)
    # log-uniform A on [1, m]: P[A < sqrt(m)] = 1/2; log-uniform L: E[log L] is the midpoint
    assert (math.sqrt(128) > jobs.A).mean() == pytest.approx(0.5, abs=0.015)
    assert np.log(jobs.L).mean() == pytest.approx(0.5 * (math.log(100) + math.log(1e6)), abs=0.05)
    assert jobs.sigma.min() >= 0.0 and jobs.sigma.max() <= 2.0 and jobs.sigma.mean() == pytest.approx(1.0, abs=0.02)
    assert workload.work_load(128) == pytest.approx(workload.mean_work / (600 * 128))
    again = workload.sample(np.random.default_rng(1), 20000, 128)
    np.testing.assert_array_equal(again.L, jobs.L)


def test_cirne_generator_refuses_bad_parameters() -> None:
    with pytest.raises(ValueError, match="work_high"):
        CirneWorkload(work_low=10.0, work_high=5.0)
    with pytest.raises(ValueError, match="arrival_interval"):
        CirneWorkload(arrival_interval=0.0)


SWF_TEXT = """; Version: 2.2
; MaxProcs: 16
; Note: hand-written
1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 50 0 30 2 -1 -1 2 60 -1 1 2 1 -1 1 -1 -1 -1
3 60 -1 -1 8 -1 -1 8 60 -1 5 2 1 -1 1 -1 -1 -1
4 70 0 12.5 -1 -1 -1 16 60 -1 1 2 1 -1 1 -1 -1 -1
"""


def test_swf_parse_header_columns_and_replay() -> None:
    trace = parse_swf(SWF_TEXT)
    assert len(trace) == 4 and trace.max_procs == 16 and trace.header["Note"] == "hand-written"
    assert trace.column("run_time").tolist() == [100.0, 30.0, -1.0, 12.5]
    replay = replay_jobs(trace)
    assert replay.skipped == 1  # job 3 never ran
    assert replay.job_number.tolist() == [1, 2, 4]
    assert replay.submit.tolist() == [0.0, 50.0, 70.0]
    assert replay.procs.tolist() == [4, 2, 16]  # job 4: allocated missing -> requested
    assert replay_jobs(trace, n_jobs=2).job_number.tolist() == [1, 2]
    with pytest.raises(ValueError, match="did you mean 'run_time'"):
        trace.column("runtime")


def test_swf_write_read_round_trip(tmp_path: Path) -> None:
    trace = parse_swf(SWF_TEXT)
    path = tmp_path / "t.swf"
    write_swf(path, trace)
    again = read_swf(path)
    np.testing.assert_array_equal(again.data, trace.data)
    assert again.header == trace.header
    assert "12.5" in path.read_text() and " 100 " in path.read_text()


def test_swf_rejects_malformed_lines() -> None:
    with pytest.raises(ValueError, match="line 1 has 3 fields"):
        parse_swf("1 2 3\n")
    with pytest.raises(ValueError, match="shape"):
        SWFTrace(np.zeros((2, 5)))


def test_trace_from_records_keeps_wait_run_and_procs() -> None:
    from schedenv.moldable.sim import MoldableJobRecord

    record = MoldableJobRecord(job_id=0, arrival=5.0, size=40.0, completion=25.0, slowdown=2.0, start=15.0, procs=4)
    trace = trace_from_records([record], max_procs=8)
    assert trace.data[0, :5].tolist() == [1.0, 5.0, 10.0, 10.0, 4.0]
    assert trace.max_procs == 8
