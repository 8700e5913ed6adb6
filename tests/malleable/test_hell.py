"""HELL as the heSRPT paper words it (§5.2): k* = argmax s(k)^2 / k servers per job, least remaining first."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from baselines.malleable import Hell
from schedenv.analysis import hesrpt_mean_slowdown
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast, run_fast, supports
from schedenv.malleable.sim import MalleableParams, MalleableState
from schedenv.workloads import Amdahl, CustomSpeedup, Pareto, Power, Speedup

ENV_ID = "schedenv/Malleable-v0"


def state_of(remaining: list[float], n: float, speedup: Speedup) -> tuple[MalleableState, MalleableParams]:
    sizes = np.asarray(remaining)
    params = MalleableParams(n, speedup, "slowdown", np.zeros(sizes.size), sizes)
    state = MalleableState(
        0.0, np.arange(sizes.size), np.zeros(sizes.size), sizes, sizes, params.weight(sizes), sizes.size, 0, 0.0
    )
    return state, params


@pytest.mark.parametrize(
    ("remaining", "n", "expected"),
    [
        ([4.0, 1.0, 2.0], 10.0, [0.1, 0.1, 0.1]),  # one server each, 70% idle
        ([4.0, 1.0, 3.0, 2.0], 2.5, [0.0, 0.4, 0.2, 0.4]),  # 1, 1 and the last half server, by remaining size
        ([2.0, 1.0, 1.0], 2.0, [0.0, 0.5, 0.5]),  # ties by arrival
        ([1.0, 2.0], 0.5, [1.0, 0.0]),  # fewer than one server: all of them to the shortest
    ],
)
def test_below_p_one_half_each_job_gets_one_server_and_the_rest_idle(
    remaining: list[float], n: float, expected: list[float]
) -> None:
    state, params = state_of(remaining, n, Power(0.3))
    np.testing.assert_allclose(Hell().allocate(state, params), expected, rtol=1e-15)


@pytest.mark.parametrize("p", [0.5, 0.7, 1.0])
def test_from_p_one_half_the_shortest_job_takes_every_server(p: float) -> None:
    # s(k)^2 / (k R) = k^(2p-1) / R grows with k (p > 1/2) or is flat (p = 1/2: we take every server).
    state, params = state_of([3.0, 1.0, 2.0, 1.0], 100.0, Power(p))
    np.testing.assert_array_equal(Hell().allocate(state, params), [0.0, 1.0, 0.0, 0.0])


def test_general_speedups_use_the_ratio_maximiser() -> None:
    # Amdahl f = 0.9: s(k)^2 / k = k / (0.1 k + 0.9)^2 is highest at k = 9: 11 jobs get 9 servers, the 12th 1.
    remaining = [float(r) for r in range(12, 0, -1)]
    state, params = state_of(remaining, 100.0, Amdahl(0.9))
    assert Hell().best_allocation(params) == 9.0
    np.testing.assert_allclose(Hell().allocate(state, params), [0.01] + [0.09] * 11)
    # A custom k^0.3 agrees with the closed form of Power(0.3).
    custom, power = (
        state_of([4.0, 1.0], 100.0, CustomSpeedup(lambda k: k**0.3)),
        state_of([4.0, 1.0], 100.0, Power(0.3)),
    )
    np.testing.assert_array_equal(Hell().allocate(*custom), Hell().allocate(*power))


def completions(env: gym.Env, seed: int = 0) -> dict[int, float]:
    policy = Hell()
    observation, _ = env.reset(seed=seed)
    done: dict[int, float] = {}
    terminated = False
    while not terminated:
        observation, _, terminated, _, info = env.step(policy.act(observation, env))
        done.update({r.job_id: r.completion for r in info["completed"]})
    return done


def test_idle_servers_through_the_env_hand_worked() -> None:
    # N = 2 servers, p = 0.3, jobs 1, 2, 3: jobs 0 and 1 run on one server each (rate 1), job 2 waits
    # and takes the freed server at t = 1; job 1 ends at 2, job 2 (3 - 1 = 2 left at t = 2) at 4.
    env = gym.make(ENV_ID, jobs=[1.0, 2.0, 3.0], n_servers=2.0, speedup=0.3, allocation="fractions")
    assert completions(env) == pytest.approx({0: 1.0, 1: 2.0, 2: 4.0}, rel=1e-12)


def test_offline_slowdown_is_s_of_n_for_every_job_when_servers_outnumber_jobs() -> None:
    """Each job runs alone on one server at rate 1, so T_i = x_i and its slowdown is s(N) = N^p."""
    kwargs = {"n_jobs": 20, "max_jobs": 20, "n_servers": 1e6, "speedup": 0.05, "size_dist": Pareto(0.8)}
    result = evaluate(ENV_ID, "hell", range(2), allocation="fractions", **kwargs)
    for episode in result.episodes:
        # float32 fractions: one server is 1e-6 (1 - 3e-8) of N.
        np.testing.assert_allclose([r.slowdown for r in episode.records], 1e6**0.05, rtol=1e-8)


def test_fig5_setting_hell_is_about_fifty_percent_above_hesrpt_at_p_005() -> None:
    """heSRPT §5.2: "[HELL] is 50% worse than optimal when p = 0.05" (N = 10^6, M = 500, Pareto(0.8)).

    HELL's mean slowdown is N^p on every instance (previous test); heSRPT's is Theorem 6's.
    """
    kwargs = {"n_jobs": 500, "max_jobs": 500, "n_servers": 1e6, "speedup": 0.05, "size_dist": Pareto(0.8)}
    env = gym.make(ENV_ID, **kwargs)
    ratios = []
    for seed in range(3):
        env.reset(seed=seed)
        ratios.append(1e6**0.05 / hesrpt_mean_slowdown(env.unwrapped.params.sizes, 0.05, 1e6))
    assert np.all((np.array(ratios) > 1.45) & (np.array(ratios) < 1.6)), ratios


def test_the_default_mode_scales_hell_up_and_warns_once() -> None:
    kwargs = {"jobs": [1.0, 2.0, 3.0], "n_servers": 10.0, "speedup": 0.3}
    policy = Hell()
    env = gym.make(ENV_ID, **kwargs)
    observation, _ = env.reset(seed=0)
    with pytest.warns(UserWarning, match="70.0% of the servers idle"):
        action = policy.act(observation, env)
    np.testing.assert_allclose(env.unwrapped.allocation_from_action(action), [1 / 3] * 3)  # EQUI
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        policy.act(observation, env)
    with pytest.warns(UserWarning):
        hell = evaluate(ENV_ID, "hell", [0], **kwargs).episodes[0].records
    equi = evaluate(ENV_ID, "equi", [0], **kwargs).episodes[0].records
    assert [r.completion for r in hell] == pytest.approx([r.completion for r in equi], rel=1e-6)


@pytest.mark.parametrize("allocation", ["normalized", "fractions"])
@pytest.mark.parametrize("name", ["hell", "hell-waterfill"])
def test_fast_path_covers_both_allocation_modes(name: str, allocation: str) -> None:
    kwargs = {"mode": "online", "n_arrivals": 150, "load": 0.8, "max_jobs": 4, "speedup": 0.2, "allocation": allocation}
    assert supports(ENV_ID, name, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = evaluate(ENV_ID, name, [3], **kwargs).episodes[0]
    fast = run_fast(ENV_ID, name, 3, keep_completions=True, **kwargs)
    assert fast.completion is not None
    by_id = sorted(reference.records, key=lambda r: r.job_id)
    np.testing.assert_allclose(fast.completion, [r.completion for r in by_id], rtol=1e-9)
    through = evaluate_fast(ENV_ID, name, [3], **kwargs).values("mean_slowdown")
    np.testing.assert_allclose(through, [reference.metrics["mean_slowdown"]], rtol=1e-9)


def test_online_hell_as_worded_has_slowdown_s_of_n_while_servers_outnumber_jobs() -> None:
    """p = 0.2, N = 1000, 300 arrivals: every job holds one server from arrival to completion (rate 1), so
    T = x and every slowdown is s(N) = 1000^0.2; the default mode hands the idle servers out (EQUI here)."""
    kwargs = {"mode": "online", "n_arrivals": 300, "load": 0.8, "speedup": 0.2}
    worded = evaluate_fast(ENV_ID, "hell", range(2), allocation="fractions", **kwargs).values("mean_slowdown")
    np.testing.assert_allclose(worded, 1000.0**0.2, rtol=1e-8)  # float32 fractions: one server is 1e-3 (1 + 5e-8)
    equi = evaluate_fast(ENV_ID, "equi", range(2), **kwargs).values("mean_slowdown")
    assert np.all(equi < 0.5 * worded), equi
