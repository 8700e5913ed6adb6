"""The malleable env's contract: rewards, windows, records, bad input, determinism."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest

import baselines
import schedenv  # noqa: F401  (registers the ids)
from schedenv.analysis import hesrpt_weighted_flow_time
from schedenv.evaluation import evaluate
from schedenv.workloads import Amdahl, Exponential, Pareto

ENV_ID = "schedenv/Malleable-v0"


def play(env: gym.Env, policy_name: str, seed: int = 0) -> tuple[float, list, dict]:
    policy = baselines.make(policy_name)
    observation, _ = env.reset(seed=seed)
    policy.reset(env)
    total, records = 0.0, []
    while True:
        observation, reward, terminated, _, info = env.step(policy.act(observation, env))
        total += reward
        records.extend(info["completed"])
        if terminated:
            return total, records, info


@pytest.mark.parametrize("objective", ["slowdown", "flow_time"])
@pytest.mark.parametrize("seed", range(4))
def test_hesrpt_through_the_env_equals_theorem6(objective: str, seed: int) -> None:
    env = gym.make(ENV_ID, n_jobs=12, max_jobs=12, speedup=0.4, objective=objective, n_servers=1e4)
    episode_return, records, _ = play(env, "hesrpt", seed)
    sizes = env.unwrapped.params.sizes
    # The action is float32, so fractions carry ~1e-7 relative rounding.
    assert -episode_return == pytest.approx(hesrpt_weighted_flow_time(sizes, 0.4, 1e4, objective), rel=1e-6)
    assert sorted(r.job_id for r in records) == list(range(12))


@pytest.mark.parametrize("objective", ["slowdown", "flow_time"])
def test_return_is_minus_the_total_objective_online(objective: str) -> None:
    env = gym.make(ENV_ID, mode="online", n_arrivals=300, load=0.7, objective=objective, max_jobs=8)
    episode_return, records, info = play(env, "equi", seed=3)
    total = sum(r.slowdown if objective == "slowdown" else r.response_time for r in records)
    assert -episode_return == pytest.approx(total, rel=1e-9)
    metrics = info["episode_metrics"]
    assert metrics["n_completed"] == 300
    assert metrics["mean_slowdown"] == pytest.approx(np.mean([r.slowdown for r in records]), rel=1e-12)


def test_slowdown_is_flow_time_over_time_alone_on_all_servers() -> None:
    env = gym.make(ENV_ID, jobs=[2.0, 3.0], n_servers=16.0, speedup=0.5)
    _, records, _ = play(env, "srpt")
    by_id = {r.job_id: r for r in records}
    # SRPT at rate sqrt(16) = 4: job 0 ends at 0.5, job 1 at 1.25.
    assert by_id[0].completion == pytest.approx(0.5) and by_id[1].completion == pytest.approx(1.25)
    assert by_id[1].slowdown == pytest.approx(1.25 / (3.0 / 4.0))


def test_window_orders_by_least_remaining_and_reports_jobs_outside() -> None:
    env = gym.make(ENV_ID, jobs=[5.0, 1.0, 4.0, 2.0, 3.0], max_jobs=3)
    observation, info = env.reset(seed=0)
    inner = env.unwrapped
    assert info["n_outside"] == 2
    np.testing.assert_array_equal(inner.state.size[inner.window], [1.0, 2.0, 3.0])
    slots = observation[:9].reshape(3, 3)
    assert (np.diff(slots[:, 1]) > 0).all() and (slots[:, 0] == 1).all()
    assert observation[-2] == pytest.approx(math.log1p(2))
    assert observation[-1] == pytest.approx(math.log1p(9.0 / 3.0), rel=1e-6)  # scale = mean size 3


def test_group_weight_is_split_equally_outside_the_window() -> None:
    env = gym.make(ENV_ID, jobs=[5.0, 1.0, 4.0, 2.0, 3.0], max_jobs=3)
    env.reset(seed=0)
    theta = env.unwrapped.allocation_from_action(np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32))
    np.testing.assert_allclose(theta, [0.5, 0.0, 0.5, 0.0, 0.0])


def test_all_zero_action_means_equal_split() -> None:
    env = gym.make(ENV_ID, jobs=[1.0, 2.0, 3.0, 4.0])
    env.reset(seed=0)
    np.testing.assert_allclose(env.unwrapped.allocation_from_action(np.zeros(17, np.float32)), [0.25] * 4)


def test_baseline_actions_are_in_the_action_space() -> None:
    env = gym.make(ENV_ID, mode="online", n_arrivals=200, max_jobs=4)
    for name in baselines.available(ENV_ID):
        policy = baselines.make(name)
        observation, _ = env.reset(seed=1)
        for _ in range(50):
            action = policy.act(observation, env)
            assert env.action_space.contains(action), name
            observation, *_ = env.step(action)


@pytest.mark.parametrize(
    "action",
    [
        np.full(17, np.nan, np.float32),
        np.full(17, np.inf, np.float32),
        -np.ones(17, np.float32),
        np.full(17, 2.0, np.float32),
        np.ones(5, np.float32),
        np.ones((17, 1), np.float32),
    ],
    ids=["nan", "inf", "negative", "above-one", "short", "2d"],
)
def test_bad_actions_raise_and_leave_the_state_unchanged(action: np.ndarray) -> None:
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    before = env.unwrapped.state
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    after = env.unwrapped.state
    assert after.time == before.time and after.work_done == before.work_done
    for name in ("job_id", "size", "remaining", "weight"):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"speedup": 1.5}, "p=1.5"),
        ({"speedup": 0.0}, "p=0.0"),
        ({"objective": "slowdwon"}, "did you mean 'slowdown'"),
        ({"mode": "onlin"}, "did you mean 'online'"),
        ({"jobs": [1.0, -2.0]}, r"jobs\[1\]=-2.0"),
        ({"jobs": [1.0, 0.0]}, r"jobs\[1\]=0.0"),
        ({"n_servers": 0}, "n_servers=0"),
        ({"max_jobs": 0}, "max_jobs=0"),
        ({"n_jobs": 2.5}, "n_jobs=2.5"),
        ({"mode": "online", "size_dist": Pareto(0.8)}, "infinite mean"),
        ({"mode": "online", "load": 1.2, "speedup": 1.0}, "load=1.2"),
        ({"mode": "online", "load": -0.1}, "load=-0.1"),
        ({"size_dist": "pareto"}, "size_dist='pareto'"),
        ({"jobs": [[0.0, 1.0], [1.0, 2.0]]}, "mode='offline' needs every arrival time to be 0"),
        ({"speedup": lambda k: k**2}, "concave"),
    ],
)
def test_bad_configuration_fails_at_construction(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(ENV_ID, **kwargs)


def test_load_above_one_with_sublinear_speedup_warns() -> None:
    with pytest.warns(UserWarning, match="SRPT, RS"):
        gym.make(ENV_ID, mode="online", load=1.5, speedup=0.5)


def test_online_episode_never_asks_for_a_decision_in_an_empty_system() -> None:
    # Low load leaves long idle gaps; the env must skip them inside the simulator.
    env = gym.make(ENV_ID, mode="online", load=0.05, n_arrivals=200)
    observation, info = env.reset(seed=2)
    while True:
        assert info["n_jobs"] > 0 and observation[0] == 1.0
        observation, _, terminated, _, info = env.step(np.ones(17, np.float32))
        if terminated:
            break


def test_explicit_arrivals_online_are_replayed_exactly() -> None:
    env = gym.make(ENV_ID, mode="online", jobs=[[0.0, 1.0], [10.0, 1.0]], n_servers=4.0, speedup=0.5)
    _, records, info = play(env, "equi")
    assert [(r.arrival, r.completion) for r in records] == [(0.0, 0.5), (10.0, 10.5)]
    assert info["episode_metrics"]["makespan"] == 10.5


def test_common_random_numbers_across_contenders() -> None:
    kwargs = {"mode": "online", "n_arrivals": 150, "size_dist": Exponential(2.0)}
    a = evaluate(ENV_ID, "srpt", [4], **kwargs).episodes[0].records
    b = evaluate(ENV_ID, "equi", [4], **kwargs).episodes[0].records
    assert {r.job_id: (r.arrival, r.size) for r in a} == {r.job_id: (r.arrival, r.size) for r in b}
    assert [r.completion for r in a] != [r.completion for r in b]


def test_amdahl_speedup_runs_the_general_policies() -> None:
    env = gym.make(ENV_ID, jobs=[1.0, 1.0], n_servers=10.0, speedup=Amdahl(0.9), objective="flow_time")
    equi_return, _, _ = play(env, "equi")
    # Each job on 5 servers runs at 1 / (0.1 + 0.9 / 5) = 1 / 0.28: both finish at 0.28.
    assert -equi_return == pytest.approx(0.56)
    with pytest.raises(ValueError, match="k\\^p"):
        play(env, "hesrpt")


def test_render_text_lists_the_window() -> None:
    env = gym.make(ENV_ID, jobs=[1.0, 2.0, 3.0], render_mode="ansi", max_jobs=2)
    env.reset(seed=0)
    text = env.render()
    assert "jobs = 3" in text and "1 more jobs outside the window" in text


def test_stepping_after_the_end_is_an_error() -> None:
    env = gym.make(ENV_ID, jobs=[1.0])
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert env.step(np.ones(17, np.float32))[2]
        with pytest.raises(RuntimeError, match="reset"):
            env.step(np.ones(17, np.float32))


def test_baseline_actions_stay_in_bounds_when_jobs_overflow_the_window() -> None:
    # Regression: the group weight was computed as a difference of sums and could be -2e-16.
    # With this instance the old formula produced 6 negative weights over these seeds.
    env = gym.make(ENV_ID, n_jobs=20, max_jobs=16, speedup=0.9, size_dist=Pareto(0.8), n_servers=1e6)
    policy = baselines.make("hesrpt")
    for seed in range(10):
        observation, _ = env.reset(seed=seed)
        terminated = False
        while not terminated:
            action = policy.act(observation, env)
            assert env.action_space.contains(action)
            observation, _, terminated, _, _ = env.step(action)
