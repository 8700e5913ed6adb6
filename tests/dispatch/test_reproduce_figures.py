"""The checks behind benchmarks/reproduce/dispatch_fig4.py, dispatch_fig10.py and dispatch_fig14.py (TAGS paper
Figs. 4, 10, 14): closed forms at hand-checkable points, the verdict logic on made-up numbers, small sweeps."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

from schedenv.analysis.tags import paper_size_dist
from schedenv.reproduce import available_figures

# benchmarks/ is not a package: the figure scripts and their shared plumbing are modules of that folder.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce"))
import dispatch_fig4
import dispatch_fig10
import dispatch_fig14
from _claims import CheckedClaim, parse_claims
from _dispatch_figures import size_statistics


def test_size_statistics_match_the_closed_forms_at_alpha_one_half() -> None:
    # alpha = 1/2: E[X] = sqrt(k p), so k = 3000^2 / p; E[X^2] = E[X] (p + E[X] + k) / 3; the largest jobs
    # carrying half the load start at sqrt(x) = (sqrt(p) + sqrt(k)) / 2.
    p = 1e7
    stats = size_statistics(0.5, p)
    k = 9e6 / p
    second = 3000.0 * (p + 3000.0 + k) / 3.0
    x = ((math.sqrt(p) + math.sqrt(k)) / 2.0) ** 2
    assert stats["k"] == pytest.approx(0.9, rel=1e-12)
    assert stats["second_moment"] == pytest.approx(second, rel=1e-12)
    assert stats["cv"] == pytest.approx(math.sqrt(second - 9e6) / 3000.0, rel=1e-12)
    assert stats["cv"] == pytest.approx(33.3233, abs=1e-4)  # the caption's "33", but at alpha = 0.5
    tail = (math.sqrt(k / x) - math.sqrt(k / p)) / (1.0 - math.sqrt(k / p))
    assert stats["half_load_fraction"] == pytest.approx(tail, rel=1e-9)


def test_size_statistics_match_the_closed_forms_at_alpha_two() -> None:
    # alpha = 2: E[X] = 2kp / (p + k), so k = 3000 p / (2p - 3000), just above 1500; load above x is
    # 2k^2 (1/x - 1/p) / (1 - (k/p)^2).
    p = 1e10
    stats = size_statistics(2.0, p)
    k = 3000.0 * p / (2.0 * p - 3000.0)
    inverse_x = 1.0 / p + 1500.0 * (1.0 - (k / p) ** 2) / (2.0 * k**2)
    assert stats["k"] == pytest.approx(k, rel=1e-12) and stats["k"] > 1500.0
    assert stats["half_load_fraction"] == pytest.approx(((k * inverse_x) ** 2 - (k / p) ** 2) / (1 - (k / p) ** 2))
    assert stats["half_load_fraction"] == pytest.approx(0.25, abs=1e-6)


def test_fig4_verdicts_on_the_papers_grid() -> None:
    alphas = (0.2, 0.5, 1.0, 1.5, 2.0)
    table = {a: size_statistics(a, 1e10) for a in alphas}
    second = [table[a]["second_moment"] for a in alphas]
    # The rate between 1.5 and 2: log10(E[X^2](1.5) / E[X^2](2)) / 0.5 = log10(9.488e9 / 7.071e7) / 0.5 ≈ 4.26.
    rates = dispatch_fig4.growth_rates(alphas, second)
    assert rates[-1][:2] == (1.5, 2.0) and rates[-1][2] == pytest.approx(4.255, abs=1e-3)
    grows, exponential, bound = dispatch_fig4.exponential_claims(alphas, second)
    assert grows.status == "holds" and "(+5.28 orders of magnitude)." in grows.text
    assert exponential.status == "partly"
    assert "from alpha 1 to 2; from alpha 0.2 to 1 it is lower" in exponential.text
    assert bound.status == "holds" and "0.444 of that bound at alpha = 0.2" in bound.text
    k_range, k_one = dispatch_fig4.k_claims(table)
    assert k_range.status == "does not hold" and "above 1500 by 0.000225" in k_range.text
    assert k_one.status == "holds" and "k at alpha = 1 is 167.56" in k_one.text
    heavy = dispatch_fig4.heavy_tail_claim(table)
    assert heavy.status == "partly"
    assert "at alpha 0.2, 0.5, 1; not at alpha 1.5, 2 (up to 0.25 at alpha = 2)" in heavy.text


def test_fig4_exponential_verdict_on_made_up_moments() -> None:
    # Three orders of magnitude per unit of alpha throughout: exponential everywhere.
    _, steady, _ = dispatch_fig4.exponential_claims([1.0, 2.0, 3.0], [1e6, 1e3, 1.0])
    assert steady.status == "holds" and "peaks at 3 orders" in steady.text and "from alpha 1 to 3." in steady.text
    # Flat below alpha 1, and a step where E[X^2] falls as alpha declines.
    grows, flat, _ = dispatch_fig4.exponential_claims([0.5, 1.0, 2.0], [0.9e6, 1e6, 1e3])
    assert grows.status == "does not hold" and "it does not between alpha 0.5 to 1." in grows.text
    assert flat.status == "partly" and "from alpha 0.5 to 1 it is lower" in flat.text
    assert dispatch_fig4.spans([(4.0, 5.0), (1.0, 2.0), (2.0, 3.0)]) == "alpha 1 to 3, alpha 4 to 5"


def test_fig14_caption_values() -> None:
    table = {a: size_statistics(a, 1e7) for a in (0.2, 0.5, 1.0, 2.0)}
    cv = {c.claim_id: c for c in dispatch_fig14.cv_claims(table)}
    assert cv["fig14-cv-alpha-2"].status == "holds" and "C at alpha = 2 is 1.845" in cv["fig14-cv-alpha-2"].text
    at_02 = cv["fig14-cv-alpha-0.2"]
    assert at_02.status == "does not hold" and "C at alpha = 0.2 is 38.48" in at_02.text
    assert "the alpha with C closest to 33 is 0.5, C = 33.32" in at_02.text
    assert cv["fig14-cv-falls"].status == "holds"
    tables = {1e7: table, 1e10: {a: size_statistics(a, 1e10) for a in table}}
    k = {c.claim_id: c for c in dispatch_fig14.k_claims(tables)}
    assert all(c.status == "holds" for c in k.values()) and len(k) == 4
    assert "k = 286.82 at alpha = 1, within 1 of §7's 287" in k["fig14-k-alpha-1-p-1e7"].text
    assert "log10(p / k) = 7.78 orders of magnitude, rounds to §7's 8" in k["fig14-orders-p-1e10"].text
    variability = dispatch_fig14.variability_claim(tables)
    assert variability.status == "holds" and "from 1.78 (alpha = 2) to 1000 (alpha = 0.2)" in variability.text


def test_fig10_bands_and_crossing() -> None:
    assert [dispatch_fig10.band(a) for a in (0.79, 0.8, 1.2, 1.21)] == ["low", "around 1", "around 1", "high"]
    rows = {1.0: {"host_1": 0.2, "host_2": 0.4}, 2.0: {"host_1": 0.5, "host_2": 0.3}}
    assert dispatch_fig10.balance_crossing(rows) == pytest.approx(1.5)
    assert dispatch_fig10.balance_crossing({1.0: {"host_1": 0.1, "host_2": 0.4}}) is None


def test_fig10_loads_on_a_small_grid() -> None:
    table = dispatch_fig10.loads_table((0.4, 1.0, 2.0))
    # At alpha = 1 the excess is lambda P(X > s) s = lambda k (1 - s/p) / (1 - k/p): relative excess ≈ k / E[X].
    size_dist = paper_size_dist(1.0)
    for load in dispatch_fig10.LOADS:
        assert table[load][1.0]["relative_excess"] == pytest.approx(size_dist.lower / size_dist.mean, rel=1e-4)
        assert max(row["definition_gap"] for row in table[load].values()) < 1e-12
    light, mid, heavy = (table[load] for load in dispatch_fig10.LOADS)
    assert light[0.4]["relative_excess"] < 1e-4 and mid[0.4]["relative_excess"] < 1e-3
    assert heavy[0.4]["host_2"] >= dispatch_fig10.AT_CAP and heavy[0.4]["host_1"] > 100 * mid[0.4]["host_1"]
    for alpha in (0.4, 2.0):  # excess grows with the load
        assert light[alpha]["excess"] < mid[alpha]["excess"] < heavy[alpha]["excess"]
    low, high = dispatch_fig10.caption_thresholds(table)
    assert low == pytest.approx(size_dist.lower / size_dist.mean, rel=1e-4)  # load 0.7 at alpha = 1
    assert high == pytest.approx(light[2.0]["relative_excess"])
    panels = dispatch_fig10.caption_verdicts(table)[:3]
    assert [c.status for c in panels if isinstance(c, CheckedClaim)] == ["holds"] * 3


@pytest.mark.parametrize("script", [dispatch_fig4, dispatch_fig10, dispatch_fig14])
def test_scripts_are_listed_and_write_their_files(script: ModuleType, tmp_path: Path) -> None:
    assert available_figures()[script.FIGURE] == script.DESCRIPTION
    assert script.main(["--quick", "--out", str(tmp_path)]) == 0
    report = (tmp_path / f"{script.FIGURE}.md").read_text()
    assert report.startswith(f"# {script.FIGURE}\n\n{script.DESCRIPTION}") and "--quick" in report
    assert "| 0.2 |" in report and "| 2 |" in report
    assert all(name.startswith(script.FIGURE.removeprefix("tags-")) for name in parse_claims(report))
    assert len(parse_claims(report)) >= 5
    assert (tmp_path / f"{script.FIGURE}.png").stat().st_size > 0
