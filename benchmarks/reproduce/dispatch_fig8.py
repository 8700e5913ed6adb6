"""TAGS paper Fig. 8: host loads under the three TAGS flavours against alpha (2 hosts, load 0.5), from the analysis."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import math

from _claims import CheckedClaim, claim, claims_section
from _dispatch_figures import LABELS, curve, fmt, parse, plot, sweep, write_markdown
from scipy.optimize import brentq

from schedenv.analysis.tags import paper_size_dist

FIGURE = "tags-fig8"
DESCRIPTION = (
    "Fig. 8 (2 hosts, load 0.5, p = 10^10): all TAGS flavours severely underload host 1 at low alpha (host 2 near "
    "load 1), overload host 1 somewhat at high alpha, and balance the hosts around alpha ≈ 1."
)
FLAVOURS = ("tags-slowdown", "tags-waiting_time", "tags-fairness")


LOW_LOAD = 0.05
"""Host 1 counts as "severely underloaded" below this load (and host 2 as near 1 above 1 - LOW_LOAD)."""
BALANCE = 0.15
"""The loads "balance around alpha ≈ 1" if they cross within this distance of alpha = 1."""


def crossing(table: dict[float, dict[str, dict[str, float]]], flavour: str) -> float:
    """The alpha where host 1's load first reaches host 2's (linear interpolation between grid points)."""
    alphas = sorted(table)
    gaps = [table[a][flavour]["host_load_0"] - table[a][flavour]["host_load_1"] for a in alphas]
    for i in range(len(alphas) - 1):
        if gaps[i] < 0 <= gaps[i + 1]:
            return alphas[i] + (alphas[i + 1] - alphas[i]) * -gaps[i] / (gaps[i + 1] - gaps[i])
    return math.nan


def heavy_tail_shares(alpha: float) -> tuple[float, float]:
    """§5.2 for B(k, 10^10, alpha): the fraction of (longest) jobs that carries half the load, and the load
    share of the longest 10^-4 fraction of jobs."""
    dist = paper_size_dist(alpha)
    low, high = math.log(dist.lower) + 1e-12, math.log(dist.upper) - 1e-12

    def jobs_above(log_size: float) -> float:
        return dist.partial_moment(0, math.exp(log_size), dist.upper)

    def load_above(log_size: float) -> float:
        return dist.partial_moment(1, math.exp(log_size), dist.upper) / dist.mean

    half = brentq(lambda x: load_above(x) - 0.5, low, high, xtol=1e-12)
    top = brentq(lambda x: math.log(jobs_above(x)) - math.log(1e-4), low, high, xtol=1e-12)
    return jobs_above(half), load_above(top)


def fig8_claims(table: dict[float, dict[str, dict[str, float]]], alphas: tuple[float, ...]) -> list[CheckedClaim]:
    """§5.2's claims about Fig. 8 (and its alpha = 0.2 example), checked on the analysis table."""
    low, high = min(alphas), max(alphas)

    def loads(a: float, f: str) -> str:
        return f"{LABELS[f]} {fmt(table[a][f]['host_load_0'])} / {fmt(table[a][f]['host_load_1'])}"

    under = all(
        table[low][f]["host_load_0"] < LOW_LOAD and table[low][f]["host_load_1"] > 1 - LOW_LOAD for f in FLAVOURS
    )
    over = all(table[high][f]["host_load_0"] > table[high][f]["host_load_1"] for f in FLAVOURS)
    crossings = {f: crossing(table, f) for f in FLAVOURS}
    balanced = [f for f, a in crossings.items() if abs(a - 1) <= BALANCE]
    slowdown = table[low]["tags-slowdown"]
    claims = [
        claim(
            "fig8-underload-low-alpha",
            under,
            f"Every flavour severely underloads host 1 at low alpha (host 1 below {LOW_LOAD:g}, host 2 above "
            f"{1 - LOW_LOAD:g}); host 1 / host 2 at alpha {low:g}: " + ", ".join(loads(low, f) for f in FLAVOURS) + ".",
        ),
        claim(
            "fig8-overload-high-alpha",
            over,
            f"Every flavour loads host 1 more than host 2 at high alpha; at alpha {high:g}: "
            + ", ".join(loads(high, f) for f in FLAVOURS)
            + ".",
        ),
        claim(
            "fig8-balance-alpha-1",
            "holds" if len(balanced) == len(FLAVOURS) else ("partly" if balanced else "does not hold"),
            f"The host loads balance around alpha ≈ 1 (cross within {BALANCE:g} of 1): they cross at "
            + ", ".join(f"alpha {a:.3g} for {LABELS[f]}" for f, a in crossings.items())
            + ".",
        ),
    ]
    if low == 0.2:
        half, top = heavy_tail_shares(0.2)
        claims += [
            claim(
                "fig8-alpha-0.2-loads",
                slowdown["host_load_0"] <= 1e-5 and slowdown["host_load_1"] >= 0.99999,
                "§5.2, alpha = 0.2: TAGS-opt-slowdown runs host 2 at load .99999 and host 1 at .00001 (or less): "
                f"host 1 {slowdown['host_load_0']:.3g}, host 2 {slowdown['host_load_1']:.7f}.",
            ),
            claim(
                "fig8-heavy-tail-property",
                half <= 1e-6 and top >= 0.99999,
                "§5.2, alpha = 0.2: the longest 10^-6 fraction of jobs is enough for half the load and the longest "
                f"10^-4 fraction for .99999 of it: half the load is carried by the longest {half:.3g} fraction, and "
                f"the longest 10^-4 fraction carries {top:.8f}.",
            ),
        ]
    return claims


def main(argv: list[str] | None = None) -> int:
    args = parse(argv, DESCRIPTION)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = sweep(args.alphas, 0.5, 2, 1e10, ("slowdown", "waiting_time", "fairness"))
    header = ["alpha", *(f"{LABELS[f]} {h}" for f in FLAVOURS for h in ("host 1", "host 2", "cutoff s1"))]
    rows = [
        [f"{a:g}", *(fmt(table[a][f][k]) for f in FLAVOURS for k in ("host_load_0", "host_load_1", "cutoff_1"))]
        for a in args.alphas
    ]
    notes = [f"Command: `{args.command}` (analysis only).", "", *claims_section(fig8_claims(table, args.alphas))]
    write_markdown(out, FIGURE, DESCRIPTION, header, rows, notes)

    def panel(flavour: str):
        def draw(ax) -> None:
            for host in (0, 1):
                ax.plot(*curve(table, flavour, f"host_load_{host}"), marker="o", ms=3, label=f"host {host + 1}")
            ax.set_xlabel("alpha")
            ax.set_ylabel("load")
            ax.set_ylim(0, 1.05)

        return draw

    plot(out, FIGURE, [(f"Fig. 8: {LABELS[f]}", panel(f)) for f in FLAVOURS])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
