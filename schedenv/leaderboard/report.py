"""Writers of the leaderboard's outputs: ``leaderboard.md``, ``.csv``, ``.json`` and a PNG per family.

All are written atomically (``cache.write_atomic``). The CSV and the JSON ``rows`` hold only
numbers that the seeds determine, so a resumed run writes the same ones as an uninterrupted run;
the run record (times, command, machine) is in the JSON's ``record`` and the Markdown header.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedenv.leaderboard.cache import write_atomic
from schedenv.leaderboard.result import LeaderboardResult
from schedenv.leaderboard.table import COLUMNS


def _number(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        rounded = float(f"{value:.{digits}g}")
        # Large values read better with thousands separators than in e-notation (4.432e+04).
        return f"{rounded:,.0f}" if 1e3 <= abs(rounded) < 1e12 else f"{value:.{digits}g}"
    return str(value)


def _interval(mean: Any, half: Any) -> str:
    if mean is None:
        return "–"
    if half is None or (isinstance(half, float) and math.isnan(half)):
        return _number(mean)
    return f"{_number(mean)} ± {_number(half, 2)}"


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """One line per (scenario, contender), the columns of ``table.COLUMNS``."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row[key] is None else row[key] for key in COLUMNS})
    write_atomic(path, buffer.getvalue())


def write_json(path: Path, result: LeaderboardResult) -> None:
    """``rows`` (every column), ``claims``, ``summary`` per family, ``scenarios`` and the run ``record``."""
    document = {
        "suite": result.suite,
        "rows": result.rows,
        "claims": result.claims,
        "summary": result.summary,
        "scenarios": [
            {
                "family": plan.scenario.family,
                "name": plan.scenario.name,
                "env_id": plan.scenario.env_id,
                "env_kwargs": dict(plan.scenario.env_kwargs),
                "contender_kwargs": {name: dict(extra) for name, extra in plan.scenario.contender_kwargs.items()},
                "seeds": list(plan.scenario.seeds),
                "metric": plan.scenario.metric,
                "reference": plan.reference,
                "description": plan.scenario.description,
            }
            for plan in result.plans
        ],
        "families_missing": result.families_missing,
        "record": result.record,
    }
    write_atomic(path, json.dumps(_finite(document), indent=1, allow_nan=False) + "\n")


def _scenario_table(rows: Sequence[Mapping[str, Any]], reference: str, metric: str) -> list[str]:
    lines = [
        f"| rank | contender | {metric} (mean ± 95%) | difference to {reference} (paired, ± 95%) "
        f"| ratio to {reference} |",
        "|---:|---|---:|---:|---:|",
    ]
    ordered = sorted(
        rows, key=lambda row: (row["rank"] is None, row["rank"] or 0, row["contender"] != reference, row["contender"])
    )
    for row in ordered:
        name = f"**{row['contender']}**" if row["contender"] == reference else row["contender"]
        if row["status"] != "ok":
            lines.append(f"| – | {name} | {row['status']}: {row['note']} | | |")
            continue
        difference = _interval(row["diff_to_reference"], row["diff_ci95"])
        lines.append(
            f"| {row['rank']} | {name} | {_interval(row['mean'], row['ci95'])} | {difference} | "
            f"{_number(row['ratio_to_reference'])} |"
        )
    return lines


def _header(result: LeaderboardResult) -> list[str]:
    record = result.record
    git = record["git"]
    commit = "not a git checkout" if not git["commit"] else git["commit"][:12] + (" (dirty)" if git["dirty"] else "")
    cells = record["cells"]
    host = record["machine"]
    lines = [
        f"# schedenv leaderboard: suite `{result.suite}`",
        "",
        f"Produced by `{record['command']}` at commit {commit}, {record['started']}, on {host['platform']} "
        f"({host['cpu_count']} CPUs), backend `{record['backend']}` with {record['workers']} worker(s), "
        f"in {record['wall_seconds']:.1f} s. Cells: {cells['total']} ({cells['computed']} computed, "
        f"{cells['cached']} from the cache, {cells['failed']} failed, {cells['excluded']} not applicable).",
        "",
        "Every contender of a scenario runs on the same seeds (common random numbers). Means carry Student-t "
        "95% intervals over seeds; differences to the family's paper policy (**bold**) are paired seed by seed; "
        "rank 1 is the lowest mean.",
    ]
    if result.families_missing:
        lines += ["", "Families not yet available (env id not registered): " + ", ".join(result.families_missing) + "."]
    return lines


