"""HRF paper Fig. 7: combined ATT, AWT, ART of the eight policies of Table 2 at three loads.

"Combined" = the mean over the (alpha, threshold) grid (§6.3). The paper's grid has 56 points
(alpha 0.5..1.2 x threshold 0.4..1); the default here is a documented 12-point subset
(alpha in {0.5, 0.8, 1.0, 1.2} x threshold in {0.4, 0.7, 1.0}) with 5 seeds so the run fits in
minutes; ``--full-grid`` runs all 56.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from moldable_common import METRICS, Point, cell, header, parser, run_points, save

from baselines.moldable import ALPHA_GRID, PAPER_POLICIES, THRESHOLD_GRID
from schedenv.moldable.workload import LOADS
from schedenv.stats import mean_interval

FIGURE = "hrf-fig7"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 7: HRF-FCFS has the least combined ATT of the FCFS policies (at middle "
    "load 29%, 77.7% and 73.3% of SbmGrdy-FCFS, SbmFair-FCFS and SchFair-FCFS), HRF-Bf the least of the "
    "backfilling ones, and backfilling beats FCFS for every allocation scheme."
)
REDUCED_ALPHAS = (0.5, 0.8, 1.0, 1.2)
REDUCED_THRESHOLDS = (0.4, 0.7, 1.0)


def main(argv: list[str] | None = None) -> int:
    args = parser(DESCRIPTION)
    args.add_argument("--full-grid", action="store_true", help="the paper's 56 (alpha, threshold) points")
    options = args.parse_args(argv)
    seeds = list(range(options.seeds if options.seeds is not None else (2 if options.quick else 5)))
    if options.full_grid:
        grid = [(a, t) for a in ALPHA_GRID for t in THRESHOLD_GRID]
    elif options.quick:
        grid = [(0.5, 0.4), (1.0, 1.0)]
    else:
        grid = [(a, t) for a in REDUCED_ALPHAS for t in REDUCED_THRESHOLDS]
    n_jobs = 100 if options.quick else options.n_jobs
    points = [Point(load, name, a, t) for load in LOADS for name in PAPER_POLICIES for a, t in grid]
    results = run_points(points, seeds, n_jobs, options.jobs)
    combined = _combine(points, results)
    lines = header("HRF Fig. 7 — combined ATT / AWT / ART", DESCRIPTION, argv, seeds, n_jobs)
    lines.append(f"Grid ({len(grid)} points): {grid}.")
    lines += ["", "| load | policy | combined ATT | combined AWT | combined ART | HRF-FCFS ATT / this |"]
    lines.append("|---|---|---|---|---|---|")
    for load in LOADS:
        reference = combined[(load, "hrf-fcfs")]["ATT"]
        for name in PAPER_POLICIES:
            values = combined[(load, name)]
            ratio = mean_interval(reference / values["ATT"])
            row = " | ".join(cell(values[m]) for m in METRICS)
            lines.append(f"| {load} | {name} | {row} | {ratio.mean:.3f} ± {ratio.ci95:.3f} |")
    lines += ["", "HRF-FCFS combined ATT as a share of each FCFS policy's (paper, middle load: 29%, 77.7%, 73.3%):", ""]
    for load in LOADS:
        shares = [
            f"{name} {combined[(load, 'hrf-fcfs')]['ATT'].mean() / combined[(load, name)]['ATT'].mean():.1%}"
            for name in ("sbmgrdy-fcfs", "sbmfair-fcfs", "schfair-fcfs")
        ]
        lines.append(f"- {load}: " + "; ".join(shares))
    lines += ["", "Backfilling vs FCFS (combined ATT ratio easy / fcfs, per-seed mean ± 95%):", ""]
    for load in LOADS:
        parts = []
        for scheme in ("hrf", "sbmgrdy", "sbmfair", "schfair"):
            ratio = mean_interval(combined[(load, f"{scheme}-easy")]["ATT"] / combined[(load, f"{scheme}-fcfs")]["ATT"])
            parts.append(f"{scheme} {ratio.mean:.3f} ± {ratio.ci95:.3f}")
        lines.append(f"- {load}: " + "; ".join(parts))
    save(lines, _plot(combined), options.out, FIGURE)
    return 0


def _combine(points: Sequence[Point], results: Sequence[dict]) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Per-seed mean over the grid of each metric, for each (load, policy)."""
    table: dict[tuple[str, str], dict[str, list[np.ndarray]]] = {}
    for point, values in zip(points, results, strict=True):
        entry = table.setdefault((point.load, point.policy), {m: [] for m in METRICS})
        for metric in METRICS:
            entry[metric].append(values[metric])
    return {key: {m: np.mean(v, axis=0) for m, v in entry.items()} for key, entry in table.items()}


def _plot(combined: dict[tuple[str, str], dict[str, np.ndarray]]):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(14, 4))
    x = np.arange(len(PAPER_POLICIES))
    for index, load in enumerate(LOADS):
        axes = figure.add_subplot(1, 3, index + 1)
        for offset, (metric, colour) in enumerate(zip(METRICS, ("k", "tab:blue", "tab:orange"), strict=True)):
            means = [combined[(load, name)][metric].mean() for name in PAPER_POLICIES]
            axes.bar(x + (offset - 1) * 0.27, means, width=0.27, color=colour, label=f"combined {metric}")
        axes.set_xticks(x, PAPER_POLICIES, rotation=60, fontsize=7)
        axes.set_title(f"{load} load")
        axes.set_ylabel("seconds")
    axes.legend(fontsize=7)
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    raise SystemExit(main())
