"""Statistics of the leaderboard's rows, on hand-made cell results whose answers are known."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from scipy import stats

from schedenv.leaderboard.cells import ContenderSpec
from schedenv.leaderboard.scenario import ALL, Claim
from schedenv.leaderboard.table import ScenarioPlan, claim_checks, family_summary, scenario_rows
from tests.leaderboard.conftest import tiny_scenario


def _payload(values: dict[int, float], metric: str = "mean_slowdown") -> dict:
    episodes = [{"seed": s, "metrics": {metric: v}, "return": -v, "n_steps": 1} for s, v in values.items()]
    return {"status": "ok", "episodes": episodes}


def _plan(*names: str) -> ScenarioPlan:
    return ScenarioPlan(tiny_scenario(), names[0], tuple(ContenderSpec(n) for n in names))


def test_paired_difference_ratio_and_interval_by_hand() -> None:
    plan = _plan("ref", "other")
    rows = scenario_rows(plan, {"ref": _payload({0: 1.0, 1: 2.0, 2: 3.0}), "other": _payload({0: 2.0, 1: 4.0, 2: 5.0})})
    other = rows[1]
    assert other["mean"] == pytest.approx(11 / 3)
    # Differences 1, 2, 2: mean 5/3, sd sqrt(1/3), t(0.975, 2) = 4.3027.
    assert other["diff_to_reference"] == pytest.approx(5 / 3)
    assert other["diff_ci95"] == pytest.approx(stats.t.ppf(0.975, 2) * math.sqrt(1 / 3) / math.sqrt(3))
    assert other["ratio_to_reference"] == pytest.approx((11 / 3) / 2.0)
    assert rows[0]["diff_to_reference"] == 0.0 and rows[0]["ratio_to_reference"] == 1.0
    assert (rows[0]["rank"], other["rank"]) == (1, 2)
    assert other["n_seeds"] == 3


def test_ties_share_a_rank_and_the_next_rank_skips() -> None:
    plan = _plan("a", "b", "c")
    same = {0: 1.0, 1: 2.0}
    rows = scenario_rows(
        plan, {"a": _payload(same), "b": _payload({0: 1.0, 1: 2.0 + 1e-13}), "c": _payload({0: 0.5, 1: 0.5})}
    )
    assert [row["rank"] for row in rows] == [2, 2, 1]


def test_paired_difference_uses_common_seeds_only() -> None:
    plan = _plan("ref", "other")
    rows = scenario_rows(plan, {"ref": _payload({0: 1.0, 1: 2.0}), "other": _payload({1: 4.0, 2: 100.0})})
    assert rows[1]["diff_to_reference"] == pytest.approx(2.0)


def test_errors_excluded_and_missing_metrics_become_rows_without_numbers() -> None:
    scenario = tiny_scenario()
    scenario = replace(scenario, exclude={"c": "needs known sizes"})
    plan = ScenarioPlan(scenario, "a", tuple(ContenderSpec(n) for n in ("a", "b", "c", "d")))
    rows = scenario_rows(
        plan,
        {
            "a": _payload({0: 1.0}),
            "b": {"status": "error", "error": "ValueError: boom"},
            "d": _payload({0: 1.0}, metric="other_metric"),
        },
    )
    status = {row["contender"]: (row["status"], row["note"], row["rank"]) for row in rows}
    assert status["b"] == ("error", "ValueError: boom", None)
    assert status["c"] == ("not applicable", "needs known sizes", None)
    assert status["d"][0] == "error" and "mean_slowdown" in status["d"][1]
    assert status["a"] == ("ok", "", 1)


def test_no_reference_means_no_ratios() -> None:
    rows = scenario_rows(_plan("ref", "other"), {"ref": {"status": "error", "error": "x"}, "other": _payload({0: 1.0})})
    assert rows[1]["ratio_to_reference"] is None and rows[1]["rank"] == 1


@pytest.mark.parametrize(
    ("claim", "means", "expected"),
    [
        (Claim("a", (ALL,), "s"), {"a": 1.0, "b": 1.0, "c": 2.0}, True),
        (Claim("a", (ALL,), "s"), {"a": 1.0 + 1e-12, "b": 1.0}, True),
        (Claim("a", (ALL,), "s"), {"a": 1.1, "b": 1.0}, False),
        (Claim("a", ("b",), "s", factor=0.5), {"a": 0.5, "b": 1.0, "c": 0.1}, True),
        (Claim("a", ("b",), "s", factor=0.5), {"a": 0.6, "b": 1.0}, False),
        (Claim("a", ("b",), "s"), {"b": 1.0}, None),
    ],
)
def test_claims(claim: Claim, means: dict[str, float], expected: bool | None) -> None:
    assert claim.holds(means) is expected


def test_claim_checks_need_every_named_contender() -> None:
    plan = _plan("ref", "other")
    rows = scenario_rows(plan, {"ref": _payload({0: 1.0}), "other": {"status": "error", "error": "x"}})
    scenario = replace(plan.scenario, claims=(Claim("ref", ("other",), "s"),))
    checks = claim_checks(ScenarioPlan(scenario, "ref", plan.contenders), rows)
    assert checks[0]["holds"] is None


def test_family_summary_mean_rank_and_geometric_ratio() -> None:
    rows = []
    for name, values in (("s1", (1.0, 4.0)), ("s2", (2.0, 1.0))):
        scenario = tiny_scenario(name)
        plan = ScenarioPlan(scenario, "ref", (ContenderSpec("ref"), ContenderSpec("x")))
        rows += scenario_rows(plan, {"ref": _payload({0: values[0]}), "x": _payload({0: values[1]})})
    summary = {entry["contender"]: entry for entry in family_summary(rows, "malleable")}
    assert summary["x"]["mean_rank"] == 1.5 and summary["ref"]["mean_rank"] == 1.5
    assert summary["x"]["geomean_ratio"] == pytest.approx(math.sqrt(4.0 * 0.5))
