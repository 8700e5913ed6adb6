"""Progress of long runs: tqdm's bar on a terminal, one plain line per step otherwise (schedenv.progress)."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest
from tqdm import tqdm

from schedenv import progress
from schedenv.progress import LineProgress, progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """perf_counter reads 100 s at the start, then 10 s more at every later call."""
    ticks = itertools.count(100.0, 10.0)
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(ticks))


@pytest.mark.usefixtures("clock")
def test_off_a_terminal_every_step_prints_one_line_with_the_time_left(capsys: pytest.CaptureFixture[str]) -> None:
    seen = list(progress_bar(["a", "b", "c"], desc="fig", unit="point"))
    assert seen == ["a", "b", "c"]
    # After step 1, 10 s elapsed: 10 s per step, 2 steps to go. After step 2, 20 s: 1 step of 10 s to go.
    assert capsys.readouterr().err.splitlines() == [
        "fig: 1/3 point (33%), 00:10 elapsed, about 00:20 left",
        "fig: 2/3 point (67%), 00:20 elapsed, about 00:10 left",
        "fig: 3/3 point (100%), 00:30 elapsed",
    ]


@pytest.mark.usefixtures("clock")
def test_resumed_runs_estimate_from_the_steps_done_now_and_show_the_postfix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with progress_bar(total=10, initial=6, desc="leaderboard quick", unit="cell") as bar:
        bar.set_postfix_str("k8-exp maxweight", refresh=False)
        bar.write("cell x failed")
        bar.update(1)
    # 4 of 10 cells came from the cache: one computed in 10 s leaves 3 to compute, 30 s.
    assert capsys.readouterr().err.splitlines() == [
        "cell x failed",
        "leaderboard quick: 7/10 cell (70%), 00:10 elapsed, about 00:30 left, k8-exp maxweight",
    ]


def test_disabled_progress_prints_only_messages(capsys: pytest.CaptureFixture[str]) -> None:
    bar = progress_bar(total=2, desc="quiet", disable=True)
    bar.update()
    bar.write("a message")
    bar.close()
    assert capsys.readouterr().err == "a message\n"


def test_without_a_total_the_line_counts_steps(capsys: pytest.CaptureFixture[str]) -> None:
    list(progress_bar(iter("xy"), desc="stream", unit="item"))
    assert [line.split(",")[0] for line in capsys.readouterr().err.splitlines()] == ["stream: 1 item", "stream: 2 item"]
    with pytest.raises(TypeError, match="without an iterable"):
        list(LineProgress(total=3, desc="no iterable"))


def test_on_a_terminal_it_is_a_tqdm_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(progress.sys, "stderr", terminal)
    bar = progress_bar(range(3), desc="fig", unit="point")
    assert isinstance(bar, tqdm)
    assert list(bar) == [0, 1, 2]
    assert "\r" in terminal.getvalue() and "3/3" in terminal.getvalue()


def test_quiet_silences_every_bar_until_restored(capsys: pytest.CaptureFixture[str]) -> None:
    progress.set_quiet(True)
    try:
        assert list(progress_bar([1, 2], desc="fig")) == [1, 2]
        assert capsys.readouterr().err == ""
    finally:
        progress.set_quiet(False)
    list(progress_bar([1], desc="fig"))
    assert capsys.readouterr().err.startswith("fig: 1/1")


def test_reproduce_quiet_prints_no_progress_only_the_output_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedenv.cli import main

    monkeypatch.chdir(tmp_path)
    try:
        assert main(["reproduce", "tags-fig13", "--quick", "--quiet"]) == 0
    finally:
        progress.set_quiet(False)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("writing to runs/reproduce-tags-fig13-")
