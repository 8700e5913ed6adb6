"""Claim checks shared by the heSRPT reproductions (``malleable_fig6.py``, ``malleable_figC7.py``).

Each sentence of the paper that a figure supports becomes a verdict computed on the result file's own
numbers: a checked-claim line (``_claims.py``: **holds** or **does not hold**, an id, the claim and the
values that decide it), which ``benchmarks/claims_table.py`` reads into docs/claims.md. A *cell* is one
point of a figure ((p, load) online, (p,) offline); ``means[cell][policy]`` is the mean over the seeds
of the figure's metric, and every ratio is a ratio of those means (what the figures plot).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from _claims import claim

Cell = tuple[float, ...]
Means = Mapping[Cell, Mapping[str, float]]

TIE_RTOL = 1e-9
"""Relative slack for "at least as good as": a policy that coincides with the reference ties it."""


def verdict(claim_id: str, sentence: str, holds: bool, evidence: str) -> str:
    """A checked-claim line (``_claims.py``): whether ``sentence`` holds on the numbers, and the deciding values."""
    return claim(claim_id, holds, f"{sentence}: {evidence}.").line()


def ratio(means: Means, cell: Cell, name: str, reference: str) -> float:
    """mean(name) / mean(reference) in ``cell``."""
    return means[cell][name] / means[cell][reference]


def label(axes: Sequence[str], cell: Cell) -> str:
    """``cell`` as "p = 0.05, load = 3" for the axis names ``axes``."""
    return ", ".join(f"{axis} = {value:g}" for axis, value in zip(axes, cell, strict=True))


def beats_every_competitor(
    means: Means, reference: str, competitors: Iterable[str], axes: Sequence[str]
) -> tuple[bool, str]:
    """Whether ``reference`` has a mean at most every competitor's in every cell, with the exceptions' values."""
    competitors = list(competitors)
    failures = [
        (cell, name, ratio(means, cell, name, reference))
        for cell in means
        for name in competitors
        if ratio(means, cell, name, reference) < 1.0 - TIE_RTOL
    ]
    if failures:
        listed = "; ".join(f"{name} / {reference} = {r:.4g} at {label(axes, cell)}" for cell, name, r in failures)
        noun = "exception" if len(failures) == 1 else "exceptions"
        return False, f"{len(failures)} {noun} in {len(means)} cells: {listed}"
    cell, name = min(((c, n) for c in means for n in competitors), key=lambda cn: ratio(means, *cn, reference))
    closest = ratio(means, cell, name, reference)
    return True, f"all {len(means)} cells; closest competitor {name}, ratio {closest:.4g} at {label(axes, cell)}"


def largest_ratio(means: Means, name: str, reference: str, cells: Iterable[Cell] | None = None) -> tuple[Cell, float]:
    """The cell (among ``cells``, default all) where mean(name) / mean(reference) is largest, and that ratio."""
    cell = max(cells if cells is not None else means, key=lambda c: ratio(means, c, name, reference))
    return cell, ratio(means, cell, name, reference)


def ratio_range(means: Means, name: str, reference: str, cells: Iterable[Cell]) -> str:
    """ "low to high" (or one value) of mean(name) / mean(reference) over ``cells``."""
    values = [ratio(means, cell, name, reference) for cell in cells]
    low, high = f"{min(values):.3g}", f"{max(values):.3g}"
    return low if low == high else f"{low} to {high}"
