"""``benchmarks/code_lines.py``: what counts as a code line (docs/architecture.md, "Layout")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import code_lines

SOURCE = '''"""A module docstring
over two lines."""

import math  # a comment after code: the line counts

# a comment alone


def area(radius: float) -> float:
    """A function docstring."""
    value = (
        math.pi
        * radius**2
    )
    return value


LIMIT = 3
"""An attribute docstring."""
TEXT = "a string assigned is code"
'''


def test_a_code_line_holds_code_and_no_documentation() -> None:
    # import, def, the four lines of the assignment, return, LIMIT, TEXT
    assert code_lines.code_lines(SOURCE) == 9
    assert code_lines.code_lines("") == 0
    assert code_lines.code_lines('"""Only a docstring."""\n') == 0


def test_the_package_is_counted_by_folder() -> None:
    counts = code_lines.count_tree()
    assert set(counts) >= {"schedenv/", "schedenv/moldable/", "schedenv/dispatch/", "schedenv/malleable/"}
    moldable = Path(code_lines.ROOT / "schedenv" / "moldable")
    assert counts["schedenv/moldable/"] == sum(code_lines.code_lines(p.read_text()) for p in moldable.rglob("*.py"))
