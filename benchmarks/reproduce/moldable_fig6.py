"""HRF paper Fig. 6: the effect of threshold on ATT, AWT and ART (alpha = 1), HRF-FCFS and HRF-EASY.

Full run (10 seeds, thresholds 0.1 to 1, 3 loads): ``.venv/bin/python benchmarks/reproduce/moldable_fig6.py``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from moldable_common import METRICS, Point, cell, header, parser, run_points, save

from schedenv.moldable.workload import LOADS

FIGURE = "hrf-fig6"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 6: with alpha = 1, a larger threshold raises AWT and lowers ART for both "
    "HRF-FCFS and HRF-Bf; ATT fluctuates for threshold < 0.3 and is stable above it."
)
POLICY_NAMES = ("hrf-fcfs", "hrf-easy")
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def main(argv: list[str] | None = None) -> int:
    args = parser(DESCRIPTION).parse_args(argv)
    seeds = list(range(args.seeds if args.seeds is not None else (2 if args.quick else 10)))
    thresholds = (0.1, 0.4, 1.0) if args.quick else THRESHOLDS
    n_jobs = 100 if args.quick else args.n_jobs
    points = [Point(load, name, 1.0, t) for load in LOADS for name in POLICY_NAMES for t in thresholds]
    results = run_points(points, seeds, n_jobs, args.jobs)
    lines = header("HRF Fig. 6 — threshold sweep (alpha 1)", DESCRIPTION, argv, seeds, n_jobs)
    lines += ["| load | policy | threshold | ATT | AWT | ART |", "|---|---|---|---|---|---|"]
    for point, values in zip(points, results, strict=True):
        row = " | ".join(cell(values[m]) for m in METRICS)
        lines.append(f"| {point.load} | {point.policy} | {point.threshold:g} | {row} |")
    save(lines, _plot(points, results, thresholds), args.out, FIGURE)
    return 0


def _plot(points: Sequence[Point], results: Sequence[dict], thresholds: Sequence[float]):
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
                axes.plot(thresholds, ys, style, color=colour, marker="o", label=f"{name} {metric}")
        axes.set_title(f"{load} load")
        axes.set_xlabel("threshold")
        axes.set_ylabel("seconds")
    axes.legend(fontsize=7)
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    raise SystemExit(main())
