"""TAGS paper Fig. 10: host loads and their sum under TAGS-opt-slowdown against alpha, 2 hosts, system load
0.3 / 0.5 / 0.7, from the analysis (B(k, 10^10, alpha), mean 3000).

The caption: "The dotted line shows the sum of the loads at the 2 hosts. If there were no excess, the
dotted line would be at (a) 0.6 (b) 1.0 and (c) 1.4 [...]. In figures (a) and (b) we see excess only
at the higher alpha range. In figure (c) we see excess in both the low alpha and high alpha range,
but not around alpha ≈ 1." The text of §5.3 adds: in (c) "the load on Host 1 is much higher for the
lower alpha than it is in (b)", since "the load at Host 2 must not exceed 1"; "overall excess
increases with load"; "for higher loads excess is at its lowest point at alpha ≈ 1"; and "the
alpha ≈ 1 region is the region where balancing load is the optimal thing to do [...] regardless of
the system load". Excess is lambda p_2 s_1, equivalently the sum of the host loads minus h x load.

What we chose, since the paper gives no numbers: the alpha ranges are ``BANDS`` (low: alpha < 0.8,
around 1: 0.8 to 1.2, high: above 1.2); a panel "shows excess" at an alpha where the relative excess
(excess / (h x load), how far the dotted line sits above its no-excess level) is at least
``EXCESS_SEEN``; we also report the whole range of such thresholds for which the caption's three
sentences hold at once. "Much higher" is at least ``MUCH_HIGHER`` times (an order of magnitude);
Host 2 is "at its cap" where its load is at least ``AT_CAP``.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claims import CheckedClaim, claim
from _dispatch_figures import fmt, parse, plot, sweep, write_markdown

from schedenv.analysis.tags import paper_size_dist

FIGURE = "tags-fig10"
DESCRIPTION = (
    "Fig. 10 (2 hosts, p = 10^10, TAGS-opt-slowdown): the sum of the host loads exceeds 2 x load (excess) only at "
    "high alpha at loads 0.3 and 0.5, and at both low and high alpha, but not around alpha ≈ 1, at load 0.7, where "
    "host 1 also carries much more load at low alpha than at load 0.5 (host 2 being capped at load 1)."
)
LOADS = (0.3, 0.5, 0.7)
N_HOSTS = 2
BANDS = {"low": (0.0, 0.8), "around 1": (0.8, 1.2), "high": (1.2, math.inf)}
"""Alpha ranges: low is alpha < 0.8, around 1 is 0.8 <= alpha <= 1.2, high is alpha > 1.2."""
CAPTION_EXCESS = {0.3: ("high",), 0.5: ("high",), 0.7: ("low", "high")}
"""The bands where the caption sees excess, by system load (none elsewhere)."""
EXCESS_SEEN = 0.1
"""Relative excess (excess / (h x load)) from which a panel counts as showing excess."""
MUCH_HIGHER = 10.0
AT_CAP = 0.999

Table = dict[float, dict[float, dict[str, float]]]
"""load -> alpha -> host_1, host_2, total, excess, relative_excess."""


def band(alpha: float) -> str:
    """The ``BANDS`` name of ``alpha``."""
    for name, (low, high) in BANDS.items():
        if low <= alpha < high or (name == "around 1" and alpha == high):
            return name
    raise ValueError(f"alpha={alpha!r} is in no band; alphas must be > 0")


def loads_table(alphas: Sequence[float]) -> Table:
    """Host loads, their sum and the excess of TAGS-opt-slowdown at every ``LOADS`` and alpha."""
    table: Table = {}
    for load in LOADS:
        swept = sweep(alphas, load, N_HOSTS, 1e10, ("slowdown",))
        table[load] = {}
        for alpha in alphas:
            row = swept[alpha]["tags-slowdown"]
            total = row["host_load_0"] + row["host_load_1"]
            table[load][alpha] = {
                "host_1": row["host_load_0"],
                "host_2": row["host_load_1"],
                "total": total,
                "excess": row["excess"],
                "relative_excess": row["excess"] / (N_HOSTS * load),
                "definition_gap": abs(total - N_HOSTS * load - row["excess"]),
            }
    return table


def seen_bands(rows: dict[float, dict[str, float]], threshold: float) -> set[str]:
    """The bands with an alpha whose relative excess is at least ``threshold``."""
    return {band(a) for a, row in rows.items() if row["relative_excess"] >= threshold}


def caption_thresholds(table: Table) -> tuple[float, float]:
    """(low, high): the caption's excess sentences all hold for every threshold T with low < T <= high (empty when
    low >= high). Below T must stay every alpha of a band where the caption sees no excess; some alpha of every
    band where it does must reach T."""
    low, high = 0.0, math.inf
    for load, bands in CAPTION_EXCESS.items():
        rows = table[load]
        for name in BANDS:
            values = [row["relative_excess"] for a, row in rows.items() if band(a) == name]
            if not values:
                continue
            if name in bands:
                high = min(high, max(values))
            else:
                low = max(low, max(values))
    return low, high


def caption_verdicts(table: Table) -> list[CheckedClaim | str]:
    """One checked claim per panel (where the relative excess reaches ``EXCESS_SEEN``, against the caption), then
    the range of thresholds for which all three hold."""
    sentences: list[CheckedClaim | str] = []
    for panel, load in zip("abc", LOADS, strict=True):
        rows = table[load]
        seen = [a for a, row in rows.items() if row["relative_excess"] >= EXCESS_SEEN]
        expected = set(CAPTION_EXCESS[load])
        got = seen_bands(rows, EXCESS_SEEN)
        top = max(rows, key=lambda a: rows[a]["relative_excess"])
        text = (
            f"({panel}) load {load:g}: relative excess from {min(r['relative_excess'] for r in rows.values()):.3g} to "
            f"{rows[top]['relative_excess']:.3g} (alpha = {top:g}); at least {EXCESS_SEEN:g} at alpha "
            + (_alphas(seen) if seen else "none")
            + f". Excess seen in the {_bands(expected)} alpha range and no other"
            + ("." if got == expected else f" (seen in: {_bands(got) or 'none'}).")
        )
        sentences.append(claim(f"fig10-load-{load:g}", got == expected, text))
    low, high = caption_thresholds(table)
    sentences.append(
        f"The three panels' sentences hold together for every threshold T on the relative excess with {low:.3g} < T "
        f"<= {high:.3g} (we use {EXCESS_SEEN:g})."
        if low < high
        else f"No threshold makes all three hold together (it would need to be above {low:.3g} and <= {high:.3g})."
    )
    return sentences


def text_verdicts(table: Table) -> list[CheckedClaim | str]:
    """§5.3's statements about Fig. 10, each checked on the table (a checked claim), and two facts of the model."""
    alphas = sorted(table[LOADS[0]])
    low_alphas = [a for a in alphas if band(a) == "low"]
    mid, heavy = table[LOADS[1]], table[LOADS[2]]
    sentences: list[CheckedClaim | str] = []
    if low_alphas:
        ratios = {a: heavy[a]["host_1"] / mid[a]["host_1"] for a in low_alphas}
        weakest = min(ratios, key=lambda a: ratios[a])
        capped = min(heavy[a]["host_2"] for a in low_alphas)
        sentences += [
            claim(
                "fig10-host-1-low-alpha",
                ratios[weakest] >= MUCH_HIGHER,
                f"Host 1 at load {LOADS[2]:g} carries at least {MUCH_HIGHER:g} x its load at {LOADS[1]:g} at every "
                f"low alpha (smallest ratio {ratios[weakest]:.3g}, alpha = {weakest:g}: "
                f"{heavy[weakest]['host_1']:.3g} vs {mid[weakest]['host_1']:.3g}).",
            ),
            claim(
                "fig10-host-2-capped",
                capped >= AT_CAP,
                f"Host 2 at load {LOADS[2]:g} is at its cap (load >= {AT_CAP:g}) at every low alpha (smallest "
                f"1 - {1.0 - capped:.2g}).",
            ),
        ]
    lowest = min(heavy, key=lambda a: heavy[a]["excess"])
    ends = (alphas[0], alphas[-1])
    sentences.append(
        claim(
            "fig10-lowest-excess-alpha-1",
            band(lowest) == "around 1",
            f"At load {LOADS[2]:g} the excess is lowest around alpha ≈ 1: lowest at alpha = {lowest:g} "
            f"({heavy[lowest]['excess']:.3g}; "
            + ", ".join(f"{heavy[a]['excess']:.3g} at alpha = {a:g}" for a in ends)
            + ").",
        )
    )
    if 1.0 in alphas:
        size_dist = paper_size_dist(1.0)
        floor = size_dist.lower / size_dist.mean
        at_one = [table[load][1.0]["relative_excess"] for load in LOADS]
        sentences.append(
            "At alpha = 1, P(X > s) s = k (1 - s/p) / (1 - k/p) is about k for any cutoff s far below p, so the "
            f"relative excess is about k / E[X] = {floor:.4g} at any load: the table has "
            + ", ".join(f"{v:.4g}" for v in at_one)
            + f" (largest relative gap {max(abs(v / floor - 1.0) for v in at_one):.2g})."
        )
    growing = [
        a for a in alphas if all(table[x][a]["excess"] < table[y][a]["excess"] for x, y in itertools.pairwise(LOADS))
    ]
    sentences.append(
        claim(
            "fig10-excess-grows-with-load",
            len(growing) == len(alphas),
            "The excess grows with the load at every alpha"
            + ("." if len(growing) == len(alphas) else f" (it does at alpha {_alphas(growing)} only)."),
        )
    )
    crossings = {load: balance_crossing(table[load]) for load in LOADS}
    sentences.append(
        claim(
            "fig10-balanced-alpha-1",
            all(c is not None and band(c) == "around 1" for c in crossings.values()),
            "The host loads are balanced (host 1 - host 2 changes sign, interpolated linearly) around alpha ≈ 1 at "
            "every load ("
            + ", ".join(
                f"load {load:g}: " + (f"alpha {c:.3g}" if c is not None else "no crossing")
                for load, c in crossings.items()
            )
            + ").",
        )
    )
    gap = max(row["definition_gap"] for rows in table.values() for row in rows.values())
    sentences.append(
        f"The two definitions of excess (lambda p_2 s_1, and the sum of host loads minus {N_HOSTS} x load) differ "
        f"by at most {gap:.2g} over the table."
    )
    return sentences


