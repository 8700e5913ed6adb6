"""Fuzz over constructor arguments and actions (issue 13: an audit of bad inputs).

Every draw ends one of two ways: a ValueError/TypeError (an OSError for a path that does not exist)
whose message names the parameter, or an episode whose invariants hold (observations inside the
space, finite rewards <= 0, an action outside the space refused without changing the state).
The batched envs (``vector_entry_point``) are fuzzed the same way over their own arguments too
(``num_envs``, ``autoreset_mode``), and a batch that builds must also equal ``SyncVectorEnv`` step
by step on the same seeds and actions, and complete every job of each episode it finishes
(conservation of jobs). The counts of each outcome and of the invariant checks are printed
(``pytest -s``) and checked to cover both outcomes.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedenv

WEIRD_VALUES: list[Any] = [
    0, 1, -1, 2, 3, 10**12, 0.5, -0.5, 1e-300, 1e300, math.nan, math.inf, True, False, None, "abc", "",
    [1.0, 2.0], [[1, 2], [3]], [], {"type": "Nope"}, {"a": 1}, 1 + 1j, [True, True], (0.0, 1.0), [0],
]  # fmt: skip
VALUES = st.one_of(st.sampled_from(WEIRD_VALUES), st.integers(1, 8), st.floats(0.05, 0.95))
"""Weird values, and plausible ones so that some draws build an env."""
RENDER_MODES: list[Any] = [None, "ansi", "rgb_array", "abc", ""]
BAD_ACTIONS: list[Any] = [math.nan, "x", None, 1 + 1j, [math.nan], [[0, 1], [2, 3]], -1, 10**9, {"a": 1}]
OUTCOMES: Counter[str] = Counter()
MAX_STEPS = 200
VECTOR_OUTCOMES: Counter[str] = Counter()
VECTOR_STEPS = 150
NUM_ENVS: list[Any] = [1, 2, 3, 3, 0, -1, 2.5, True, "2", None]
AUTORESET_MODES: list[Any] = ["NextStep", "SameStep", "NextStep", "SameStep", "Nope", 3]
BAD_BATCH_ACTIONS: list[Any] = [math.nan, "x", None, 1 + 1j, [math.nan], {"a": 1}, 10**9]


def _accepted(env_id: str) -> list[str]:
    entry = gym.spec(env_id).entry_point
    assert isinstance(entry, str)
    module, name = entry.split(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


@st.composite
def env_arguments(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    env_id = draw(st.sampled_from(schedenv.ENV_IDS))
    names = draw(st.lists(st.sampled_from([*_accepted(env_id), "bogus_arg"]), min_size=1, max_size=2, unique=True))
    # Gymnasium's make() reads render_mode itself (a non-string fails there)
    return env_id, {name: draw(st.sampled_from(RENDER_MODES) if name == "render_mode" else VALUES) for name in names}


def _check_refusal(error: Exception, kwargs: dict[str, Any]) -> None:
    message = str(error)
    if isinstance(error, OSError):
        assert "trace" in kwargs and str(kwargs["trace"]) in message, message
        return
    assert isinstance(error, (ValueError, TypeError)), repr(error)
    assert any(name in message for name in kwargs), f"{message!r} names none of {list(kwargs)}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env_arguments(), st.sampled_from(BAD_ACTIONS), st.integers(0, 2**16))
def _fuzz_one(case: tuple[str, dict[str, Any]], bad_action: Any, seed: int) -> None:
    env_id, kwargs = case
    try:
        env = gym.make(env_id, disable_env_checker=True, **kwargs)
        env.reset(seed=seed)
    except (ValueError, TypeError, OSError) as error:
        _check_refusal(error, kwargs)
        OUTCOMES["refused"] += 1
        return
    OUTCOMES["built"] += 1
    env.action_space.seed(seed)
    observation, _ = env.reset(seed=seed)
    for step in range(MAX_STEPS):
        assert env.observation_space.contains(observation), f"step {step}: observation outside the space"
        if step == 0:  # none of BAD_ACTIONS is an element of any of the four action spaces
            with pytest.raises((ValueError, TypeError)):
                env.step(bad_action)
            OUTCOMES["bad action refused"] += 1
        observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert math.isfinite(reward) and reward <= 0.0, reward
        OUTCOMES["invariant checks"] += 2
        if terminated or truncated:
            OUTCOMES["episode ended"] += 1
            break
    env.close()


def test_constructor_and_action_fuzz() -> None:
    OUTCOMES.clear()
    _fuzz_one()
    print(f"fuzz outcomes: {dict(OUTCOMES)} of {sum(OUTCOMES[k] for k in ('refused', 'built'))} inputs")
    assert OUTCOMES["refused"] > 0 and OUTCOMES["built"] > 0
    assert OUTCOMES["bad action refused"] == OUTCOMES["built"]  # every built env refused its bad action


@st.composite
def batch_arguments(draw: st.DrawFn) -> tuple[str, dict[str, Any], Any, Any]:
    """An env id, fuzzed env kwargs (none to two, plausible values half the time), num_envs, autoreset_mode."""
    env_id = draw(st.sampled_from(schedenv.ENV_IDS))
    names = draw(st.lists(st.sampled_from([*_accepted(env_id), "bogus_arg"]), max_size=2, unique=True))
    kwargs = {name: draw(st.sampled_from(RENDER_MODES) if name == "render_mode" else VALUES) for name in names}
    return env_id, kwargs, draw(st.sampled_from(NUM_ENVS)), draw(st.sampled_from(AUTORESET_MODES))


def _jobs_per_episode(template: gym.Env) -> int:
    """How many jobs one episode of ``template`` has: its job set's or trace's, else the drawn count."""
    env = template.unwrapped
    if getattr(env, "jobs", None) is not None:
        return int(env.jobs[0].size)
    if getattr(env, "mode", "online") == "offline" or not hasattr(env, "n_arrivals"):
        return int(env.n_jobs)
    return int(env.n_arrivals)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch_arguments(), st.sampled_from(BAD_BATCH_ACTIONS), st.integers(0, 2**16))
def _fuzz_batch(case: tuple[str, dict[str, Any], Any, Any], bad_action: Any, seed: int) -> None:
    env_id, kwargs, num_envs, autoreset_mode = case
    common = {"num_envs": num_envs, "autoreset_mode": autoreset_mode}
    try:
        batch = gym.make_vec(env_id, vectorization_mode="vector_entry_point", **common, **kwargs)
        batch.reset(seed=seed)
    except (ValueError, TypeError, OSError) as error:
        _check_refusal(error, {**kwargs, **common})
        VECTOR_OUTCOMES["refused"] += 1
        return
    VECTOR_OUTCOMES["built"] += 1
    sync = gym.make_vec(env_id, num_envs, "sync", vector_kwargs={"autoreset_mode": autoreset_mode}, **kwargs)
    expected_jobs = _jobs_per_episode(batch.template)  # type: ignore[attr-defined]
    observation, _ = batch.reset(seed=seed)
    twin_observation, _ = sync.reset(seed=seed)
    batch.action_space.seed(seed)
    for step in range(VECTOR_STEPS):
        assert batch.observation_space.contains(observation), f"step {step}: observation outside the space"
        np.testing.assert_array_equal(observation, twin_observation)
        if step == 0:  # refused whole, leaving every copy as it was (the next step still equals the twin's)
            with pytest.raises((ValueError, TypeError)):
                batch.step(bad_action)
            VECTOR_OUTCOMES["bad action refused"] += 1
        actions = batch.action_space.sample()
        observation, rewards, terminated, truncated, info = batch.step(actions)
        twin_observation, twin_rewards, twin_terminated, _, _ = sync.step(actions)
        np.testing.assert_array_equal(rewards, twin_rewards)
        np.testing.assert_array_equal(terminated, twin_terminated)
        assert np.isfinite(rewards).all() and (rewards <= 0.0).all(), rewards
        assert not truncated.any() and (info["n_jobs"] >= 0).all()
        VECTOR_OUTCOMES["invariant checks"] += 5
        if terminated.any():  # every job of a finished episode completed: none lost, none twice
            metrics = info["final_info"]["episode_metrics"] if "final_info" in info else info["episode_metrics"]
            assert (metrics["n_completed"][terminated] == expected_jobs).all(), metrics["n_completed"]
            VECTOR_OUTCOMES["episodes ended"] += int(terminated.sum())
            VECTOR_OUTCOMES["invariant checks"] += 1
    batch.close()
    sync.close()


def test_batched_env_fuzz() -> None:
    VECTOR_OUTCOMES.clear()
    _fuzz_batch()
    inputs = VECTOR_OUTCOMES["refused"] + VECTOR_OUTCOMES["built"]
    print(f"batched fuzz outcomes: {dict(VECTOR_OUTCOMES)} of {inputs} inputs")
    assert VECTOR_OUTCOMES["refused"] > 0 and VECTOR_OUTCOMES["built"] > 0 and VECTOR_OUTCOMES["episodes ended"] > 0
    assert VECTOR_OUTCOMES["bad action refused"] == VECTOR_OUTCOMES["built"]
