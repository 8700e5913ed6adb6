"""Masked actions (``invalid_action``): the fallback rule, penalties, the returns, and off-the-shelf
agents on the default env (docs/envs/index.md, "Masks and invalid_action": every element of the
action space is a legal argument)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the env ids
from schedenv.moldable import MoldableEnv
from schedenv.moldable.kernel import fallback_action

ENV_ID = "schedenv/Moldable-v0"
TABLE1 = [{"runtimes": {1: 10, 2: 5}}, {"runtimes": {1: 10, 2: 7}}, {"runtimes": {1: 10, 2: 9}}]
SMALL = {"n_procs": 16, "n_jobs": 30, "arrival_interval": 200.0, "max_jobs": 4}
MODES = [
    {},
    {"invalid_action": "penalty", "invalid_action_penalty": 50.0},
    {"action_mode": "factored"},
    {"action_mode": "factored", "invalid_action": "penalty"},
    {"observe_params": True, "max_running": 4},
]
MODE_IDS = ["defaults", "penalty", "factored", "factored-penalty", "params"]


@pytest.mark.parametrize(
    ("action", "mask", "expected"),
    [
        # m = 4, two slots: slot 0 may start on 2 or 3 processors, slot 1 on none; wait allowed
        (3, [0, 1, 1, 0, 0, 0, 0, 0, 1], 2),  # slot 0 on 4: the largest allowed count below, 3
        (2, [0, 1, 1, 0, 0, 0, 0, 0, 1], 2),  # valid actions are their own fallback
        (0, [0, 1, 1, 0, 0, 0, 0, 0, 1], 1),  # slot 0 on 1: none below, the smallest above, 2
        (5, [0, 1, 1, 0, 0, 0, 0, 0, 1], 8),  # slot 1 cannot start: wait
        (5, [0, 1, 1, 0, 0, 0, 0, 0, 0], 1),  # ... and when waiting is masked too: the first valid action
        (8, [0, 0, 0, 0, 0, 1, 1, 1, 0], 5),  # a masked wait: the first valid action
        (7, [1, 0, 1, 0, 1, 0, 1, 0, 1], 6),  # slot 1 on 4 with gaps in its counts: 3
        (4, [1, 0, 1, 0, 0, 0, 1, 0, 1], 6),  # slot 1 on 1: the smallest count above, 3
    ],
)
def test_fallback_rule(action: int, mask: list[int], expected: int) -> None:
    assert fallback_action(action, np.array(mask, dtype=np.int8), 4) == expected


def test_fallback_step_equals_the_fallback_action_and_penalty_is_charged() -> None:
    table = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3)
    twin = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3)
    charged = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3, invalid_action="penalty", invalid_action_penalty=2.5)
    _, info = table.reset(seed=0)
    twin.reset(seed=0)
    charged.reset(seed=0)
    assert info["invalid_action"] is False
    # slot 1 on 3 processors (not in its table) -> slot 1 on 2; then wait is allowed, slot 2 on 2 does not fit
    for asked, taken in [(table.encode(1, 3), table.encode(1, 2)), (table.encode(2, 2), table.wait_action)]:
        got = table.step(asked)
        want = twin.step(taken)
        penalised = charged.step(asked)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:4] == want[1:4] and got[4]["invalid_action"] is True and want[4]["invalid_action"] is False
        assert penalised[1] == want[1] - 2.5
    assert table.state.time == 7.0 and [r.job_id for r in table.records] == [1]


def test_terminal_masks_are_all_ones_in_both_action_modes() -> None:
    for mode, width in [("flat", 3 * 3 + 1), ("factored", 3 + 1 + 3)]:
        env = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3, action_mode=mode)
        env.reset(seed=0)
        terminated, info, steps = False, {}, 0
        while not terminated:
            _, _, terminated, _, info = env.step(env.action_space.sample())
            steps += 1
            assert steps < 20
        assert info["action_mask"].tolist() == [1] * width and env.action_masks().tolist() == [1] * width


def test_factored_actions_and_masks_name_the_flat_ones() -> None:
    flat = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3)
    factored = MoldableEnv(jobs=TABLE1, n_procs=3, max_jobs=3, action_mode="factored")
    flat.reset(seed=0)
    _, info = factored.reset(seed=0)
    assert factored.action_space == gym.spaces.MultiDiscrete([4, 3])
    # flat mask [1,1,0, 1,1,0, 1,1,0, 0]: every slot starts on some count, no wait, counts 1 and 2
    assert info["action_mask"].tolist() == [1, 1, 1, 0, 1, 1, 0]
    for pair, action in [((0, 1), flat.encode(0, 2)), ((1, 0), flat.encode(1, 1)), ((3, 2), flat.wait_action)]:
        a, b = factored.step(np.array(pair)), flat.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4] and a[4]["invalid_action"] == b[4]["invalid_action"]
    for bad in ([4, 0], [0, 3], [0], 5, [0.0, 1.0]):
        with pytest.raises(ValueError):
            factored.step(bad)


def _random_episode(env: gym.Env, seed: int) -> tuple[float, int, list[float], list]:
    """Return, masked steps, rewards and records of unmasked uniform actions from ``reset(seed)``."""
    _, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    assert info["invalid_action"] is False
    total, invalid, rewards, records, terminated = 0.0, 0, [], [], False
    while not terminated:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert not truncated and isinstance(info["invalid_action"], bool)
        total += reward
        invalid += info["invalid_action"]
        rewards.append(reward)
        records.extend(info["completed"])
    return total, invalid, rewards, records


@pytest.mark.parametrize("action_mode", ["flat", "factored"])
def test_random_actions_return_minus_total_turnaround_and_penalties_add(action_mode: str) -> None:
    fallback = MoldableEnv(**SMALL, action_mode=action_mode)
    penalty = MoldableEnv(**SMALL, action_mode=action_mode, invalid_action="penalty", invalid_action_penalty=7.0)
    total, invalid, rewards, records = _random_episode(fallback, seed=2)
    charged, invalid_again, charged_rewards, _ = _random_episode(penalty, seed=2)
    turnaround = sum(r.completion - r.arrival for r in records)
    assert sorted(r.job_id for r in records) == list(range(30))
    assert total == pytest.approx(-turnaround, rel=1e-12)
    assert invalid_again == invalid and 0 < invalid < len(rewards)
    assert charged == pytest.approx(total - 7.0 * invalid, rel=1e-12)
    assert sum(a != b for a, b in zip(rewards, charged_rewards, strict=True)) == invalid


@pytest.mark.parametrize("kwargs", MODES, ids=MODE_IDS)
def test_gymnasium_and_sb3_check_env(kwargs: dict) -> None:
    from gymnasium.utils.env_checker import check_env

    sb3_check_env = pytest.importorskip("stable_baselines3.common.env_checker").check_env

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(infinity|inf|unbounded|symmetric|normali[sz]).*")
        check_env(gym.make(ENV_ID, **kwargs).unwrapped, skip_render_check=True)
        sb3_check_env(gym.make(ENV_ID, **kwargs), warn=True)


def test_unmasked_ppo_and_dqn_learn_on_the_default_env() -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    PPO, DQN = sb3.PPO, sb3.DQN

    env = gym.make(ENV_ID)
    ppo = PPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu").learn(192)
    dqn = DQN("MlpPolicy", env, buffer_size=2_000, learning_starts=64, seed=0, device="cpu").learn(192)
    assert ppo.num_timesteps == 192 and dqn.num_timesteps == 192
    observation, _ = env.reset(seed=0)
    for model in (ppo, dqn):
        action, _ = model.predict(observation, deterministic=True)
        assert env.action_space.contains(int(action))


def test_maskable_ppo_learns_on_the_factored_env() -> None:
    MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO

    env = gym.make(ENV_ID, action_mode="factored", **SMALL)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu").learn(128)
    assert model.num_timesteps == 128
    observation, info = env.reset(seed=1)
    for _ in range(20):
        action, _ = model.predict(observation, action_masks=info["action_mask"].astype(bool), deterministic=True)
        observation, _, terminated, _, info = env.step(action)
        if terminated:
            break
