"""Shared helpers of the HRF-paper reproductions (moldable_fig5.py, moldable_fig6.py, moldable_fig7.py).

Each point is ``evaluate_fast("schedenv/Moldable-v0", policy, seeds, arrival_interval=...)`` on the
Cirne-style workload (200 jobs, 128 processors, the paper's §6.1); intervals are Student-t 95%
over seeds. Points run in a process pool (``--jobs``) because each is independent.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _claims import CheckedClaim, claim, claims_section

from baselines.moldable import ENV_ID, POLICIES
from schedenv.fastpath import evaluate_fast
from schedenv.moldable.workload import LOADS
from schedenv.progress import progress_bar
from schedenv.reporting import add_output_arguments, git_commit, resolve_output_args, write_atomic
from schedenv.stats import Interval, mean_interval

METRICS = ("ATT", "AWT", "ART")


@dataclass(frozen=True)
class Point:
    load: str
    policy: str
    alpha: float
    threshold: float


def run_point(point: Point, seeds: Sequence[int], n_jobs: int) -> dict[str, np.ndarray]:
    """Per-seed ATT, AWT, ART of one (load, policy, alpha, threshold)."""
    policy = POLICIES[point.policy](alpha=point.alpha, threshold=point.threshold)
    result = evaluate_fast(ENV_ID, policy, seeds, arrival_interval=LOADS[point.load], n_jobs=n_jobs)
    return {metric: result.values(metric) for metric in METRICS}


def run_points(points: Sequence[Point], seeds: Sequence[int], n_jobs: int, jobs: int) -> list[dict[str, np.ndarray]]:
    if jobs <= 1:
        return [run_point(p, seeds, n_jobs) for p in progress_bar(points, desc="HRF points", unit="point")]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = pool.map(run_point, points, [seeds] * len(points), [n_jobs] * len(points))
        return list(progress_bar(done, total=len(points), desc="HRF points", unit="point"))


def parser(description: str) -> argparse.ArgumentParser:
    args = argparse.ArgumentParser(description=description)
    args.add_argument("--quick", action="store_true", help="a small version (under a minute)")
    add_output_arguments(args)
    args.add_argument("--seeds", type=int, default=None, help="number of seeds (workloads) per point")
    args.add_argument("--n-jobs", type=int, default=200, help="jobs per workload (the paper's 200)")
    args.add_argument("--jobs", type=int, default=2, help="worker processes")
    return args


def command(argv: Sequence[str] | None) -> str:
    script = os.path.relpath(sys.argv[0]) if sys.argv and sys.argv[0].endswith(".py") else "benchmarks/reproduce/..."
    return " ".join([".venv/bin/python", script, *(argv if argv is not None else sys.argv[1:])])


def cell(values: np.ndarray) -> str:
    interval: Interval = mean_interval(values)
    return f"{interval.mean:,.0f} ± {interval.ci95:,.0f}"


def header(title: str, description: str, argv: Sequence[str] | None, seeds: Sequence[int], n_jobs: int) -> list[str]:
    return [
        f"# {title}",
        "",
        description,
        "",
        f"Command: `{command(argv)}` (commit {git_commit()}). Seeds: {list(seeds)}; {n_jobs} jobs per workload, "
        "128 processors, Cirne-style Downey workload (schedenv.moldable.workload); mean ± 95% interval over seeds "
        "(seconds).",
        "",
        *(
            [
                "**Reduced run** (`--quick`: 2 seeds, 100 jobs, 3-point sweep or 2-point grid), not the paper's scale.",
                "",
            ]
            if "--quick" in (sys.argv if argv is None else argv)
            else []
        ),
    ]


def save(lines: list[str], figure, out: str, name: str) -> None:
    write_atomic(Path(out) / f"{name}.md", "\n".join(lines) + "\n")
    figure.savefig(os.path.join(out, f"{name}.png"), dpi=100)


SWEEP_POLICIES = ("hrf-fcfs", "hrf-easy")
"""The policies of the one-parameter sweeps (Figs. 5 and 6)."""

Curves = dict[tuple[str, str], dict[str, list[float]]]
"""(load, policy) -> metric -> mean over seeds at each swept value, in sweep order."""
SweepChecks = Callable[[Curves, Sequence[float]], list[CheckedClaim]]


def sweep_curves(points: Sequence[Point], results: Sequence[dict[str, np.ndarray]]) -> Curves:
    """The sweep's means as curves over the swept parameter, one per (load, policy) and metric."""
    curves: Curves = {}
    for point, values in zip(points, results, strict=True):
        entry = curves.setdefault((point.load, point.policy), {m: [] for m in METRICS})
        for metric in METRICS:
            entry[metric].append(float(values[metric].mean()))
    return curves


