"""``allocation="fractions"``: an action may leave servers idle (heSRPT Lemma 1); the default stays work-conserving."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401

ENV_ID = "schedenv/Malleable-v0"


def action(*weights: float, width: int = 17) -> np.ndarray:
    out = np.zeros(width, np.float32)
    out[: len(weights)] = weights
    return out


def test_fractions_keep_idle_servers_idle_hand_worked() -> None:
    # N = 4, s(k) = sqrt(k): a quarter of the servers is one server, rate 1. Jobs 1 and 2 each on one
    # server finish at t = 1 and t = 2, whatever the other servers do (they idle).
    env = gym.make(ENV_ID, jobs=[1.0, 2.0], n_servers=4.0, speedup=0.5, objective="flow_time", allocation="fractions")
    env.reset(seed=0)
    np.testing.assert_allclose(env.unwrapped.allocation_from_action(action(0.25, 0.25)), [0.25, 0.25])
    _, reward, _, _, info = env.step(action(0.25, 0.25))
    assert info["time"] == 1.0 and reward == -2.0 and [r.job_id for r in info["completed"]] == [0]
    _, reward, terminated, _, info = env.step(action(0.25))
    assert terminated and info["time"] == 2.0 and reward == -1.0
    assert info["episode_metrics"]["total_flow_time"] == 3.0
    assert env.unwrapped.state.work_done == 3.0


def test_the_same_action_is_scaled_up_in_the_default_mode() -> None:
    env = gym.make(ENV_ID, jobs=[1.0, 2.0], n_servers=4.0, speedup=0.5, objective="flow_time")
    env.reset(seed=0)
    np.testing.assert_allclose(env.unwrapped.allocation_from_action(action(0.25, 0.25)), [0.5, 0.5])
    _, _, _, _, info = env.step(action(0.25, 0.25))
    assert info["time"] == pytest.approx(1.0 / np.sqrt(2.0))  # two servers each: rate sqrt(2)


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ((0.2, 0.3, 0.1), [0.2, 0.3, 0.1]),  # sum <= 1: as is
        ((0.6, 0.6, 0.3), [0.4, 0.4, 0.2]),  # sum > 1: normalised
        ((0.0, 0.0, 0.0), [1 / 3, 1 / 3, 1 / 3]),  # all zero: EQUI, as in the default mode
        ((1.0, 0.0, 0.0), [1.0, 0.0, 0.0]),
    ],
)
def test_fractions_rule(weights: tuple[float, ...], expected: list[float]) -> None:
    env = gym.make(ENV_ID, jobs=[1.0, 2.0, 3.0], allocation="fractions")
    env.reset(seed=0)
    np.testing.assert_allclose(env.unwrapped.allocation_from_action(action(*weights)), expected, rtol=1e-7)


def test_action_from_allocation_keeps_the_idle_share_in_fractions_mode() -> None:
    # Five jobs, window of two: the three outside share the group weight equally.
    env = gym.make(ENV_ID, jobs=[5.0, 1.0, 4.0, 2.0, 3.0], max_jobs=2, allocation="fractions")
    env.reset(seed=0)
    inner = env.unwrapped
    theta = np.array([0.05, 0.2, 0.05, 0.1, 0.05])  # 55% busy
    encoded = inner.action_from_allocation(theta)
    np.testing.assert_allclose(encoded[:2], [0.2, 0.1], rtol=1e-7)  # slots: the jobs of size 1 and 2
    assert encoded[-1] == pytest.approx(0.15, rel=1e-7)
    np.testing.assert_allclose(inner.allocation_from_action(encoded), theta, rtol=1e-6)
    over = inner.action_from_allocation(theta * 4)  # more than every server: scaled to a full allocation
    np.testing.assert_allclose(inner.allocation_from_action(over), theta / theta.sum(), rtol=1e-6)
