"""Code lines of the ``schedenv`` package, now and at a git revision (docs/architecture.md, "Layout").

A code line is a line that holds a token of code: blank lines, comments and docstrings (a module's,
class's or function's first string, and the attribute docstrings written after assignments) do not
count, and a statement written over several lines counts each of them. The count is what "fewer
lines for the same features" compares: the package's size without its documentation.

    python benchmarks/code_lines.py                      # the working tree, by folder
    python benchmarks/code_lines.py --base f9ed67d~1     # beside the package at that revision

Reads files only (``git show`` for a revision); writes nothing.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tokenize
from collections import Counter
from pathlib import Path, PurePosixPath

from schedenv.reporting import markdown_table

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "schedenv"
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def code_lines(source: str) -> int:
    """The code lines of the Python ``source`` (module doc)."""
    documentation: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            documentation.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in SKIPPED:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - documentation)


def _folder(path: PurePosixPath) -> str:
    """The package folder ``path`` lies in (``schedenv/`` for its top-level modules)."""
    return "/".join(path.parts[:2]) + "/" if len(path.parts) > 2 else f"{PACKAGE}/"


def count_tree() -> Counter[str]:
    """Code lines per folder of the package in the working tree."""
    counts: Counter[str] = Counter()
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        counts[_folder(PurePosixPath(path.relative_to(ROOT).as_posix()))] += code_lines(path.read_text())
    return counts


def count_revision(revision: str) -> Counter[str]:
    """Code lines per folder of the package at git ``revision``."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout

    counts: Counter[str] = Counter()
    for name in git("ls-tree", "-r", "--name-only", revision, PACKAGE).split():
        if name.endswith(".py"):
            counts[_folder(PurePosixPath(name))] += code_lines(git("show", f"{revision}:{name}"))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default=None, help="a git revision to count beside the working tree")
    args = parser.parse_args(argv)
    now = count_tree()
    before = count_revision(args.base) if args.base else None
    folders = sorted(set(now) | set(before or {}))
    if before is None:
        rows = [(folder, f"{now[folder]:,}") for folder in folders] + [("total", f"{sum(now.values()):,}")]
        print(markdown_table(["folder", "code lines"], rows))
        return 0
    rows = [
        (folder, f"{before[folder]:,}", f"{now[folder]:,}", f"{now[folder] - before[folder]:+,}") for folder in folders
    ]
    total_before, total_now = sum(before.values()), sum(now.values())
    rows.append(("total", f"{total_before:,}", f"{total_now:,}", f"{total_now - total_before:+,}"))
    print(markdown_table(["folder", f"code lines at {args.base}", "working tree", "change"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
