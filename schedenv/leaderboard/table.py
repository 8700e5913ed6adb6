"""From cell results to the leaderboard's rows: means, intervals, paired differences, ratios, ranks.

Every contender of a scenario ran on the same seeds (common random numbers), so differences to
the family's paper policy are paired seed by seed (``schedenv.stats.paired_comparison``): the
interval of the difference is much tighter than the two intervals of the means. Ranks are within
a scenario, 1 = lowest mean; contenders whose means agree to a relative 1e-9 share a rank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedenv.leaderboard.cells import ContenderSpec
from schedenv.leaderboard.scenario import Scenario
from schedenv.stats import mean_interval, paired_comparison

TIE_RTOL = 1e-9
"""Relative tolerance under which two means share a rank."""

COLUMNS: tuple[str, ...] = (
    "family",
    "env_id",
    "scenario",
    "group",
    "axis",
    "axis_value",
    "contender",
    "kind",
    "status",
    "metric",
    "mean",
    "ci95",
    "n_seeds",
    "reference",
    "diff_to_reference",
    "diff_ci95",
    "ratio_to_reference",
    "rank",
    "note",
)
"""The columns of every row, in the order ``leaderboard.csv`` writes them."""


@dataclass(frozen=True)
class ScenarioPlan:
    """A scenario with its contenders (reference first), the family's paper policy, and who cannot run.

    ``excluded`` (contender -> reason) holds the scenario's own exclusions and agents whose
    observations do not fit the scenario's env (e.g. trained with another window size).
    """

    scenario: Scenario
    reference: str
    contenders: tuple[ContenderSpec, ...]
    excluded: Mapping[str, str] = field(default_factory=dict)

    def runs(self, name: str) -> bool:
        """Whether contender ``name`` is run on this scenario."""
        return name not in self.excluded and name not in self.scenario.exclude


def _values(payload: Mapping[str, Any], metric: str) -> dict[int, float]:
    values = {}
    for episode in payload["episodes"]:
        if metric not in episode["metrics"]:
            known = sorted(episode["metrics"])
            raise KeyError(f"the env reports no metric {metric!r} (seed {episode['seed']}); it reports {known}")
        values[int(episode["seed"])] = float(episode["metrics"][metric])
    return values


def _base_row(plan: ScenarioPlan, spec: ContenderSpec) -> dict[str, Any]:
    scenario = plan.scenario
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        family=scenario.family,
        env_id=scenario.env_id,
        scenario=scenario.name,
        group=scenario.group,
        axis=scenario.axis[0],
        axis_value=scenario.axis[1],
        contender=spec.name,
        kind=spec.kind,
        metric=scenario.metric,
        reference=plan.reference,
        n_seeds=0,
        note="",
    )
    return row


def scenario_rows(plan: ScenarioPlan, payloads: Mapping[str, Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """The rows of one scenario; ``payloads`` maps contender name -> cell result (None: excluded)."""
    metric = plan.scenario.metric
    rows, values = [], {}
    for spec in plan.contenders:
        row = _base_row(plan, spec)
        payload = payloads.get(spec.name)
        if payload is None:
            reason = plan.excluded.get(spec.name) or plan.scenario.exclude.get(spec.name, "not run")
            row.update(status="not applicable", note=reason)
        elif payload["status"] != "ok":
            row.update(status="error", note=str(payload.get("error", "unknown error")))
        else:
            try:
                values[spec.name] = _values(payload, metric)
            except KeyError as error:
                row.update(status="error", note=str(error.args[0]))
            else:
                interval = mean_interval(list(values[spec.name].values()))
                row.update(status="ok", mean=interval.mean, ci95=interval.ci95, n_seeds=interval.n)
        rows.append(row)
    base = values.get(plan.reference)
    for row in rows:
        mine = values.get(row["contender"])
        if mine is None or base is None:
            continue
        common = sorted(set(mine) & set(base))
        comparison = paired_comparison([mine[s] for s in common], [base[s] for s in common])
        row.update(
            diff_to_reference=comparison.difference.mean,
            diff_ci95=comparison.difference.ci95,
            ratio_to_reference=comparison.ratio,
        )
    means = [row["mean"] for row in rows if row["status"] == "ok"]
    for row in rows:
        if row["status"] == "ok":
            row["rank"] = 1 + sum(m < row["mean"] and not math.isclose(m, row["mean"], rel_tol=TIE_RTOL) for m in means)
    return rows


def claim_checks(plan: ScenarioPlan, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each claim of the scenario with ``holds`` (None when a contender it names did not run)."""
    means = {row["contender"]: row["mean"] for row in rows if row["status"] == "ok"}
    checks = []
    for claim in plan.scenario.claims:
        named = [claim.better, *(w for w in claim.worse if w != "*")]
        runs = all(name in means for name in named)
        checks.append(
            {
                "family": plan.scenario.family,
                "scenario": plan.scenario.name,
                "claim": str(claim),
                "holds": claim.holds(means) if runs else None,
            }
        )
    return checks


def family_summary(rows: Sequence[Mapping[str, Any]], family: str) -> list[dict[str, Any]]:
    """Per contender of ``family``: mean rank and geometric-mean ratio to the reference over scenarios."""
    ok = [row for row in rows if row["family"] == family and row["status"] == "ok"]
    names = list(dict.fromkeys(row["contender"] for row in ok))
    summary = []
    for name in names:
        mine = [row for row in ok if row["contender"] == name]
        ratios = [row["ratio_to_reference"] for row in mine if _positive(row["ratio_to_reference"])]
        summary.append(
            {
                "contender": name,
                "mean_rank": float(np.mean([row["rank"] for row in mine])),
                "geomean_ratio": float(np.exp(np.mean(np.log(ratios)))) if ratios else math.nan,
                "n_scenarios": len(mine),
            }
        )
    return sorted(summary, key=lambda entry: (entry["mean_rank"], entry["contender"]))


def _positive(value: Any) -> bool:
    return isinstance(value, float) and math.isfinite(value) and value > 0
