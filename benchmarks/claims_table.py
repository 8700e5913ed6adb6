"""Build docs/claims.md: every quantitative claim of the four papers, our value, and whether it holds.

The claims are listed in ``benchmarks/claims.yaml`` (its header says what each field means). Our
values come only from committed files: a result file's checked-claim line (written by its
reproduction script), a result file's table (for the files whose script writes no checked claims
yet; the checks are the ``TABLE_CHECKS`` below), or a named test that asserts the value.

    python benchmarks/claims_table.py            # rewrite docs/claims.md
    python benchmarks/claims_table.py --check    # exit 1 if docs/claims.md is not what this would write
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

# benchmarks/ is not a package: the checked-claim format is defined beside the reproduction scripts.
sys.path.insert(0, str(Path(__file__).resolve().parent / "reproduce"))
from _claims import STATUSES, parse_claims

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "benchmarks" / "claims.yaml"
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "claims.md"
PAPERS = {
    "heSRPT": "Berg, Vesilo, Harchol-Balter, *heSRPT: Parallel scheduling to minimize mean slowdown* "
    "(Performance Evaluation 144, 2020)",
    "TAGS": "Harchol-Balter, *Task assignment with unknown duration* (JACM 2002)",
    "ServerFilling": "Grosof, Scully, Harchol-Balter, Scheller-Wolf, *Optimal scheduling in the multiserver-job "
    "model under heavy traffic* (POMACS 2022)",
    "HRF": "Wu, Tuo, Jin, Yan, Weng, *HRF: A resource allocation scheme for moldable jobs* (CF'15)",
}

NOT_REPRODUCED = "not reproduced"


@dataclass(frozen=True)
class Row:
    """One line of the page."""

    paper: str
    where: str
    claim: str
    value: str
    status: str
    source: str
    reason: str


def markdown_table(path: Path) -> list[dict[str, str]]:
    """The first Markdown table of ``path``: one dict per row, keyed by the header."""
    rows = [line for line in path.read_text().splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in rows]
    header, body = cells[0], [c for c in cells[2:] if len(c) == len(cells[0])]
    return [dict(zip(header, c, strict=True)) for c in body]


def ratio(cell: str) -> float:
    """The per-seed ratio to the paper's policy in a heSRPT result cell, ``"1.3 ± 0.01 (×1.014)"``."""
    match = re.search(r"\(×([0-9.]+)\)", cell)
    if match is None:
        raise ValueError(f"no (×ratio) in the cell {cell!r}")
    return float(match.group(1))


Check = Callable[[list[dict[str, str]]], tuple[str, str]]
FIG5_COMPETITORS = ("srpt", "equi", "hell", "knee")
"""heSRPT Fig. 5's competitors as the paper names them (hell as worded; hell-waterfill is our other reading)."""


def _by_p(table: list[dict[str, str]]) -> dict[float, dict[str, float]]:
    return {float(row["p"]): {k: ratio(v) for k, v in row.items() if "(×" in v} for row in table}


def _fig5_best(table: list[dict[str, str]]) -> tuple[str, str]:
    rows = _by_p(table)
    below = [f"{name} at p = {p:g} ({r[name]:.3f})" for p, r in rows.items() for name in r if r[name] < 1.0]
    worst = min((r[n], n, p) for p, r in rows.items() for n in r if n != "hesrpt")
    return (
        "does not hold" if below else "holds",
        "every competitor's mean slowdown is at least heSRPT's at every p"
        + (f", except {', '.join(below)}" if below else "")
        + f" (closest: {worst[1]} at p = {worst[2]:g}, x{worst[0]:.3f})",
    )


def _fig5_at(p_index: int, name: str, test: Callable[[float], bool], text: str) -> Check:
    def check(table: list[dict[str, str]]) -> tuple[str, str]:
        rows = _by_p(table)
        p = sorted(rows)[p_index]
        value = rows[p][name]
        return ("holds" if test(value) else "does not hold"), f"{name} / heSRPT = {value:.3f} at p = {p:g} ({text})"

    return check


