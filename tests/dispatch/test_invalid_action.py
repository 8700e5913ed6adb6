"""Masked actions in Dispatch-v0: ``invalid_action`` = "fallback" (default), "penalty" or "raise".

The fallback of a masked (destination, limit) is (destination, next limit above the largest one the
job exceeded); the default must let Gymnasium's and SB3's checkers and unmasked SB3 agents run.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

import schedenv  # noqa: F401 - registers the env ids
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.records import DispatchRecord
from schedenv.dispatch.vector import DispatchVectorEnv
from schedenv.workloads import BoundedPareto

ENV_ID = "schedenv/Dispatch-v0"
MODES = ("raise", "fallback", "penalty")
OBJECTIVE_OF = {
    "response_time": lambda r: r.response_time,
    "waiting_time": lambda r: r.waiting_time,
    "slowdown": lambda r: r.slowdown,
    "waiting_slowdown": lambda r: r.waiting_slowdown,
}
SMALL: dict[str, Any] = {
    "n_arrivals": 60,
    "load": 0.8,
    "n_hosts": 3,
    "size_dist": BoundedPareto(1.0, 1e4, 0.8),
    "time_limits": [2.0, 8.0, 32.0, 128.0, 512.0],
}
"""Short episodes whose ladder spans the sizes, so that uniform actions kill jobs and then hit masks."""


def killed_env(**kwargs: Any) -> DispatchEnv:
    """Ladder [1, 2, 4, inf]; job 0 (size 10) was killed at limit index 1 and awaits a decision."""
    env = DispatchEnv(jobs=[(0.0, 10.0), (50.0, 1.0)], time_limits=[1.0, 2.0, 4.0], **kwargs)
    env.reset(seed=0)
    env.step(env.encode_action(0, 1))
    assert env.pending_job.exceeded == 1
    return env


def random_episode(env: gym.Env, seed: int) -> tuple[float, list[DispatchRecord], list[bool], list[tuple]]:
    """Uniform actions from the action space until termination: return, records, invalid flags, steps."""
    env.action_space.seed(seed)
    observation, info = env.reset(seed=seed)
    assert info["invalid_action"] is False
    total, records, invalid, steps = 0.0, [], [], []
    terminated = False
    while not terminated:
        action = env.action_space.sample()
        observation, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        total += reward
        records += info["completed"]
        invalid.append(info["invalid_action"])
        steps.append((observation, reward))
    return total, records, invalid, steps


def test_a_masked_action_falls_back_to_the_next_limit_above_the_exceeded_one() -> None:
    env, twin = killed_env(), killed_env()
    masked = env.encode_action(2, 0)  # central queue, limit 1: already exceeded
    assert env.action_masks()[masked] == 0
    obs, reward, terminated, _, info = env.step(masked)
    # The fallback keeps the destination and takes limit index exceeded + 1 = 2 (limit 4).
    twin_obs, twin_reward, twin_terminated, _, twin_info = twin.step(twin.encode_action(2, 2))
    np.testing.assert_array_equal(obs, twin_obs)
    assert (reward, terminated) == (twin_reward, twin_terminated)
    assert info["invalid_action"] is True and twin_info["invalid_action"] is False
    assert repr(env.state) == repr(twin.state)
    # It started at once on idle host 0 (the central queue's first idle host) and was killed at 2 + 4.
    assert info["killed"] and info["time"] == 6.0
    assert env.pending_job.exceeded == 2 and env.pending_job.hosts == (0, 0)


def test_the_fallback_of_the_last_finite_limit_is_infinity() -> None:
    env = DispatchEnv(jobs=[(0.0, 10.0)], time_limits=[1.0, 2.0])
    env.reset(seed=0)
    env.step(env.encode_action(0, 1))  # killed at 2: only inf is left
    *_, terminated, _, info = env.step(env.encode_action(1, 0))
    assert info["invalid_action"] and terminated
    assert info["completed"][0].hosts == (0, 1) and info["completed"][0].completion == 2.0 + 10.0


def test_penalty_mode_subtracts_the_penalty_from_that_step_only() -> None:
    env, twin = killed_env(invalid_action="penalty", invalid_action_penalty=2.5), killed_env()
    _, reward, *_, info = env.step(env.encode_action(1, 1))
    _, twin_reward, *_ = twin.step(twin.encode_action(1, 2))
    assert info["invalid_action"] and reward == twin_reward - 2.5
    _, reward, *_, info = env.step(env.encode_action(0, 3))
    _, twin_reward, *_ = twin.step(twin.encode_action(0, 3))
    assert not info["invalid_action"] and reward == twin_reward


def test_raise_mode_raises_and_leaves_the_state_unchanged() -> None:
    env = killed_env(invalid_action="raise")
    snapshot, obs = repr(env.state), env._require_core().observation()
    with pytest.raises(ValueError, match="is masked"):
        env.step(env.encode_action(1, 1))
    assert repr(env.state) == snapshot
    np.testing.assert_array_equal(env._require_core().observation(), obs)
    *_, info = env.step(env.encode_action(1, 2))
    assert info["invalid_action"] is False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", [-1, 10**6, 1.5, math.nan, np.array([0, 1]), True, "0"])
def test_actions_outside_the_space_raise_in_every_mode(mode: str, action: object) -> None:
    env = killed_env(invalid_action=mode)
    snapshot = repr(env.state)
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    assert repr(env.state) == snapshot


@pytest.mark.parametrize("objective", list(OBJECTIVE_OF))
def test_fallback_return_is_minus_the_total_objective_under_random_actions(objective: str) -> None:
    env = gym.make(ENV_ID, objective=objective, **SMALL)
    total, records, invalid, _ = random_episode(env, seed=3)
    assert sum(invalid) > 0  # the uniform actions did hit masks
    assert sorted(r.job_id for r in records) == list(range(SMALL["n_arrivals"]))
    assert total == pytest.approx(-sum(OBJECTIVE_OF[objective](r) for r in records), rel=1e-9)


def test_penalty_return_is_minus_the_objective_and_the_penalties() -> None:
    penalty = 7.0
    fallback = random_episode(gym.make(ENV_ID, **SMALL), seed=5)
    charged = random_episode(gym.make(ENV_ID, invalid_action="penalty", invalid_action_penalty=penalty, **SMALL), 5)
    total, records, invalid, steps = charged
    n_invalid = sum(invalid)
    assert n_invalid > 0 and invalid == fallback[2]
    objective = sum(r.slowdown for r in records)
    assert total == pytest.approx(-(objective + penalty * n_invalid), rel=1e-9)
    for (obs_a, reward_a), (obs_b, reward_b), masked in zip(fallback[3], steps, invalid, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)  # the penalty changes rewards only
        assert reward_b == (reward_a - penalty if masked else reward_a)


@pytest.mark.parametrize("mode", MODES)
def test_terminal_masks_are_all_ones(mode: str) -> None:
    env = DispatchEnv(jobs=[(0.0, 3.0), (1.0, 1.0)], time_limits=[2.0], invalid_action=mode)
    env.reset(seed=0)
    terminated = False
    while not terminated:
        *_, terminated, _, info = env.step(env.encode_action(0, 1))
    assert info["action_mask"].tolist() == [1] * env.n_actions
    assert env.action_masks().tolist() == [1] * env.n_actions


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"invalid_action": "fallbak"}, "did you mean 'fallback'"),
        ({"invalid_action": None}, "invalid_action"),
        ({"invalid_action_penalty": -1.0}, "invalid_action_penalty=-1.0"),
        ({"invalid_action_penalty": math.inf}, "invalid_action_penalty=inf"),
        ({"invalid_action_penalty": math.nan}, "invalid_action_penalty=nan"),
        ({"invalid_action_penalty": "1"}, "invalid_action_penalty"),
    ],
)
def test_bad_invalid_action_arguments_raise(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DispatchEnv(**kwargs)


INFINITE_BOUNDS = ".*Box observation space maximum value is infinity"
"""Gymnasium's checker warns about the Box's infinite upper bounds (log-scaled counts and ages), by design."""


@pytest.mark.filterwarnings(f"ignore:{INFINITE_BOUNDS}")
@pytest.mark.parametrize("mode", [None, "fallback", "penalty"])
def test_gymnasium_check_env_passes(mode: str | None) -> None:
    kwargs = {} if mode is None else {"invalid_action": mode}
    gymnasium_check_env(gym.make(ENV_ID, **kwargs).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("mode", [None, "fallback", "penalty"])
def test_stable_baselines3_check_env_passes(mode: str | None) -> None:
    env_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    kwargs = {} if mode is None else {"invalid_action": mode}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        env_checker.check_env(gym.make(ENV_ID, **kwargs), warn=True)


def test_raise_mode_refuses_the_masked_samples_the_checkers_would_step() -> None:
    # Hence the checkers run "raise" only behind a mask-respecting wrapper (tests/test_envs.py).
    env = gym.make(ENV_ID, invalid_action="raise", **SMALL)
    env.reset(seed=0)
    env.action_space.seed(0)
    with pytest.raises(ValueError, match="is masked"):
        for _ in range(500):
            env.step(env.action_space.sample())


class CountInvalid(gym.Wrapper):
    """Counts the steps whose action was masked (and checks the info mask said so)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps = self.invalid = 0
        self._mask = np.ones(int(env.action_space.n), dtype=np.int8)  # type: ignore[attr-defined]

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        self._mask = info["action_mask"]
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        assert info["invalid_action"] == (self._mask[int(action)] == 0)
        self.steps += 1
        self.invalid += info["invalid_action"]
        self._mask = info["action_mask"]
        return obs, reward, terminated, truncated, info


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One torch thread, as ``agents.train`` uses: on a shared 2-core machine more threads are far slower."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("algo", ["PPO", "DQN"])
def test_unmasked_sb3_agents_train_with_default_kwargs(algo: str, one_torch_thread: None) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    env = CountInvalid(gym.make(ENV_ID))
    if algo == "PPO":
        model = sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu")
    else:
        model = sb3.DQN("MlpPolicy", env, learning_starts=100, seed=0, device="cpu")
    model.learn(total_timesteps=320)
    assert model.num_timesteps == env.steps == 320
    assert env.invalid > 0  # the unmasked policy did pick masked actions, and the env took them


