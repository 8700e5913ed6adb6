"""The ``action_mode`` parameterisations of Malleable-v0: "log" spans orders of magnitude, "residual"
adjusts heSRPT (Theorem 5; Adaptive-heSRPT online, heSRPT paper §5.3) computed by the env itself,
"exponent" computes heSRPT with an exponent p' = p^(2^a) of the agent's choice."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from schedenv.analysis.hesrpt import hesrpt_allocation, hesrpt_allocation_rows
from schedenv.evaluation import evaluate
from schedenv.malleable.core import (
    LOG_DECADES,
    exponent_weights,
    log_weights,
    residual_weights,
    weights_of_rows,
)
from schedenv.workloads import Amdahl

ENV_ID = "schedenv/Malleable-v0"
SCENARIOS = [
    {"n_jobs": 12, "max_jobs": 16, "speedup": 0.5},
    {"n_jobs": 10, "max_jobs": 16, "speedup": 0.3, "objective": "flow_time"},
    {"mode": "online", "n_arrivals": 200, "load": 0.8, "max_jobs": 16},
]


def _play(env: gym.Env, policy: Any, seed: int) -> tuple[float, dict[str, float]]:
    _, info = env.reset(seed=seed)
    total, terminated = 0.0, False
    while not terminated:
        _, reward, terminated, _, info = env.step(policy(env))
        total += float(reward)
    return total, info["episode_metrics"]


@pytest.mark.parametrize("mode", ["residual", "exponent"])
@pytest.mark.parametrize("kwargs", SCENARIOS)
def test_a_zero_signed_action_is_the_paper_policy(kwargs: dict[str, Any], mode: str) -> None:
    """With a = 0 the env applies heSRPT (A-heSRPT online): the same episode, metric for metric.

    The baseline hands its fractions to the env as a float32 action; the residual mode computes them
    in float64. Rounding at 1e-7 per epoch moves the metrics by about 1e-9, hence the tolerance.
    """
    env = gym.make(ENV_ID, action_mode=mode, **kwargs)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    for seed in range(3):
        episode_return, metrics = _play(env, lambda _: zero, seed)
        paper = evaluate(ENV_ID, "hesrpt", seeds=[seed], **kwargs).episodes[0]
        assert episode_return == pytest.approx(paper.episode_return, rel=1e-7)
        for name in ("mean_slowdown", "mean_response_time", "makespan"):
            assert metrics[name] == pytest.approx(paper.metrics[name], rel=1e-7)


def test_a_residual_applies_the_paper_fractions_times_its_factors() -> None:
    """Hand-checked transition: slot s gets heSRPT's fraction times 10^(2 a_s), renormalised."""
    env = gym.make(ENV_ID, action_mode="residual", jobs=[1.0, 2.0, 4.0], n_servers=10.0, speedup=0.5, max_jobs=4)
    env.reset(seed=0)
    inner = env.unwrapped
    state, window = inner.state, inner.window
    base = hesrpt_allocation(state.remaining, 0.5, weights=np.asarray(state.weight))
    action = np.array([0.5, 0.0, -0.5, 0.0, 0.0], dtype=np.float32)
    expected = base.copy()
    expected[window[0]] *= 10.0
    expected[window[2]] /= 10.0
    np.testing.assert_allclose(inner.allocation_from_action(action), expected / expected.sum(), rtol=1e-12)


def test_an_exponent_action_applies_heSRPT_with_p_prime() -> None:
    """Hand-checked transition: a = 1 gives p' = p^2, a = -1 gives sqrt(p) (p = 0.5: 0.25, 0.7071)."""
    env = gym.make(ENV_ID, action_mode="exponent", jobs=[1.0, 2.0, 4.0], n_servers=10.0, speedup=0.5, max_jobs=4)
    assert env.action_space.shape == (1,)
    env.reset(seed=0)
    inner = env.unwrapped
    state = inner.state
    for value, p_prime in ((1.0, 0.25), (-1.0, 0.5**0.5), (0.5, 0.5**2**0.5)):
        expected = hesrpt_allocation(state.remaining, p_prime, weights=np.asarray(state.weight))
        got = inner.allocation_from_action(np.array([value], dtype=np.float32))
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_mis_specified_exponent_beats_adaptive_hesrpt_at_high_load() -> None:
    """heSRPT's paper §5.3: A-heSRPT is a heuristic online. At load 0.9 (p = 0.5, 200 arrivals) the
    exponent p' = 0.5^(2^0.4) ~ 0.38 lowers the mean slowdown over 20 seeds by about 0.3%; a = 0
    (A-heSRPT) is the same episode as the baseline."""
    kwargs = {"mode": "online", "n_arrivals": 200, "load": 0.9}
    env = gym.make(ENV_ID, action_mode="exponent", **kwargs)
    seeds = range(2_000_000, 2_000_020)
    paper = evaluate(ENV_ID, "a-hesrpt", seeds=seeds, keep_records=False, **kwargs).values("mean_slowdown")
    tilted = np.array([_play(env, lambda _: np.array([0.4], dtype=np.float32), s)[1]["mean_slowdown"] for s in seeds])
    assert 0.99 < tilted.mean() / paper.mean() < 0.999
    assert (tilted < paper).mean() > 0.5


