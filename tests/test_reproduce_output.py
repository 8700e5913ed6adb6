"""``schedenv reproduce`` never touches the committed results unless asked (``--update-results``), nor with --quick."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pytest

import schedenv.reproduce
from schedenv.cli import main
from schedenv.reporting import RESULTS, compare_with_committed


def _digests() -> dict[str, str]:
    files = sorted(path for path in RESULTS.rglob("*") if path.is_file())
    return {str(path.relative_to(RESULTS)): hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


def test_quick_reproduction_writes_a_fresh_folder_and_leaves_committed_results_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digests()
    assert {"tags-fig4.md", "tags-fig4.png"} <= set(before)
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "tags-fig4", "--quick"]) == 0
    (folder,) = (tmp_path / "runs").iterdir()
    assert folder.name.startswith("reproduce-tags-fig4-")
    assert f"writing to runs/{folder.name}" in capsys.readouterr().err  # the fresh folder is printed
    assert sorted(path.name for path in folder.iterdir()) == ["tags-fig4.md", "tags-fig4.png"]
    assert "--quick" in (folder / "tags-fig4.md").read_text()  # the file says how it was made
    # a second run gets another fresh folder rather than overwriting the first
    assert main(["reproduce", "tags-fig4", "--quick"]) == 0
    assert len(list((tmp_path / "runs").iterdir())) == 2
    assert _digests() == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--quick", "--update-results"], "--update-results with --quick is refused"),
        (["--out", str(RESULTS)], "is the committed results folder; pass --update-results"),
        (["--out", str(RESULTS / "sub")], "is the committed results folder"),
        (["--update-results", "--out", "elsewhere"], "cannot be combined with --out elsewhere"),
        (["--quick", "--update-results", "--out", str(RESULTS / "sub")], "with --quick is refused"),
    ],
)
def test_writing_the_committed_results_by_accident_is_refused(
    argv: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digests()
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "tags-fig4", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert _digests() == before
    assert not (tmp_path / "runs").exists()


def test_unknown_figure_makes_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "tags-fig44"]) == 2
    assert "did you mean 'tags-fig4'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_commands_in_the_readme_docs_and_makefile_write_only_under_runs() -> None:
    """``git status`` stays clean after any documented command: outputs go to ``runs/`` (ignored by git)."""
    root = RESULTS.parents[1]
    texts = [root / "README.md", root / "Makefile", *sorted((root / "docs").rglob("*.md"))]
    commands = [
        re.split(r"\s#", line)[0].strip()  # without the trailing comment
        for path in texts
        for line in path.read_text().splitlines()
        if re.match(r"\s*(\$\(BIN\)/)?(schedenv|python benchmarks/)", line)
    ]
    assert len(commands) > 20
    for command in commands:
        assert "--update-results" not in command, command
        for out in re.findall(r"--out[ =](\S+)", command):
            assert out.startswith("runs/"), command
    assert "runs/" in (root / ".gitignore").read_text().splitlines()


PROVENANCE_OLD = (
    "# Fig. X\n\n| p | mean |\n|---|---|\n| 0.5 | 14.0738 |\n\n"
    "Command: `python benchmarks/reproduce/x.py` (commit 1a2b3c4). Seeds: [0, 1].\n"
    "Produced by `python benchmarks/reproduce/x.py` at commit `1a2b3c4` on x86_64, 2 cores, Python 3.11.7. "
    "CPU time 812 s.\n"
)


def test_comparison_ignores_provenance_and_reports_every_changed_number(tmp_path: Path) -> None:
    committed, fresh = tmp_path / "committed", tmp_path / "fresh"
    for folder in (committed, fresh):
        (folder / "sub").mkdir(parents=True)
    (committed / "a.md").write_text(PROVENANCE_OLD)
    # the same numbers from another command, commit (dirty), machine and run time: identical
    (fresh / "a.md").write_text(
        PROVENANCE_OLD.replace("x.py` (commit 1a2b3c4)", "x.py --out runs/r` (commit 9f8e7d6-dirty)")
        .replace(
            "at commit `1a2b3c4` on x86_64, 2 cores",
            "at commit `9f8e7d6` (with uncommitted changes) on arm64, 8 cores",
        )
        .replace("CPU time 812 s", "CPU time 95 s")
    )
    (committed / "sub" / "b.json").write_text('{"commit": "1a2b3c4", "mean": 1.25}\n')
    (fresh / "sub" / "b.json").write_text('{"commit": "9f8e7d6", "mean": 1.2500000000000002}\n')  # the last digit
    (fresh / "c.md").write_text("new\n")
    (fresh / "a.png").write_bytes(b"\x89PNG")
    comparison = compare_with_committed(fresh, committed)
    assert comparison.identical == ["a.md"]
    assert list(comparison.differing) == ["sub/b.json"]
    diff = comparison.differing["sub/b.json"]
    assert '-{"commit": "<provenance>", "mean": 1.25}' in diff
    assert '+{"commit": "<provenance>", "mean": 1.2500000000000002}' in diff
    assert comparison.new == ["c.md"] and comparison.not_compared == ["a.png"]
    assert not comparison.same
    report = comparison.report()
    assert "DIFFERS from the committed result: sub/b.json" in report and "1.2500000000000002" in report
    # a changed table cell is a difference even with the provenance masked
    (fresh / "sub" / "b.json").unlink()
    (fresh / "a.md").write_text(PROVENANCE_OLD.replace("14.0738", "14.0739"))
    assert list(compare_with_committed(fresh, committed).differing) == ["a.md"]
    # nothing compared is not "the same"
    assert not compare_with_committed(tmp_path / "empty", committed).same


def test_check_reruns_the_figure_and_finds_the_committed_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """tags-fig4 (closed forms, seconds) rerun through ``schedenv reproduce --check`` matches its committed file;
    the file records the script's own command line, one that reruns it."""
    before = _digests()
    monkeypatch.chdir(tmp_path)
    argv = list(sys.argv)
    assert main(["reproduce", "tags-fig4", "--check", "--quiet"]) == 0
    assert sys.argv == argv
    assert "identical to the committed results: tags-fig4.md" in capsys.readouterr().out
    (folder,) = (tmp_path / "runs").iterdir()
    assert (
        f"Command: `python benchmarks/reproduce/dispatch_fig4.py --quiet --out runs/{folder.name}`"
        in (folder / "tags-fig4.md").read_text()
    )
    assert _digests() == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--check", "--quick"], "--check with --quick is refused"),
        (["--check", "--update-results"], "--check with --update-results is refused"),
    ],
)
def test_check_refuses_what_it_cannot_compare(
    argv: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "tags-fig4", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_a_script_defining_a_dataclass_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With postponed annotations ``@dataclass`` looks its module up in ``sys.modules`` (the multiserver-gittins
    and dispatch-convergence scripts define dataclasses): ``run_figure`` registers the script's module first."""
    scripts = tmp_path / "benchmarks" / "reproduce"
    scripts.mkdir(parents=True)
    (scripts / "toy_figure.py").write_text(
        "from __future__ import annotations\n"
        "import dataclasses, sys\n"
        "FIGURE = 'toy-figure'\n"
        "DESCRIPTION = 'a script with a dataclass'\n\n"
        "@dataclasses.dataclass\n"
        "class Point:\n"
        "    x: float\n\n"
        "def main(argv):\n"
        "    print(Point(2.5).x, sys.argv)\n"
        "    return 0\n"
    )
    monkeypatch.setattr(schedenv.reproduce, "REPRODUCE_DIR", scripts)
    assert schedenv.reproduce.run_figure("toy-figure", ["--flag"]) == 0
    assert "2.5 ['benchmarks/reproduce/toy_figure.py', '--flag']" in capsys.readouterr().out
