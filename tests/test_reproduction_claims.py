"""The checked-claim logic of the TAGS and HRF reproduction scripts, on hand-made tables."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

# benchmarks/ is not a package: the scripts are modules of benchmarks/reproduce.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce"))
from dispatch_fig6 import waiting_time_claim
from dispatch_fig8 import crossing
from moldable_common import trend_claim
from moldable_fig6 import fig6_claims


def test_trend_claim_holds_partly_or_not() -> None:
    swept = [0.5, 1.0, 1.5]
    rising = {("light", "hrf-fcfs"): {"AWT": [1.0, 2.0, 3.0]}, ("heavy", "hrf-easy"): {"AWT": [1.0, 1.5, 4.0]}}
    assert trend_claim("x", rising, "AWT", True, swept, "alpha").status == "holds"
    rising[("heavy", "hrf-easy")]["AWT"] = [1.0, 0.9, 4.0]  # one step down, but up overall
    checked = trend_claim("x", rising, "AWT", True, swept, "alpha")
    assert checked.status == "partly" and "heavy hrf-easy 0.5 -> 1" in checked.text
    rising[("heavy", "hrf-easy")]["AWT"] = [5.0, 0.9, 4.0]  # ends below where it starts
    assert trend_claim("x", rising, "AWT", True, swept, "alpha").status == "does not hold"
    assert trend_claim("x", {("l", "p"): {"ART": [3.0, 2.0, 1.0]}}, "ART", False, swept, "alpha").status == "holds"


def test_att_is_stable_above_threshold_0_3_only_with_small_late_steps() -> None:
    thresholds = [0.1, 0.2, 0.3, 0.4, 0.5]

    def curves(att: list[float]) -> dict:
        return {("middle", "hrf-fcfs"): {"ATT": att, "AWT": [1, 2, 3, 4, 5], "ART": [5, 4, 3, 2, 1]}}

    stable = fig6_claims(curves([100.0, 130.0, 120.0, 121.0, 122.0]), thresholds)
    assert [c.status for c in stable] == ["holds", "holds", "holds"]
    drifting = fig6_claims(curves([100.0, 101.0, 102.0, 110.0, 125.0]), thresholds)[2]
    assert drifting.status == "does not hold" and "range above 0.3 12.8% of its mean" in drifting.text


def test_host_loads_cross_where_host_1_catches_up() -> None:
    def row(h1: float, h2: float) -> dict:
        return {"tags-slowdown": {"host_load_0": h1, "host_load_1": h2}}

    table = {0.8: row(0.1, 0.9), 1.0: row(0.3, 0.7), 1.2: row(0.7, 0.3)}
    # h1 - h2 goes from -0.4 at 1.0 to +0.4 at 1.2: they cross half way.
    assert crossing(table, "tags-slowdown") == pytest.approx(1.1)
    assert math.isnan(crossing({0.8: row(0.1, 0.9), 1.0: row(0.2, 0.8)}, "tags-slowdown"))  # no crossing


def test_fig7_waiting_time_verdicts() -> None:
    def row(tags: float, lwr: float) -> dict:
        return {"tags-fairness": {"mean_waiting_time": tags}, "least-work-remaining": {"mean_waiting_time": lwr}}

    assert waiting_time_claim({0.5: row(1.0, 500.0), 1.0: row(1.0, 50.0)}, "tags-fairness").status == "holds"
    partly = waiting_time_claim({0.5: row(1.0, 500.0), 2.0: row(10.0, 5.0)}, "tags-fairness")
    assert partly.status == "partly" and "does not hold at alpha 2" in partly.text
    never = waiting_time_claim({0.5: row(1.0, 50.0)}, "tags-fairness")
    assert never.status == "does not hold" and "never 10^2 x below" in never.text