def _fig5_hell_like_srpt(table: list[dict[str, str]]) -> tuple[str, str]:
    rows = _by_p(table)
    similar = [p for p, r in rows.items() if abs(r["hell"] / r["srpt"] - 1) <= 0.1]
    others = ", ".join(f"{r['hell'] / r['srpt']:.3g} at p = {p:g}" for p, r in rows.items() if p not in similar)
    return (
        "holds" if len(similar) > len(rows) / 2 else "does not hold",
        f"HELL within 10% of SRPT at {len(similar)} of {len(rows)} values of p "
        f"({', '.join(f'{p:g}' for p in similar)}); HELL / SRPT elsewhere: {others or 'none'}",
    )


def _fig5_knee_best(table: list[dict[str, str]]) -> tuple[str, str]:
    rows = _by_p(table)
    best = {p: min(FIG5_COMPETITORS, key=lambda n: r[n]) for p, r in rows.items()}
    knee = [p for p, b in best.items() if b == "knee"]
    status = "holds" if len(knee) == len(rows) else ("partly" if knee else "does not hold")
    return status, "best competitor: " + ", ".join(f"{b} at p = {p:g}" for p, b in best.items())


def _fig5_over_30(table: list[dict[str, str]]) -> tuple[str, str]:
    rows = _by_p(table)
    largest = {n: max(r[n] for r in rows.values()) for n in FIG5_COMPETITORS}
    over = [n for n, v in largest.items() if v >= 1.3]
    status = "holds" if len(over) == len(largest) else ("partly" if over else "does not hold")
    return status, "largest ratio to heSRPT over p: " + ", ".join(f"{n} x{v:.3g}" for n, v in largest.items())


TABLE_CHECKS: dict[str, tuple[str, Check]] = {
    "hesrpt-fig5-best": ("hesrpt-fig5.md", _fig5_best),
    "hesrpt-fig5-equi-low-p": ("hesrpt-fig5.md", _fig5_at(0, "equi", lambda r: r <= 1.01, "within 1%: <= 1.010")),
    "hesrpt-fig5-equi-high-p": ("hesrpt-fig5.md", _fig5_at(-1, "equi", lambda r: r > 3, "over 3x: > 3")),
    "hesrpt-fig5-srpt-high-p": ("hesrpt-fig5.md", _fig5_at(-1, "srpt", lambda r: r <= 1.05, "nearly optimal: <= 1.05")),
    "hesrpt-fig5-srpt-low-p": ("hesrpt-fig5.md", _fig5_at(0, "srpt", lambda r: r >= 10, "an order worse: >= 10")),
    "hesrpt-fig5-hell-like-srpt": ("hesrpt-fig5.md", _fig5_hell_like_srpt),
    "hesrpt-fig5-hell-low-p": ("hesrpt-fig5.md", _fig5_at(0, "hell", lambda r: 1.45 <= r <= 1.55, "50%: 1.45 to 1.55")),
    "hesrpt-fig5-knee-best": ("hesrpt-fig5.md", _fig5_knee_best),
    "hesrpt-fig5-knee-high-p": ("hesrpt-fig5.md", _fig5_at(-1, "knee", lambda r: 1.4 <= r <= 1.6, "50%: 1.4 to 1.6")),
    "hesrpt-fig5-over-30": ("hesrpt-fig5.md", _fig5_over_30),
}
"""Checks computed here from a committed result file's table (file, check -> (status, our value))."""


def _results_link(name: str) -> str:
    return f"[{name.removesuffix('.md')}](results/{name})"


