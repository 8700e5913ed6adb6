"""The multiserver baselines against the paper's theorems and each other (§3.2, §4, §5, §6, App. C)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import baselines
import baselines.multiserver as multiserver
import schedenv  # noqa: F401 - registers the env ids
from schedenv.analysis import sfs_gap_bound, srpt_mg1_response_time
from schedenv.evaluation import evaluate
from schedenv.fastpath.multiserver import run_fast
from schedenv.multiserver.gittins import GittinsRank
from schedenv.multiserver.sim import advance, is_done
from schedenv.multiserver.srpt1 import srpt1_completion_times
from schedenv.workloads import Exponential, HyperExponential, Uniform

ENV_ID = "schedenv/MultiserverJob-v0"


def test_registry_names_and_reference() -> None:
    assert multiserver.REFERENCE == "serverfilling-srpt"
    assert set(baselines.available(ENV_ID)) == {
        "serverfilling-srpt",
        "serverfilling",
        "divisorfilling-srpt",
        "serverfilling-gittins",
        "divisorfilling-gittins",
        "maxweight",
        "greedy-srpt",
        "firstfit-srpt",
        "fcfs",
    }
    assert baselines.reference(ENV_ID) == "serverfilling-srpt"


def busy_and_need_per_epoch(policy_name: str, **env_kwargs: object) -> list[tuple[int, int, int]]:
    """(jobs present, their total need, servers the policy uses) at every epoch of one episode."""
    env = gym.make(ENV_ID, **env_kwargs)
    env.reset(seed=1)
    policy = baselines.make(policy_name)
    policy.reset(env)
    inner = env.unwrapped
    params, state, seen = inner.params, inner.state, []
    while not is_done(params, state):
        serve = np.zeros(state.n_jobs, dtype=bool)
        serve[policy.service_set(state)] = True
        seen.append((state.n_jobs, int(state.server_need.sum()), int(state.server_need[serve].sum())))
        state, _ = advance(params, state, serve)
    return seen


def test_lemma_3_1_along_an_episode() -> None:
    seen = busy_and_need_per_epoch("serverfilling-srpt", n_arrivals=400, load=0.9)
    assert any(need >= 8 for _, need, _ in seen)
    for _, need, busy in seen:
        assert busy == 8 if need >= 8 else busy == need


def test_theorem_c_1_along_an_episode_in_the_divisible_setting() -> None:
    seen = busy_and_need_per_epoch(
        "divisorfilling-srpt", n_arrivals=400, load=0.9, n_servers=6, server_needs=(1, 2, 3, 6)
    )
    assert any(n >= 6 for n, _, _ in seen)
    for n, _, busy in seen:
        if n >= 6:
            assert busy == 6


@pytest.mark.parametrize("load", [0.5, 0.8, 0.95])
def test_serverfilling_srpt_lies_between_srpt1_and_the_theorem_4_1_gap(load: float) -> None:
    env = gym.make(ENV_ID, n_arrivals=20_000, load=load)
    policy = baselines.make("serverfilling-srpt")
    means = []
    for seed in (0, 1):
        result = run_fast(env, policy, seed)
        pooled = srpt1_completion_times(result.params.arrival_times, result.params.sizes) - result.params.arrival_times
        # SRPT is optimal on every sample path of the pooled single server, which is strictly more
        # flexible than the multiserver system: a per-seed, exact lower bound.
        assert pooled.sum() <= result.response_times.sum()
        means.append(result.metrics["mean_response_time"])
    rate = env.unwrapped.arrival_rate
    upper = srpt_mg1_response_time(Exponential(1.0), rate) + sfs_gap_bound(8, rate, load)
    assert np.mean(means) <= upper


def test_serverfilling_srpt_beats_the_papers_competitors_at_high_load() -> None:
    # Fig. 2 / Fig. 3: at every load, ServerFilling-SRPT < ServerFilling < MaxWeight (paired seeds).
    env = gym.make(ENV_ID, n_arrivals=20_000, load=0.9)
    for seed in (0, 1):
        value = {
            name: run_fast(env, baselines.make(name), seed).metrics["mean_response_time"]
            for name in ("serverfilling-srpt", "serverfilling", "maxweight")
        }
        assert value["serverfilling-srpt"] < value["serverfilling"] < value["maxweight"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["greedy-srpt", "firstfit-srpt"])
def test_greedy_and_firstfit_srpt_are_unstable_at_load_0_85(name: str) -> None:
    # §6: both "are unstable for all loads rho >= 0.85". Unstable: the queue keeps growing, so
    # either it passes 2000 jobs or the servers deliver visibly less than the offered load.
    env = gym.make(ENV_ID, n_arrivals=40_000, load=0.85)
    result = run_fast(env, baselines.make(name), seed=0, max_in_system=2000)
    assert result.stopped_early or result.metrics["utilisation"] < 0.85 - 0.03
    stable = run_fast(env, baselines.make("serverfilling-srpt"), seed=0, max_in_system=2000)
    assert not stable.stopped_early and stable.metrics["utilisation"] == pytest.approx(0.85, abs=0.02)


def test_gittins_rank_of_section_5() -> None:
    # Exponential: memoryless, the rank is the mean at every age.
    assert np.unique(GittinsRank(Exponential(2.0)).ranks).tolist() == [2.0]
    # Uniform(0, 1): an increasing-hazard law, rank(a) = E[S - a | S > a] = (1 - a) / 2.
    ages = np.array([0.0, 0.25, 0.5, 0.9])
    np.testing.assert_allclose(GittinsRank(Uniform(0.0, 1.0))(ages), (1.0 - ages) / 2.0, rtol=1e-4)
    # Hyperexponential: at age 0 the infimum is at b -> 0, 1 / hazard(0); old jobs rank near the long phase's mean.
    law = HyperExponential(1.0, 10.0)
    hazard = float(np.sum(law.probabilities / law.means))
    rank = GittinsRank(law)
    assert rank(np.array([0.0]))[0] == pytest.approx(1.0 / hazard, rel=1e-4)
    assert rank(np.array([50.0]))[0] == pytest.approx(law.means[1], rel=1e-3)


def test_serverfilling_gittins_with_exponential_sizes_is_serverfilling() -> None:
    # Constant Gittins ranks leave arrival order: the two policies coincide job for job.
    env = gym.make(ENV_ID, n_arrivals=2000, load=0.9, size_known=False)
    gittins = run_fast(env, baselines.make("serverfilling-gittins"), seed=3)
    arrival = run_fast(env, baselines.make("serverfilling"), seed=3)
    np.testing.assert_array_equal(gittins.completion, arrival.completion)


def test_serverfilling_gittins_uses_sizes_it_cannot_see_better_than_arrival_order() -> None:
    env = gym.make(ENV_ID, n_arrivals=20_000, load=0.9, size_known=False, size_dist=HyperExponential(1.0, 10.0))
    for seed in (0, 1):
        gittins = run_fast(env, baselines.make("serverfilling-gittins"), seed).metrics["mean_response_time"]
        arrival = run_fast(env, baselines.make("serverfilling"), seed).metrics["mean_response_time"]
        assert gittins < arrival


def test_divisorfilling_gittins_python_path_runs_per_need_laws() -> None:
    env = gym.make(ENV_ID, n_arrivals=300, load=0.8, size_known=False, duration_dist=Exponential(1.0))
    result = run_fast(env, baselines.make("divisorfilling-gittins"), seed=0)
    assert np.isfinite(result.completion).all()
    assert result.metrics["utilisation"] == pytest.approx(0.8, abs=0.15)


@pytest.mark.parametrize("mode", ["priority", "select"])
def test_baselines_act_in_both_modes_with_jobs_outside_the_window(mode: str) -> None:
    kwargs = {"n_arrivals": 300, "load": 0.95, "max_jobs": 8, "action_mode": mode}
    result = evaluate(ENV_ID, "fcfs", seeds=[0], **kwargs)
    metrics = result.episodes[0].metrics
    assert metrics["n_completed"] == 300 and metrics["overflow_fraction"] > 0
