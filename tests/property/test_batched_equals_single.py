"""The native batched env equals ``SyncVectorEnv`` over the single env, through random resets and actions.

For a small valid configuration of any env, a batch size, an autoreset mode and a script of steps and
partial resets (``options["reset_mask"]`` with int, list or no seeds), both are driven with the same
actions (valid ones from the masks; in the fallback and penalty modes also masked elements of the
space); every step they give the same observations, rewards and terminations. Also asserted:

- refusals: a step before the first reset (RuntimeError), an all-False reset mask (ValueError naming
  ``reset_mask``), a step while a first reset with a partial mask left copies without an episode
  (RuntimeError naming them), an action outside the space (ValueError/TypeError, changing nothing:
  the next step still equals the twin's);
- a first reset made of two partial resets equals a full reset with the same seeds;
- observations, rewards and metrics finite; each ended episode completed all its jobs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv
from hypothesis import example, given
from hypothesis import strategies as st

from schedenv.vector import NativeVectorEnv
from schedenv.workloads import Amdahl

from .budget import property_settings
from .drive import NAN_ALLOWED, any_element, episode_jobs, no_hang, valid_candidates
from .strategies import DISPATCH, MALLEABLE, MOLDABLE, Case, spoiled, valid_cases

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
BAD_SEEDS: list[Any] = [-1, 1.5, True, "a", [1, 2, 3, 4], [-1, 0, 0], math.nan]
"""Refused for 1-3 copies: negative, not integers, a list of the wrong length or with a bad entry."""
BAD_MASKS: list[Any] = [np.array([1, 0, 1]), np.ones((1, 3), dtype=np.bool_), np.array([True] * 4), "x", None]
"""Refused for 1-3 copies: not boolean, or of the wrong shape."""


@dataclass(frozen=True)
class Reset:
    """A reset in a script: its mask and seed (None, an int, or a list with None entries); ``refused``
    when one of them is bad (a ValueError naming it, nothing changed)."""

    mask: Any
    seed: Any
    refused: bool = False


def _batchable(case: Case) -> Case:
    """``case`` as the batched envs take it: Malleable's batch runs s(k) = k^p only (its docs), so an
    Amdahl speedup becomes p = 0.5; Moldable's factored mask is per component (a pair of allowed
    components may be masked), so with ``invalid_action="raise"`` a batch could refuse a drawn pair
    after SyncVectorEnv stepped some copies: there, masked pairs fall back instead."""
    if case.env_id == MALLEABLE and isinstance(case.kwargs.get("speedup"), Amdahl):
        return replace(case, kwargs={**case.kwargs, "speedup": 0.5})
    factored = case.env_id == MOLDABLE and case.kwargs.get("action_mode") == "factored"
    if factored and case.kwargs.get("invalid_action") == "raise":
        return replace(case, kwargs={**case.kwargs, "invalid_action": "fallback"})
    return case


@st.composite
def scripts(draw: st.DrawFn) -> tuple[Case, int, str, list[str | Reset], np.ndarray | None]:
    """A case, num_envs, autoreset mode, a script of steps and partial resets, and a partial first mask."""
    case = _batchable(draw(valid_cases))
    num_envs = draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["NextStep", "SameStep"]))
    masks = st.integers(1, 2**num_envs - 1).map(lambda bits: np.array([bool(bits >> i & 1) for i in range(num_envs)]))
    seeds = st.one_of(
        st.none(),
        st.integers(0, 2**16),
        st.lists(st.one_of(st.none(), st.integers(0, 2**16)), min_size=num_envs, max_size=num_envs),
    )
    reset = st.builds(Reset, masks, seeds)
    refused = st.builds(Reset, st.sampled_from(BAD_MASKS), seeds, st.just(True)) | st.builds(
        Reset, masks, st.sampled_from(BAD_SEEDS), st.just(True)
    )
    steps = st.just("step")
    script = draw(st.lists(st.one_of(steps, steps, steps, reset, refused), max_size=60))
    partial = draw(st.none() if num_envs == 1 else st.one_of(st.none(), masks.filter(lambda m: not m.all())))
    return case, num_envs, mode, script, partial


def _actions(sync: SyncVectorEnv, case: Case, rng: np.random.Generator, p_masked: float) -> Any:
    """One action per copy, valid (first candidate), or any element of the space outside "raise" mode."""
    masked_ok = case.kwargs.get("invalid_action", "fallback") != "raise"
    chosen = []
    for env in sync.envs:
        u = env.unwrapped
        if masked_ok and rng.random() < p_masked:
            chosen.append(any_element(u, rng))
        else:
            chosen.append(valid_candidates(u, rng)[0])
    return np.stack(chosen)


def _check_step(case: Case, template: Any, ours: tuple[Any, ...], theirs: tuple[Any, ...]) -> None:
    observation, rewards, terminated, truncated, info = ours
    np.testing.assert_array_equal(observation, theirs[0])
    np.testing.assert_array_equal(rewards, theirs[1])
    np.testing.assert_array_equal(terminated, theirs[2])
    assert np.isfinite(observation).all() and np.isfinite(rewards).all() and (rewards <= 0).all()
    assert not truncated.any() and not theirs[3].any()
    if terminated.any():  # every job of an ended episode completed
        metrics = info["episode_metrics"]
        assert (metrics["n_completed"][terminated] == episode_jobs(template)).all(), metrics["n_completed"]
        for name, values in metrics.items():
            if not name.startswith("_") and not name.startswith(NAN_ALLOWED):
                assert np.isfinite(values[terminated]).all(), (name, values)


def _first_reset(batch: NativeVectorEnv, sync: SyncVectorEnv, seed: int, partial: np.ndarray | None) -> None:
    """A full reset of both; for the batch, two partial resets when ``partial`` is given."""
    n = batch.num_envs
    with pytest.raises(RuntimeError, match="reset"):
        batch.step(batch.action_space.sample())
    with pytest.raises(ValueError, match="reset_mask"):
        batch.reset(seed=seed, options={"reset_mask": np.zeros(n, dtype=np.bool_)})
    expected, _ = sync.reset(seed=seed)
    if partial is None:
        observation, _ = batch.reset(seed=seed)
    else:
        batch.reset(seed=[seed + i if partial[i] else None for i in range(n)], options={"reset_mask": partial})
        with pytest.raises(RuntimeError, match=re.escape(str(np.flatnonzero(~partial).tolist()))):
            batch.step(batch.action_space.sample())
        observation, _ = batch.reset(
            seed=[seed + i if not partial[i] else None for i in range(n)], options={"reset_mask": ~partial}
        )
    np.testing.assert_array_equal(observation, expected)


@property_settings(max_examples=400)
@given(
    drawn=scripts(),
    seed=st.integers(0, 2**16),
    policy_seed=st.integers(0, 2**16),
    p_masked=st.sampled_from([0.0, 0.5]),
    p_outside=st.sampled_from([0.0, 0.2]),
)
def test_batched_env_equals_sync_vector_env(
    drawn: tuple[Case, int, str, list[str | Reset], np.ndarray | None],
    seed: int,
    policy_seed: int,
    p_masked: float,
    p_outside: float,
) -> None:
    with no_hang():
        _equal_runs(*drawn, seed, policy_seed, p_masked, p_outside)


def _equal_runs(
    case: Case,
    num_envs: int,
    mode: str,
    script: list[str | Reset],
    partial: np.ndarray | None,
    seed: int,
    policy_seed: int,
    p_masked: float,
    p_outside: float,
) -> None:
    batch = gym.make_vec(case.env_id, num_envs, "vector_entry_point", autoreset_mode=mode, **case.kwargs)
    sync = gym.make_vec(case.env_id, num_envs, "sync", vector_kwargs={"autoreset_mode": mode}, **case.kwargs)
    assert isinstance(batch, NativeVectorEnv) and isinstance(sync, SyncVectorEnv)
    rng = np.random.default_rng(policy_seed)
    _first_reset(batch, sync, seed, partial)
    for item in script:
        if item == "step":
            if rng.random() < p_outside:
                with pytest.raises((ValueError, TypeError)):
                    batch.step(np.full(batch.action_space.shape, math.nan))
            actions = _actions(sync, case, rng, p_masked)
            _check_step(case, batch.template, batch.step(actions), sync.step(actions))
        elif isinstance(item, Reset) and item.refused:
            with pytest.raises(ValueError, match=r"seed|reset_mask"):
                batch.reset(seed=item.seed, options={"reset_mask": item.mask})
        elif isinstance(item, Reset):
            ours, _ = batch.reset(seed=item.seed, options={"reset_mask": item.mask})
            theirs, _ = sync.reset(seed=item.seed, options={"reset_mask": item.mask})
            np.testing.assert_array_equal(ours, theirs)
    batch.close()
    sync.close()


SEEDS = st.one_of(
    st.none(), st.integers(0, 2**70), st.integers(0, 2**16).map(np.int64), st.sampled_from([*BAD_SEEDS, np.int64(-2)])
)


@property_settings(max_examples=150)
@given(case=valid_cases, seed=SEEDS)
@example(case=Case(DISPATCH, {"n_arrivals": 3}), seed=np.int64(3))  # the single env refused NumPy seeds
@example(case=Case(MOLDABLE, {"n_jobs": 3, "n_procs": 4}), seed=-1)  # ... and raised Gymnasium's Error class
@example(case=Case(MALLEABLE, {"n_jobs": 3}), seed=True)  # ... and took True for 1
def test_single_and_batched_env_accept_the_same_seeds(case: Case, seed: Any) -> None:
    """A seed the batch refuses (ValueError naming ``seed``) the single env refuses alike; one both take
    gives the same first observation."""
    case = _batchable(case)
    single = gym.make(case.env_id, disable_env_checker=True, **case.kwargs)
    batch = gym.make_vec(case.env_id, 1, "vector_entry_point", **case.kwargs)
    outcomes = []
    for reset in (single.reset, batch.reset):
        try:
            outcomes.append(np.asarray(reset(seed=seed)[0]).reshape(-1))
        except ValueError as error:
            assert "seed" in str(error), error
            outcomes.append(None)
    if outcomes[0] is None or outcomes[1] is None:
        assert outcomes[0] is None and outcomes[1] is None, f"seed={seed!r}: only one of the two refused it"
    elif seed is not None:
        np.testing.assert_array_equal(outcomes[0], outcomes[1])


@property_settings(max_examples=150)
@given(
    case=spoiled(),
    num_envs=st.sampled_from([1, 2, 0, -1, 2.5, True, "2", None]),
    mode=st.sampled_from(["NextStep", "SameStep", "Nope", 3]),
)
def test_batched_env_refuses_what_the_single_env_refuses(case: Case, num_envs: Any, mode: Any) -> None:
    """With one argument spoiled, the batch refuses (a ValueError/TypeError naming an argument) exactly
    when the single env does, or ``num_envs`` / ``autoreset_mode`` when those are wrong."""
    case = _batchable(case)
    try:
        gym.make(case.env_id, disable_env_checker=True, **case.kwargs).reset(seed=0)
        single_error: Exception | None = None
    except (ValueError, TypeError) as error:
        single_error = error
    bad_batch = not (isinstance(num_envs, int) and not isinstance(num_envs, bool) and num_envs >= 1)
    bad_batch |= mode not in ("NextStep", "SameStep")
    try:
        batch = gym.make_vec(case.env_id, num_envs, "vector_entry_point", autoreset_mode=mode, **case.kwargs)
        batch.reset(seed=0)
    except (ValueError, TypeError) as error:
        named = [*case.kwargs, "num_envs", "autoreset_mode"]
        assert any(name in str(error) for name in named), f"{error!r} names none of {named}"
        assert single_error is not None or bad_batch, f"only the batch refused: {error!r}"
        return
    assert single_error is None and not bad_batch, f"the batch built, but the single env refused: {single_error!r}"
