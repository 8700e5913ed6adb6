"""The Gymnasium adapter schedenv/Moldable-v0: API, invariants, masks, errors, determinism."""

from __future__ import annotations

import pickle
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from baselines.moldable import POLICIES
from schedenv.evaluation import evaluate
from schedenv.moldable import MoldableEnv, decode_action, encode_action
from schedenv.traces import parse_swf

ENV_ID = "schedenv/Moldable-v0"
TABLE1 = [{"runtimes": {1: 10, 2: 5}}, {"runtimes": {1: 10, 2: 7}}, {"runtimes": {1: 10, 2: 9}}]
TABLE1_MASKED_START, TABLE1_WAIT = 2, 9
"""Slot 0 on 3 processors (not in its table) and wait (nothing runs, nothing to arrive) at t = 0."""


def small_env(**kwargs: object) -> MoldableEnv:
    return MoldableEnv(**{"n_procs": 16, "n_jobs": 30, "arrival_interval": 200.0, "max_jobs": 8, **kwargs})


def test_registered_defaults_with_masked_random_actions() -> None:
    env = gym.make(ENV_ID)
    assert env.action_space.n == 32 * 128 + 1
    assert env.observation_space.shape == (8 * 32 + 7 + 2 * 16,)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and obs.dtype == np.float32
    for _ in range(200):
        action = env.action_space.sample(mask=info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs) and reward <= 0.0 and not truncated
        if terminated:
            break


def test_encode_decode_round_trip() -> None:
    assert decode_action(encode_action(3, 7, 16), 16, 8) == (3, 7)
    assert decode_action(8 * 16, 16, 8) is None
    env = small_env()
    env.reset(seed=0)
    assert env.decode(env.encode(2, 16)) == (2, 16)
    with pytest.raises(ValueError, match="procs=17"):
        env.encode(0, 17)


