"""``benchmarks/dispatch_idle_cutoff.py``: TAGS with a central first stage whose first cutoff depends on the
long-job host (docs/baselines/dispatch.md, "tags-cq-idle-tuned")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import schedenv  # noqa: F401 - registers the env ids
from baselines.dispatch import TagsCentralQueueIdleTuned
from schedenv.dispatch.env import DispatchEnv

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import dispatch_cutoffs
import dispatch_idle_cutoff

KWARGS = dispatch_cutoffs.preset_kwargs(n_arrivals=3_000, load=0.5)


def test_one_cutoff_for_both_states_is_tags_cq_tuned_exactly() -> None:
    """No step down (the idle rung is the tuned one): the rule is ``tags-cq-tuned``, seed for seed; a step down
    changes the episodes."""
    (same, lower) = dispatch_idle_cutoff.idle_cutoff_rows(KWARGS, 3, [0, 2])
    idle, busy, ratio, per_seed, wins = same
    assert idle == busy and ratio == 1.0 and per_seed.mean == 1.0 and per_seed.ci95 == 0.0 and wins == 0
    assert lower[0] < lower[1] == busy and lower[2] != 1.0


def test_the_table_has_a_row_per_step_and_refuses_bad_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch_idle_cutoff.main(["--seeds", "2", "--n-arrivals", "2000", "--below", "1,2", "--loads", "0.5"]) == 0
    lines = [line.split(" | ") for line in capsys.readouterr().out.splitlines() if "/ 2 |" in line]
    rows = [row for row in lines if len(row) == 5]  # the first table's; the registered rule's has 7 columns
    assert len(lines) == 3 and lines[-1][0] == "| 0.5"
    idle = [float(row[0].strip("| ").replace(",", "")) for row in rows]
    busy = {row[1] for row in rows}
    assert len(rows) == 2 and len(busy) == 1 and idle[0] > idle[1]  # one and two rungs below the tuned one
    with pytest.raises(SystemExit):
        dispatch_idle_cutoff.main(["--seeds", "2", "--n-arrivals", "2000", "--below", "99"])
    assert "--below 99 is not allowed" in capsys.readouterr().err


def test_the_registered_table_has_a_row_per_load_and_refuses_bad_loads(capsys: pytest.CaptureFixture[str]) -> None:
    """One row per load of ``--loads``: the rungs ``tags-cq-idle-tuned`` chose for that load's scenario, and its
    ratio to ``tags-cq-tuned`` as the quotient of the two ratios to TAGS-slowdown."""
    rows = dispatch_idle_cutoff.registered_rows(2_000, [0.3, 0.5], 2)
    assert [row[0] for row in rows] == [0.3, 0.5]
    for load, cutoff, idle, tuned, registered, ratio, wins in rows:
        chosen = TagsCentralQueueIdleTuned()
        chosen.reset(DispatchEnv(**dispatch_cutoffs.preset_kwargs(2_000, load)))
        assert (cutoff, idle) == (chosen.cutoffs[0], chosen.idle_cutoff)
        assert ratio == pytest.approx(registered / tuned, rel=1e-12) and 0 <= wins <= 2
    with pytest.raises(SystemExit):
        dispatch_idle_cutoff.main(["--seeds", "2", "--n-arrivals", "2000", "--loads", "0.5,1.5"])
    assert "--loads '0.5,1.5' is not allowed; every load must lie in (0, 1)" in capsys.readouterr().err
