"""Bad constructor arguments and actions fail at once with a message naming the parameter (issue 13)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import schedenv
from schedenv.validation import MAX_JOBS, MAX_WINDOW, UnknownArgumentError
from schedenv.workloads import from_spec

MALLEABLE, DISPATCH, MOLDABLE, MULTISERVER = schedenv.ENV_IDS


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_unknown_kwarg_lists_the_accepted_names(env_id: str) -> None:
    with pytest.raises(UnknownArgumentError) as error:
        gym.make(env_id, max_jbos=4)
    message = str(error.value)
    assert "max_jbos=4" in message
    assert "did you mean 'max_jobs'" in message
    assert "'observe_params'" in message  # the accepted names are listed
    assert isinstance(error.value, TypeError) and isinstance(error.value, ValueError)


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_gym_make_keeps_its_own_kwargs_and_the_vector_env_checks_too(env_id: str) -> None:
    env = gym.make(env_id, max_episode_steps=3, render_mode="ansi")
    assert env.spec is not None and env.spec.max_episode_steps == 3
    assert env.unwrapped.render_mode == "ansi"
    env.close()
    with pytest.raises(UnknownArgumentError, match="max_jbos"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", max_jbos=4)


@pytest.mark.parametrize("trace", [0, 1, True, 42, 2.5])
def test_moldable_trace_is_refused_by_type(trace: object) -> None:
    with pytest.raises(ValueError, match=f"trace={trace!r} is not allowed; give the path of an SWF file"):
        gym.make(MOLDABLE, trace=trace)


def test_unknown_workload_type_lists_the_known_types() -> None:
    with pytest.raises(ValueError) as error:
        from_spec({"type": "Nope"})
    assert "type='Nope'" in str(error.value)
    assert "'BoundedPareto'" in str(error.value) and "'Exponential'" in str(error.value)


@pytest.mark.parametrize(
    ("jobs", "reason"),
    [
        ("abc", "jobs='abc' is not allowed"),
        ([[1, 2], [3]], "not ragged"),
        ({"a": 1}, "jobs={'a': 1} is not allowed"),
        ([True, True], "holds booleans"),
        ([1 + 1j], "holds complex numbers"),
    ],
)
def test_malleable_bad_jobs_name_jobs(jobs: object, reason: str) -> None:
    with pytest.raises(ValueError, match="jobs") as error:
        gym.make(MALLEABLE, jobs=jobs)
    assert reason in str(error.value)


@pytest.mark.parametrize("needs", [[0], [True], [1, 16]])
def test_server_needs_errors_name_server_needs(needs: list) -> None:
    with pytest.raises(ValueError, match=r"server_needs|server need 16"):
        gym.make(MULTISERVER, server_needs=needs)


def test_nested_time_limits_are_refused() -> None:
    with pytest.raises(ValueError, match=r"time_limits=.*flat sequence"):
        gym.make(DISPATCH, time_limits=[[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("env_id", [MALLEABLE, MULTISERVER])
def test_complex_actions_are_refused_and_the_state_is_unchanged(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=3)
    twin = gym.make(env_id)
    twin.reset(seed=3)
    action = env.action_space.sample()
    with pytest.raises(ValueError, match="complex numbers"):
        env.step(np.asarray(action) + 1j)
    # nothing changed: the same valid action gives the twin's step exactly
    observation, reward, *_ = env.step(action)
    twin_observation, twin_reward, *_ = twin.step(action)
    np.testing.assert_array_equal(observation, twin_observation)
    assert reward == twin_reward


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_vector_reset_takes_a_numpy_integer_seed(env_id: str) -> None:
    a = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    b = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    np.testing.assert_array_equal(a.reset(seed=np.int64(5))[0], b.reset(seed=5)[0])
    with pytest.raises(ValueError, match="seed=True"):
        a.reset(seed=True)


@pytest.mark.parametrize(
    ("env_id", "name", "cap"),
    [
        (MALLEABLE, "n_jobs", MAX_JOBS),
        (MALLEABLE, "n_arrivals", MAX_JOBS),
        (MOLDABLE, "n_jobs", MAX_JOBS),
        (DISPATCH, "n_arrivals", MAX_JOBS),
        (MULTISERVER, "n_arrivals", MAX_JOBS),
        *((env_id, "max_jobs", MAX_WINDOW) for env_id in schedenv.ENV_IDS),
    ],
)
@pytest.mark.parametrize("excess", [1, 10**12])
def test_sizes_beyond_the_documented_caps_are_refused(env_id: str, name: str, cap: int, excess: int) -> None:
    with pytest.raises(ValueError, match=f"{name}={cap + excess} is not allowed; it must be an integer in .*{cap}"):
        gym.make(env_id, **{name: cap + excess})