def test_table1_starts_at_the_same_instant_and_masks_what_fits() -> None:
    env = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3)
    _, info = env.reset(seed=0)
    mask = info["action_mask"]
    # 3 slots x 3 counts + wait; counts 3 are not in the tables, nothing runs yet but nothing is still to arrive
    assert mask.tolist() == [1, 1, 0, 1, 1, 0, 1, 1, 0, 0]
    _, reward, terminated, _, info = env.step(env.encode(0, 2))
    assert (info["time"], info["free_procs"], reward, terminated) == (0.0, 1, -0.0, False)
    assert info["action_mask"].tolist() == [1, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    _, reward, _, _, info = env.step(env.encode(1, 1))  # J3 on the last processor, then J1 ends at 5
    assert info["time"] == 5.0 and reward == -15.0 and [r.job_id for r in info["completed"]] == [0]
    _, reward, terminated, _, info = env.step(env.encode(0, 2))
    assert terminated and reward == -12.0
    assert info["episode_metrics"]["ATT"] == pytest.approx(9.0)
    assert info["episode_metrics"]["AWT"] == pytest.approx(5 / 3)
    assert info["episode_metrics"]["ART"] == pytest.approx(22 / 3)
    assert info["episode_metrics"]["utilisation"] == pytest.approx((2 * 5 + 10 + 2 * 7) / (3 * 12))


def test_return_is_minus_total_turnaround_and_jobs_are_conserved() -> None:
    env = small_env()
    policy = POLICIES["hrf-easy"]()
    obs, info = env.reset(seed=3)
    policy.reset(env)
    total, done, seen = 0.0, False, []
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, done, _, info = env.step(policy.act(obs, env))
        total += reward
        seen.extend(info["completed"])
        s = env.unwrapped.state
        arrived = env.n_jobs - s.n_pending
        assert arrived == len(seen) + info["n_jobs"]
        assert s.free == s.n_procs - int(s.running_procs.sum())
        assert s.free >= 0
    turnaround = sum(r.completion - r.arrival for r in seen)
    assert total == pytest.approx(-turnaround, rel=1e-9)
    assert sorted(r.job_id for r in seen) == list(range(env.n_jobs))
    assert all(
        r.completion - r.start == pytest.approx(env.job_set.runtime_rows([r.job_id])[0, r.procs - 1]) for r in seen
    )
    assert info["episode_metrics"]["mean_response_time"] == pytest.approx(turnaround / env.n_jobs)


def _trajectory(env: MoldableEnv, seed: int) -> list[tuple]:
    obs, info = env.reset(seed=seed)
    out, done = [], False
    while not done:
        mask = info["action_mask"]
        action = int(np.flatnonzero(mask)[len(np.flatnonzero(mask)) // 2])
        obs, reward, done, _, info = env.step(action)
        out.append((action, reward, info["time"], obs.tobytes()))
    return out


def test_same_seed_same_trajectory_and_common_workload() -> None:
    assert _trajectory(small_env(), 7) == _trajectory(small_env(), 7)
    a = evaluate(ENV_ID, "hrf-fcfs", [5], n_procs=16, n_jobs=20, arrival_interval=300.0)
    b = evaluate(ENV_ID, "sbmgrdy-easy", [5], n_procs=16, n_jobs=20, arrival_interval=300.0)
    assert sorted((r.job_id, r.arrival, r.size) for r in a.episodes[0].records) == sorted(
        (r.job_id, r.arrival, r.size) for r in b.episodes[0].records
    )


def test_bad_actions_raise_and_leave_the_state_unchanged() -> None:
    # masked actions raise only with invalid_action="raise"; values outside the space raise in every mode
    for mode, bad in [
        ("raise", (TABLE1_MASKED_START, TABLE1_WAIT, 99, -1, 1.5, np.array([0, 1]), np.nan, "0")),
        ("fallback", (99, -1, 1.5, np.array([0, 1]), np.nan, np.array(0.0), "0")),
        ("penalty", (10, -3, 2.0, np.array([1, 2]), None)),
    ]:
        env = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3, invalid_action=mode)
        obs, info = env.reset(seed=0)
        before = (env.state.time, env.state.free, env.state.queue_job.tolist(), len(env.records))
        for action in bad:
            with pytest.raises(ValueError):
                env.step(action)
        assert (env.state.time, env.state.free, env.state.queue_job.tolist(), len(env.records)) == before
        np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
        np.testing.assert_array_equal(env.unwrapped._observation(), obs)


def test_state_view_is_read_only() -> None:
    env = small_env()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.state.queue_runtime[0, 0] = 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_procs": 0}, "n_procs=0"),
        ({"arrival_interval": "midle"}, "did you mean 'middle'"),
        ({"arrival_interval": -5.0}, "arrival_interval"),
        ({"workload": "downey"}, "workload='downey'"),
        ({"jobs": TABLE1, "n_jobs": 3}, "n_jobs=3"),
        ({"jobs": TABLE1, "n_procs": 1}, "above n_procs=1"),
        ({"jobs": [{"runtimes": {1: 5, 2: 9}}], "n_procs": 2}, "must not increase"),
        ({"max_jobs": 0}, "max_jobs=0"),
        ({"render_mode": "window"}, "render_mode=.window. is not allowed"),
        ({"max_running": -1}, "max_running=-1"),
        ({"action_mode": "joint"}, "action_mode='joint'"),
        ({"invalid_action": "ignore"}, "invalid_action='ignore'"),
        ({"invalid_action_penalty": -1.0}, "invalid_action_penalty=-1.0"),
        ({"invalid_action_penalty": float("inf")}, "invalid_action_penalty=inf"),
        ({"observe_params": 1}, "observe_params=1"),
    ],
)
def test_bad_construction_names_the_argument(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MoldableEnv(**kwargs)


def test_pickle_and_render() -> None:
    env = small_env(render_mode="ansi")
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.state.time == env.state.time and clone.render() == env.render()
    assert "free =" in env.render()
    picture = small_env(render_mode="rgb_array")
    picture.reset(seed=1)
    picture.step(picture.wait_action if picture.action_masks()[-1] else 0)
    image = picture.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3


def test_trace_replay_rigid_reproduces_recorded_runtimes(tmp_path: Path) -> None:
    text = "; MaxProcs: 8\n" + "".join(
        f"{j + 1} {10 * j} 0 {50 + 7 * j} {p} -1 -1 {p} -1 -1 1 1 1 -1 1 -1 -1 -1\n"
        for j, p in enumerate([4, 2, 8, 1, 3])
    )
    path = tmp_path / "small.swf"
    path.write_text(text)
    result = evaluate(ENV_ID, "rigid-fcfs", [0], trace=str(path))
    records = sorted(result.episodes[0].records, key=lambda r: r.job_id)
    assert [r.procs for r in records] == [4, 2, 8, 1, 3]
    assert [r.completion - r.start for r in records] == pytest.approx([50 + 7 * j for j in range(5)])
    assert [r.arrival for r in records] == [0, 10, 20, 30, 40]
    with pytest.raises(ValueError, match="above n_procs=4"):
        MoldableEnv(trace=parse_swf(text), n_procs=4)
