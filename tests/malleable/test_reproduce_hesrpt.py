"""The heSRPT reproductions' numbers and claim checks (benchmarks/reproduce/malleable_fig5.py, figC7, fig6)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

# benchmarks/ is not a package: the figure scripts are modules of that folder.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce"))
import malleable_fig5
import malleable_fig6
import malleable_figC7
from malleable_claims import beats_every_competitor

from schedenv.analysis import hesrpt_mean_flow_time, hesrpt_mean_slowdown
from schedenv.reproduce import available_figures

TWO_JOBS = {"jobs": [1.0, 2.0], "n_servers": 4.0, "max_jobs": 2}
"""Sizes 1 and 2 at t = 0 on N = 4 servers: small enough to work out by hand."""


def test_figC7_point_on_two_jobs_at_p_one_half_matches_the_hand_worked_values() -> None:
    """s(k) = k^0.5, s(4) = 2.

    heSRPT (Theorem 5, w = 1): theta = (1/2)^2 = 1/4 to the large job, 3/4 to the small one; the small
    one runs at rate 3^0.5 and ends at 1/3^0.5, the large one has 2 - 1/3^0.5 left at rate 2: total
    flow time 1 + 3^0.5 / 2 (Theorem 6). SRPT: 0.5 and 1.5. EQUI: rate 2^0.5 each, the small ends at
    2^-0.5, the large has 1 left at rate 2: 2^-0.5 + 0.5. HELL at p = 1/2 takes every server (SRPT).
    """
    values, _ = malleable_figC7.run_point({**TWO_JOBS, "speedup": 0.5}, range(1), np.geomspace(1e-3, 1e3, 7))
    assert values["hesrpt"][0] == pytest.approx((1.0 + math.sqrt(3.0) / 2.0) / 2.0, rel=1e-6)
    assert values["srpt"][0] == pytest.approx(1.0, rel=1e-6)
    assert values["equi"][0] == pytest.approx((2.0 * 2.0**-0.5 + 0.5) / 2.0, rel=1e-6)
    assert values["hell"][0] == pytest.approx(1.0, rel=1e-6)
    assert values["knee"][0] >= values["hesrpt"][0] * (1.0 - 1e-9)
    optimal = malleable_figC7.theorem6({**TWO_JOBS, "speedup": 0.5}, range(1))
    assert optimal[0] == pytest.approx((1.0 + math.sqrt(3.0) / 2.0) / 2.0, rel=1e-12)


def test_figC7_hell_as_worded_idles_at_low_p_and_heSRPT_is_theorem6() -> None:
    """p = 0.3 < 1/2: HELL gives each job one server (rate 1), so the jobs end at 1 and 2 (mean 1.5)."""
    values, _ = malleable_figC7.run_point({**TWO_JOBS, "speedup": 0.3}, range(1), np.geomspace(1e-3, 1e3, 7))
    assert values["hell"][0] == pytest.approx(1.5, rel=1e-6)
    assert values["hesrpt"][0] == pytest.approx(hesrpt_mean_flow_time([1.0, 2.0], 0.3, 4.0), rel=1e-6)
    assert all(values[name][0] >= values["hesrpt"][0] * (1.0 - 1e-9) for name in malleable_figC7.COMPETITORS)


def test_figC7_claims_decide_on_the_numbers() -> None:
    means = {
        (0.05,): {"hesrpt": 1.0, "srpt": 12.0, "equi": 1.005, "hell": 1.5, "hell-waterfill": 1.1, "knee": 1.2},
        (0.99,): {"hesrpt": 1.0, "srpt": 1.01, "equi": 3.5, "hell": 1.01, "hell-waterfill": 1.01, "knee": 1.45},
    }
    lines = malleable_figC7.claims(means, theorem6_deviation=1e-9)
    gap = next(line for line in lines if "at least 30%" in line)
    assert "**holds**" in gap and "knee up to 1.45 (p = 0.99)" in gap
    assert sum("**does not hold**" in line for line in lines) == 2  # HELL ~ SRPT in 1 of 2 p; KNEE not best at 0.05
    worse = {**means, (0.5,): {**means[(0.99,)], "knee": 0.9}}
    optimal = next(line for line in malleable_figC7.claims(worse, 0.0) if "Corollary 1" in line)
    assert "**does not hold**" in optimal and "knee / hesrpt = 0.9 at p = 0.5" in optimal


def test_fig5_point_on_two_jobs_matches_the_hand_worked_slowdowns() -> None:
    """Sizes 1 and 2 on N = 4; slowdown is T_i / (x_i / s(N)).

    p = 1/2, s(4) = 2. SRPT: the jobs end at 0.5 and 1.5, slowdowns 1 and 1.5. EQUI: rate 2^0.5 each,
    the small one ends at 2^-0.5 (slowdown 2^0.5), the large one has 1 left at rate 2 and ends at
    2^-0.5 + 0.5 (slowdown the same). p = 0.3 < 1/2: HELL as worded gives each job one server, so
    both slowdowns are s(4) = 4^0.3. heSRPT equals Theorem 6 at both p.
    """
    values, _ = malleable_fig5.run_point({**TWO_JOBS, "speedup": 0.5}, range(1), np.geomspace(1e-3, 1e3, 7))
    assert values["srpt"][0] == pytest.approx(1.25, rel=1e-6)
    assert values["equi"][0] == pytest.approx((2.0**0.5 + 2.0**-0.5 + 0.5) / 2.0, rel=1e-6)
    assert values["hesrpt"][0] == pytest.approx(hesrpt_mean_slowdown([1.0, 2.0], 0.5, 4.0), rel=1e-6)
    assert all(values[name][0] >= values["hesrpt"][0] * (1.0 - 1e-9) for name in malleable_fig5.COMPETITORS)
    values, _ = malleable_fig5.run_point({**TWO_JOBS, "speedup": 0.3}, range(1), np.geomspace(1e-3, 1e3, 7))
    assert values["hell"][0] == pytest.approx(4.0**0.3, rel=1e-6)
    optimal = malleable_fig5.theorem6({**TWO_JOBS, "speedup": 0.3}, range(1))
    assert values["hesrpt"][0] == pytest.approx(optimal[0], rel=1e-6)
    assert optimal[0] == pytest.approx(hesrpt_mean_slowdown([1.0, 2.0], 0.3, 4.0), rel=1e-12)


def test_fig5_claims_decide_on_the_numbers() -> None:
    """A made-up table: the paper's picture at p = 0.05 and 0.99, except KNEE (1.2x) and EQUI (1.5% off)."""
    means = {
        (0.05,): {"hesrpt": 1.0, "srpt": 85.0, "equi": 1.015, "hell": 1.52, "hell-waterfill": 1.02, "knee": 1.08},
        (0.5,): {"hesrpt": 1.0, "srpt": 8.0, "equi": 1.3, "hell": 8.0, "hell-waterfill": 8.0, "knee": 1.2},
        (0.99,): {"hesrpt": 1.0, "srpt": 1.007, "equi": 3.07, "hell": 1.007, "hell-waterfill": 1.007, "knee": 1.004},
    }
    lines = malleable_fig5.claims(means, theorem6_deviation=1e-9)
    by_id = {line.split("[`")[1].split("`]")[0]: line for line in lines}
    assert sorted(by_id) == sorted(
        f"fig5-{name}"
        for name in (
            "theorem6",
            "best",
            "equi-low-p",
            "equi-high-p",
            "srpt-high-p",
            "srpt-low-p",
            "hell-low-p",
            "knee-high-p",
            "hell-like-srpt",
            "knee-best",
            "over-30",
        )
    )
    holds = {claim_id for claim_id, line in by_id.items() if line.startswith("- **holds**")}
    assert holds == {
        "fig5-theorem6",
        "fig5-best",
        "fig5-equi-high-p",
        "fig5-srpt-high-p",
        "fig5-srpt-low-p",
        "fig5-hell-low-p",
        "fig5-hell-like-srpt",  # 2 of 3 p values
    }
    assert "equi / heSRPT = 1.015 at p = 0.05" in by_id["fig5-equi-low-p"]
    assert "knee / heSRPT = 1.004 at p = 0.99" in by_id["fig5-knee-high-p"]
    assert (
        "best competitor: equi 1.015 at p = 0.05; knee 1.2 at p = 0.5; knee 1.004 at p = 0.99"
        in by_id["fig5-knee-best"]
    )
    assert "knee up to 1.2 (p = 0.5)" in by_id["fig5-over-30"]
    assert '"When p is low, EQUI is within 1% of heSRPT"' in by_id["fig5-equi-low-p"]
    worse = {**means, (0.5,): {**means[(0.5,)], "knee": 0.9}}
    best = next(line for line in malleable_fig5.claims(worse, 2e-5) if "[`fig5-best`]" in line)
    assert best.startswith("- **does not hold**") and "knee / hesrpt = 0.9 at p = 0.5" in best
    theorem = next(line for line in malleable_fig5.claims(worse, 2e-5) if "[`fig5-theorem6`]" in line)
    assert theorem.startswith("- **does not hold**") and "largest relative difference 2e-05" in theorem


