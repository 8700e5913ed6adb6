"""The multiserver-job env: hand-worked epochs, both action modes, bad input, invariants."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import baselines
import schedenv  # noqa: F401 - registers the env ids
from schedenv.fastpath.multiserver import run_fast
from schedenv.workloads import Choice, Exponential

ENV_ID = "schedenv/MultiserverJob-v0"
HAND_JOBS = [(4, 1.0), (8, 2.0), (4, 0.5)]
"""Sizes 0.5, 2 and 0.25 on k = 8 (s = k_j d_j / k)."""


def play(env: gym.Env, policy_name: str, seed: int = 0) -> tuple[float, list, dict, list[dict]]:
    policy = baselines.make(policy_name)
    observation, info = env.reset(seed=seed)
    policy.reset(env)
    total, records, infos = 0.0, [], []
    while True:
        observation, reward, terminated, _, info = env.step(policy.act(observation, env))
        total += reward
        records.extend(info["completed"])
        infos.append(info)
        if terminated:
            return total, records, info["episode_metrics"], infos


@pytest.mark.parametrize("mode", ["priority", "select"])
def test_hand_worked_serverfilling_srpt(mode: str) -> None:
    # t = 0: SRPT order C(0.25), A(0.5), B(2); M = {C, A} needs 8, both run. C ends at 0.5.
    # t = 0.5: M = {A, B} needs 12; by need B (8) goes first and A no longer fits: B runs 2,
    # ending at 2.5; then A's remaining 0.5 ends at 3. Total response time 0.5 + 2.5 + 3 = 6.
    env = gym.make(ENV_ID, jobs=HAND_JOBS, action_mode=mode)
    total, records, metrics, infos = play(env, "serverfilling-srpt")
    assert {r.job_id: r.completion for r in records} == pytest.approx({2: 0.5, 1: 2.5, 0: 3.0})
    assert total == pytest.approx(-6.0)
    assert metrics["mean_response_time"] == pytest.approx(2.0)
    assert [i["busy_servers"] for i in infos if "busy_servers" in i] == [8, 8, 4]
    assert metrics["utilisation"] == pytest.approx((8 * 0.5 + 8 * 2 + 4 * 0.5) / (8 * 3.0))


def test_hand_worked_greedy_srpt_differs() -> None:
    # At t = 0.5 GreedySRPT serves A (need 4) and stops at B: A ends at 1, B at 3. Total 4.5.
    total, records, _, _ = play(gym.make(ENV_ID, jobs=HAND_JOBS), "greedy-srpt")
    assert {r.job_id: r.completion for r in records} == pytest.approx({2: 0.5, 0: 1.0, 1: 3.0})
    assert total == pytest.approx(-4.5)


def test_select_mode_masks_and_auto_commit() -> None:
    env = gym.make(ENV_ID, jobs=HAND_JOBS, action_mode="select", max_jobs=4)
    _, info = env.reset(seed=0)
    # Window in SRPT order: C (need 4), A (4), B (8); commit is masked until something is selected.
    assert info["action_mask"].tolist() == [1, 1, 1, 0, 0]
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"])
    _, reward, _, _, info = env.step(0)
    assert reward == 0.0 and info["time"] == 0.0 and "busy_servers" not in info
    assert info["action_mask"].tolist() == [0, 1, 0, 0, 1]  # B no longer fits; commit allowed
    _, reward, _, _, info = env.step(1)  # A fills the servers: the env commits by itself
    assert info["busy_servers"] == 8 and info["time"] == pytest.approx(0.5)
    assert reward == pytest.approx(-3 * 0.5)


def test_priority_scores_hold_jobs_back_and_order_them() -> None:
    env = gym.make(ENV_ID, jobs=HAND_JOBS, packing="greedy", max_jobs=3)
    env.reset(seed=0)
    # Only slot 2 (B, need 8) is eligible: it runs alone until C... no: until B completes at 2.
    _, reward, _, _, info = env.step(np.array([-1.0, -0.5, 0.0], dtype=np.float32))
    assert info["busy_servers"] == 8 and info["time"] == pytest.approx(2.0) and reward == pytest.approx(-6.0)
    # All scores negative: every slot is eligible (documented fallback).
    _, _, _, _, info = env.step(np.array([-1.0, -1.0, -1.0], dtype=np.float32))
    assert info["busy_servers"] == 8


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"server_needs": (1, 2, 16)}, "server need 16"),
        ({"server_needs": (1, 2.5)}, "must be an integer"),
        ({"size_dist": Exponential(1.0), "duration_dist": Exponential(1.0)}, "exactly one"),
        ({"action_mode": "selct"}, "did you mean 'select'"),
        ({"packing": "first_fit"}, "did you mean 'firstfit'"),
        ({"jobs": [(9, 1.0)]}, "server need 9;"),
        ({"jobs": [(1, -1.0)]}, "duration"),
        ({"n_servers": 0}, "n_servers=0"),
        ({"load": -0.5}, "load=-0.5"),
        ({"size_known": "yes"}, "size_known"),
    ],
)
def test_bad_construction_names_the_parameter(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(ENV_ID, **kwargs)


def test_unwise_window_warns() -> None:
    with pytest.warns(UserWarning, match="max_jobs=4 < n_servers=8"):
        gym.make(ENV_ID, max_jobs=4)


@pytest.mark.parametrize("invalid_action", ["fallback", "penalty", "raise"])
@pytest.mark.parametrize(
    ("mode", "action", "message"),
    [
        ("priority", np.full(16, np.nan, dtype=np.float32), "NaN"),
        ("priority", np.zeros(5, dtype=np.float32), "shape"),
        ("priority", np.full(16, 2.0, dtype=np.float32), r"\[-1, 1\]"),
        ("select", 17, "out of range"),
        ("select", -1, "out of range"),
        ("select", 1.5, "integer"),
        ("select", np.array([1, 2]), "one integer"),
    ],
)
def test_actions_outside_the_space_raise_in_every_mode(
    invalid_action: str, mode: str, action: object, message: str
) -> None:
    env = gym.make(ENV_ID, action_mode=mode, invalid_action=invalid_action)
    env.reset(seed=0)
    before = env.unwrapped.state
    with pytest.raises(ValueError, match=message):
        env.step(action)
    assert env.unwrapped.state is before


@pytest.mark.parametrize(
    ("action", "message"), [(16, "commit needs at least one selected job"), (15, "the slot is empty")]
)
def test_masked_actions_raise_in_raise_mode_and_leave_the_state_unchanged(action: int, message: str) -> None:
    env = gym.make(ENV_ID, action_mode="select", invalid_action="raise")
    twin = gym.make(ENV_ID, action_mode="select", invalid_action="raise")
    _, info = env.reset(seed=0)
    twin.reset(seed=0)
    before = env.unwrapped.state
    with pytest.raises(ValueError, match=f"action={action} is masked: {message}"):
        env.step(action)
    assert env.unwrapped.state is before
    assert not env.unwrapped.selected.any()
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"])
    for first, second in zip(env.step(0)[:3], twin.step(0)[:3], strict=True):
        np.testing.assert_array_equal(first, second)


def test_return_is_minus_total_response_time_and_metrics_agree() -> None:
    total, records, metrics, _ = play(gym.make(ENV_ID, n_arrivals=300, load=0.8), "serverfilling-srpt", seed=3)
    response = sum(r.completion - r.arrival for r in records)
    assert len(records) == 300 and {r.job_id for r in records} == set(range(300))
    assert -total == pytest.approx(response, rel=1e-9)
    assert metrics["total_flow_time"] == pytest.approx(response, rel=1e-9)
    # Little's law on the episode: time-average number = total flow time / span.
    assert metrics["mean_number_in_system"] * (metrics["makespan"] - min(r.arrival for r in records)) == (
        pytest.approx(response, rel=1e-9)
    )
    assert all(r.slowdown >= 1.0 - 1e-9 and r.size == pytest.approx(r.server_need * r.duration / 8) for r in records)


def test_same_seed_same_workload_for_every_contender() -> None:
    env = gym.make(ENV_ID, n_arrivals=200)
    _, first, _, _ = play(env, "serverfilling-srpt", seed=11)
    _, second, _, _ = play(env, "fcfs", seed=11)
    key = {r.job_id: (r.arrival, r.size, r.server_need) for r in first}
    assert key == {r.job_id: (r.arrival, r.size, r.server_need) for r in second}


@pytest.mark.parametrize("policy", ["serverfilling-srpt", "maxweight", "divisorfilling-gittins", "firstfit-srpt"])
def test_fast_path_gives_the_same_completions_as_the_gym_loop(policy: str) -> None:
    env = gym.make(ENV_ID, n_arrivals=300, load=0.75, max_jobs=64, size_known=policy != "divisorfilling-gittins")
    _, records, metrics, _ = play(env, policy, seed=5)
    assert metrics["overflow_fraction"] == 0.0
    gym_loop = {r.job_id: r.completion for r in records}
    for compiled in (True, False):
        fast = run_fast(env, baselines.make(policy), seed=5, compiled=compiled)
        assert {r.job_id: r.completion for r in fast.records()} == gym_loop
        assert fast.metrics["mean_response_time"] == pytest.approx(metrics["mean_response_time"], rel=1e-12)
        assert fast.total_flow_time == metrics["total_flow_time"]


def test_duration_law_gives_sizes_growing_with_need() -> None:
    env = gym.make(ENV_ID, duration_dist=Exponential(2.0), server_needs=Choice([1, 8], [0.5, 0.5]))
    env.reset(seed=0)
    params = env.unwrapped.params
    np.testing.assert_allclose(params.sizes, params.server_needs * params.durations / 8)
    assert env.unwrapped.workload.mean_size == pytest.approx(4.5 * 2.0 / 8)
    assert env.unwrapped.size_distribution(8).mean == pytest.approx(2.0)


def test_hidden_sizes_are_not_observed() -> None:
    env = gym.make(ENV_ID, size_known=False, n_arrivals=50)
    observation, _ = env.reset(seed=0)
    assert (observation[2 : 7 * 16 : 7] == 0.0).all()
    with pytest.raises(ValueError, match="size_known=True"):
        baselines.make("serverfilling-srpt").reset(env)


def test_policies_refuse_settings_they_are_not_defined_for() -> None:
    env = gym.make(ENV_ID, server_needs=(1, 3, 6), n_servers=6)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="power-of-two setting"):
        baselines.make("serverfilling-srpt").reset(env)
    baselines.make("divisorfilling-srpt").reset(env)  # needs divide 6: fine
    env = gym.make(ENV_ID, server_needs=(1, 3), n_servers=8)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="divisible setting"):
        baselines.make("divisorfilling-srpt").reset(env)


def test_pickle_round_trip_mid_epoch_in_select_mode() -> None:
    env = gym.make(ENV_ID, action_mode="select")
    env.reset(seed=2)
    policy = baselines.make("serverfilling-srpt")
    policy.reset(env)
    observation = None
    for _ in range(7):
        observation, *_ = env.step(policy.act(observation, env))
    clone = pickle.loads(pickle.dumps(env.unwrapped))
    action = policy.act(observation, env)
    np.testing.assert_array_equal(env.step(action)[0], clone.step(action)[0])


@st.composite
def job_sets(draw: st.DrawFn) -> list[tuple[float, int, float]]:
    n = draw(st.integers(1, 12))
    arrivals = sorted(draw(st.lists(st.floats(0.0, 5.0), min_size=n, max_size=n)))
    needs = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=n, max_size=n))
    durations = draw(st.lists(st.floats(0.01, 3.0), min_size=n, max_size=n))
    return list(zip(arrivals, needs, durations, strict=True))


@given(
    job_sets(),
    st.lists(st.floats(-1.0, 1.0), min_size=8, max_size=8),
    st.sampled_from(["serverfilling", "firstfit", "greedy"]),
)
@settings(max_examples=60, deadline=None)
def test_invariants_under_arbitrary_priorities(jobs: list, scores: list[float], packing: str) -> None:
    env = gym.make(ENV_ID, jobs=jobs, packing=packing, max_jobs=8)
    env.reset(seed=0)
    inner = env.unwrapped
    action = np.array(scores, dtype=np.float32)
    total, records, rng = 0.0, [], np.random.default_rng(0)
    for _ in range(200):
        state = inner.state
        arrived = state.next_arrival
        assert arrived == state.n_completed + state.n_jobs  # no job lost
        _, reward, terminated, _, info = env.step(action)
        assert 0 <= info["busy_servers"] <= 8
        total += reward
        records.extend(info["completed"])
        action = rng.permutation(action)
        if terminated:
            break
    assert terminated and len(records) == len(jobs)
    # Work conservation: server-time used / k equals the sizes of the completed jobs.
    assert inner.state.busy_server_time / 8 == pytest.approx(sum(r.size for r in records), rel=1e-9, abs=1e-12)
    assert -total == pytest.approx(sum(r.completion - r.arrival for r in records), rel=1e-9, abs=1e-12)
    assert all(r.completion >= r.arrival + r.duration - 1e-9 for r in records)