def test_a_zero_log_action_is_equi_and_log_actions_express_hesrpt() -> None:
    """a = 0 splits the servers equally; log10(theta) / 6 reproduces heSRPT's fractions exactly."""
    kwargs = {"n_jobs": 12, "max_jobs": 16, "speedup": 0.5}
    env = gym.make(ENV_ID, action_mode="log", **kwargs)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    _, equi_metrics = _play(env, lambda _: zero, seed=4)
    equi = evaluate(ENV_ID, "equi", seeds=[4], **kwargs).episodes[0]
    assert equi_metrics["mean_slowdown"] == pytest.approx(equi.metrics["mean_slowdown"], rel=1e-9)

    def log_hesrpt(env: gym.Env) -> np.ndarray:
        inner = env.unwrapped
        theta = hesrpt_allocation(inner.state.remaining, 0.5, weights=np.asarray(inner.state.weight))
        action = np.full(inner.max_jobs + 1, -1.0)
        action[: inner.window.size] = np.log10(theta[inner.window]) / LOG_DECADES
        assert action[: inner.window.size].min() > -1.0  # heSRPT's fractions span less than the mode's 12 decades here
        return action

    _, metrics = _play(env, log_hesrpt, seed=4)
    paper = evaluate(ENV_ID, "hesrpt", seeds=[4], **kwargs).episodes[0]
    assert metrics["mean_slowdown"] == pytest.approx(paper.metrics["mean_slowdown"], rel=1e-9)
    assert metrics["mean_slowdown"] < equi.metrics["mean_slowdown"]


@pytest.mark.parametrize("mode", ["log", "residual", "exponent"])
def test_signed_modes_have_a_symmetric_box_and_refuse_what_lies_outside(mode: str) -> None:
    env = gym.make(ENV_ID, action_mode=mode, n_jobs=4, max_jobs=4)
    assert env.action_space.low.min() == -1.0 and env.action_space.high.max() == 1.0
    env.reset(seed=0)
    before = env.unwrapped.state.remaining.copy()
    rest = [0.0] * (env.action_space.shape[0] - 1)
    for bad, message in (([1.5, *rest], r"\[-1, 1\]"), ([np.nan, *rest], "NaN"), ([0.0, 0.0, *rest], "shape")):
        with pytest.raises(ValueError, match=message):
            env.step(np.array(bad, dtype=np.float64))
    np.testing.assert_array_equal(env.unwrapped.state.remaining, before)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"action_mode": "softmax"}, "action_mode='softmax'.*weights.*log.*residual"),
        ({"action_mode": "log", "allocation": "fractions"}, "allocation='fractions'"),
        ({"action_mode": "residual", "speedup": Amdahl(0.9)}, "k\\^p"),
        ({"action_mode": "exponent", "speedup": Amdahl(0.9)}, "action_mode='exponent'.*k\\^p"),
        ({"action_mode": "exponent", "allocation": "fractions"}, "allocation='fractions'"),
    ],
)
def test_bad_action_modes_are_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(ENV_ID, **kwargs)


@pytest.mark.parametrize("mode", ["log", "residual", "exponent"])
def test_the_batched_env_equals_single_envs_in_the_signed_modes(mode: str) -> None:
    """The batched env converts every copy's action as the single env converts it: bit for bit."""
    kwargs = {"mode": "online", "n_arrivals": 40, "load": 0.9, "max_jobs": 3, "action_mode": mode}
    native = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", **kwargs)
    sync = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="sync", **kwargs)
    observations = [native.reset(seed=5)[0], sync.reset(seed=5)[0]]
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(200):
        actions = rng.uniform(-1.0, 1.0, native.action_space.shape).astype(np.float32)
        (obs_n, reward_n, term_n, _, _), (obs_s, reward_s, term_s, _, _) = native.step(actions), sync.step(actions)
        np.testing.assert_array_equal(obs_n, obs_s)
        np.testing.assert_array_equal(reward_n, reward_s)
        np.testing.assert_array_equal(term_n, term_s)
        ends += int(term_n.sum())
    assert ends >= 4 and observations[0].shape == observations[1].shape
    bad = np.zeros(native.action_space.shape, dtype=np.float32)
    bad[2, 0] = 1.5
    with pytest.raises(ValueError, match=r"copies \[2\].*\[-1, 1\]"):
        native.step(bad)


def _random_states(rng: np.random.Generator, copies: int, max_jobs: int) -> dict[str, np.ndarray]:
    """Batched-env states: 0 to 29 jobs per copy (some outside the window), tied sizes, p = 1 rows."""
    length = int(rng.integers(1, 30))
    n_jobs = rng.integers(0, length + 1, copies)
    remaining = np.exp(rng.normal(0.0, 2.0, (copies, length)))
    remaining[::3] = np.round(remaining[::3], 1) + 0.1
    n_window = np.minimum(n_jobs, max_jobs)
    window = np.zeros((copies, max_jobs), dtype=np.int64)
    for i in range(copies):
        window[i, : n_window[i]] = np.argsort(remaining[i, : n_jobs[i]], kind="stable")[: n_window[i]]
    p = rng.uniform(0.05, 1.0, copies)
    p[::7] = 1.0
    weight = 1.0 / np.exp(rng.normal(0.0, 2.0, (copies, length)))
    return {"remaining": remaining, "weight": weight, "window": window, "n_jobs": n_jobs, "n_window": n_window, "p": p}


