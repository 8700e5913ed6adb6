"""Masked select actions: the fallback rule, the penalty, terminal masks and unmasked RL libraries."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import schedenv  # noqa: F401 - registers the env ids

ENV_ID = "schedenv/MultiserverJob-v0"
HAND_JOBS = [(4, 1.0), (8, 2.0), (4, 0.5)]
"""Window in SRPT order: slot 0 = C (need 4, d 0.5), slot 1 = A (4, 1.0), slot 2 = B (8, 2.0)."""
MODES = ["fallback", "penalty", "raise"]


def random_episode(env: gym.Env, seed: int) -> tuple[float, float, int, dict]:
    """Uniform actions from the space until the end: return, total response time, invalid steps, last info."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    total, response, invalid = 0.0, 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        total += reward
        response += sum(r.completion - r.arrival for r in info["completed"])
        invalid += info["invalid_action"]
        if terminated or truncated:
            return total, response, invalid, info


@pytest.mark.parametrize("invalid_action", ["fallback", "penalty"])
def test_hand_worked_fallback_selects_slot_zero_then_commits(invalid_action: str) -> None:
    env = gym.make(ENV_ID, jobs=HAND_JOBS, action_mode="select", max_jobs=8, invalid_action=invalid_action,
                   invalid_action_penalty=2.5)  # fmt: skip
    _, info = env.reset(seed=0)
    assert info["invalid_action"] is False and info["action_mask"].tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 0]
    charge = 2.5 if invalid_action == "penalty" else 0.0
    # Commit is masked with nothing selected: the fallback selects slot 0 (C).
    observation, reward, _, _, info = env.step(8)
    assert info["invalid_action"] is True and reward == -charge
    assert observation[5] == 1.0 and info["action_mask"].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 1]
    # B (slot 2) no longer fits: the fallback commits {C}, which runs alone (4 servers) until 0.5.
    _, reward, _, _, info = env.step(2)
    assert info["invalid_action"] is True and info["busy_servers"] == 4 and info["time"] == 0.5
    assert reward == -3 * 0.5 - charge
    # A valid action is not flagged and is not charged: A (slot 0 now) runs alone for 1.
    _, reward, _, _, info = env.step(0)
    assert info["invalid_action"] is False and info["busy_servers"] == 4 and reward == -2.0


def test_priority_mode_accepts_every_element_of_its_space() -> None:
    env = gym.make(ENV_ID, n_arrivals=40, invalid_action="raise")
    env.reset(seed=1)
    env.action_space.seed(1)
    extremes = [np.full(16, -1.0), np.full(16, 1.0), np.full(16, -0.0), np.zeros(16)]
    completed = []
    for action in [a.astype(np.float32) for a in extremes] + [env.action_space.sample() for _ in range(400)]:
        assert env.action_space.contains(action)
        _, reward, terminated, _, info = env.step(action)
        assert info["invalid_action"] is False and reward <= 0.0 and info["busy_servers"] > 0
        completed.extend(info["completed"])
        if terminated:
            break
    assert terminated and sorted(r.job_id for r in completed) == list(range(40))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_return_is_minus_the_objective_under_fallback_and_minus_objective_plus_penalties(seed: int) -> None:
    fallback = gym.make(ENV_ID, action_mode="select", n_arrivals=60, max_jobs=8)
    total, response, invalid, info = random_episode(fallback, seed)
    assert invalid > 20  # uniform actions hit masked slots often
    assert total == pytest.approx(-response, rel=1e-12)
    assert info["episode_metrics"]["total_flow_time"] == pytest.approx(response, rel=1e-12)
    penalised = gym.make(ENV_ID, action_mode="select", n_arrivals=60, max_jobs=8, invalid_action="penalty",
                         invalid_action_penalty=0.25)  # fmt: skip
    total_p, response_p, invalid_p, _ = random_episode(penalised, seed)
    assert (response_p, invalid_p) == (response, invalid)  # the same trajectory: only rewards change
    assert total_p == pytest.approx(-(response + 0.25 * invalid), rel=1e-12)


@pytest.mark.parametrize("invalid_action", MODES)
def test_masks_are_all_ones_after_the_last_step(invalid_action: str) -> None:
    env = gym.make(ENV_ID, action_mode="select", n_arrivals=20, invalid_action=invalid_action)
    env.reset(seed=3)
    while True:
        mask = env.unwrapped.action_masks()
        _, _, terminated, _, info = env.step(int(np.flatnonzero(mask)[-1]))  # commit once anything is selected
        if terminated:
            break
        assert 0 < info["action_mask"].sum() < info["action_mask"].size
    assert info["action_mask"].dtype == np.int8 and (info["action_mask"] == 1).all()
    assert (env.unwrapped.action_masks() == 1).all()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"invalid_action": "rase"}, "invalid_action='rase' is not allowed.*did you mean 'raise'"),
    ({"invalid_action_penalty": -1.0}, "invalid_action_penalty=-1.0 is not allowed"),
    ({"invalid_action_penalty": float("inf")}, "invalid_action_penalty=inf is not allowed"),
])  # fmt: skip
def test_bad_invalid_action_arguments_name_the_parameter(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(ENV_ID, action_mode="select", **kwargs)


CHECKED = [{}, *({"action_mode": "select", "invalid_action": mode} for mode in MODES)]


@pytest.mark.parametrize("kwargs", CHECKED, ids=["default", *(f"select-{mode}" for mode in MODES)])
def test_gymnasium_and_sb3_check_env(kwargs: dict) -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(ENV_ID, **kwargs).unwrapped
    env.action_space.seed(0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Box observation space maximum value is infinity")
        if kwargs.get("invalid_action") == "raise":
            # Both checkers sample actions without masks: why "raise" is not the default.
            with pytest.raises(ValueError, match="is masked"):
                check_env(env, skip_render_check=True)
            with pytest.raises(ValueError, match="is masked"):
                sb3_check_env(env)
        else:
            check_env(env, skip_render_check=True)
            sb3_check_env(env)


@pytest.mark.parametrize("algorithm", ["PPO", "DQN"])
def test_unmasked_sb3_agents_learn_with_default_invalid_action(algorithm: str) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    steps = 256
    if algorithm == "PPO":
        env = gym.make(ENV_ID, n_arrivals=30)
        model = sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu")
        rewards = lambda: model.rollout_buffer.rewards  # noqa: E731
    else:
        env = gym.make(ENV_ID, n_arrivals=30, action_mode="select")
        model = sb3.DQN("MlpPolicy", env, learning_starts=64, buffer_size=1000, seed=0, device="cpu")
        rewards = lambda: model.replay_buffer.rewards[: model.replay_buffer.size()]  # noqa: E731
    model.learn(steps)
    assert model.num_timesteps == steps
    collected = rewards()
    assert np.isfinite(collected).all() and (collected <= 0.0).all() and (collected < 0.0).any()
    observation, _ = env.reset(seed=0)
    action, _ = model.predict(observation, deterministic=True)
    assert env.action_space.contains(action if algorithm == "PPO" else int(action))
