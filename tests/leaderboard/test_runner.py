"""The leaderboard run end to end on tiny scenarios: outputs, cache reuse, resume after kill -9, filters, errors."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from gymnasium.spaces import Box

import baselines
from schedenv import cli
from schedenv.leaderboard import LeaderboardResult, run_leaderboard, suite
from schedenv.leaderboard.scenario import Scenario
from schedenv.leaderboard.table import COLUMNS
from tests.leaderboard.conftest import tiny_scenario

REQUIRED_JSON = ("family", "scenario", "contender", "mean", "ci95", "ratio_to_reference", "n_seeds")


def _run(out: Path, scenario_list: list[Scenario], **kwargs: Any) -> LeaderboardResult:
    return run_leaderboard(
        "test", out=out, scenario_list=scenario_list, workers=1, progress=False, command="test", **kwargs
    )


def test_outputs_hold_the_tables_the_issue_asks_for(tmp_path: Path, tiny: list[Scenario]) -> None:
    result = _run(tmp_path, tiny, contenders="equi,srpt")
    document = json.loads((tmp_path / "leaderboard.json").read_text())
    rows = document["rows"]
    assert {(r["scenario"], r["contender"]) for r in rows} == {
        (s.name, c) for s in tiny for c in ("hesrpt", "equi", "srpt")
    }, "the paper policy always runs, even when --contenders leaves it out"
    for row in rows:
        assert all(key in row for key in REQUIRED_JSON)
        assert row["n_seeds"] == 3 and row["status"] == "ok"
        assert row["ratio_to_reference"] >= 1 - 1e-9, "heSRPT is optimal offline (Theorem 5)"
    assert all(check["holds"] is True for check in document["claims"])
    record = document["record"]
    assert record["command"] == "test" and record["packages"]["numpy"] and record["machine"]["cpu_count"]
    assert set(record["git"]) == {"commit", "dirty"}
    assert record["cells"] == {"total": 6, "computed": 6, "cached": 0, "failed": 0, "excluded": 0}
    with (tmp_path / "leaderboard.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == COLUMNS and len(table) == 6
    markdown = (tmp_path / "leaderboard.md").read_text()
    assert "### tiny-p0.3" in markdown and "**hesrpt**" in markdown and "holds" in markdown
    assert "![malleable](leaderboard_malleable.png)" in markdown
    assert (tmp_path / "leaderboard_malleable.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not result.failed


def test_progress_off_a_terminal_is_one_line_per_cell(
    tmp_path: Path, tiny: list[Scenario], capsys: pytest.CaptureFixture[str]
) -> None:
    run_leaderboard("test", out=tmp_path, scenario_list=tiny, contenders="equi", workers=1, command="test")
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == [f"leaderboard test: {i}/4 cell ({25 * i}%)" for i in range(1, 5)]
    assert {line.split(", ")[-1] for line in lines} == {f"{s.label} {c}" for s in tiny for c in ("hesrpt", "equi")}


def test_second_run_reads_every_cell_from_the_cache(tmp_path: Path, tiny: list[Scenario]) -> None:
    _run(tmp_path, tiny, contenders="equi")
    first = (tmp_path / "leaderboard.csv").read_text()
    again = _run(tmp_path, tiny, contenders="equi")
    assert again.record["cells"]["computed"] == 0 and again.record["cells"]["cached"] == 4
    assert (tmp_path / "leaderboard.csv").read_text() == first


def test_process_pool_gives_the_numbers_of_the_in_process_run(tmp_path: Path, tiny: list[Scenario]) -> None:
    _run(tmp_path / "one", tiny, contenders="equi,knee")
    run_leaderboard("test", out=tmp_path / "two", scenario_list=tiny, contenders="equi,knee", workers=2, progress=False)
    assert (tmp_path / "one" / "leaderboard.csv").read_text() == (tmp_path / "two" / "leaderboard.csv").read_text()


RESUMABLE = [
    "leaderboard",
    "--suite",
    "quick",
    "--scenarios",
    "malleable/offline-*",
    "--workers",
    "1",
    "--no-progress",
]


def test_resume_after_kill_9_recomputes_nothing_and_gives_the_same_table(tmp_path: Path) -> None:
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    command = [sys.executable, "-m", "schedenv.cli", *RESUMABLE, "--out", str(killed)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cells = killed / "cells"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(cells.glob("*.json"))) < 3:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished = len(list(cells.glob("*.json")))
    total = 2 * len(_contenders())
    assert 3 <= finished < total, "the run must be killed part-way"
    for path in cells.glob("*.json"):
        json.loads(path.read_text())

    assert cli.main([*RESUMABLE, "--out", str(killed)]) in (0, 1)
    resumed = json.loads((killed / "leaderboard.json").read_text())["record"]["cells"]
    assert resumed["cached"] == finished and resumed["computed"] + resumed["failed"] == total - finished
    assert cli.main([*RESUMABLE, "--out", str(clean)]) in (0, 1)
    assert (killed / "leaderboard.csv").read_text() == (clean / "leaderboard.csv").read_text()
    first, second = (json.loads((d / "leaderboard.json").read_text()) for d in (killed, clean))
    assert first["rows"] == second["rows"] and first["claims"] == second["claims"]


def _contenders() -> list[str]:
    return [n for n in baselines.available("schedenv/Malleable-v0") if baselines.make(n).name == n]


def test_failing_cells_are_reported_not_cached_and_make_the_command_fail(tmp_path: Path) -> None:
    broken = replace(tiny_scenario("broken"), env_kwargs={"mode": "offline", "n_jobs": 0})
    result = _run(tmp_path, [broken], contenders="equi")
    assert [row["contender"] for row in result.failed] == ["hesrpt", "equi"]
    assert "n_jobs" in result.failed[0]["note"]
    assert not list((tmp_path / "cells").glob("*.json"))
    assert "## Failures" in (tmp_path / "leaderboard.md").read_text()


def test_excluded_contenders_are_listed_but_not_run(tmp_path: Path) -> None:
    scenario = replace(tiny_scenario(), exclude={"equi": "not in this setting"})
    result = _run(tmp_path, [scenario], contenders="equi,srpt")
    row = next(r for r in result.rows if r["contender"] == "equi")
    assert (row["status"], row["note"], row["mean"]) == ("not applicable", "not in this setting", None)
    assert result.record["cells"]["excluded"] == 1 and result.record["cells"]["computed"] == 2


def test_filters_reject_names_that_match_nothing_and_suggest(tmp_path: Path, tiny: list[Scenario]) -> None:
    with pytest.raises(ValueError, match=r"matches no baseline.*did you mean 'equi'"):
        _run(tmp_path, tiny, contenders="eqii")
    with pytest.raises(ValueError, match="matches no scenario"):
        _run(tmp_path, tiny, scenarios="nothing-like-it")
    result = _run(tmp_path, tiny, scenarios="*p0.3", contenders="srpt")
    assert [p.scenario.name for p in result.plans] == ["tiny-p0.3"]


def test_quick_suite_filters_by_family(tmp_path: Path) -> None:
    names = {s.family for s in suite("quick")}
    assert "malleable" in names
    with pytest.raises(ValueError, match="suite"):
        suite("quik")


def test_agent_flag_without_the_rl_harness_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)
    argv = ["leaderboard", "--scenarios", "malleable/offline-*", "--agent", str(tmp_path), "--out", str(tmp_path)]
    assert cli.main(argv) == 2
    assert "the RL harness (the 'agents' package) cannot be imported" in capsys.readouterr().err


class _HeSRPTAgent:
    """Stands in for a trained agent: acts like heSRPT and says which env id it acts on."""

    name = "ppo"
    env_id = "schedenv/Malleable-v0"

    def __init__(self, observation_space: object = None) -> None:
        self.policy = baselines.make("hesrpt")
        self.observation_space = observation_space

    def reset(self, env: object) -> None:
        self.policy.reset(env)  # type: ignore[arg-type]

    def act(self, observation: object, env: object) -> object:
        return self.policy.act(observation, env)  # type: ignore[arg-type]


def test_agents_join_their_family_and_retraining_invalidates_their_cells(
    tmp_path: Path, tiny: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = types.ModuleType("agents")
    fake.load = lambda path: _HeSRPTAgent(Box(0, 1, (5,)) if path.endswith("wide") else None)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agents", fake)
    model, wide = tmp_path / "agent", tmp_path / "wide"
    for folder in (model, wide):
        folder.mkdir()
        (folder / "model.zip").write_bytes(b"v1")
    out = tmp_path / "out"
    result = _run(out, tiny, contenders="equi", agents=[str(model), str(wide)])
    agent_rows = [r for r in result.rows if r["contender"] == "ppo"]
    assert [r["kind"] for r in agent_rows] == ["agent", "agent"]
    assert all(r["ratio_to_reference"] == pytest.approx(1.0) for r in agent_rows)
    misfits = [r for r in result.rows if r["contender"] == "agent:ppo"]
    assert [r["status"] for r in misfits] == ["not applicable"] * 2 and "shape (5,)" in misfits[0]["note"]
    (model / "model.zip").write_bytes(b"v2")
    again = _run(out, tiny, contenders="equi", agents=[str(model)])
    assert again.record["cells"]["computed"] == 2, "only the retrained agent's cells are recomputed"


def test_cli_flags(tmp_path: Path) -> None:
    assert cli.main(["leaderboard", "--address", "auto", "--out", str(tmp_path)]) == 2
    with pytest.raises(SystemExit):
        cli.main(["leaderboard", "--suite", "huge"])
    with pytest.raises(SystemExit):
        cli.main(["leaderboard", "--backend", "spark"])
