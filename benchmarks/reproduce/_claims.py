"""Checked claims: the one line format in which a reproduction states a paper's claim and our verdict.

A reproduction script computes, from its own numbers, whether each claim of the paper that its
figure checks holds, and writes one line per claim into its result file::

    - **holds** [`fig2-best`] ServerFilling-SRPT has the lowest E[T] ... (values)

The status is one of ``STATUSES``; the id is unique within the file and is how
``benchmarks/claims_table.py`` (which builds ``docs/claims.md``) finds the line. Scripts in this
folder import this module after putting the folder on ``sys.path`` (benchmarks/ is not a package).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

STATUSES = ("holds", "partly", "does not hold")
HEADING = "## Checked claims"
_LINE = re.compile(r"^- \*\*(holds|partly|does not hold)\*\* \[`([A-Za-z0-9_.-]+)`\] (.+)$")


@dataclass(frozen=True)
class CheckedClaim:
    """One claim as a result file states it: its id, our verdict and the sentence with our values."""

    claim_id: str
    status: str
    text: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status={self.status!r} is not allowed; use one of {STATUSES}")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.claim_id):
            raise ValueError(f"claim_id={self.claim_id!r} is not allowed; use letters, digits, '.', '_' or '-'")

    def line(self) -> str:
        """The Markdown list item that ``parse_claims`` reads back."""
        return f"- **{self.status}** [`{self.claim_id}`] {self.text}"


def claim(claim_id: str, holds: bool | str, text: str) -> CheckedClaim:
    """A checked claim; ``holds`` is a bool (holds / does not hold) or one of ``STATUSES``."""
    status = holds if isinstance(holds, str) else ("holds" if holds else "does not hold")
    return CheckedClaim(claim_id, status, text)


def claims_section(claims: Iterable[CheckedClaim]) -> list[str]:
    """The ``## Checked claims`` section: a heading, one line per claim (ids must be unique)."""
    claims = list(claims)
    ids = [c.claim_id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claim ids must be unique within a file; got {ids}")
    return [HEADING, "", *(c.line() for c in claims), ""]


def parse_claims(markdown: str) -> dict[str, CheckedClaim]:
    """Every checked-claim line of a result file, by id."""
    found: dict[str, CheckedClaim] = {}
    for line in markdown.splitlines():
        match = _LINE.match(line)
        if match:
            status, claim_id, text = match.groups()
            found[claim_id] = CheckedClaim(claim_id, status, text)
    return found


ORDERS_RULE = (
    "A ratio of 'N orders of magnitude' is read as one within half an order of 10^N (from 10^(N - 0.5) to "
    "10^(N + 0.5)), 'over N orders' as one above 10^N."
)


def about_orders(ratio: float, orders: float) -> bool:
    """Whether ``ratio`` is "``orders`` orders of magnitude" (``ORDERS_RULE``)."""
    return ratio > 0 and abs(math.log10(ratio) - orders) <= 0.5


def over_orders(ratio: float, orders: float) -> bool:
    """Whether ``ratio`` is "over ``orders`` orders of magnitude" (``ORDERS_RULE``)."""
    return ratio > 10.0**orders


def magnitude(ratio: float) -> str:
    """A ratio with its order of magnitude, e.g. ``8.47e+03 (10^3.93)``."""
    return f"{ratio:.3g} (10^{math.log10(ratio):.2f})" if ratio > 0 and math.isfinite(ratio) else f"{ratio:.3g}"
