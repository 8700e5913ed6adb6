"""Fuzz over constructor arguments and actions (issue 13: an audit of bad inputs).

Every draw ends one of two ways: a ValueError/TypeError (an OSError for a path that does not exist)
whose message names the parameter, or an episode whose invariants hold (observations inside the
space, finite rewards <= 0, an action outside the space refused without changing the state).
The counts of each outcome are printed (``pytest -s``) and checked to cover both.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from typing import Any

import gymnasium as gym
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
    # Gymnasium's make() reads render_mode itself (a non-string fails there, "human" needs pygame)
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
        if terminated or truncated:
            OUTCOMES["episode ended"] += 1
            break
    env.close()


def test_constructor_and_action_fuzz() -> None:
    OUTCOMES.clear()
    _fuzz_one()
    print(f"fuzz outcomes: {dict(OUTCOMES)}")
    assert OUTCOMES["refused"] > 0 and OUTCOMES["built"] > 0
    assert OUTCOMES["bad action refused"] == OUTCOMES["built"]  # every built env refused its bad action