def balance_crossing(rows: dict[float, dict[str, float]]) -> float | None:
    """The first alpha where host 1's load minus host 2's changes sign (linear interpolation), or None."""
    alphas = sorted(rows)
    gaps = [rows[a]["host_1"] - rows[a]["host_2"] for a in alphas]
    for a0, a1, g0, g1 in zip(alphas, alphas[1:], gaps, gaps[1:], strict=False):
        if g0 == 0.0:
            return a0
        if g0 * g1 < 0:
            return a0 + (a1 - a0) * g0 / (g0 - g1)
    return None


def _bullets(items: Sequence[CheckedClaim | str]) -> list[str]:
    """Markdown list items: a checked claim as its ``_claims.py`` line, a plain fact as ``- fact``."""
    return [item.line() if isinstance(item, CheckedClaim) else f"- {item}" for item in items]


def _bands(names: set[str]) -> str:
    return " and ".join(name for name in BANDS if name in names)


def _alphas(values: Sequence[float]) -> str:
    return ", ".join(f"{a:g}" for a in values)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv, DESCRIPTION)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = loads_table(args.alphas)
    columns = (("host_1", "host 1"), ("host_2", "host 2"), ("total", "sum"), ("relative_excess", "excess / (2 load)"))
    header = ["alpha", *(f"load {load:g}: {label}" for load in LOADS for _, label in columns)]
    rows = [[f"{a:g}", *(fmt(table[load][a][key]) for load in LOADS for key, _ in columns)] for a in args.alphas]
    notes = [
        f"Command: `{args.command}` (analysis only). TAGS cutoffs minimise the mean slowdown (`tags_optimal_cutoffs`, "
        "the same search as Figs. 8, 9 and 13). Alpha bands: low < 0.8 <= around 1 <= 1.2 < high; relative excess "
        f"is excess / ({N_HOSTS} x load), counted as seen from {EXCESS_SEEN:g}.",
        "",
        "The caption, checked on the table's numbers:",
        "",
        *_bullets(caption_verdicts(table)),
        "",
        "§5.3's text about the figure:",
        "",
        *_bullets(text_verdicts(table)),
    ]
    write_markdown(out, FIGURE, DESCRIPTION, header, rows, notes)
    alphas = list(args.alphas)

    def panel(load: float):
        def draw(ax) -> None:
            for key, label, style in (("host_1", "host 1", "o-"), ("host_2", "host 2", "s-"), ("total", "sum", ":")):
                ax.plot(alphas, [table[load][a][key] for a in alphas], style, ms=3, label=label)
            ax.axhline(N_HOSTS * load, color="gray", lw=0.8, label=f"no excess ({N_HOSTS * load:g})")
            ax.set_xlabel("alpha")
            ax.set_ylabel("load")
            ax.set_ylim(0, 2)

        return draw

    plot(out, FIGURE, [(f"Fig. 10({p}) load {load:g}", panel(load)) for p, load in zip("abc", LOADS, strict=True)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
