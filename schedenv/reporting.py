"""Small helpers for result files: Markdown tables and provenance (command, commit, machine).

Every committed result says which command produced it (STYLE.md, "Benchmarks report ... with the
exact command and the commit that produced it").
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


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
    return f"Produced by `{command}` at commit `{git_commit()}` on {machine}."


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a killed run leaves no torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
