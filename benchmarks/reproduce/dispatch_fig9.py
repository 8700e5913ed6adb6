"""TAGS paper Fig. 9 and 12: mean slowdown against alpha at loads 0.3 / 0.5 / 0.7 (2 hosts) and with 4 hosts
at load 0.3, from the analysis (B(k, 10^10, alpha), mean 3000)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dispatch_figures import LABELS, curve, fmt, parse, plot, sweep, write_markdown

from schedenv.analysis.queueing import support_bracket
from schedenv.analysis.tags import paper_size_dist, tags_analysis

FIGURE = "tags-fig9-fig12"
DESCRIPTION = (
    "Fig. 9: TAGS-opt-slowdown beats LWR and Random at every alpha, most at low load (load 0.3: over 4 orders at "
    "alpha = 1, 7 at 0.6, almost 20 at 0.2; load 0.7: only for 0.6 < alpha < 1.5, about 4 orders at alpha ≈ 1). "
    "Fig. 12 (4 hosts, load 0.3): Random is unchanged, LWR improves, TAGS never exceeds a mean slowdown of 6."
)
POLICIES = ("random", "least-work-remaining", "tags-slowdown")
CASES = ((2, 0.3), (2, 0.5), (2, 0.7), (4, 0.3))
SCAN_POINTS = 4000


def dense_scan_slowdown(alpha: float, load: float) -> float:
    """The best stable 2-host TAGS mean slowdown over ``SCAN_POINTS`` log-spaced cutoffs (a check on the optimiser)."""
    size_dist = paper_size_dist(alpha)
    low, high = (math.log(v) for v in support_bracket(size_dist))
    best = math.inf
    for cut in np.exp(np.linspace(low, high, SCAN_POINTS + 2)[1:-1]):
        result = tags_analysis([cut], size_dist, load, 2)
        if result.stable:
            best = min(best, result.mean_slowdown)
    return best


def main(argv: list[str] | None = None) -> int:
    args = parse(argv, DESCRIPTION)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {case: sweep(args.alphas, case[1], case[0], 1e10, ("slowdown",)) for case in CASES}
    header = ["alpha", *(f"h={h}, load {r}: {LABELS[p]}" for h, r in CASES for p in POLICIES)]
    rows = [
        [f"{a:g}", *(fmt(tables[case][a][p]["mean_slowdown"]) for case in CASES for p in POLICIES)] for a in args.alphas
    ]
    worst_4 = max(tables[(4, 0.3)][a]["tags-slowdown"]["mean_slowdown"] for a in args.alphas)
    losses = {
        case: [
            a
            for a in args.alphas
            if tables[case][a]["tags-slowdown"]["mean_slowdown"]
            > tables[case][a]["least-work-remaining"]["mean_slowdown"]
        ]
        for case in CASES
    }
    loss_text = "; ".join(
        f"h={h}, load {r}: " + (", ".join(f"{a:g}" for a in losses[(h, r)]) or "none") for h, r in CASES
    )

    def lwr(a: float, r: float) -> float:
        return tables[(2, r)][a]["least-work-remaining"]["mean_slowdown"]

    checks = [
        (a, r, tables[(2, r)][a]["tags-slowdown"]["mean_slowdown"], dense_scan_slowdown(a, r))
        for h, r in CASES
        if h == 2
        for a in losses[(h, r)]
    ]
    check_text = (
        "At each of those 2-host points a dense scan of "
        f"{SCAN_POINTS} log-spaced cutoffs finds no better stable cutoff than the optimiser (largest optimiser / "
        f"scan ratio {max(t / d for _, _, t, d in checks):.9f}), so TAGS losing there is the appendix's model, not "
        "the search: "
        + ", ".join(f"alpha {a:g} load {r}: TAGS {t:.4g} vs LWR {lwr(a, r):.4g}" for a, r, t, _ in checks)
        + ". TAGS's host 1 runs near load 1 there and restarts add excess work (sum of host loads minus 2 x 0.7), "
        "which the paper's §5.3 text itself describes: at load 0.7 TAGS is 'comparable to Least-Work-Remaining for "
        "most alpha' and better only for 0.6 < alpha < 1.5 (the Fig. 9 caption's 'under all alpha' disagrees)."
        if checks
        else "TAGS-opt-slowdown beats LWR at every alpha of the 2-host cases."
    )
    notes = [
        f"Command: `{args.command}` (analysis only). TAGS cutoffs come from the global search of "
        "`tags_optimal_cutoffs` (dynamic programming over the appendix's host-by-host terms, then Nelder-Mead); the "
        "paper optimised the 4-host cutoffs by hand. LWR is the Lee-Longton M/G/h form (`lwr_analysis` default).",
        "",
        f"Largest TAGS-opt-slowdown mean slowdown with 4 hosts at load 0.3: {worst_4:.3g} (paper: never over 6).",
        "",
        f"Alphas where TAGS-opt-slowdown's mean slowdown is above LWR's: {loss_text}.",
        "",
        check_text,
        "",
        "Comparison with the paper: TAGS's advantage shrinks as the load grows (infinite entries mean no stable "
        "cutoffs exist). With 4 hosts Random is unchanged and LWR improves, as stated.",
    ]
    write_markdown(out, FIGURE, DESCRIPTION, header, rows, notes)

    def panel(case: tuple[int, float]):
        def draw(ax) -> None:
            for p in POLICIES:
                ax.semilogy(*curve(tables[case], p, "mean_slowdown"), marker="o", ms=3, label=LABELS[p])
            ax.set_xlabel("alpha")
            ax.set_ylabel("mean slowdown")

        return draw

    titles = ["Fig. 9(a) h=2, load 0.3", "Fig. 9(b) h=2, load 0.5", "Fig. 9(c) h=2, load 0.7", "Fig. 12 h=4, load 0.3"]
    plot(out, FIGURE, [(t, panel(c)) for t, c in zip(titles, CASES, strict=True)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
