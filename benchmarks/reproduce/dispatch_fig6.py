"""TAGS paper Fig. 6 and 7: mean slowdown and mean waiting time against alpha, 2 hosts, load 0.5.

Curves: the analysis (Random: M/G/1 per host; LWR: the paper's M/G/h form; TAGS: appendix with
optimised cutoffs), B(k, 10^10, alpha) with mean 3000, as the paper plots them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dispatch_figures import LABELS, curve, fmt, parse, plot, sweep, write_markdown

FIGURE = "tags-fig6-fig7"
DESCRIPTION = (
    "Fig. 6/7 (2 hosts, load 0.5, p = 10^10): TAGS-opt-slowdown beats Least-Work-Remaining by 2 orders of "
    "magnitude in mean slowdown at alpha = 1.5, over 4 at alpha ≈ 1 and over 9 at alpha = 0.4; LWR beats Random "
    "by about one order; TAGS-opt-fairness is not far from TAGS-opt-slowdown; the same holds for mean waiting time."
)
POLICIES = ("random", "least-work-remaining", "tags-slowdown", "tags-waiting_time", "tags-fairness")
SLOWDOWN_CURVES = ("random", "least-work-remaining", "tags-slowdown", "tags-fairness")
WAITING_CURVES = ("random", "least-work-remaining", "tags-waiting_time", "tags-fairness")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv, DESCRIPTION)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = sweep(args.alphas, 0.5, 2, 1e10, ("slowdown", "waiting_time", "fairness"))
    header = ["alpha", *(f"{LABELS[p]} E[S]" for p in POLICIES), *(f"{LABELS[p]} E[W]" for p in POLICIES)]
    rows = [
        [
            f"{a:g}",
            *(fmt(table[a][p]["mean_slowdown"]) for p in POLICIES),
            *(fmt(table[a][p]["mean_waiting_time"]) for p in POLICIES),
        ]
        for a in args.alphas
    ]
    ratio = {
        a: table[a]["least-work-remaining"]["mean_slowdown"] / table[a]["tags-slowdown"]["mean_slowdown"]
        for a in args.alphas
    }
    notes = [
        f"Command: `{args.command}` (analysis only; no seeds or arrivals involved).",
        "",
        "LWR / TAGS-opt-slowdown mean-slowdown ratio: " + ", ".join(f"alpha {a:g}: {r:.3g}" for a, r in ratio.items()),
        "",
        "Comparison with the paper: TAGS's orders-of-magnitude advantage over LWR and its growth as alpha falls "
        "reproduce (see the ratios). TAGS-opt-fairness stays within about 1-2 orders of TAGS-opt-slowdown. "
        "LWR beats Random by only a factor 1.5 here, not an order of magnitude: with the paper's printed M/G/h "
        "formula (E[Q] = E[Q_M/M/h] E[X^2]/E[X]^2) the ratio LWR/Random at h = 2, load 0.5 is exactly 2/3 for any "
        "size distribution, so the paper's plotted LWR curve must have come from a different computation.",
    ]
    write_markdown(out, FIGURE, DESCRIPTION, header, rows, notes)

    def draw(metric: str, policies: tuple[str, ...]):
        def panel(ax) -> None:
            for p in policies:
                ax.semilogy(*curve(table, p, metric), marker="o", ms=3, label=LABELS[p])
            ax.set_xlabel("alpha")
            ax.set_ylabel(metric.replace("_", " "))

        return panel

    plot(
        out,
        FIGURE,
        [
            (
                "Fig. 6: mean slowdown (2 hosts, load 0.5)",
                draw("mean_slowdown", ("random", "least-work-remaining", "tags-slowdown", "tags-fairness")),
            ),
            (
                "Fig. 7: mean waiting time",
                draw("mean_waiting_time", ("random", "least-work-remaining", "tags-waiting_time", "tags-fairness")),
            ),
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
