"""The quick suite shows the orderings the papers prove or claim (issue 7's tests).

Per family, the quick suite's scenarios are run with the contenders their claims name, and every
claim must hold: heSRPT optimal offline (best or tied) and A-heSRPT best online in heSRPT's
setting; TAGS below Random, and far below Random and Central-Queue for heavy tails at low load
(with Central-Queue ≡ Least-Work-Remaining); ServerFilling-SRPT below ServerFilling and FCFS; HRF
below the other allocation schemes with FCFS and with backfilling. A family runs when its env id
is registered. Orderings the papers do not claim are not asserted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedenv.leaderboard import run_leaderboard, suites
from schedenv.leaderboard.scenario import ALL


@pytest.mark.parametrize("family", list(suites.FAMILIES))
def test_quick_suite_claims_hold(family: str, tmp_path: Path) -> None:
    if family not in suites.available_families():
        pytest.skip(f"{suites.FAMILIES[family][0]} is not registered yet")
    scenarios = suites.suite("quick", families=[family])
    claims = [claim for scenario in scenarios for claim in scenario.claims]
    assert claims, f"the quick suite states no claim for {family}"
    if any(ALL in claim.worse for claim in claims):
        contenders = None
    else:
        contenders = sorted({name for claim in claims for name in (claim.better, *claim.worse)})
    result = run_leaderboard(
        "quick", out=tmp_path, scenario_list=scenarios, contenders=contenders, workers=1, progress=False
    )
    assert not result.failed, [(row["scenario"], row["contender"], row["note"]) for row in result.failed]
    failing = [(check["scenario"], check["claim"]) for check in result.claims if check["holds"] is not True]
    assert not failing, failing
