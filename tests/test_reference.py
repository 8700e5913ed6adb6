"""The env arguments ``reference`` and ``reward_scale`` in the four families (docs/envs/index.md).

``reference``: the terminal ``info["reference_metrics"]`` equals ``evaluate`` of that baseline on the
same seed, equals the agent's own metrics when the agent is that baseline, and leaves the agent's
episode untouched. ``reward_scale``: rewards are multiplied by it, metrics are not, and the return is
minus the total objective times the scale.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401  (registers the env ids)
from schedenv.evaluation import as_contender, evaluate
from schedenv.reference import AUTO_SCALE_SEEDS

# (env id, paper policy, another baseline as the agent, small kwargs, total objective from the metrics)
FAMILIES: list[tuple[str, str, str, dict[str, Any], str]] = [
    ("schedenv/Malleable-v0", "hesrpt", "equi", {"n_jobs": 6}, "total_slowdown"),
    ("schedenv/Malleable-v0", "a-hesrpt", "srpt", {"mode": "online", "n_arrivals": 150}, "total_slowdown"),
    ("schedenv/Dispatch-v0", "tags-slowdown", "random", {"n_arrivals": 200}, "mean_slowdown"),
    ("schedenv/MultiserverJob-v0", "serverfilling-srpt", "fcfs", {"n_arrivals": 120}, "mean_response_time"),
    ("schedenv/Moldable-v0", "hrf-easy", "rigid-fcfs", {"n_jobs": 30}, "mean_response_time"),
]
IDS = [f"{env_id.split('/')[1]}-{paper}" for env_id, paper, *_ in FAMILIES]


def play(env: gym.Env, name: str, env_id: str, seed: int | None) -> tuple[list[np.ndarray], list[float], dict]:
    """One episode of baseline ``name``: its observations, rewards and terminal info."""
    observation, _ = env.reset(seed=seed)
    contender = as_contender(name, env_id)
    contender.reset(env)
    observations, rewards = [np.asarray(observation).copy()], []
    while True:
        observation, reward, terminated, truncated, info = env.step(contender.act(observation, env))
        observations.append(np.asarray(observation).copy())
        rewards.append(float(reward))
        assert not truncated
        if terminated:
            return observations, rewards, info


def assert_same_metrics(found: dict[str, float], expected: dict[str, float]) -> None:
    """Equal keys and values; the compiled path sums in another order, so allow the last bits."""
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, rel=1e-12, abs=0.0, nan_ok=True), key


def total_objective(metrics: dict[str, float], key: str) -> float:
    return metrics[key] if key.startswith("total") else metrics[key] * metrics["n_completed"]


@pytest.mark.parametrize(("env_id", "paper", "agent", "kwargs", "objective"), FAMILIES, ids=IDS)
def test_reference_metrics_equal_evaluate_and_leave_the_episode_alone(
    env_id: str, paper: str, agent: str, kwargs: dict[str, Any], objective: str
) -> None:
    seed = 4
    expected = evaluate(env_id, paper, [seed], keep_records=False, **kwargs).episodes[0].metrics

    with_reference = gym.make(env_id, reference=paper, **kwargs)
    assert with_reference.get_wrapper_attr("reference") == paper
    observations, rewards, info = play(with_reference, agent, env_id, seed)
    assert_same_metrics(info["reference_metrics"], expected)

    plain = gym.make(env_id, **kwargs)
    plain_observations, plain_rewards, plain_info = play(plain, agent, env_id, seed)
    assert "reference_metrics" not in plain_info
    assert rewards == plain_rewards
    assert all(np.array_equal(a, b) for a, b in zip(observations, plain_observations, strict=True))
    assert info["episode_metrics"] == plain_info["episode_metrics"]
    # The agent's own cost differs from the paper policy's on this episode (the check has teeth).
    assert info["episode_metrics"][objective] != pytest.approx(expected[objective], rel=1e-9)

    # The paper policy as the agent: the per-episode ratio is 1.
    _, _, own = play(with_reference, paper, env_id, seed)
    assert_same_metrics(own["reference_metrics"], own["episode_metrics"])
    assert own["episode_metrics"][objective] / own["reference_metrics"][objective] == pytest.approx(1.0, abs=1e-12)

    # Deterministic: a second env on the same seed reports the same reference numbers.
    _, _, again = play(gym.make(env_id, reference=paper, **kwargs), agent, env_id, seed)
    assert again["reference_metrics"] == info["reference_metrics"]


@pytest.mark.parametrize(("env_id", "paper", "agent", "kwargs", "objective"), FAMILIES[1:3], ids=IDS[1:3])
def test_reference_follows_an_episode_reset_without_a_seed(
    env_id: str, paper: str, agent: str, kwargs: dict[str, Any], objective: str
) -> None:
    env = gym.make(env_id, reference=paper, **kwargs)
    _, _, first = play(env, paper, env_id, 11)
    _, _, second = play(env, paper, env_id, None)  # the generator continues: another workload
    assert second["episode_metrics"][objective] != first["episode_metrics"][objective]
    assert_same_metrics(second["reference_metrics"], second["episode_metrics"])


@pytest.mark.parametrize(
    ("env_id", "value", "expected"),
    [
        ("schedenv/Malleable-v0", "hesrp", "did you mean 'hesrpt'"),
        ("schedenv/Malleable-v0", "tags-slowdown", "'tags-slowdown' is a baseline of schedenv/Dispatch-v0"),
        ("schedenv/Dispatch-v0", "TAGS", "choose one of ["),
        ("schedenv/Moldable-v0", 3, "reference=3 is not allowed"),
        ("schedenv/MultiserverJob-v0", "serverfiling-srpt", "did you mean 'serverfilling-srpt'"),
    ],
)
def test_a_bad_reference_is_refused_at_construction(env_id: str, value: Any, expected: str) -> None:
    with pytest.raises(ValueError, match="reference=") as error:
        gym.make(env_id, reference=value)
    assert expected in str(error.value)


@pytest.mark.parametrize("value", [0, -1.0, math.nan, math.inf, "large", True, None])
def test_a_bad_reward_scale_is_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="reward_scale="):
        gym.make("schedenv/Malleable-v0", reward_scale=value)


@pytest.mark.parametrize(("env_id", "paper", "agent", "kwargs", "objective"), FAMILIES, ids=IDS)
def test_reward_scale_scales_rewards_not_metrics(
    env_id: str, paper: str, agent: str, kwargs: dict[str, Any], objective: str
) -> None:
    scale = 1e-3
    _, plain_rewards, plain = play(gym.make(env_id, **kwargs), agent, env_id, 2)
    env = gym.make(env_id, reward_scale=scale, **kwargs)
    assert env.get_wrapper_attr("reward_scale") == scale
    _, rewards, info = play(env, agent, env_id, 2)
    assert rewards == [reward * scale for reward in plain_rewards]
    assert info["episode_metrics"] == plain["episode_metrics"]
    total = total_objective(info["episode_metrics"], objective)
    assert math.fsum(rewards) == pytest.approx(-total * scale, rel=1e-9)
    assert math.fsum(plain_rewards) == pytest.approx(-total, rel=1e-9)


@pytest.mark.parametrize(("env_id", "paper", "agent", "kwargs", "objective"), FAMILIES[::2], ids=IDS[::2])
def test_auto_reward_scale_gives_the_paper_policy_a_return_of_minus_one(
    env_id: str, paper: str, agent: str, kwargs: dict[str, Any], objective: str
) -> None:
    env = gym.make(env_id, reward_scale="auto", **kwargs)
    scale = env.get_wrapper_attr("reward_scale")
    assert isinstance(scale, float) and 0 < scale < 1
    assert gym.make(env_id, reward_scale="auto", **kwargs).get_wrapper_attr("reward_scale") == scale
    returns = [math.fsum(play(env, paper, env_id, seed)[1]) for seed in AUTO_SCALE_SEEDS]
    assert float(np.mean(returns)) == pytest.approx(-1.0, rel=1e-9)


@pytest.mark.parametrize(("env_id", "paper", "agent", "kwargs", "objective"), FAMILIES[1:], ids=IDS[1:])
def test_the_batched_env_scales_rewards_and_refuses_reference(
    env_id: str, paper: str, agent: str, kwargs: dict[str, Any], objective: str
) -> None:
    with pytest.raises(ValueError, match=f"reference='{paper}' is not supported by the batched env"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", reference=paper, **kwargs)
    batches = [
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", reward_scale=scale, **kwargs)
        for scale in (1.0, 0.25)
    ]
    for batch in batches:
        batch.reset(seed=5)
        batch.action_space.seed(5)
    for _ in range(20):
        actions = batches[0].action_space.sample()
        _, plain, *_ = batches[0].step(actions)
        _, scaled, *_ = batches[1].step(actions)
        assert np.array_equal(scaled, plain * 0.25)


@pytest.mark.parametrize(("objective", "total"), [("slowdown", "total_slowdown"), ("flow_time", "total_flow_time")])
def test_malleable_offline_reports_the_theorem_6_optimum(objective: str, total: str) -> None:
    env_id = "schedenv/Malleable-v0"
    kwargs: dict[str, Any] = {"n_jobs": 7, "objective": objective, "speedup": 0.6}
    env = gym.make(env_id, reference="hesrpt", **kwargs)
    _, _, info = play(env, "equi", env_id, 9)
    optimum = info["optimal_metrics"][total]
    # heSRPT is optimal offline (Theorem 5), so the reference attains the bound and EQUI lies above it.
    assert info["reference_metrics"][total] == pytest.approx(optimum, rel=1e-9)
    assert info["episode_metrics"][total] > optimum * (1 + 1e-6)
    mean = "mean_slowdown" if objective == "slowdown" else "mean_response_time"
    assert info["optimal_metrics"][mean] == pytest.approx(optimum / 7, rel=1e-15)
    _, _, online = play(gym.make(env_id, reference="a-hesrpt", mode="online", n_arrivals=50), "equi", env_id, 9)
    assert "optimal_metrics" not in online
    _, _, plain = play(gym.make(env_id, **kwargs), "equi", env_id, 9)
    assert "optimal_metrics" not in plain


def test_multiserver_reports_the_srpt1_bound_below_every_policy() -> None:
    env_id = "schedenv/MultiserverJob-v0"
    kwargs: dict[str, Any] = {"n_arrivals": 150, "load": 0.9}
    env = gym.make(env_id, reference="serverfilling-srpt", **kwargs)
    means = {}
    for name in ("fcfs", "serverfilling-srpt", "greedy-srpt"):
        _, _, info = play(env, name, env_id, 6)
        bound = info["bound_metrics"]["mean_response_time"]
        means[name] = info["episode_metrics"]["mean_response_time"]
        assert 0 < bound < means[name]
    assert bound < info["reference_metrics"]["mean_response_time"] == pytest.approx(means["serverfilling-srpt"])
    # Hand-worked: two jobs needing all k = 2 servers, durations 2 and 1, arriving at 0 and 0.5.
    # SRPT-1 serves sizes 2 and 1: the second preempts at 0.5 and ends at 1.5, the first at 3.
    two = gym.make(env_id, n_servers=2, jobs=[(0.0, 2, 2.0), (0.5, 2, 1.0)], reference="fcfs")
    _, _, info = play(two, "fcfs", env_id, 0)
    assert info["bound_metrics"]["mean_response_time"] == pytest.approx((3.0 + 1.0) / 2)
    assert info["episode_metrics"]["mean_response_time"] == pytest.approx((2.0 + 2.5) / 2)
    assert "bound_metrics" not in play(gym.make(env_id, **kwargs), "fcfs", env_id, 6)[2]


@pytest.mark.parametrize(("env_id", "paper", "agent", "kwargs", "objective"), FAMILIES[::2], ids=IDS[::2])
def test_the_fast_path_scales_its_return_as_the_env(
    env_id: str, paper: str, agent: str, kwargs: dict[str, Any], objective: str
) -> None:
    from schedenv.fastpath import evaluate_fast, supports

    assert supports(env_id, paper, **kwargs)
    fast = evaluate_fast(env_id, paper, [1, 2], reward_scale=0.01, **kwargs)
    slow = evaluate(env_id, paper, [1, 2], keep_records=False, reward_scale=0.01, **kwargs)
    unscaled = evaluate_fast(env_id, paper, [1, 2], **kwargs)
    np.testing.assert_allclose(fast.values("return"), slow.values("return"), rtol=1e-9)
    np.testing.assert_allclose(fast.values("return"), unscaled.values("return") * 0.01, rtol=1e-15)
