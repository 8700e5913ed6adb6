"""The README is a front page: short, with its RL table generated from the committed results JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_the_readme_is_a_front_page_of_at_most_10_kb() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 10 * 1024


def test_the_readme_results_table_is_what_the_results_json_gives() -> None:
    pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")
    import readme_results
    import rl_versus_paper

    text = (ROOT / "README.md").read_text()
    expected = readme_results.block(readme_results.published(), sorted(rl_versus_paper.PRESETS))
    assert readme_results.readme_block(text) == expected, "run: python benchmarks/readme_results.py --update-readme"
