"""TAGS paper Fig. 9 and 12: mean slowdown against alpha at loads 0.3 / 0.5 / 0.7 (2 hosts) and with 4 hosts
at load 0.3, from the analysis (B(k, 10^10, alpha), mean 3000)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claims import ORDERS_RULE, CheckedClaim, about_orders, claim, claims_section, magnitude, over_orders
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


Tables = dict[tuple[int, float], dict[float, dict[str, dict[str, float]]]]


def _slowdown(tables: Tables, case: tuple[int, float], alpha: float, policy: str) -> float:
    return tables[case][alpha][policy]["mean_slowdown"]


def _advantage(tables: Tables, case: tuple[int, float], alpha: float) -> float:
    """LWR / TAGS-opt-slowdown mean slowdown."""
    return _slowdown(tables, case, alpha, "least-work-remaining") / _slowdown(tables, case, alpha, "tags-slowdown")


def _alphas(values: list[float]) -> str:
    return ", ".join(f"{a:g}" for a in values) or "none"


def _order_claim(tables: Tables, case: tuple[int, float], alpha: float, text: str, holds: bool) -> CheckedClaim:
    h, load = case
    figure = "fig9" if h == 2 else "fig12"
    return claim(
        f"{figure}-load-{load:g}-alpha-{alpha:g}",
        holds,
        f"{text} ({h} hosts, load {load:g}, alpha {alpha:g}): "
        f"LWR / TAGS = {magnitude(_advantage(tables, case, alpha))}.",
    )


def fig9_claims(tables: Tables, alphas: tuple[float, ...]) -> list[CheckedClaim]:
    """§5.3's claims about Fig. 9 (2 hosts at loads 0.3, 0.5, 0.7), checked on the analysis tables."""
    light, heavy = (2, 0.3), (2, 0.7)
    claims = []
    for alpha, text, check in (
        (1.0, "over 4 orders of magnitude", lambda r: over_orders(r, 4)),
        (0.6, "7 orders of magnitude", lambda r: about_orders(r, 7)),
        (0.2, "almost 20 orders of magnitude", lambda r: about_orders(r, 20)),
    ):
        if alpha in alphas:
            ratio = _advantage(tables, light, alpha)
            claims.append(_order_claim(tables, light, alpha, f"TAGS-opt-slowdown beats LWR by {text}", check(ratio)))
    better = [a for a in alphas if _advantage(tables, heavy, a) > 10]
    comparable = [a for a in alphas if 0.1 <= _advantage(tables, heavy, a) <= 10]
    inside = [a for a in alphas if 0.6 < a < 1.5]
    claims.append(
        claim(
            "fig9-load-0.7-range",
            better == inside and sorted(comparable + better) == list(alphas),
            "At load 0.7 TAGS-opt-slowdown improves on LWR only for 0.6 < alpha < 1.5 and is comparable elsewhere "
            f"(read as: more than 10x better exactly there, within 10x either way elsewhere): more than 10x better at "
            f"alpha {_alphas(better)}; within 10x at alpha {_alphas(comparable)}.",
        )
    )
    if 1.0 in alphas:
        ratio = _advantage(tables, heavy, 1.0)
        claims.append(
            _order_claim(
                tables,
                heavy,
                1.0,
                "TAGS-opt-slowdown still beats LWR by about 4 orders of magnitude",
                about_orders(ratio, 4),
            )
        )
    losses = {
        case: [
            a
            for a in alphas
            if _advantage(tables, case, a) <= 1
            or _slowdown(tables, case, a, "random") <= _slowdown(tables, case, a, "tags-slowdown")
        ]
        for case in CASES
        if case[0] == 2
    }
    claims.append(
        claim(
            "fig9-every-alpha",
            not any(losses.values()),
            "Caption: TAGS-opt-slowdown outperforms LWR and Random under all alpha, at each of the three loads; "
            "it does not at " + "; ".join(f"load {case[1]:g}: alpha {_alphas(a)}" for case, a in losses.items()) + ".",
        )
    )
    lighter = [a for a in alphas if _advantage(tables, light, a) > _advantage(tables, heavy, a)]
    claims.append(
        claim(
            "fig9-lighter-load-better",
            "holds" if len(lighter) == len(alphas) else ("partly" if lighter else "does not hold"),
            "TAGS's improvement over LWR is much better at lower load: LWR / TAGS is larger at load 0.3 than at 0.7 at "
            f"alpha {_alphas(lighter)}, not at alpha {_alphas([a for a in alphas if a not in lighter])}.",
        )
    )
    gains = {p: [_slowdown(tables, heavy, a, p) / _slowdown(tables, light, a, p) for a in alphas] for p in POLICIES}
    most = [a for i, a in enumerate(alphas) if gains["tags-slowdown"][i] >= max(g[i] for g in gains.values())]
    claims.append(
        claim(
            "fig9-tags-improves-most",
            "holds" if len(most) == len(alphas) else ("partly" if most else "does not hold"),
            "All policies improve as the load drops, TAGS most dramatically: mean slowdown at load 0.7 / at 0.3 is "
            "largest for TAGS-opt-slowdown at alpha "
            f"{_alphas(most)}, not at alpha {_alphas([a for a in alphas if a not in most])}; every policy improves at "
            f"every alpha: {'yes' if all(g > 1 for v in gains.values() for g in v) else 'no'}.",
        )
    )
    checks = [
        (a, load) for (h, load), a_list in losses.items() for a in a_list if _advantage(tables, (h, load), a) <= 1
    ]
    if checks:
        scans = [
            (a, load, _slowdown(tables, (2, load), a, "tags-slowdown"), dense_scan_slowdown(a, load))
            for a, load in checks
        ]
        claims.append(
            claim(
                "fig9-losses-are-the-model",
                all(t <= d * (1 + 1e-6) for _, _, t, d in scans),
                f"Where TAGS-opt-slowdown loses to LWR, a dense scan of {SCAN_POINTS} log-spaced cutoffs finds no "
                "better stable cutoff than the optimiser (not our search but the appendix's model): "
                + "; ".join(
                    f"alpha {a:g} load {load:g}: TAGS {t:.4g} (scan {d:.4g}) vs LWR "
                    f"{_slowdown(tables, (2, load), a, 'least-work-remaining'):.4g}, host 1 load "
                    f"{tables[(2, load)][a]['tags-slowdown']['host_load_0']:.3g}, excess "
                    f"{tables[(2, load)][a]['tags-slowdown']['excess']:.3g}"
                    for a, load, t, d in scans
                )
                + ". The paper's §5.3 text agrees at load 0.7 ('comparable to Least-Work-Remaining for most alpha'); "
                "its Fig. 9 caption ('under all alpha') does not.",
            )
        )
    return claims


