"""``benchmarks/dispatch_cutoffs.py``: TAGS and TAGS with cycle stealing at every rung of the preset's ladder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import dispatch_cutoffs


def test_the_analysis_rung_is_tags_slowdown_itself_and_stealing_helps_there() -> None:
    """At the analysis's rung plain TAGS is TAGS-slowdown (ratio exactly 1); stealing lowers it there, and
    on the rungs far below every rule kills almost every job (ratios far above 1). A central first stage
    lowers it further."""
    kwargs = dispatch_cutoffs.preset_kwargs(n_arrivals=3_000, load=0.5)
    rows = dispatch_cutoffs.cutoff_table(kwargs, n_seeds=3)
    analysis = dispatch_cutoffs.analysis_rung(kwargs)
    by_cutoff = {cutoff: ratios for cutoff, *ratios in rows}
    assert len(rows) == 18 and analysis in by_cutoff
    tags, stealing, central = by_cutoff[analysis]
    assert tags == 1.0 and stealing < 1.0
    lowest = min(by_cutoff)
    assert min(by_cutoff[lowest]) > 10
    assert central < stealing < tags  # the central first stage sheds host 0's work at least as well


def test_the_table_marks_the_analysis_rung_and_refuses_no_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch_cutoffs.main(["--seeds", "2", "--n-arrivals", "2000"]) == 0
    out = capsys.readouterr().out
    assert "| 7,648.2 | 1.0000 |" in out and "analysis" in out and out.count("\n| ") == 19  # header + 18 rungs
    assert out.count("tags-cs-tuned") == 1 and out.count("tags-cq-tuned") == 1 and "| central first stage |" in out
    with pytest.raises(SystemExit):
        dispatch_cutoffs.main(["--seeds", "0"])
    assert "--seeds 0 is not allowed" in capsys.readouterr().err