@pytest.mark.parametrize("mode", ["log", "residual", "exponent"])
def test_the_batched_conversion_of_signed_actions_is_the_single_one_bit_for_bit(mode: str) -> None:
    """``core.weights_of_rows`` (all copies at once) equals the single env's function of each copy, exactly."""
    rng, max_jobs = np.random.default_rng(3), 8
    rows = 0
    for _ in range(150):
        state = _random_states(rng, 16, max_jobs)
        actions = rng.uniform(-1.0, 1.0, (16, 1 if mode == "exponent" else max_jobs + 1))
        actions[::5] = 0.0
        batch = weights_of_rows(actions, mode, **state)
        for i, values in enumerate(actions):
            n, k = state["n_jobs"][i], state["n_window"][i]
            jobs = (state["remaining"][i, :n], state["weight"][i, :n], state["window"][i, :k])
            p = float(state["p"][i])
            if mode == "log":
                single = log_weights(values)
            elif mode == "residual":
                single = residual_weights(values, *jobs, p)
            else:
                single = exponent_weights(float(values[0]), *jobs, max_jobs, p)
            np.testing.assert_array_equal(batch[i], single)
            rows += int(n > k)
    assert rows > 100  # jobs outside the window were covered


def test_the_batched_heSRPT_allocation_is_theorem_5_row_by_row() -> None:
    """``hesrpt_allocation_rows`` equals ``hesrpt_allocation`` of each row bit for bit, zeros past each count."""
    rng = np.random.default_rng(4)
    for _ in range(100):
        state = _random_states(rng, 16, 8)
        theta = hesrpt_allocation_rows(state["remaining"], state["weight"], state["n_jobs"], state["p"])
        for i, n in enumerate(state["n_jobs"]):
            assert not theta[i, n:].any()
            if n:
                row = (state["remaining"][i, :n], float(state["p"][i]))
                np.testing.assert_array_equal(theta[i, :n], hesrpt_allocation(*row, weights=state["weight"][i, :n]))
    np.testing.assert_array_equal(
        hesrpt_allocation_rows(np.array([[1.0, 1.0]]), np.ones((1, 2)), [2], [0.5]), [[0.25, 0.75]]
    )


@pytest.mark.parametrize(
    ("mode", "baseline"), [("log", "hesrpt"), ("log", "equi"), ("residual", "hesrpt"), ("exponent", "hesrpt")]
)
def test_baselines_act_through_the_nearest_action_of_the_mode(mode: str, baseline: str) -> None:
    """A baseline on a "log" or "residual" env plays its own policy (to float32 rounding)."""
    kwargs = {"mode": "online", "n_arrivals": 150, "load": 0.7, "max_jobs": 16}
    mine = evaluate(ENV_ID, baseline, seeds=[2], action_mode=mode, **kwargs).episodes[0].metrics
    plain = evaluate(ENV_ID, baseline, seeds=[2], **kwargs).episodes[0].metrics
    assert mine["mean_slowdown"] == pytest.approx(plain["mean_slowdown"], rel=1e-5)


@pytest.mark.parametrize("mode", ["log", "residual"])
def test_an_allocation_the_mode_cannot_express_is_said_not_hidden(mode: str) -> None:
    """SRPT's zeros lie beyond both Boxes (weights >= 1e-12 of the largest; factors >= 1/100 of
    heSRPT's), and with s(k) = k^p a tiny share still serves at a visible rate: a warning says so."""
    with pytest.warns(UserWarning, match=f"action_mode='{mode}' cannot express this allocation exactly"):
        result = evaluate(ENV_ID, "srpt", seeds=[0], action_mode=mode, n_jobs=8)
    plain = evaluate(ENV_ID, "srpt", seeds=[0], n_jobs=8)
    assert result.episodes[0].metrics["mean_slowdown"] != plain.episodes[0].metrics["mean_slowdown"]


def test_the_exponent_mode_plays_other_policies_as_the_nearest_exponent() -> None:
    """EQUI is heSRPT's limit p' -> 0, beyond the Box (p' >= p^2): the warning says so, and the
    nearest exponent (a = 1, the most equal split) is played."""
    with pytest.warns(UserWarning, match="action_mode='exponent' cannot express this allocation exactly"):
        result = evaluate(ENV_ID, "equi", seeds=[0], action_mode="exponent", n_jobs=8)
    env = gym.make(ENV_ID, action_mode="exponent", n_jobs=8)
    _, metrics = _play(env, lambda _: np.array([1.0], dtype=np.float32), seed=0)
    assert result.episodes[0].metrics["mean_slowdown"] == pytest.approx(metrics["mean_slowdown"], rel=1e-9)
