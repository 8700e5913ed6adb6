"""The README is a front page: short, with its RL table generated from the committed results JSON."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import readme_results  # noqa: E402
import rl_versus_paper  # noqa: E402


def test_the_readme_is_a_front_page_of_at_most_10_kb() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 10 * 1024


def test_the_readme_results_table_is_what_the_results_json_gives() -> None:
    text = (ROOT / "README.md").read_text()
    expected = readme_results.block(readme_results.published(), sorted(rl_versus_paper.PRESETS))
    assert readme_results.readme_block(text) == expected, "run: python benchmarks/readme_results.py --update-readme"
