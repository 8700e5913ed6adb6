"""``schedenv reproduce`` never touches the committed results unless asked (``--update-results``), nor with --quick."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from schedenv.cli import main
from schedenv.reporting import RESULTS


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
