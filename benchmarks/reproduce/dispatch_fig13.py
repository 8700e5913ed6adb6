"""TAGS paper Fig. 13: server expansion (hosts to add at a fixed arrival rate until mean slowdown <= 3),
starting from 2 hosts at load 0.7, from the analysis."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dispatch_figures import LABELS, parse, plot, write_markdown

from schedenv.analysis.queueing import support_bracket
from schedenv.analysis.tags import paper_size_dist, server_expansion, tags_analysis, tags_optimal_cutoffs
from schedenv.analysis.tags_chain import chain_optimal_log_cutoffs
from schedenv.progress import progress_bar

FIGURE = "tags-fig13"
DESCRIPTION = (
    "Fig. 13 (2 hosts, load 0.7, p = 10^10): TAGS-opt-slowdown needs 3 extra hosts at alpha = 0.2 and at most 2 "
    "elsewhere; Least-Work-Remaining needs 1 to 27 as alpha decreases; Random needs up to about 10^5 at alpha ≈ 1."
)
POLICIES = ("tags-slowdown", "least-work-remaining", "random")
CHECK_GRID = 1200


def four_host_optimum(alpha: float) -> tuple[float, float]:
    """Best TAGS mean slowdown at 4 hosts (the arrival rate of 2 hosts at load 0.7): optimiser and fine-grid DP."""
    size_dist = paper_size_dist(alpha)
    load = 0.7 * 2 / 4
    low, high = (math.log(v) for v in support_bracket(size_dist))
    grid = np.linspace(low, high, CHECK_GRID + 2)[1:-1]
    chain = chain_optimal_log_cutoffs(size_dist, load * 4 / size_dist.mean, 4, grid, "slowdown")
    on_grid = math.inf if chain is None else tags_analysis(np.exp(chain), size_dist, load, 4).mean_slowdown
    return tags_optimal_cutoffs(size_dist, load, 4).mean_slowdown, on_grid


def main(argv: list[str] | None = None) -> int:
    args = parse(argv, DESCRIPTION)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    points = progress_bar(args.alphas, desc=FIGURE, unit="alpha")
    table = {a: {p: server_expansion(p, paper_size_dist(a), 0.7, 2) for p in POLICIES} for a in points}  # type: ignore[arg-type]
    header = ["alpha", *(LABELS[p] for p in POLICIES)]
    rows = [[f"{a:g}", *(f"{table[a][p]:.4g}" for p in POLICIES)] for a in args.alphas]
    tags = {a: table[a]["tags-slowdown"] for a in args.alphas}
    lwr = [table[a]["least-work-remaining"] for a in args.alphas]
    low_alpha = min(args.alphas)
    rest = max(tags[a] for a in args.alphas if a != low_alpha)
    over_two = [a for a in args.alphas if a != low_alpha and tags[a] > 2]
    four_hosts = {a: four_host_optimum(a) for a in over_two}
    over_two_text = (
        "Where TAGS needs more than 2 extra hosts above the lowest alpha, the best 4-host mean slowdown of the "
        "appendix's model is still above 3 (optimiser / dynamic programme on a "
        f"{CHECK_GRID}-point grid: "
        + ", ".join(f"alpha {a:g}: {opt:.4g} / {grid:.4g}" for a, (opt, grid) in four_hosts.items())
        + "), so the difference from the paper is the model or the paper's hand-tuned cutoffs, not the search."
        if over_two
        else ""
    )
    notes = [
        f"Command: `{args.command}` (analysis only). Slowdown is the paper's W / X; TAGS uses optimal-slowdown "
        "cutoffs at every host count from the global search of `tags_optimal_cutoffs` (dynamic programming over "
        "the appendix's host-by-host terms, then Nelder-Mead); LWR the Lee-Longton M/G/h form (`lwr_analysis` "
        "default, which reproduces the paper's worked example of 13 hosts at alpha = 0.6).",
        "",
        f"Computed: TAGS needs {tags[low_alpha]} extra hosts at alpha = {low_alpha:g} (paper: 3) and at most {rest} "
        f"at the other alphas (paper: at most 2); LWR needs {min(lwr)} to {max(lwr)} (paper: 1 to 27); Random up to "
        f"{max(table[a]['random'] for a in args.alphas):.3g}.",
        "",
        "Comparison with the paper: TAGS needs a handful of hosts at every alpha and LWR's expansion grows as alpha "
        "falls, as stated. "
        + (f"Random needs {table[1.0]['random']:.3g} extra hosts at alpha = 1 (paper: ~10^5). " if 1.0 in table else "")
        + over_two_text,
    ]
    write_markdown(out, FIGURE, DESCRIPTION, header, rows, notes)
    alphas = list(args.alphas)

    def linear(ax) -> None:
        for p in POLICIES[:2]:
            ax.plot(alphas, [table[a][p] for a in alphas], marker="o", ms=3, label=LABELS[p])
        ax.set_xlabel("alpha")
        ax.set_ylabel("hosts added")

    def logarithmic(ax) -> None:
        for p in POLICIES:
            ax.semilogy(alphas, [max(float(table[a][p]), 0.5) for a in alphas], marker="o", ms=3, label=LABELS[p])
        ax.set_xlabel("alpha")
        ax.set_ylabel("hosts added (0 drawn at 0.5)")

    plot(out, FIGURE, [("Fig. 13(a) server expansion", linear), ("Fig. 13(b) log scale", logarithmic)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
