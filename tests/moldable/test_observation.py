"""The observation's release profile (what EASY backfilling reads), its layout and the scenario parameters."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from baselines.moldable import POLICIES, ProcessorProfile
from schedenv.moldable import CirneWorkload, MoldableEnv

ENV_ID = "schedenv/Moldable-v0"
K = 4
RELEASE = 8 * K + 7
"""Index of the release profile with max_jobs = K."""
LOAD_INTERVAL = {"middle": 1000.0 * 32 / 128, "heavy": 600.0 * 32 / 128}
"""The paper's middle and heavy loads scaled to 32 processors (the same work load)."""
# m = 5, all submitted at t = 0: A, B, C start on 1, 2, 1 processors; D needs all 5, E fits on the last one
JOBS = [
    {"runtimes": {1: 10}},
    {"runtimes": {2: 4}},
    {"runtimes": {1: 4}},
    {"runtimes": {5: 1}},
    {"runtimes": {1: 3}},
]


def test_release_profile_hand_worked() -> None:
    env = MoldableEnv(jobs=JOBS, n_procs=5, max_jobs=K)
    env.reset(seed=0)
    for slot, procs in [(0, 1), (0, 2), (0, 1)]:  # the queue shifts: A, then B, then C sit in slot 0
        obs, *_ = env.step(env.encode(slot, procs))
    scale = (10 + 8 + 4 + 5 + 3) / 5  # mean size n_min T(n_min)
    assert env.time_scale == scale and env.state.time == 0.0 and env.state.free == 1
    # by end time, ties (B, C at 4) in start order: B (4 s, 2 procs), C (4 s, 1), A (10 s, 1), then padding
    expected = [math.log1p(4 / scale), 2 / 5, math.log1p(4 / scale), 1 / 5, math.log1p(10 / scale), 1 / 5]
    np.testing.assert_allclose(obs[RELEASE : RELEASE + 6], expected, rtol=1e-6)
    assert not obs[RELEASE + 6 :].any() and obs.size == RELEASE + 2 * 16
    # EASY for the head D (5 processors): free 1 + B 2 + C 1 < 5, + A 1 = 5, so its shadow time is 10
    short = MoldableEnv(jobs=JOBS, n_procs=5, max_jobs=K, max_running=2)
    short.reset(seed=0)
    for slot, procs in [(0, 1), (0, 2), (0, 1)]:
        cut, *_ = short.step(short.encode(slot, procs))
    np.testing.assert_array_equal(cut[: RELEASE + 4], obs[: RELEASE + 4])
    assert cut.size == RELEASE + 4


def shadow_from_observation(obs: np.ndarray, release: int, m: int, scale: float, count: int) -> float:
    """EASY's shadow time (from now) for a head of ``count`` processors, from the observation only."""
    free = round(float(obs[release - 7]) * m)
    for remaining, procs in obs[release:].reshape(-1, 2).astype(np.float64):
        if free >= count:
            break
        free += round(procs * m)
        shadow = math.expm1(remaining) * scale
    return 0.0 if count <= round(float(obs[release - 7]) * m) else shadow


@pytest.mark.parametrize("interval", ["middle", "heavy"])
def test_observation_gives_easys_shadow_time_at_every_epoch(interval: str) -> None:
    """With the whole release profile (max_running = m), the shadow time of every head count computed
    from the observation equals ``ProcessorProfile.earliest_starts`` of the HRF-EASY baseline."""
    m, max_jobs = 32, 8
    env = MoldableEnv(n_procs=m, n_jobs=60, arrival_interval=LOAD_INTERVAL[interval], max_jobs=max_jobs, max_running=m)
    policy = POLICIES["hrf-easy"]()
    obs, _ = env.reset(seed=1)
    policy.reset(env)
    release, checked, done = 8 * max_jobs + 7, 0, False
    counts = np.arange(1, m + 1)
    while not done:
        view = env.state
        profile = ProcessorProfile(view.time, view.free, view.running_end, view.running_procs)
        expected = profile.earliest_starts(counts) - view.time
        got = [shadow_from_observation(obs, release, m, env.time_scale, int(c)) for c in counts]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-3)
        checked += view.running_job.size > 0
        obs, _, done, _, _ = env.step(policy.act(obs, env))
    assert checked > 50


def test_layout_attributes_describe_the_slots() -> None:
    pytest.importorskip("torch", reason="agents.extractors needs the rl extra")
    from agents.extractors import SlotLayout, slot_layout

    env = gym.make(ENV_ID, observe_params=True)
    inner = env.unwrapped
    assert (inner.slot_features, inner.slots_start, inner.max_jobs, inner.max_running) == (8, 0, 32, 16)
    assert env.observation_space.shape == (8 * 32 + 7 + 2 * 16 + 4,)
    assert slot_layout(env) == SlotLayout(0, 32, 8)
    high = env.observation_space.high
    assert high[8 * 32 + 7 + 1 : 8 * 32 + 7 + 32 : 2].tolist() == [1.0] * 16
    assert np.isinf(high[8 * 32 + 7 : 8 * 32 + 7 + 32 : 2]).all()
    assert high[-4:].tolist() == [np.inf, 1.0, 1.0, np.inf]


def test_scenario_parameters() -> None:
    plain, params = gym.make(ENV_ID), gym.make(ENV_ID, observe_params=True)
    a, _ = plain.reset(seed=3)
    b, _ = params.reset(seed=3)
    rho = CirneWorkload().work_load(128)
    expected = [0.7, rho / (1 + rho), 0.5, 0.4]
    np.testing.assert_allclose(b[-4:], expected, rtol=1e-6)
    np.testing.assert_array_equal(b[:-4], a)
    assert 0.45 < expected[1] < 0.47  # rho = 0.85 at the paper's middle load
    heavy = MoldableEnv(arrival_interval="heavy", n_procs=64, observe_params=True).scenario_params
    np.testing.assert_allclose(heavy[:2], [0.6, 2 * rho / 0.6 / (1 + 2 * rho / 0.6)], rtol=1e-6)
    table = MoldableEnv(jobs=[{"runtimes": {1: 10, 2: 5}}, {"runtimes": {2: 40}}], n_procs=2, observe_params=True)
    np.testing.assert_allclose(table.scenario_params, [0.1, 1.0, 0.0, math.log10(80 / 10) / 10], rtol=1e-6)
    spread = [{"submit": 0.0, "L": 100.0, "A": 2.0, "sigma": 1.0}, {"submit": 50.0, "L": 300.0, "A": 2.0, "sigma": 3.0}]
    rho_jobs = 200.0 / (4 * 50.0)
    np.testing.assert_allclose(
        MoldableEnv(jobs=spread, n_procs=4).scenario_params, [0.2, rho_jobs / (1 + rho_jobs), 2 / 3, math.log10(3) / 10]
    )
    for _ in range(30):
        obs, _, done, _, _ = params.step(params.action_space.sample())
        assert params.observation_space.contains(obs)
        if done:
            break
