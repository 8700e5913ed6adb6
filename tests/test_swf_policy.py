"""SWF replay: one policy per malformed field, the same in both families that replay SWF (issue 13).

See ``schedenv.traces.SWF_POLICY``: records the archive marks invalid are skipped and counted in one
warning; values no model can represent are refused with the line number.
"""

from __future__ import annotations

import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

from schedenv.moldable.env import MoldableEnv
from schedenv.multiserver.env import MultiserverJobEnv
from schedenv.multiserver.trace import read_swf_jobs
from schedenv.traces import MAX_SWF_TIME, SWFSkipWarning, parse_swf, read_replay, replay_jobs

HEADER = "; Version: 2.2\n; MaxProcs: 8\n"


def job(number: int, submit: float, run: float, procs: float, status: int = 1, requested: float | None = None) -> str:
    """One SWF line: allocated = ``procs``, requested = ``requested`` (default ``procs``)."""
    requested = procs if requested is None else requested
    fields = [number, submit, 0, run, procs, -1, -1, requested, -1, -1, status, 1, 1, -1, 1, -1, -1, -1]
    return " ".join(str(value) for value in fields)


GOOD = [job(1, 0, 100, 4), job(2, 10, 50, 2), job(3, 30, 20, 8), job(4, 60, 5, 1)]
INVALID = [
    job(5, 15, 100, 4, status=5),  # cancelled
    job(6, 20, -1, 4),  # missing run time
    job(7, 25, 0, 4),  # never ran
    job(8, -1, 10, 4),  # missing submit time
    job(9, 35, 10, -1, requested=-1),  # missing processor count
]


def write(tmp_path: Path, lines: list[str], name: str = "trace.swf") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "\n".join(lines) + "\n")
    return path


def test_invalid_records_are_skipped_counted_and_warned_once_in_both_families(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD[:2] + INVALID + GOOD[2:])
    with pytest.warns(SWFSkipWarning) as caught:
        replay = read_replay(path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "skipped 5 of 9 jobs" in message
    for reason in ("1 cancelled (status 5)", "1 missing run time", "1 zero run time", "1 missing submit time"):
        assert reason in message
    assert replay.skipped == 5 and sum(replay.skip_counts.values()) == 5
    assert replay.job_number.tolist() == [1, 2, 3, 4]
    assert replay.submit.tolist() == [0.0, 10.0, 30.0, 60.0]
    assert replay.run_time.tolist() == [100.0, 50.0, 20.0, 5.0]
    assert replay.procs.tolist() == [4, 2, 8, 1]
    assert replay.max_procs == 8

    with pytest.warns(SWFSkipWarning, match="skipped 5 of 9") as caught:
        arrivals, needs, durations = read_swf_jobs(path, n_servers=8)
    assert len(caught) == 1
    np.testing.assert_array_equal(arrivals, replay.submit)  # the same jobs in both families
    np.testing.assert_array_equal(durations, replay.run_time)
    np.testing.assert_array_equal(needs, [4, 2, 8, 1])  # k = MaxProcs: needs are the counts

    with pytest.warns(SWFSkipWarning, match="skipped 5 of 9") as caught:
        env = MoldableEnv(trace=str(path))
    assert len(caught) == 1
    assert env.fixed_jobs is not None
    np.testing.assert_array_equal(env.fixed_jobs.submit, replay.submit)
    np.testing.assert_array_equal(env.fixed_jobs.requested, replay.procs)
    assert env.n_procs == 8


def test_a_clean_file_gives_no_warning_and_equals_the_in_memory_replay(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        streamed = read_replay(path, n_jobs=3)
        parsed = replay_jobs(parse_swf(path.read_text()), n_jobs=3)
    for name in ("job_number", "submit", "run_time", "procs"):
        np.testing.assert_array_equal(getattr(streamed, name), getattr(parsed, name))
    assert streamed.job_number.tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (job(3, 30, "inf", 4), "run_time=inf cannot be represented"),
        (job(3, 30, "nan", 4), "run_time=nan cannot be represented"),
        (job(3, 30, -5, 4), "run_time=-5.0 must be -1 (missing)"),
        (job(3, -3, 10, 4), "submit_time=-3.0 must be -1 (missing)"),
        (job(3, 1e300, 10, 4), "submit_time=1e+300 must be -1 (missing) or in [0, 1e+12]"),
        (job(3, 30, 10, 2.5), "processors=2.5 must be -1 (missing) or an integer"),
        (job(3, 30, 10, 16), "processor count=16.0 is above the header's MaxProcs=8"),
        (job(3, 30, 10, -4), "processors=-4.0 must be -1 (missing) or an integer"),
    ],
)
@pytest.mark.parametrize("family", ["moldable", "multiserver", "in-memory"])
def test_unrepresentable_values_are_refused_with_the_line_number(
    tmp_path: Path, line: str, reason: str, family: str
) -> None:
    path = write(tmp_path, [*GOOD[:2], line, *GOOD[2:]])
    where = "job row 3" if family == "in-memory" else "line 5"  # two header lines come first
    with pytest.raises(ValueError) as error:
        if family == "moldable":
            MoldableEnv(trace=str(path))
        elif family == "multiserver":
            read_swf_jobs(path, n_servers=8)
        else:
            replay_jobs(parse_swf(path.read_text()))
    message = str(error.value)
    assert where in message and reason in message and "SWF_POLICY" in message


def test_the_largest_allowed_submit_time_replays_without_error(tmp_path: Path) -> None:
    path = write(tmp_path, [job(1, 0, 100, 4), job(2, MAX_SWF_TIME, 100, 4)])
    env = MoldableEnv(trace=str(path))
    env.reset(seed=0)
    done, steps = False, 0
    while not done:
        mask = env.action_masks()
        _, reward, done, _, info = env.step(int(np.flatnonzero(mask)[-1]))
        assert np.isfinite(reward)
        steps += 1
    assert info["episode_metrics"]["mean_response_time"] >= 100.0


def test_streamed_reading_keeps_memory_near_the_kept_jobs(tmp_path: Path) -> None:
    # 100,000 lines (about 6 MB), of which 100 are replayable: the reader holds the 100, not the file.
    lines = [job(i + 1, i, 10, 4, status=1 if i % 1000 == 0 else 5) for i in range(100_000)]
    path = write(tmp_path, lines)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.warns(SWFSkipWarning, match="skipped 99900 of 100000"):
            replay = read_replay(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(replay.submit) == 100
    assert size > 5_000_000
    assert peak < size / 20  # well under the file's size (parse_swf would hold 100,000 x 18 floats)


@pytest.mark.parametrize("run", ["1e-300", "1e-6"])
def test_a_run_time_the_replay_cannot_resolve_is_refused(tmp_path: Path, run: str) -> None:
    """The policy admits any run time in [0, MAX_SWF_TIME]; against submit times near 1e7 s, 1e-300 s and 1 us
    are lost to float64 rounding (1e-300 s to a zero response time), so the replay refuses the trace, naming it.
    The multiserver replay rescales arrival times to its load first, so only 1e-300 s is beyond it there."""
    path = write(tmp_path, [*GOOD, job(10, 9_999_000, run, 2)])
    with pytest.raises(ValueError, match=r"trace is not allowed: .* times its shortest run time \(job 4: "):
        MoldableEnv(trace=str(path))
    if run == "1e-300":
        with pytest.raises(ValueError, match=r"trace is not allowed: .* times its smallest size \(job 4: 1e-300\)"):
            MultiserverJobEnv(trace=str(path), n_servers=8)
    else:
        assert MultiserverJobEnv(trace=str(path), n_servers=8).jobs is not None
