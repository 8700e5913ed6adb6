"""Shared plumbing of the ``dispatch_fig*.py`` scripts (TAGS paper figures): sweeps, tables, plots.

Curves come from the analysis (``schedenv.analysis``), which is what the paper plots; simulated
points (``schedenv.fastpath.evaluate_fast``: the compiled path, same numbers as ``evaluate``) are
overlaid where a simulation converges.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy import optimize

from schedenv.analysis.queueing import lwr_analysis, random_analysis
from schedenv.analysis.tags import paper_size_dist, tags_optimal_cutoffs
from schedenv.fastpath import evaluate_fast
from schedenv.progress import progress_bar
from schedenv.reporting import add_output_arguments, resolve_output_args
from schedenv.stats import Interval
from schedenv.workloads import Distribution

FULL_ALPHAS = tuple(round(a, 2) for a in np.arange(0.2, 2.01, 0.1))
QUICK_ALPHAS = (0.2, 0.6, 1.0, 1.5, 2.0)
LABELS = {
    "random": "Random",
    "least-work-remaining": "Least-Work-Remaining",
    "tags-slowdown": "TAGS-opt-slowdown",
    "tags-waiting_time": "TAGS-opt-waitingtime",
    "tags-fairness": "TAGS-opt-fairness",
}


def parse(argv: list[str] | None, description: str) -> argparse.Namespace:
    """The common flags: --quick, --out, --seeds (and --arrivals for simulated points)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="5 alphas and a small simulation (< 1 minute)")
    add_output_arguments(parser)
    parser.add_argument("--seeds", type=int, default=None, help="seeds per simulated point (default 8, quick 3)")
    parser.add_argument("--arrivals", type=int, default=None, help="arrivals per simulated episode")
    args = parser.parse_args(argv)
    args.out = resolve_output_args(args)
    args.alphas = QUICK_ALPHAS if args.quick else FULL_ALPHAS
    args.seeds = args.seeds or (3 if args.quick else 8)
    args.arrivals = args.arrivals or (5000 if args.quick else 40000)
    args.command = "python " + " ".join(
        shlex.quote(a) for a in [sys.argv[0], *(argv if argv is not None else sys.argv[1:])]
    )
    return args


def policy_comparison(
    size_dist: Distribution, load: float, n_hosts: int, tags_objectives: tuple[str, ...] = ("slowdown", "fairness")
) -> dict[str, dict[str, float]]:
    """Random, LWR (``lwr_analysis``'s default M/G/h form) and TAGS-opt-* analyses side by side (§5, §6).

    Each value maps ``mean_slowdown``, ``mean_waiting_time`` (and for TAGS ``host_load_i`` and
    ``excess``) to a float; an unstable TAGS gets ``inf`` means.
    """
    table: dict[str, dict[str, float]] = {}
    for name, analysis in (
        ("random", random_analysis(size_dist, load, n_hosts)),
        ("least-work-remaining", lwr_analysis(size_dist, load, n_hosts)),
    ):
        table[name] = {"mean_slowdown": analysis.mean_slowdown, "mean_waiting_time": analysis.mean_waiting_time}
    for objective in tags_objectives:
        try:
            tags = tags_optimal_cutoffs(size_dist, load, n_hosts, objective=objective)  # type: ignore[arg-type]
        except ValueError:
            table[f"tags-{objective}"] = {"mean_slowdown": math.inf, "mean_waiting_time": math.inf}
            continue
        row = {"mean_slowdown": tags.mean_slowdown, "mean_waiting_time": tags.mean_waiting_time, "excess": tags.excess}
        row.update({f"host_load_{i}": float(rho) for i, rho in enumerate(tags.host_loads)})
        row.update({f"cutoff_{i + 1}": float(s) for i, s in enumerate(tags.cutoffs)})
        table[f"tags-{objective}"] = row
    return table


def sweep(
    alphas: Sequence[float], load: float, n_hosts: int, upper: float, objectives: tuple[str, ...]
) -> dict[float, dict[str, dict[str, float]]]:
    """``policy_comparison`` at every alpha (mean 3000, upper bound ``upper``)."""
    points = progress_bar(alphas, desc=f"analysis at load {load:g}, {n_hosts} hosts", unit="alpha")
    return {a: policy_comparison(paper_size_dist(a, upper), load, n_hosts, objectives) for a in points}


def size_statistics(alpha: float, upper: float) -> dict[str, float]:
    """The paper's B(k, ``upper``, alpha) with mean 3000 (§3, §7): its moments and how heavy its tail is.

    Keys: ``k`` (the lower bound solved for), ``mean``, ``second_moment`` (E[X^2]), ``cv`` (the
    coefficient of variation, standard deviation / mean) and ``half_load_fraction``: the fraction
    of jobs, the largest ones, that carry half of the load (§3 calls a fraction under 1% the
    heavy-tailed property).
    """
    size_dist = paper_size_dist(alpha, upper)
    k, mean = size_dist.lower, size_dist.mean
    second = size_dist.partial_moment(2.0, k, upper)

    def load_above(log_x: float) -> float:
        return size_dist.partial_moment(1.0, math.exp(log_x), upper) - mean / 2.0

    half = math.exp(optimize.brentq(load_above, math.log(k), math.log(upper), xtol=1e-13))
    return {
        "k": k,
        "mean": mean,
        "second_moment": second,
        "cv": math.sqrt(second - mean**2) / mean,
        "half_load_fraction": size_dist.partial_moment(0.0, half, upper),
    }


def simulate(
    policy: str, alpha: float, load: float, n_hosts: int, upper: float, seeds: int, arrivals: int, **env_kwargs: object
) -> dict[str, Interval]:
    """Simulated metrics (mean ± 95% over seeds) of a baseline on the paper's workload."""
    result = evaluate_fast(
        "schedenv/Dispatch-v0",
        policy,
        range(seeds),
        size_dist=paper_size_dist(alpha, upper),
        load=load,
        n_hosts=n_hosts,
        n_arrivals=arrivals,
        max_jobs=0,
        **env_kwargs,
    )
    return result.summary


def fmt(value: float) -> str:
    """A number for a table: 4 significant digits, scientific when large or small."""
    if math.isinf(value):
        return "inf (unstable)"
    return f"{value:.4g}"


def write_markdown(
    out: Path, figure: str, description: str, header: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str]
) -> Path:
    """``<figure>.md``: the claim, a table, and the notes (command, seeds, arrival counts, comparison)."""
    lines = [f"# {figure}", "", description, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", *notes, ""]
    path = out / f"{figure}.md"
    path.write_text("\n".join(lines))
    return path


def plot(
    out: Path,
    figure: str,
    panels: Sequence[tuple[str, Callable[[object], None]]],
) -> Path:
    """``<figure>.png``: one panel per (title, draw(axes)) pair."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.0), squeeze=False)
    for ax, (title, draw) in zip(axes[0], panels, strict=True):
        draw(ax)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / f"{figure}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def curve(table: dict[float, dict[str, dict[str, float]]], policy: str, metric: str) -> tuple[list[float], list[float]]:
    """Alphas and a policy's metric, dropping unstable (infinite) points."""
    xs = [a for a in table if math.isfinite(table[a][policy][metric])]
    return xs, [table[a][policy][metric] for a in xs]
