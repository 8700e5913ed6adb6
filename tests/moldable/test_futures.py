"""Redrawn futures of Moldable-v0 (docs/envs/moldable.md, "A future of the workload").

``FastCore.future_arrivals`` keeps the arrived jobs and redraws the rest after now with the generator's law;
``MoldableEnv.paper_policy_returns`` plays candidates on them (common random numbers), never reading the
episode's own future, and equals the clairvoyant returns once every job has arrived.
"""

from __future__ import annotations

import copy
import math

import gymnasium as gym
import numpy as np
import pytest

from schedenv.moldable.kernel import A_JOB, A_L, A_REQUESTED, A_TABLE, A_TIME, NEXT_ARRIVAL
from schedenv.moldable.workload import power_of_two_request

ENV = "schedenv/Moldable-v0"


def ranked(n_jobs: int = 60, **kwargs: object) -> gym.Env:
    return gym.make(ENV, action_mode="ranked", n_jobs=n_jobs, arrival_interval="middle", **kwargs)


def played(env: gym.Env, seed: int, decisions: int) -> gym.Env:
    """``env`` reset with ``seed`` and stepped ``decisions`` times with candidate 0."""
    env.reset(seed=seed)
    for _ in range(decisions):
        env.step(0)
    return env


@pytest.mark.parametrize("decisions", [0, 25, 60])
def test_a_redrawn_future_keeps_the_arrived_jobs_and_draws_the_rest_after_now(decisions: int) -> None:
    env = played(ranked(), seed=3, decisions=decisions)
    inner = env.unwrapped
    core = inner._live_core()
    arrived, now = int(core._ints[NEXT_ARRIVAL]), core.time
    assert 0 < arrived < 60  # some arrived, some to come
    arrivals_f, arrivals_i = core.future_arrivals(inner.generator, np.random.default_rng(5))
    np.testing.assert_array_equal(arrivals_f[:arrived], core._arrivals_f[:arrived])
    np.testing.assert_array_equal(arrivals_i[:arrived], core._arrivals_i[:arrived])
    future = arrivals_f[arrived:]
    assert (future[:, A_TIME] > now).all() and (np.diff(future[:, A_TIME]) >= 0).all()
    assert not np.array_equal(future, core._arrivals_f[arrived:])  # redrawn, not the episode's own
    np.testing.assert_array_equal(arrivals_i[:, A_JOB], core._arrivals_i[:, A_JOB])  # the same jobs, as many
    assert (arrivals_i[arrived:, A_TABLE] == -1).all()  # Downey jobs
    np.testing.assert_array_equal(arrivals_i[arrived:, A_REQUESTED], power_of_two_request(future[:, 3], 128))
    again = core.future_arrivals(inner.generator, np.random.default_rng(5))
    np.testing.assert_array_equal(again[0], arrivals_f)  # a seed draws one future


def test_the_redrawn_futures_have_the_generators_law() -> None:
    """Poisson arrivals: the first redrawn arrival comes an Exp(arrival_interval) gap after now, whatever the
    time since the last arrival, and so do the gaps after it; the works are log-uniform on [work_low, work_high]."""
    env = played(ranked(n_jobs=40), seed=11, decisions=12)
    inner = env.unwrapped
    core, generator = inner._live_core(), inner.generator
    while core.time == core._arrivals_f[int(core._ints[NEXT_ARRIVAL]) - 1, A_TIME]:  # at a completion, not an arrival
        env.step(0)
    arrived, now = int(core._ints[NEXT_ARRIVAL]), core.time
    assert now > core._arrivals_f[arrived - 1, A_TIME] and arrived < 40
    rng = np.random.default_rng(0)
    first, later, log_work = [], [], []
    for _ in range(3000):
        future = core.future_arrivals(generator, rng)[0][arrived:]
        first.append(future[0, A_TIME] - now)
        later.extend(np.diff(future[:, A_TIME]))
        log_work.extend(np.log(future[:, A_L]))
    interval = generator.arrival_interval
    assert np.mean(first) == pytest.approx(interval, rel=0.06)  # 3000 gaps: standard error 1.8%
    assert np.std(first) == pytest.approx(interval, rel=0.08)  # exponential: sd = mean
    assert np.mean(later) == pytest.approx(interval, rel=0.02)
    low, high = math.log(generator.work_low), math.log(generator.work_high)
    assert np.mean(log_work) == pytest.approx((low + high) / 2, rel=0.01)
    assert np.var(log_work) == pytest.approx((high - low) ** 2 / 12, rel=0.03)


