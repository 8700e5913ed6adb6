"""Any small configuration of any env: a clear refusal, or an episode whose invariants hold.

Each example draws a configuration (valid, or with one argument spoiled), a seed and a policy that
mixes valid actions (from the masks), elements of the space that the masks forbid, and values
outside the space. It asserts:

- a configuration is refused with a ValueError/TypeError naming one of its arguments, or it builds
  (a valid one always builds) and refuses a step before its first reset (RuntimeError); an action
  outside the space is refused the same way in every ``invalid_action`` mode, and a masked one with
  ``invalid_action="raise"``;
- observations inside the space and finite, rewards finite and <= 0, metrics finite;
- conservation of jobs: jobs arrived so far (completed + in system) never decrease and never exceed
  the episode's, and at the end every job completed exactly once (``n_completed`` = the job count);
- Malleable's work: ``state.work_done`` equals the completed sizes plus the progress of the jobs
  present, and a step serves at most what n jobs sharing N servers can (n s(N / n), concave s);
- the return identity of each env's "Rewards" section: the return is ``reward_scale`` times minus
  the episode's total objective, minus ``invalid_action_penalty`` per replaced action ("penalty");
- refusals change nothing: replaying only the accepted actions on a fresh env with the same seed
  gives the same observations and rewards, bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from schedenv.workloads import Deterministic, Power

from .budget import property_settings
from .drive import (
    NAN_ALLOWED,
    any_element,
    episode_jobs,
    no_hang,
    objective_total,
    outside_the_space,
    penalty,
    valid_candidates,
)
from .strategies import DISPATCH, MALLEABLE, MULTISERVER, Case, spoiled, valid_cases

MAX_STEPS = 400
"""Enough for every valid case to end (at most 8 jobs); a spoiled case that builds may be cut there."""
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # the envs' advice (e.g. p_range without observe_params)


@dataclass
class Episode:
    """What one run recorded: the accepted actions and what they gave."""

    accepted: list[Any] = field(default_factory=list)
    observations: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    replaced: int = 0
    metrics: dict[str, Any] | None = None


def _check_refusal(error: Exception, case: Case) -> None:
    assert isinstance(error, (ValueError, TypeError)), repr(error)
    assert case.spoiled is not None, f"a valid configuration was refused: {error}"
    message = str(error)
    assert any(name in message for name in case.kwargs), f"{message!r} names none of {list(case.kwargs)}"


def _check_observation(env: gym.Env, observation: np.ndarray) -> None:
    assert np.isfinite(observation).all(), observation
    assert env.observation_space.contains(observation), observation


def _malleable_capacity(env: Any, n_present: int) -> float:
    """The most work a unit of time serves with n jobs present: n s(N / n) for a concave s (Jensen); with
    ``p_range``, the larger at its two ends (n^(1-p) N^p is monotone in p)."""
    laws = [Power(p) for p in env.p_range] if env.p_range is not None else [env.speedup]
    return max(n_present * float(law(env.n_servers / n_present)) for law in laws) if n_present else 0.0


def _step_one(env: gym.Env, case: Case, rng: np.random.Generator, p_masked: float) -> tuple[Any, tuple[Any, ...]]:
    """Try a drawn element of the space (with probability ``p_masked``), then valid candidates; the accepted one."""
    u = env.unwrapped
    candidates = [any_element(u, rng)] if rng.random() < p_masked else []
    for action in [*candidates, *valid_candidates(u, rng)]:
        try:
            return action, env.step(action)
        except ValueError as error:  # only a masked element of the space, with invalid_action="raise"
            assert getattr(u, "invalid_action", None) == "raise", error
            assert "mask" in str(error), error
    raise AssertionError("no candidate action was accepted")


def _run(env: gym.Env, case: Case, seed: int, policy_seed: int, p_invalid: float, p_masked: float) -> Episode:
    u = env.unwrapped
    rng = np.random.default_rng(policy_seed)
    total = episode_jobs(u)
    observation, info = env.reset(seed=seed)
    episode = Episode(observations=[observation])
    completed: list[int] = []
    arrived = 0
    for _ in range(MAX_STEPS):
        _check_observation(env, observation)
        if rng.random() < p_invalid:
            bad = outside_the_space(u)
            with pytest.raises((ValueError, TypeError)):
                env.step(bad[int(rng.integers(len(bad)))])
        before = u.state if case.env_id == MALLEABLE else None
        action, (observation, reward, terminated, truncated, info) = _step_one(env, case, rng, p_masked)
        episode.accepted.append(action)
        episode.observations.append(observation)
        episode.rewards.append(float(reward))
        episode.replaced += bool(info.get("invalid_action", False))
        assert math.isfinite(reward) and reward <= 0.0, reward
        assert not truncated
        completed += [record.job_id for record in info["completed"]]
        now_arrived = len(completed) + int(info["n_jobs"])
        assert arrived <= now_arrived <= total, (arrived, now_arrived, total)  # no job lost, none created
        arrived = now_arrived
        if before is not None:
            _check_malleable_work(u, before, info)
        if case.env_id == MULTISERVER and "busy_servers" in info:
            assert 0 <= info["busy_servers"] <= u.n_servers, info["busy_servers"]
        if terminated:
            _check_observation(env, observation)
            assert sorted(completed) == sorted(set(completed)) and len(completed) == total, completed
            assert int(info["n_jobs"]) == 0
            episode.metrics = info["episode_metrics"]
            break
    return episode


def _check_malleable_work(env: Any, before: Any, info: dict[str, Any]) -> None:
    state = env.state
    assert state.next_arrival == state.n_completed + state.n_jobs  # arrived = completed + in system
    served = state.work_done - before.work_done
    bound = (state.time - before.time) * _malleable_capacity(env, before.n_jobs)
    assert -1e-9 <= served <= bound * (1 + 1e-9) + 1e-9, (served, bound)
    done = sum(record.size for record in info["completed"])
    progress_before = float(np.sum(before.size - before.remaining))
    progress_now = float(np.sum(state.size - state.remaining))
    assert served == pytest.approx(done + progress_now - progress_before, rel=1e-7, abs=1e-9)


def _check_end(case: Case, env: gym.Env, episode: Episode) -> None:
    u = env.unwrapped
    metrics = episode.metrics
    assert metrics is not None, "a valid configuration did not end within MAX_STEPS"
    assert int(metrics["n_completed"]) == episode_jobs(u)
    for name, value in metrics.items():
        assert math.isfinite(float(value)) or name.startswith(NAN_ALLOWED), (name, value)
    for name in ("utilisation", *(k for k in metrics if k.startswith("host_load_"))):
        if name in metrics:
            assert 0.0 <= float(metrics[name]) <= 1.0 + 1e-9, (name, metrics[name])
    expected = -u.reward_scale * (objective_total(case.env_id, u, metrics) + penalty(u) * episode.replaced)
    # The metrics' totals carry rounding (a waiting time of -3e-13 for 0), which the scale multiplies.
    assert sum(episode.rewards) == pytest.approx(expected, rel=1e-7, abs=1e-9 * max(1.0, u.reward_scale))


def _replay(case: Case, seed: int, episode: Episode) -> None:
    """Only the accepted actions, on a fresh env: the same trajectory (refused actions changed nothing)."""
    env = gym.make(case.env_id, disable_env_checker=True, **case.kwargs)
    observation, _ = env.reset(seed=seed)
    np.testing.assert_array_equal(observation, episode.observations[0])
    for i, action in enumerate(episode.accepted):
        observation, reward, *_ = env.step(action)
        np.testing.assert_array_equal(observation, episode.observations[i + 1])
        assert reward == episode.rewards[i]
    env.close()


@property_settings(max_examples=1200)
@given(
    case=st.booleans().flatmap(lambda spoil: spoiled() if spoil else valid_cases),
    seed=st.integers(0, 2**16),
    policy_seed=st.integers(0, 2**16),
    p_invalid=st.sampled_from([0.0, 0.3]),
    p_masked=st.sampled_from([0.0, 0.3, 1.0]),
)
@example(  # a Dispatch size law with atoms: its size classes' root bracket lost its top atom to exp(log(x)) < x
    case=Case(DISPATCH, {"n_arrivals": 3, "size_dist": Deterministic(335.0)}),
    seed=0,
    policy_seed=0,
    p_invalid=0.0,
    p_masked=0.0,
)
def test_refused_or_conserving_episode(
    case: Case, seed: int, policy_seed: int, p_invalid: float, p_masked: float
) -> None:
    with no_hang():
        _refused_or_conserving(case, seed, policy_seed, p_invalid, p_masked)


def _refused_or_conserving(case: Case, seed: int, policy_seed: int, p_invalid: float, p_masked: float) -> None:
    try:
        env = gym.make(case.env_id, disable_env_checker=True, **case.kwargs)
        with pytest.raises(RuntimeError, match="reset"):  # a step before the first reset
            env.unwrapped.step(any_element(env.unwrapped, np.random.default_rng(0)))
        env.reset(seed=seed)
    except Exception as error:  # the assertion names any other exception type
        _check_refusal(error, case)
        event(f"refused: {type(error).__name__}")
        return
    if case.spoiled is None:
        drawn = (
            len(case.kwargs["jobs"])
            if "jobs" in case.kwargs
            else case.kwargs.get("n_jobs", case.kwargs.get("n_arrivals"))
        )
        assert episode_jobs(env.unwrapped) == drawn
    episode = _run(env, case, seed, policy_seed, p_invalid, p_masked)
    event("built: " + ("valid" if case.spoiled is None else "spoiled") + (", ended" if episode.metrics else ", cut"))
    if case.spoiled is None or episode.metrics is not None:
        _check_end(case, env, episode)
    env.close()
    _replay(case, seed, episode)