def row(entry: dict[str, str]) -> Row:
    """One registry entry resolved against the committed files."""
    sources = [k for k in ("result", "table", "test", "not_reproduced") if k in entry]
    if len(sources) != 1:
        raise ValueError(f"claim {entry.get('claim')!r} needs exactly one source; got {sources}")
    kind = sources[0]
    if kind == "result":
        name, claim_id = entry["result"].split("#")
        found = parse_claims((RESULTS / name).read_text())
        if claim_id not in found:
            raise ValueError(f"{name} has no checked claim {claim_id!r}; it has {sorted(found)}")
        status, value, source = found[claim_id].status, found[claim_id].text, f"{_results_link(name)} `{claim_id}`"
    elif kind == "table":
        name, check = TABLE_CHECKS[entry["table"]]
        status, value = check(markdown_table(RESULTS / name))
        source = f"{_results_link(name)} (table)"
    elif kind == "test":
        path, test = entry["test"].split("::")
        if f"def {test}(" not in (ROOT / path).read_text():
            raise ValueError(f"{path} has no test {test}")
        status, value, source = entry["status"], entry["value"], f"`{entry['test']}`"
    else:
        status, value, source = NOT_REPRODUCED, "", entry["not_reproduced"]
    if status not in (*STATUSES, NOT_REPRODUCED):
        raise ValueError(f"status {status!r} of claim {entry['claim']!r} is not one of {STATUSES}")
    reason = entry.get("reason", "")
    if status in ("partly", "does not hold") and not reason:
        raise ValueError(f"claim {entry['claim']!r} ({source}) {status}; the registry must give a reason")
    if status not in ("partly", "does not hold") and reason:
        raise ValueError(f"claim {entry['claim']!r} ({source}) {status}; drop its reason from the registry")
    return Row(entry["paper"], entry["where"], entry["claim"], value, status, source, reason)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def page(rows: list[Row]) -> str:
    """The Markdown of docs/claims.md."""
    counts = {paper: Counter(r.status for r in rows if r.paper == paper) for paper in PAPERS}
    order = (*STATUSES, NOT_REPRODUCED)
    lines = [
        "# Paper claims",
        "",
        "Every quantitative claim of the four papers (numbers in the text, theorems with closed forms, what the "
        "figures are said to show), our value and whether it holds. Generated by "
        "`python benchmarks/claims_table.py` from `benchmarks/claims.yaml` and the committed files it cites: a "
        "result file's checked-claim line (written, with our numbers, by the reproduction script named in that "
        "file), a result file's table, or a test that asserts the value. Where a claim does not hold, the last "
        "column says why: an ambiguity of the paper, an inconsistency inside it, or what our set-up had to guess. "
        "Readings of vague words ('about an order of magnitude', 'stable') are stated in the cited result files.",
        "",
        "| paper | " + " | ".join(order) + " | total |",
        "|---|" + "---|" * (len(order) + 1),
    ]
    for paper, count in counts.items():
        lines.append(f"| {paper} | " + " | ".join(str(count[s]) for s in order) + f" | {sum(count.values())} |")
    total = Counter(r.status for r in rows)
    lines.append("| **all** | " + " | ".join(f"**{total[s]}**" for s in order) + f" | **{len(rows)}** |")
    for paper, title in PAPERS.items():
        lines += ["", f"## {paper}", "", title, ""]
        lines += ["| where | claim | our value | status | source | why not |", "|---|---|---|---|---|---|"]
        lines += [
            "| "
            + " | ".join(_cell(x) for x in (r.where, r.claim, r.value, f"**{r.status}**", r.source, r.reason))
            + " |"
            for r in rows
            if r.paper == paper
        ]
    return "\n".join(lines) + "\n"


def build() -> str:
    """The page for the current registry and committed results."""
    entries = yaml.safe_load(REGISTRY.read_text())
    unknown = {e["paper"] for e in entries} - set(PAPERS)
    if unknown:
        raise ValueError(f"unknown papers {sorted(unknown)} in {REGISTRY.name}; known: {sorted(PAPERS)}")
    return page([row(e) for e in entries])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/claims.md is out of date")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        if PAGE.read_text() != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python benchmarks/claims_table.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE.relative_to(ROOT)} ({sum(1 for _ in yaml.safe_load(REGISTRY.read_text()))} claims)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
