"""ServerFilling-Gittins and DivisorFilling-Gittins (§5) as benchmarks/reproduce/multiserver_gittins.py runs
them, on small workloads; and the foreground-background M/G/1 mean that serves as Gittins-1."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from scipy import integrate

import baselines
from schedenv.analysis import fb_mg1_response_time, srpt_mg1_response_time
from schedenv.fastpath.multiserver import run_fast
from schedenv.workloads import Exponential, HyperExponential, Pareto, Uniform

# benchmarks/ is not a package: the script and its helpers are modules of that folder.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce"))
from _claims import parse_claims
from multiserver_gittins import (
    DIVISIBLE,
    GITTINS1,
    POWER_OF_TWO,
    DivisorFilling,
    exponential_identity,
    gittins1,
    pooled_gittins,
    rule_claim,
    run_setting,
    setting_claims,
    setting_table,
)
from multiserver_sweeps import SRPT1, Sweep

ENV_ID = "schedenv/MultiserverJob-v0"
H2 = HyperExponential(1.0, 10.0)


def fb_hyperexponential_by_quad(law: HyperExponential, rate: float) -> float:
    """FB's E[T] from the phases' closed-form truncated moments and scipy.quad (independent of the grid)."""
    phases = list(zip(law.probabilities.tolist(), law.means.tolist(), strict=True))

    def truncated(x: float) -> tuple[float, float]:
        first = sum(q * m * (1 - math.exp(-x / m)) for q, m in phases)
        second = sum(q * 2 * m * m * (1 - math.exp(-x / m) * (1 + x / m)) for q, m in phases)
        return first, second

    def response(x: float) -> float:
        first, second = truncated(x)
        rho = rate * first
        return x / (1 - rho) + rate * second / (2 * (1 - rho) ** 2)

    def density(x: float) -> float:
        return sum(q / m * math.exp(-x / m) for q, m in phases)

    return integrate.quad(lambda x: response(x) * density(x), 0.0, 400.0, limit=400)[0]


@pytest.mark.parametrize("load", [0.5, 0.9, 0.98])
def test_fb_matches_an_independent_quadrature(load: float) -> None:
    assert fb_mg1_response_time(H2, load) == pytest.approx(fb_hyperexponential_by_quad(H2, load), rel=1e-5)


def test_fb_is_size_blind_optimal_between_srpt_and_processor_sharing() -> None:
    # Exponential sizes: every size-blind policy has E[T] = E[S] / (1 - rho).
    assert fb_mg1_response_time(Exponential(2.0), 0.4) == pytest.approx(2.0 / (1 - 0.8), rel=1e-5)
    # Decreasing hazard rate: FB (= Gittins) beats processor sharing and loses to SRPT, which knows sizes.
    for load in (0.5, 0.9, 0.99):
        fb = fb_mg1_response_time(H2, load)
        assert srpt_mg1_response_time(H2, load) < fb < 1.0 / (1 - load)
    with pytest.raises(ValueError, match="stable only below 1"):
        fb_mg1_response_time(H2, 1.0)
    with pytest.raises(ValueError, match="arrival_rate"):
        fb_mg1_response_time(H2, 0.0)


def test_gittins1_is_fb_only_for_laws_whose_rank_rises_with_age() -> None:
    assert gittins1(H2, 0.9) == fb_mg1_response_time(H2, 0.9)
    assert gittins1(Exponential(2.0), 0.5) == pytest.approx(2.0 / (1 - 0.5), rel=1e-5)  # constant rank
    # A Pareto with scale 1 cannot complete before age 1: its rank falls there, and Gittins is not FB.
    with pytest.raises(ValueError, match="falls with age"):
        gittins1(Pareto(2.5), 0.5)
    with pytest.raises(ValueError, match="falls with age"):
        gittins1(Uniform(0.5, 1.5), 0.5)


def test_the_one_server_env_draws_the_pooled_stream() -> None:
    # k = 1 with need 1 draws the same gaps and sizes as k = 8 (needs are drawn last), so the
    # one-server run of pooled_gittins sees the resource-pooled system's jobs.
    big = gym.make(ENV_ID, server_needs=(1, 2, 4, 8), size_dist=H2, load=0.8, n_arrivals=500)
    one = gym.make(ENV_ID, n_servers=1, server_needs=(1,), size_dist=H2, load=0.8, n_arrivals=500)
    big.reset(seed=3)
    one.reset(seed=3)
    many, single = big.unwrapped.params, one.unwrapped.params  # type: ignore[attr-defined]
    np.testing.assert_array_equal(many.arrival_times, single.arrival_times)
    np.testing.assert_allclose(many.server_needs * many.durations / 8, single.durations, rtol=1e-15)
    # On one server, ServerFilling-SRPT is SRPT-1.
    from schedenv.multiserver.srpt1 import srpt1_mean_response_time

    srpt = run_fast(one, baselines.make("serverfilling-srpt"), 3).metrics["mean_response_time"]  # type: ignore[arg-type]
    assert srpt == pytest.approx(srpt1_mean_response_time(single.arrival_times, single.durations), rel=1e-12)
    assert pooled_gittins(H2, 0.8, 500, 3) > srpt


def test_divisorfilling_is_divisorfilling_srpt_over_arrival_order() -> None:
    # k = 6: a need-6 job of size 10 arrives first, then six need-1 jobs of size 1/6 each.
    env = gym.make(ENV_ID, n_servers=6, jobs=[[6, 10.0]] + [[1, 1.0]] * 6)
    env.reset(seed=0)
    state = env.unwrapped.state  # type: ignore[attr-defined]
    blind, known = DivisorFilling(), baselines.make("divisorfilling-srpt")
    blind.reset(env)
    known.reset(env)
    # Arrival order: M = the first six jobs; Case 1 (>= k / 6 jobs of need 1) packs by need: the need-6 job fills k.
    assert blind.service_set(state).tolist() == [0]
    # SRPT order: M = the six small jobs, which fill the six servers.
    assert sorted(known.service_set(state).tolist()) == [1, 2, 3, 4, 5, 6]  # type: ignore[attr-defined]


def test_exponential_sizes_make_gittins_serve_in_arrival_order() -> None:
    for setting, arrivals in ((POWER_OF_TWO, 3000), (DIVISIBLE, 600)):
        checked = exponential_identity(setting, 0.9, arrivals)
        assert checked.status == "holds", checked.text


@pytest.fixture(scope="module")
def small_sweep():  # type: ignore[no-untyped-def]
    setting = replace(POWER_OF_TWO, loads=(0.5, 0.9), arrivals=20_000, seeds=2)
    exact = {x: gittins1(H2, x) for x in setting.loads}
    return setting, run_setting(setting), exact


def test_gittins_lies_between_known_sizes_and_the_blind_packing(small_sweep) -> None:  # type: ignore[no-untyped-def]
    setting, result, exact = small_sweep
    for load in setting.loads:
        srpt = result.interval("serverfilling-srpt", load).mean
        gittins = result.interval("serverfilling-gittins", load).mean
        blind = result.interval("serverfilling", load).mean
        assert srpt < gittins < blind
        assert np.isinf(result.interval("fcfs", load).mean)  # FCFS's head-of-line blocking: cut at 1000 jobs
        assert result.interval(GITTINS1, load).mean > result.interval("SRPT-1", load).mean
    # Per seed and load: the two runs of the blind packing at rho = 0.9 are about 3x Gittins on these streams.
    ratio = result.response[("serverfilling", 0.9)] / result.response[("serverfilling-gittins", 0.9)]
    assert (ratio > 2.5).all(), ratio
    assert exact[0.9] == pytest.approx(6.2366, rel=1e-4)


def test_claims_and_table_are_written_from_the_sweep(small_sweep) -> None:  # type: ignore[no-untyped-def]
    setting, result, exact = small_sweep
    claims = {c.claim_id: c for c in setting_claims(setting, result, exact)}
    assert claims["sf-srpt-below-gittins"].status == "holds"
    assert claims["sf-gittins-below-blind"].status == "holds"
    assert claims["sf-gittins-below-fcfs"].status == "holds"
    assert claims["sf-gittins-thm51"].status == "holds"
    lines = setting_table(setting, result, exact)
    assert lines[0].startswith("## ServerFilling") and "| Gittins-1 (exact, FB) |" in lines[2]
    assert len(lines) == 2 + 2 + len(setting.loads) + 1
    text = "\n".join(c.line() for c in claims.values())
    assert set(parse_claims(text)) == set(claims)


def test_the_script_is_registered_with_schedenv_reproduce() -> None:
    from schedenv.reproduce import available_figures

    assert available_figures()["multiserver-gittins"].startswith("§5 (Theorems 5.1, 5.2)")


def test_the_rule_is_compared_with_exact_gittins_only_where_runs_converge() -> None:
    result = Sweep([0.5, 0.99], ["serverfilling-gittins"], 10, [0])
    result.schrage_miller = {0.5: 1.0, 0.99: 10.0}
    result.response = {
        (SRPT1, 0.5): np.array([1.01]),  # within 2% of Schrage-Miller: converged
        (SRPT1, 0.99): np.array([8.0]),  # 20% short: the mean of a run this long is biased low
        (GITTINS1, 0.5): np.array([2.04]),
        (GITTINS1, 0.99): np.array([3.0]),
    }
    checked = rule_claim(result, {0.5: 2.0, 0.99: 50.0})
    assert checked.status == "holds"
    assert "1.02 at rho = 0.5" in checked.text and "not compared at rho = 0.99" in checked.text
    result.response[(GITTINS1, 0.5)] = np.array([2.2])  # 10% above exact Gittins-1
    assert rule_claim(result, {0.5: 2.0, 0.99: 50.0}).status == "does not hold"
