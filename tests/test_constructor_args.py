"""Bad constructor arguments and actions fail at once with a message naming the parameter (issue 13)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import baselines
import schedenv
from schedenv.evaluation import evaluate
from schedenv.validation import MAX_JOBS, MAX_WINDOW, UnknownArgumentError
from schedenv.workloads import DowneySpeedup, Exponential, from_spec

MALLEABLE, DISPATCH, MOLDABLE, MULTISERVER = schedenv.ENV_IDS


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_unknown_kwarg_lists_the_accepted_names(env_id: str) -> None:
    with pytest.raises(UnknownArgumentError) as error:
        gym.make(env_id, max_jbos=4)
    message = str(error.value)
    # worded as Python's own TypeError, which libraries such as TorchRL read to drop optional arguments
    env_class = type(gym.make(env_id).unwrapped).__name__
    assert message.startswith(f"{env_class}.__init__() got an unexpected keyword argument 'max_jbos' (max_jbos=4)")
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
    with pytest.raises(ValueError, match=r"server_needs"):
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
    ("seed", "reason"),
    [
        (5.0, "seed=5.0 is not allowed; give an integer >= 0"),
        (-1, "seed=-1 is not allowed; give an integer >= 0"),
        ("5", "seed='5' is not allowed"),
        ([0, -1], "entry -1 is not an integer >= 0 or None"),
        ([0, 1.5], "entry 1.5 is not an integer >= 0 or None"),
        ([0], "seed has 1 entries; expected num_envs=2"),
    ],
)
@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_vector_reset_refuses_seeds_that_are_not_integers(env_id: str, seed: object, reason: str) -> None:
    batch = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    twin = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError) as error:
        batch.reset(seed=seed)
    assert reason in str(error.value)
    # a list of seeds (None keeps a copy's generator) is copy by copy what seed=7 gives
    np.testing.assert_array_equal(batch.reset(seed=[7, np.int64(8)])[0], twin.reset(seed=7)[0])


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


# ---------------------------------------------------------------- numerical range (issue 13c)


@pytest.mark.parametrize("mean", [1e-300, 1e300])
def test_exponential_mean_outside_the_scale_range_is_refused(mean: float) -> None:
    with pytest.raises(ValueError, match=r"mean=1e[+-]300 is not allowed; it must lie in \[1e-100, 1e\+100\]"):
        Exponential(mean)
    edge = Exponential(1e-100)  # the ends of the range are accepted and give finite moments
    assert edge.variance == pytest.approx(1e-200) and edge.scv == pytest.approx(1.0)


def test_downey_parameters_outside_the_scale_range_are_refused() -> None:
    with pytest.raises(ValueError, match=r"A=1e\+300 is not allowed"):
        DowneySpeedup(1e300, 1.0)
    with pytest.raises(ValueError, match=r"sigma=1e\+300 is not allowed"):
        DowneySpeedup(8.0, 1e300)
    with pytest.raises(ValueError, match=r"jobs\[0\]\['L'\]=1e\+300"):
        gym.make(MOLDABLE, jobs=[{"L": 1e300, "A": 4.0, "sigma": 1.0}])
    # at the top of the range the speedup is still a number in [1, min(n, A)]
    speedup = DowneySpeedup.formula(np.array([1.0, 64.0, 128.0]), 1e100, 1e100)
    assert np.isfinite(speedup).all() and (speedup >= 1.0).all() and (speedup <= 128.0).all()


def test_malleable_scales_outside_the_range_are_refused() -> None:
    with pytest.raises(ValueError, match=r"n_servers=1e-300 is not allowed"):
        gym.make(MALLEABLE, n_servers=1e-300, jobs=[1.0])
    with pytest.raises(ValueError, match=r"jobs\[0\]=1e\+300 is not allowed"):
        gym.make(MALLEABLE, jobs=[1e300])


def test_extreme_but_allowed_malleable_scales_give_a_finite_return() -> None:
    result = evaluate(MALLEABLE, "hesrpt", [0], n_servers=1e-100, jobs=[1e100, 1e100])
    assert math.isfinite(result.summary["return"].mean) and result.summary["return"].mean < 0


@pytest.mark.parametrize(
    ("jobs", "reason"),
    [
        ([(0.0, 1e300), (0.0, 1e-300)], r"jobs\[:, 1\] \(sizes\)\[0\]=1e\+300 is not allowed"),
        ([(0.0, 1e100), (0.0, 1e-100)], r"exceeds 1e\+12 times its smallest size"),
        ([(1e13, 1.0)], r"latest arrival \+ total size = 1e\+13"),
    ],
)
def test_dispatch_job_sets_float64_cannot_resolve_are_refused(jobs: list, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        gym.make(DISPATCH, jobs=jobs)


def test_dispatch_resolvable_extreme_job_set_has_slowdowns_at_least_one() -> None:
    result = evaluate(DISPATCH, baselines.reference(DISPATCH), [0], jobs=[(0.0, 1e10), (0.0, 0.5)])
    slowdowns = [record.slowdown for record in result.episodes[0].records]
    assert len(slowdowns) == 2 and min(slowdowns) >= 1.0


@pytest.mark.parametrize(
    ("env_id", "jobs"),
    [(DISPATCH, [(0.0, True)]), (DISPATCH, [(0.0, 1.0), (False, 2.0)]), (MULTISERVER, [(0.0, True, 1.0)])],
)
def test_booleans_inside_job_tuples_are_refused(env_id: str, jobs: list) -> None:
    with pytest.raises(ValueError, match=r"jobs=.* holds booleans"):
        gym.make(env_id, jobs=jobs)


@pytest.mark.parametrize(
    ("jobs", "reason"),
    [
        ([("0", "1", "2")], "holds strings"),
        ([(0.0, 1, 1e300)], r"jobs\[:, -1\] \(durations\)\[0\]=1e\+300 is not allowed"),
        ([(0.0, 1, 1e300), (1.0, 1, 1.0)], r"jobs\[:, -1\] \(durations\)\[0\]=1e\+300"),
        ([(0.0, 1, 1e10), (0.0, 2, 1e-5)], r"exceeds 1e\+12 times its smallest size \(job 1: 1e-05\)"),
    ],
)
def test_multiserver_job_sets_outside_the_ranges_are_refused(jobs: list, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        gym.make(MULTISERVER, jobs=jobs)


@pytest.mark.parametrize("env_id", [MALLEABLE, DISPATCH, MULTISERVER])
def test_a_load_whose_stream_outruns_float64_clocks_is_refused(env_id: str) -> None:
    kwargs = {"mode": "online"} if env_id == MALLEABLE else {}
    with pytest.raises(ValueError, match=r"load=1e-300 is not allowed with n_arrivals=20: .* use load >= 2e-08"):
        gym.make(env_id, load=1e-300, n_arrivals=20, **kwargs)
    with pytest.raises(ValueError, match=r"load=1e-08 is not allowed with n_arrivals=20"):
        gym.make(env_id, load=1e-8, n_arrivals=20, **kwargs)


@pytest.mark.parametrize("env_id", [MALLEABLE, DISPATCH, MULTISERVER])
def test_the_lowest_allowed_load_still_resolves_every_job(env_id: str) -> None:
    """At load n_arrivals / MAX_MEAN_HORIZON jobs arrive ~5e7 mean sizes apart: each runs alone, slowdown 1
    (for dispatch under Random, which never kills a job and so wastes no work)."""
    kwargs = {"mode": "online"} if env_id == MALLEABLE else {}
    contender = "random" if env_id == DISPATCH else baselines.reference(env_id)
    result = evaluate(env_id, contender, [0, 1], load=20 / 1e9, n_arrivals=20, **kwargs)
    for episode in result.episodes:
        assert episode.metrics["n_completed"] == 20
        assert episode.metrics["mean_slowdown"] == pytest.approx(1.0, rel=1e-6)


def test_moldable_arrival_interval_beyond_float64_resolution_is_refused() -> None:
    # 20 jobs every 1e100 s against a shortest run time of 100 / 128 s (work_low / n_procs)
    with pytest.raises(ValueError, match=r"arrival_interval=1e\+100 is not allowed with n_jobs=20 and n_procs=128"):
        gym.make(MOLDABLE, arrival_interval=1e100, n_jobs=20)
    gym.make(MOLDABLE, arrival_interval=1e12 * (100 / 128) / 20, n_jobs=20)  # the largest allowed


def test_moldable_job_too_short_for_its_horizon_on_many_processors_is_refused() -> None:
    # Its work (1e-3 node-seconds) resolves against 1e9 s; its run time on 128 processors does not.
    jobs = [{"L": 1e-3, "A": 128.0, "sigma": 0.0}, {"submit": 1e9 - 1, "L": 1.0, "A": 1.0, "sigma": 0.0}]
    with pytest.raises(ValueError, match=r"jobs is not allowed: .* times its shortest run time \(job 0: 7\.8125e-06\)"):
        gym.make(MOLDABLE, n_procs=128, jobs=jobs)
