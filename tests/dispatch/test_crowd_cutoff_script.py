"""``benchmarks/dispatch_crowd_cutoff.py``: ``tags-cq-crowd-tuned`` against ``tags-cq-idle-tuned`` per load
(docs/baselines/dispatch.md, "tags-cq-crowd-tuned")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import schedenv  # noqa: F401 - registers the env ids
from baselines.dispatch import TagsCentralQueueCrowdTuned
from schedenv.dispatch.env import DispatchEnv

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import dispatch_crowd_cutoff
import dispatch_cutoffs


def test_a_row_per_load_with_the_chosen_rungs_and_consistent_ratios() -> None:
    """Each row names the rungs ``tags-cq-crowd-tuned`` chose for that load's scenario, and its ratio to
    ``tags-cq-idle-tuned`` is the quotient of the two ratios to TAGS-slowdown."""
    rows = dispatch_crowd_cutoff.crowd_rows(2_000, [0.5, 0.7], 3)
    assert [row[0] for row in rows] == [0.5, 0.7]
    for load, cutoff, idle, crowd, threshold, idle_ratio, crowd_ratio, ratio, per_seed, wins in rows:
        chosen = TagsCentralQueueCrowdTuned()
        chosen.reset(DispatchEnv(**dispatch_cutoffs.preset_kwargs(2_000, load)))
        assert (cutoff, idle, crowd, threshold) == (
            chosen.cutoffs[0],
            chosen.idle_cutoff,
            chosen.crowd_cutoff,
            chosen.crowd_threshold,
        )
        assert ratio == pytest.approx(crowd_ratio / idle_ratio, rel=1e-12)
        assert 0 <= wins <= 3 and per_seed.mean > 0


def test_the_table_refuses_bad_loads(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch_crowd_cutoff.main(["--seeds", "2", "--n-arrivals", "2000", "--loads", "0.5"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.endswith("/ 2 |")]
    assert len(lines) == 1 and lines[0].startswith("| 0.5 |")
    for bad in ("1.5", "half"):
        with pytest.raises(SystemExit):
            dispatch_crowd_cutoff.main(["--seeds", "2", "--loads", bad])
        assert f"--loads {bad!r} is not allowed" in capsys.readouterr().err
