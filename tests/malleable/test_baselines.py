"""The paper's claims about the malleable policies (heSRPT §5.2, §5.3) and each policy's rule."""

from __future__ import annotations

import numpy as np
import pytest

import baselines
from baselines.malleable import HellWaterFill, Knee
from schedenv.evaluation import evaluate
from schedenv.malleable.sim import MalleableParams, MalleableState
from schedenv.tuning import tune_knee_alpha
from schedenv.workloads import Pareto, Power

ENV_ID = "schedenv/Malleable-v0"
OFFLINE = {"n_jobs": 10, "max_jobs": 10, "size_dist": Pareto(0.8), "n_servers": 1e4}


def mean_slowdown(policy: object, seeds: range, **kwargs: object) -> np.ndarray:
    return evaluate(ENV_ID, policy, seeds, keep_records=False, **{**OFFLINE, **kwargs}).values("mean_slowdown")


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_no_baseline_beats_hesrpt_offline(p: float) -> None:
    seeds = range(6)
    optimum = mean_slowdown("hesrpt", seeds, speedup=p)
    contenders: list[object] = ["equi", "srpt", "rs", "hell-waterfill"] + [Knee(alpha) for alpha in (1e-6, 1e-3, 1.0)]
    for contender in contenders:
        # Per instance (not only on average): heSRPT is optimal for every job set (Theorem 5).
        assert (mean_slowdown(contender, seeds, speedup=p) >= optimum * (1 - 1e-6)).all(), contender


def ratio_to_hesrpt(policy: str, p: float) -> float:
    return float(
        mean_slowdown(policy, range(5), speedup=p).mean() / mean_slowdown("hesrpt", range(5), speedup=p).mean()
    )


def test_srpt_approaches_hesrpt_as_p_approaches_one() -> None:
    assert ratio_to_hesrpt("srpt", 0.999) < 1.01 < ratio_to_hesrpt("srpt", 0.5)


def test_equi_approaches_hesrpt_as_p_approaches_zero() -> None:
    assert ratio_to_hesrpt("equi", 0.01) < 1.01 < ratio_to_hesrpt("equi", 0.9)


def test_rs_equals_srpt_offline() -> None:
    # §5.2: with all jobs present at t = 0, RS is SRPT.
    np.testing.assert_array_equal(mean_slowdown("rs", range(4)), mean_slowdown("srpt", range(4)))


def test_a_hesrpt_beats_the_competitors_online_at_high_p_and_load() -> None:
    kwargs = {
        "mode": "online",
        "n_arrivals": 400,
        "load": 0.9,
        "speedup": 0.9,
        "size_dist": Pareto(1.5),
        "max_jobs": 64,
    }
    results = {
        name: evaluate(ENV_ID, name, range(3), keep_records=False, **kwargs) for name in ["a-hesrpt", "equi", "srpt"]
    }
    best = results["a-hesrpt"].values("mean_slowdown").mean()
    assert best < results["equi"].values("mean_slowdown").mean()
    assert best < results["srpt"].values("mean_slowdown").mean()


def state_of(remaining: list[float], n: float = 100.0, p: float = 0.3) -> tuple[MalleableState, MalleableParams]:
    sizes = np.asarray(remaining)
    params = MalleableParams(n, Power(p), "slowdown", np.zeros(sizes.size), sizes)
    state = MalleableState(
        0.0, np.arange(sizes.size), np.zeros(sizes.size), sizes, sizes, params.weight(sizes), sizes.size, 0, 0.0
    )
    return state, params


def test_hell_waterfill_water_fills_its_ratio_below_p_one_half() -> None:
    state, params = state_of([1.0, 2.0, 4.0], p=0.3)
    servers = HellWaterFill().allocate(state, params) * params.n_servers
    ratio = servers ** (2 * 0.3 - 1) / state.remaining  # s(k)^2 / (k R) for s(k) = k^p
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)


def test_hell_waterfill_is_srpt_from_p_one_half() -> None:
    state, params = state_of([3.0, 1.0, 2.0], p=0.7)
    np.testing.assert_array_equal(HellWaterFill().allocate(state, params), [0.0, 1.0, 0.0])


def test_hell_waterfill_general_speedup_agrees_with_the_power_closed_form() -> None:
    state, params = state_of([1.0, 2.0, 4.0], p=0.3)
    from schedenv.workloads import CustomSpeedup

    custom = MalleableParams(
        params.n_servers, CustomSpeedup(lambda k: k**0.3, 100.0), "slowdown", params.arrival_times, params.sizes
    )
    np.testing.assert_allclose(
        HellWaterFill().allocate(state, custom),
        HellWaterFill().allocate(state, params),
        atol=2 / HellWaterFill.increments,
    )


def test_knee_gives_each_job_its_knee_in_order_until_servers_run_out() -> None:
    state, params = state_of([1.0, 8.0, 27.0], n=10.0, p=0.5)
    knee = Knee(alpha=0.5 / 27)  # knee = (p R / alpha)^(2/3) = (27 R)^(2/3): 9, 36, 81
    np.testing.assert_allclose(knee.knees(np.asarray(state.remaining), params), [9.0, 36.0, 81.0])
    np.testing.assert_allclose(knee.allocate(state, params), [0.9, 0.1, 0.0])


def test_knee_marginal_reduction_equals_alpha_at_the_knee_for_general_speedups() -> None:
    from schedenv.workloads import Amdahl

    state, params = state_of([1.0, 5.0], n=1000.0)
    amdahl = MalleableParams(1000.0, Amdahl(0.95), "slowdown", params.arrival_times, params.sizes)
    knee = Knee(alpha=1e-3)
    k = knee.knees(np.asarray(state.remaining), amdahl)
    marginal = state.remaining * amdahl.speedup.derivative(k) / amdahl.speedup(k) ** 2
    np.testing.assert_allclose(marginal, 1e-3, rtol=1e-6)


def test_knee_tuner_returns_the_best_alpha_of_its_table() -> None:
    alpha, table = tune_knee_alpha(range(3), alphas=[1e-8, 1e-4, 1.0], n_jobs=6, max_jobs=6, speedup=0.5)
    assert len(table) == 3 and alpha == min(table, key=lambda row: row[1])[0]
    assert min(value for _, value in table) < max(value for _, value in table)


def test_knee_rejects_nonpositive_alpha() -> None:
    with pytest.raises(ValueError, match="alpha=0"):
        baselines.make("knee", alpha=0)


def test_hesrpt_refuses_a_speedup_without_closed_form() -> None:
    from schedenv.workloads import Amdahl

    state, params = state_of([1.0, 2.0])
    amdahl = MalleableParams(100.0, Amdahl(0.9), "slowdown", params.arrival_times, params.sizes)
    with pytest.raises(ValueError, match="Theorem 5"):
        baselines.make("hesrpt").allocate(state, amdahl)  # type: ignore[attr-defined]