def test_the_returns_over_futures_never_read_the_episodes_own_future() -> None:
    """Two envs in the same state whose drawn futures differ give the same returns over redrawn futures (and
    different clairvoyant ones)."""
    env = played(ranked(), seed=4, decisions=30)
    other = copy.deepcopy(env)
    core, other_core = env.unwrapped._live_core(), other.unwrapped._live_core()
    arrived = int(core._ints[NEXT_ARRIVAL])
    replaced = other_core.future_arrivals(env.unwrapped.generator, np.random.default_rng(99))
    other_core._arrivals_f[arrived:] = replaced[0][arrived:]
    allowed = np.flatnonzero(env.unwrapped.action_masks()).tolist()
    assert len(allowed) > 2
    redrawn = env.unwrapped.paper_policy_returns(allowed, futures=3, seed=1)
    np.testing.assert_array_equal(other.unwrapped.paper_policy_returns(allowed, futures=3, seed=1), redrawn)
    clairvoyant = env.unwrapped.paper_policy_returns(allowed)
    assert not np.array_equal(other.unwrapped.paper_policy_returns(allowed), clairvoyant)


def test_every_action_meets_the_same_futures_and_the_env_is_unchanged() -> None:
    env = played(ranked(), seed=2, decisions=20)
    inner = env.unwrapped
    allowed = np.flatnonzero(inner.action_masks()).tolist()
    observation, mask = inner._observation(), inner.action_masks()
    together = inner.paper_policy_returns(allowed, futures=4, seed=7)
    apart = [inner.paper_policy_returns([action], futures=4, seed=7)[0] for action in allowed]
    np.testing.assert_array_equal(together, apart)  # common random numbers: the futures do not depend on the actions
    assert not np.array_equal(together, inner.paper_policy_returns(allowed, futures=4, seed=8))
    np.testing.assert_array_equal(inner._observation(), observation)
    np.testing.assert_array_equal(inner.action_masks(), mask)
    clairvoyant = inner.paper_policy_returns(allowed)
    np.testing.assert_array_equal(clairvoyant, [inner.paper_policy_return(action) for action in allowed])


def test_once_every_job_has_arrived_the_futures_are_the_episodes_own() -> None:
    env = ranked(n_jobs=30)
    env.reset(seed=6)
    inner = env.unwrapped
    while int(inner._live_core()._ints[NEXT_ARRIVAL]) < 30 or np.flatnonzero(inner.action_masks()).size < 2:
        _, _, terminated, _, _ = env.step(0)
        assert not terminated
    allowed = np.flatnonzero(inner.action_masks()).tolist()
    redrawn = inner.paper_policy_returns(allowed, futures=3, seed=0)
    np.testing.assert_allclose(redrawn, inner.paper_policy_returns(allowed), rtol=1e-14)


def test_returns_over_futures_refuse_bad_settings_by_name() -> None:
    env = played(ranked(), seed=0, decisions=1)
    with pytest.raises(ValueError, match=r"futures=-1"):
        env.unwrapped.paper_policy_returns([0], futures=-1)
    jobs = [{"submit": float(t), "L": 50.0, "A": 4.0, "sigma": 1.0} for t in range(6)]
    explicit = gym.make(ENV, action_mode="ranked", jobs=jobs)
    explicit.reset(seed=0)
    with pytest.raises(ValueError, match=r"futures=2 is not allowed with explicit jobs or a trace"):
        explicit.unwrapped.paper_policy_returns([0], futures=2)
    assert explicit.unwrapped.paper_policy_returns([0])[0] < 0  # the clairvoyant return needs no generator