def trend_claim(
    claim_id: str, curves: Curves, metric: str, rising: bool, swept: Sequence[float], name: str
) -> CheckedClaim:
    """ "``metric`` rises (falls) with ``name``" on every curve: holds if it does at every step of every curve,
    partly if every curve ends above (below) where it starts, does not hold otherwise; lists the steps against."""
    against: list[str] = []
    overall = True
    for (load, policy), entry in curves.items():
        ys = entry[metric]
        sign = 1 if rising else -1
        against += [
            f"{load} {policy} {swept[i]:g} -> {swept[i + 1]:g}"
            for i in range(len(ys) - 1)
            if sign * (ys[i + 1] - ys[i]) < 0
        ]
        overall &= sign * (ys[-1] - ys[0]) > 0
    status = "holds" if not against else ("partly" if overall else "does not hold")
    return claim(
        claim_id,
        status,
        f"{metric} {'rises' if rising else 'falls'} with {name} for HRF-FCFS and HRF-EASY at every load: "
        + (f"against it at {'; '.join(against)}" if against else "at every step")
        + f"; from the first to the last {name} on every curve: {'yes' if overall else 'no'}.",
    )


def run_sweep(
    argv: Sequence[str] | None,
    *,
    figure: str,
    description: str,
    title: str,
    parameter: str,
    values: Sequence[float],
    quick_values: Sequence[float],
    fixed: float,
    checks: SweepChecks,
) -> int:
    """Figs. 5 and 6: sweep HRF's ``parameter`` ("alpha" or "threshold") with the other one at ``fixed``;
    ``checks`` turns the curves into the figure's checked claims."""
    args = parser(description).parse_args(argv)
    args.out = resolve_output_args(args)
    seeds = list(range(args.seeds if args.seeds is not None else (2 if args.quick else 10)))
    swept = quick_values if args.quick else values
    n_jobs = 100 if args.quick else args.n_jobs

    def point(load: str, name: str, value: float) -> Point:
        return Point(load, name, value, fixed) if parameter == "alpha" else Point(load, name, fixed, value)

    points = [point(load, name, v) for load in LOADS for name in SWEEP_POLICIES for v in swept]
    results = run_points(points, seeds, n_jobs, args.jobs)
    lines = header(title, description, argv, seeds, n_jobs)
    lines += [f"| load | policy | {parameter} | ATT | AWT | ART |", "|---|---|---|---|---|---|"]
    for p, values_of in zip(points, results, strict=True):
        row = " | ".join(cell(values_of[m]) for m in METRICS)
        lines.append(f"| {p.load} | {p.policy} | {getattr(p, parameter):g} | {row} |")
    lines += ["", *claims_section(checks(sweep_curves(points, results), swept))]
    save(lines, _sweep_plot(points, results, swept, parameter), args.out, figure)
    return 0


def _sweep_plot(points: Sequence[Point], results: Sequence[dict], swept: Sequence[float], parameter: str):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(13, 4))
    for index, load in enumerate(LOADS):
        axes = figure.add_subplot(1, 3, index + 1)
        for name, style in zip(SWEEP_POLICIES, ("-", "--"), strict=True):
            for metric, colour in zip(METRICS, ("k", "tab:blue", "tab:orange"), strict=True):
                ys = [
                    r[metric].mean()
                    for p, r in zip(points, results, strict=True)
                    if p.load == load and p.policy == name
                ]
                axes.plot(swept, ys, style, color=colour, marker="o", label=f"{name} {metric}")
        axes.set_title(f"{load} load")
        axes.set_xlabel(parameter)
        axes.set_ylabel("seconds")
    axes.legend(fontsize=7)
    figure.tight_layout()
    return figure