def test_fig6_claims_decide_on_the_numbers() -> None:
    """A table where A-heSRPT loses once to RS at high p and every gap is small."""
    policies = malleable_fig6.POLICIES

    def cell(**ratios: float) -> dict[str, float]:
        return {name: ratios.get(name.replace("-", "_"), 1.5) for name in policies} | {"a-hesrpt": 1.0}

    n_p = 1e4**0.05
    means = {
        (0.05, 0.5): cell(equi=1.01, hell=n_p, hell_waterfill=1.01, knee=1.02),
        (0.05, 3.0): cell(equi=1.02, srpt=130.0, rs=130.0, hell=n_p, hell_waterfill=1.02, knee=1.05),
        (0.99, 0.5): cell(equi=1.6, srpt=1.0, rs=0.98, hell=1.0, hell_waterfill=1.0, knee=1.0),
        (0.99, 3.0): cell(equi=5.0, srpt=1.02, rs=1.02, hell=1.02, hell_waterfill=1.02, knee=1.0),
    }
    lines = malleable_fig6.claims(means)
    first = lines[0]
    assert "**does not hold**" in first and "rs / a-hesrpt = 0.98 at p = 0.99, load = 0.5" in first
    order = next(line for line in lines if "order of magnitude" in line)
    assert "**holds**" in order and "1 of 4 cells" in order  # 1 of 4 is "often" (a quarter)
    low_p = next(line for line in lines if "low level of parallelizability" in line)
    assert "**does not hold**" in low_p and "knee up to 1.05" in low_p
    load = next(line for line in lines if "as load increases" in line)
    assert "**does not hold**" in load and "p = 0.99: 0.98 to 1" in load  # grows, but stays below 1.2
    hell = next(line for line in lines if "N^p" in line)
    assert "**holds**" in hell


def test_beats_every_competitor_counts_ties_as_wins() -> None:
    means = {(0.5,): {"ref": 2.0, "a": 2.0, "b": 3.0}}
    holds, evidence = beats_every_competitor(means, "ref", ["a", "b"], ["p"])
    assert holds and "closest competitor a, ratio 1 at p = 0.5" in evidence


def test_the_figures_are_registered_for_schedenv_reproduce() -> None:
    figures = available_figures()
    assert "30%" in figures["hesrpt-figC7"]
    assert "A-heSRPT beats every competitor" in figures["hesrpt-fig6"]
