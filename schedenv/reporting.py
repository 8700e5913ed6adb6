"""Small helpers for result files: Markdown tables and provenance (command, commit, machine).

Every committed result says which command produced it: the exact command and the commit
(docs/results/index.md). Only ``--update-results`` writes the committed results; by default a
reproduction writes to a fresh folder (``output_folder``).
"""

from __future__ import annotations

import argparse
import difflib
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from schedenv.progress import set_quiet

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
"""The committed results of a source checkout: written only with ``--update-results``."""


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--out``, ``--update-results`` and ``--quiet``: the output flags of every reproduction script."""
    parser.add_argument(
        "--out",
        default=None,
        help="output folder (default: a fresh runs/results-<time> under the working directory, printed)",
    )
    parser.add_argument(
        "--update-results",
        action="store_true",
        help="rewrite the committed results in benchmarks/results/ (never with --quick)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def output_folder(out: str | None, update_results: bool, quick: bool, name: str = "results") -> Path:
    """Where a reproduction writes: ``out``, the committed results with ``update_results``, else a fresh folder.

    The fresh folder is ``runs/<name>-<YYYYmmdd-HHMMSS>`` under the working directory (``runs/`` is
    ignored by git in a checkout), printed on stderr. Refused: ``--update-results`` with ``--quick``
    (a quick run's numbers never replace the committed ones), with another ``--out``, and an
    ``--out`` inside ``benchmarks/results/`` without ``--update-results``.
    """
    if update_results:
        if quick:
            raise ValueError(
                "--update-results with --quick is refused: quick numbers never replace the committed results "
                "(drop --quick to regenerate them, or --update-results to write a quick run elsewhere)"
            )
        if out is None:
            return RESULTS
        if not _committed(Path(out)):
            raise ValueError(f"--update-results writes inside {RESULTS}; it cannot be combined with --out {out}")
        return Path(out)
    if out is not None:
        if _committed(Path(out)):
            raise ValueError(
                f"--out {out} is the committed results folder; pass --update-results to rewrite it on purpose"
            )
        return Path(out)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = Path("runs") / f"{name}-{stamp}"
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = Path("runs") / f"{name}-{stamp}-{suffix}"
    folder.mkdir(parents=True)
    print(f"writing to {folder}", file=sys.stderr)
    return folder


def _committed(folder: Path) -> bool:
    """True if ``folder`` is the committed results folder or inside it."""
    chosen = folder.resolve()
    return chosen == RESULTS or RESULTS in chosen.parents


def resolve_output_args(args: argparse.Namespace) -> Path:
    """``output_folder`` for parsed ``add_output_arguments`` flags (and ``--quick``, when the script has it);
    ``--quiet`` silences the progress bars."""
    set_quiet(bool(args.quiet))
    return output_folder(args.out, args.update_results, bool(getattr(args, "quick", False)))


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def git_commit(*, full: bool = False) -> str:
    """The checkout's commit (abbreviated, or all 40 hex digits with ``full``; with ``-dirty`` if it has
    changes), or ``unknown``."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", *([] if full else ["--short"]), "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("-dirty" if dirty.strip() else "")


def provenance(command: str | None = None) -> str:
    """A Markdown paragraph naming the command, commit, Python and machine of a run."""
    command = command or " ".join(["python", *sys.argv])
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    commit = git_commit()
    if commit.endswith("-dirty"):
        commit = f"`{commit.removesuffix('-dirty')}` (with uncommitted changes)"
    else:
        commit = f"`{commit}`"
    return f"Produced by `{command}` at commit {commit} on {machine}."


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a killed run leaves no torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


PROVENANCE = (
    (re.compile(r"Produced by `[^`]*` at commit .*$", re.MULTILINE), "Produced by <command> at <commit>"),
    (re.compile(r"Command: `[^`]*`"), "Command: `<command>`"),
    (re.compile(r"\(commit [0-9a-f]+(-dirty)?\)"), "(commit <commit>)"),
    (re.compile(r"(Wall|CPU) time [0-9.]+ (minutes|s)\b"), r"\1 time <time>"),
    (re.compile(r'"(command|commit|machine)": "[^"]*"'), r'"\1": "<provenance>"'),
)
"""What ``compare_with_committed`` ignores: the provenance a result file states (command, commit, machine,
run time), which differs between any two runs; everything else, every number included, must match."""
COMPARED_SUFFIXES = (".md", ".json", ".csv", ".txt")
"""The result files compared as text; images (``.png``) are not compared: their bytes follow matplotlib's version."""


@dataclass
class ResultComparison:
    """How a folder of fresh results compares with the committed ones of the same names (``compare_with_committed``)."""

    identical: list[str] = field(default_factory=list)
    """Files equal to the committed ones, provenance aside."""
    differing: dict[str, list[str]] = field(default_factory=dict)
    """File -> the unified diff (committed, then fresh) of the lines that differ."""
    new: list[str] = field(default_factory=list)
    """Files with no committed counterpart."""
    not_compared: list[str] = field(default_factory=list)
    """Files of other kinds (images)."""

    @property
    def same(self) -> bool:
        """True if no compared file differs and at least one was compared."""
        return not self.differing and bool(self.identical)

    def report(self, diff_lines: int = 40) -> str:
        """A plain-text account: identical, differing (with at most ``diff_lines`` diff lines each), new, skipped."""
        lines = [f"identical to the committed results: {', '.join(self.identical) or 'none'}"]
        for name, diff in self.differing.items():
            lines.append(f"DIFFERS from the committed result: {name}")
            lines += diff[:diff_lines]
            if len(diff) > diff_lines:
                lines.append(f"... ({len(diff) - diff_lines} more diff lines)")
        if self.new:
            lines.append(f"no committed counterpart: {', '.join(self.new)}")
        if self.not_compared:
            lines.append(f"not compared (images): {', '.join(self.not_compared)}")
        return "\n".join(lines)


def _without_provenance(text: str) -> list[str]:
    for pattern, replacement in PROVENANCE:
        text = pattern.sub(replacement, text)
    return text.splitlines()


def compare_with_committed(folder: Path, committed: Path = RESULTS) -> ResultComparison:
    """Compare every file a reproduction wrote into ``folder`` with the committed file of the same relative path
    under ``committed`` (``schedenv reproduce NAME --check``): text results line by line with their provenance
    masked (``PROVENANCE``), so that a fresh run of an unchanged simulator matches to the last digit."""
    comparison = ResultComparison()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        name = str(path.relative_to(folder))
        if path.suffix not in COMPARED_SUFFIXES:
            comparison.not_compared.append(name)
            continue
        reference = committed / name
        if not reference.is_file():
            comparison.new.append(name)
            continue
        old, fresh = _without_provenance(reference.read_text()), _without_provenance(path.read_text())
        if old == fresh:
            comparison.identical.append(name)
        else:
            diff = difflib.unified_diff(old, fresh, f"committed/{name}", f"fresh/{name}", n=0, lineterm="")
            comparison.differing[name] = list(diff)
    return comparison