def fig12_claims(tables: Tables, alphas: tuple[float, ...]) -> list[CheckedClaim]:
    """§6's claims about Fig. 12 (4 hosts at load 0.3 against 2 hosts at load 0.3)."""
    two, four = (2, 0.3), (4, 0.3)
    random_same = all(
        math.isclose(_slowdown(tables, two, a, "random"), _slowdown(tables, four, a, "random"), rel_tol=1e-9)
        for a in alphas
    )
    lwr_gain = {
        a: _slowdown(tables, two, a, "least-work-remaining") / _slowdown(tables, four, a, "least-work-remaining")
        for a in alphas
    }
    tags = {a: _slowdown(tables, four, a, "tags-slowdown") for a in alphas}
    high = [a for a in alphas if a >= 1.5]
    low = [a for a in alphas if a <= 0.5]
    claims = [
        claim(
            "fig12-random-unchanged",
            random_same,
            "With 4 hosts at the same load, Random's mean slowdown is unchanged at every alpha.",
        ),
        claim(
            "fig12-lwr-improves",
            all(g > 1 for g in lwr_gain.values()),
            "LWR improves with 4 hosts at every alpha: its 2-host / 4-host mean slowdown is "
            f"{_range(list(lwr_gain.values()))}.",
        ),
        claim(
            "fig12-lwr-couple-orders-high-alpha",
            all(about_orders(lwr_gain[a], 2) for a in high)
            and max(lwr_gain[a] for a in low) < min(lwr_gain[a] for a in high),
            "LWR improves by a couple of orders of magnitude at high alpha and less at low alpha: 2-host / 4-host "
            f"mean slowdown {_range([lwr_gain[a] for a in high])} at alpha >= 1.5 and "
            f"{_range([lwr_gain[a] for a in low])} at alpha <= 0.5 (our M/G/h form makes the ratio independent of the "
            "size law).",
        ),
        claim(
            "fig12-tags-never-over-6",
            max(tags.values()) <= 6,
            f"TAGS-opt-slowdown's mean slowdown is never over 6: largest {max(tags.values()):.3g} (alpha "
            f"{max(tags, key=lambda a: tags[a]):g}).",
        ),
        claim(
            "fig12-tags-often-under-1",
            sum(v < 1 for v in tags.values()) >= len(alphas) / 2,
            f"TAGS-opt-slowdown's mean slowdown is often under 1: at {sum(v < 1 for v in tags.values())} of "
            f"{len(alphas)} alphas.",
        ),
    ]
    for alpha, text, lower, upper in (
        (1.0, "4-5", 3.5, 5.5),
        (0.6, "8 or 9", 7.5, 9.5),
        (0.2, "over 25", 25, math.inf),
    ):
        if alpha in alphas:
            ratio = _advantage(tables, four, alpha)
            claims.append(
                _order_claim(
                    tables,
                    four,
                    alpha,
                    f"TAGS-opt-slowdown beats LWR by {text} orders of magnitude",
                    10**lower < ratio <= 10**upper,
                )
            )
    return claims


def _range(values: list[float]) -> str:
    low, high = f"{min(values):.3g}", f"{max(values):.3g}"
    return low if low == high else f"{low} to {high}"


def main(argv: list[str] | None = None) -> int:
    args = parse(argv, DESCRIPTION)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {case: sweep(args.alphas, case[1], case[0], 1e10, ("slowdown",)) for case in CASES}
    header = ["alpha", *(f"h={h}, load {r}: {LABELS[p]}" for h, r in CASES for p in POLICIES)]
    rows = [
        [f"{a:g}", *(fmt(tables[case][a][p]["mean_slowdown"]) for case in CASES for p in POLICIES)] for a in args.alphas
    ]
    notes = [
        f"Command: `{args.command}` (analysis only). TAGS cutoffs come from the global search of "
        "`tags_optimal_cutoffs` (dynamic programming over the appendix's host-by-host terms, then Nelder-Mead); the "
        "paper optimised the 4-host cutoffs by hand. LWR is the Lee-Longton M/G/h form (`lwr_analysis` default).",
        "",
        ORDERS_RULE,
        "",
        *claims_section([*fig9_claims(tables, args.alphas), *fig12_claims(tables, args.alphas)]),
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
