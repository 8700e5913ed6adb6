"""Shared helpers of the HRF-paper reproductions (moldable_fig5.py, moldable_fig6.py, moldable_fig7.py).

Each point is ``evaluate_fast("schedenv/Moldable-v0", policy, seeds, arrival_interval=...)`` on the
Cirne-style workload (200 jobs, 128 processors, the paper's §6.1); intervals are Student-t 95%
over seeds. Points run in a process pool (``--jobs``) because each is independent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from baselines.moldable import ENV_ID, POLICIES
from schedenv.fastpath import evaluate_fast
from schedenv.moldable.workload import LOADS
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
        return [run_point(p, seeds, n_jobs) for p in points]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(run_point, points, [seeds] * len(points), [n_jobs] * len(points)))


def parser(description: str) -> argparse.ArgumentParser:
    args = argparse.ArgumentParser(description=description)
    args.add_argument("--quick", action="store_true", help="a small version (under a minute)")
    args.add_argument("--out", default="benchmarks/results", help="output directory")
    args.add_argument("--seeds", type=int, default=None, help="number of seeds (workloads) per point")
    args.add_argument("--n-jobs", type=int, default=200, help="jobs per workload (the paper's 200)")
    args.add_argument("--jobs", type=int, default=2, help="worker processes")
    return args


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "uncommitted"


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
        f"Command: `{command(argv)}` (commit {commit()}). Seeds: {list(seeds)}; {n_jobs} jobs per workload, "
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
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    figure.savefig(os.path.join(out, f"{name}.png"), dpi=100)
