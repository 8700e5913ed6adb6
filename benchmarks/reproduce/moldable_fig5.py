"""HRF paper Fig. 5: the effect of alpha on ATT, AWT and ART (threshold = 0.9), HRF-FCFS and HRF-EASY.

Full run (10 seeds, the paper's 8 alphas, 3 loads): ``.venv/bin/python benchmarks/reproduce/moldable_fig5.py``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from moldable_common import METRICS, Point, cell, header, parser, run_points, save

from baselines.moldable import ALPHA_GRID
from schedenv.moldable.workload import LOADS

FIGURE = "hrf-fig5"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 5: with threshold = 0.9, a larger alpha (processor budget) raises AWT and "
    "lowers ART for both HRF-FCFS and HRF-Bf; ATT of HRF-FCFS is U-shaped at light/middle load and rises at heavy "
    "load; HRF-Bf prefers larger alpha under heavier load."
)
POLICY_NAMES = ("hrf-fcfs", "hrf-easy")


def main(argv: list[str] | None = None) -> int:
    args = parser(DESCRIPTION).parse_args(argv)
    seeds = list(range(args.seeds if args.seeds is not None else (2 if args.quick else 10)))
    alphas = (0.5, 0.8, 1.2) if args.quick else ALPHA_GRID
    n_jobs = 100 if args.quick else args.n_jobs
    points = [Point(load, name, alpha, 0.9) for load in LOADS for name in POLICY_NAMES for alpha in alphas]
    results = run_points(points, seeds, n_jobs, args.jobs)
    lines = header("HRF Fig. 5 — alpha sweep (threshold 0.9)", DESCRIPTION, argv, seeds, n_jobs)
    lines += ["| load | policy | alpha | ATT | AWT | ART |", "|---|---|---|---|---|---|"]
    for point, values in zip(points, results, strict=True):
        row = " | ".join(cell(values[m]) for m in METRICS)
        lines.append(f"| {point.load} | {point.policy} | {point.alpha:g} | {row} |")
    save(lines, _plot(points, results, alphas), args.out, FIGURE)
    return 0


def _plot(points: Sequence[Point], results: Sequence[dict], alphas: Sequence[float]):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(13, 4))
    for index, load in enumerate(LOADS):
        axes = figure.add_subplot(1, 3, index + 1)
        for name, style in zip(POLICY_NAMES, ("-", "--"), strict=True):
            for metric, colour in zip(METRICS, ("k", "tab:blue", "tab:orange"), strict=True):
                ys = [
                    r[metric].mean()
                    for p, r in zip(points, results, strict=True)
                    if p.load == load and p.policy == name
                ]
                axes.plot(alphas, ys, style, color=colour, marker="o", label=f"{name} {metric}")
        axes.set_title(f"{load} load")
        axes.set_xlabel("alpha")
        axes.set_ylabel("seconds")
    axes.legend(fontsize=7)
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    raise SystemExit(main())