@pytest.mark.parametrize("mode", ["fallback", "penalty"])
def test_vector_env_takes_sampled_actions_like_single_envs(mode: str) -> None:
    kwargs = {"invalid_action": mode, "invalid_action_penalty": 0.5, **SMALL}
    venv = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    envs = [gym.make(ENV_ID, **kwargs) for _ in range(3)]
    venv.reset(seed=11)
    for i, env in enumerate(envs):
        env.reset(seed=11 + i)
    venv.action_space.seed(0)
    ended = np.zeros(3, dtype=bool)
    n_invalid = 0
    for _ in range(200):
        actions = venv.action_space.sample()
        obs, rewards, terminated, _, info = venv.step(actions)
        for i, env in enumerate(envs):
            if ended[i]:
                single_obs, single_info = env.reset()
                single_reward = 0.0
            else:
                single_obs, single_reward, _, _, single_info = env.step(actions[i])
            np.testing.assert_array_equal(obs[i], single_obs)
            assert rewards[i] == single_reward
            assert info["invalid_action"][i] == single_info["invalid_action"]
            n_invalid += single_info["invalid_action"]
        ended = terminated
    assert n_invalid > 0


def test_vector_env_raise_mode_refuses_masked_actions() -> None:
    venv = DispatchVectorEnv(num_envs=2, invalid_action="raise", jobs=[(0.0, 10.0)], time_limits=[1.0, 2.0])
    venv.reset(seed=0)
    _, _, _, _, info = venv.step(np.array([1, 0]))  # copy 0 runs with limit 2 and is killed; copy 1 with 1
    assert info["killed"].tolist() == [True, True]
    before = venv.action_masks()
    with pytest.raises(ValueError, match=r"copies \[0\] are masked"):
        venv.step(np.array([0, 2]))
    np.testing.assert_array_equal(venv.action_masks(), before)