def write_markdown(path: Path, result: LeaderboardResult, plots: Mapping[str, str]) -> None:
    """Per family: a summary over scenarios, then a table per scenario with its claims; the run record last."""
    lines = _header(result)
    for family in result.families:
        plans = [plan for plan in result.plans if plan.scenario.family == family]
        reference = plans[0].reference
        lines += ["", f"## {family} (`{plans[0].scenario.env_id}`), paper policy **{reference}**", ""]
        lines += [
            "| contender | mean rank | geometric-mean ratio to " + reference + " | scenarios |",
            "|---|---:|---:|---:|",
        ]
        for entry in result.summary[family]:
            lines.append(
                f"| {entry['contender']} | {entry['mean_rank']:.2f} | {_number(entry['geomean_ratio'])} | "
                f"{entry['n_scenarios']} |"
            )
        if family in plots:
            lines += ["", f"![{family}]({plots[family]})"]
        for plan in plans:
            scenario = plan.scenario
            rows = [row for row in result.rows if row["family"] == family and row["scenario"] == scenario.name]
            seeds = f"{scenario.seeds[0]}–{scenario.seeds[-1]}" if len(scenario.seeds) > 1 else str(scenario.seeds[0])
            extra = "".join(
                f" {name} runs with {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}."
                for name, kwargs in scenario.contender_kwargs.items()
            )
            lines += ["", f"### {scenario.name}", "", f"{scenario.description}. Seeds {seeds}.{extra}", ""]
            lines += _scenario_table(rows, plan.reference, scenario.metric)
            checks = [c for c in result.claims if c["family"] == family and c["scenario"] == scenario.name]
            if checks:
                lines.append("")
                for check in checks:
                    mark = {True: "holds", False: "**does not hold**", None: "not checked (a contender did not run)"}
                    lines.append(f"- Claim: {check['claim']}: {mark[check['holds']]}.")
    failures = [row for row in result.rows if row["status"] == "error"]
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- {row['family']}/{row['scenario']} {row['contender']}: {row['note']}" for row in failures]
    lines += ["", "## Run record", "", "```json", json.dumps(_finite(result.record), indent=1), "```", ""]
    write_atomic(path, "\n".join(lines))


def _error_bars(means: Sequence[float], halves: Sequence[Any], log: bool) -> list[list[float]]:
    upper = [0.0 if h is None or math.isnan(h) else h for h in halves]
    # On a log axis an interval reaching 0 cannot be drawn; its lower arm stops at 10% of the mean.
    lower = [min(h, 0.9 * m) if log else h for h, m in zip(upper, means, strict=True)]
    return [lower, upper]


def _plot_group(axis: Any, rows: Sequence[Mapping[str, Any]], group: str) -> None:
    """A curve per contender against the group's axis; a dot per contender when the axis has one value."""
    means = [row["mean"] for row in rows]
    log = min(means) > 0 and max(means) / min(means) > 20
    reference = rows[0]["reference"]
    names = list(dict.fromkeys(row["contender"] for row in rows))
    values = sorted({row["axis_value"] for row in rows})
    if len(values) == 1:
        by_name = {row["contender"]: row for row in rows}
        heights = [by_name[name]["mean"] for name in names]
        colors = ["black" if name == reference else "tab:blue" for name in names]
        bars = _error_bars(heights, [by_name[n]["ci95"] for n in names], log)
        axis.errorbar(range(len(names)), heights, yerr=bars, fmt="none", ecolor="gray")
        axis.scatter(range(len(names)), heights, c=colors, zorder=3)
        axis.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
        axis.set_title(f"{group}; {rows[0]['axis']} = {values[0]:g}", fontsize=9)
    else:
        for name in names:
            points = sorted((row["axis_value"], row["mean"], row["ci95"]) for row in rows if row["contender"] == name)
            x, y, half = zip(*points, strict=True)
            style = {"linewidth": 2.5, "color": "black"} if name == reference else {"linewidth": 1.2}
            axis.errorbar(
                x, y, yerr=_error_bars(y, half, log), marker="o", markersize=3, capsize=3, label=name, **style
            )
        axis.set_xlabel(rows[0]["axis"])
        axis.set_title(group, fontsize=9)
        axis.legend(fontsize=7, loc="best")
    if log:
        axis.set_yscale("log")
    axis.set_ylabel(rows[0]["metric"])
    axis.grid(alpha=0.3)


def write_plots(out: Path, result: LeaderboardResult) -> dict[str, str]:
    """One PNG per family: the metric against each group's axis, one line per contender, with intervals."""
    from matplotlib.figure import Figure

    written = {}
    for family in result.families:
        rows = [row for row in result.rows if row["family"] == family and row["status"] == "ok"]
        groups = list(dict.fromkeys(row["group"] for row in rows))
        if not groups:
            continue
        columns = min(3, len(groups))
        rows_of_plots = math.ceil(len(groups) / columns)
        figure = Figure(figsize=(5.5 * columns, 4.5 * rows_of_plots))
        axes = list(figure.subplots(rows_of_plots, columns, squeeze=False).flat)
        for axis, group in zip(axes, groups, strict=False):
            _plot_group(axis, [row for row in rows if row["group"] == group], group)
        for axis in axes[len(groups) :]:
            axis.set_visible(False)
        figure.suptitle(f"{family}: mean ± 95% interval over seeds", fontsize=10)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=110)
        name = f"leaderboard_{family}.png"
        write_atomic(out / name, buffer.getvalue())
        written[family] = name
    return written


def write_all(out: Path, result: LeaderboardResult) -> dict[str, Path]:
    """Write every output into ``out``; returns name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    plots = write_plots(out, result)
    write_csv(out / "leaderboard.csv", result.rows)
    write_json(out / "leaderboard.json", result)
    write_markdown(out / "leaderboard.md", result, plots)
    paths = {name: out / name for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json")}
    paths.update({f"plot:{family}": out / name for family, name in plots.items()})
    return paths
