"""docs/claims.md (benchmarks/claims_table.py) and the checked-claim lines it reads
(benchmarks/reproduce/_claims.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

# benchmarks/ is not a package: the table script and the claim format are modules of its folders.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce"))
import claims_table
from _claims import about_orders, claim, claims_section, magnitude, over_orders, parse_claims

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_claims_page_is_up_to_date() -> None:
    assert (ROOT / "docs" / "claims.md").read_text() == claims_table.build(), (
        "docs/claims.md is out of date: run python benchmarks/claims_table.py"
    )


def test_every_registry_entry_resolves_to_a_committed_source() -> None:
    entries = yaml.safe_load(claims_table.REGISTRY.read_text())
    rows = [claims_table.row(e) for e in entries]
    assert len(rows) == len(entries) > 100
    assert {r.paper for r in rows} == set(claims_table.PAPERS)
    for entry, row in zip(entries, rows, strict=True):
        if "result" in entry:
            name = entry["result"].split("#")[0]
            assert (claims_table.RESULTS / name).is_file() and f"(results/{name})" in row.source
        if row.status in ("partly", "does not hold"):
            assert row.reason, entry
        if row.status == "not reproduced":
            assert row.value == "" and row.source == entry["not_reproduced"]


def test_a_missing_claim_id_or_test_or_reason_is_an_error() -> None:
    base = {"paper": "TAGS", "where": "§5", "claim": "c"}
    with pytest.raises(ValueError, match="no checked claim 'nope'"):
        claims_table.row(base | {"result": "tags-fig8.md#nope"})
    with pytest.raises(ValueError, match="has no test test_missing"):
        claims_table.row(base | {"test": "tests/test_paper_claims.py::test_missing", "status": "holds", "value": "v"})
    with pytest.raises(ValueError, match="must give a reason"):
        claims_table.row(
            base | {"test": "tests/test_paper_claims.py::two_job_flow_time", "status": "partly", "value": "v"}
        )
    with pytest.raises(ValueError, match="drop its reason"):
        claims_table.row(base | {"result": "tags-fig8.md#fig8-balance-alpha-1", "reason": "stale"})
    with pytest.raises(ValueError, match="exactly one source"):
        claims_table.row(base | {"not_reproduced": "x", "result": "tags-fig8.md#fig8-balance-alpha-1"})


def test_checked_claim_lines_round_trip_and_validate() -> None:
    claims = [claim("a-1", True, "first: 1.5"), claim("b.2", "partly", "second | with a pipe"), claim("c", False, "x")]
    section = "\n".join(claims_section(claims))
    assert section.startswith("## Checked claims\n\n- **holds** [`a-1`] first: 1.5")
    assert {c.claim_id: c.status for c in parse_claims("intro\n" + section).values()} == {
        "a-1": "holds",
        "b.2": "partly",
        "c": "does not hold",
    }
    with pytest.raises(ValueError, match="status='maybe'"):
        claim("x", "maybe", "text")
    with pytest.raises(ValueError, match="claim_id='has space'"):
        claim("has space", True, "text")
    with pytest.raises(ValueError, match="unique"):
        claims_section([claim("a", True, "x"), claim("a", False, "y")])


def test_orders_of_magnitude_readings() -> None:
    # 'N orders' is within half an order of 10^N; 'over N orders' is above 10^N.
    assert about_orders(38.1, 2) and not about_orders(30.0, 2) and about_orders(300.0, 2)
    assert over_orders(2.6e4, 4) and not over_orders(8.47e3, 4)
    assert magnitude(8470.0) == "8.47e+03 (10^3.93)"
