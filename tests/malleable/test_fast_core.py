"""The compiled core equals the reference core (pure simulator) step by step (STYLE.md, gymnax)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401
from schedenv.malleable.core import ReferenceCore
from schedenv.malleable.fast import FastCore
from schedenv.workloads import Exponential


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_jobs": 40, "max_jobs": 8, "speedup": 0.3},
        {"n_jobs": 40, "max_jobs": 64, "speedup": 0.99, "objective": "flow_time"},
        {"mode": "online", "n_arrivals": 300, "load": 0.9, "max_jobs": 4, "speedup": 0.6},
        {"mode": "online", "n_arrivals": 300, "load": 0.2, "max_jobs": 16, "speedup": 1.0, "size_dist": Exponential(1)},
        {"jobs": [1.0, 1.0, 2.0, 2.0, 3.0], "max_jobs": 2, "speedup": 0.5},
        {"n_jobs": 40, "max_jobs": 8, "speedup": 0.3, "allocation": "fractions"},
        {"mode": "online", "n_arrivals": 300, "load": 0.7, "max_jobs": 4, "speedup": 0.8, "allocation": "fractions"},
    ],
)
def test_fast_core_matches_the_reference_step_by_step(kwargs: dict) -> None:
    env = gym.make("schedenv/Malleable-v0", **kwargs)
    inner = env.unwrapped
    env.reset(seed=9)
    params = inner.params
    fast = FastCore(params, inner.max_jobs, inner.scale, inner.allocation)
    reference = ReferenceCore(params, inner.max_jobs, inner.scale, inner.allocation)
    rng = np.random.default_rng(0)
    while not reference.done:
        assert not fast.done
        np.testing.assert_array_equal(fast.window, reference.window)
        np.testing.assert_allclose(fast.observation(), reference.observation(), rtol=1e-6)
        # Random weights, with exact zeros, whole-group weights and small sums (idle servers with
        # allocation="fractions"), stress every allocation branch.
        action = rng.random(inner.max_jobs + 1).astype(np.float32) * (rng.random(inner.max_jobs + 1) < 0.7)
        action *= np.float32(0.05 if rng.random() < 0.3 else 1.0)
        fast_outcome, fast_theta = fast.step(action)
        ref_outcome, ref_theta = reference.step(action)
        np.testing.assert_allclose(fast_theta, ref_theta, rtol=1e-12)
        assert fast_outcome.accrued_objective == pytest.approx(ref_outcome.accrued_objective, rel=1e-10)
        assert fast_outcome.elapsed == pytest.approx(ref_outcome.elapsed, rel=1e-10, abs=1e-12)
        assert [r.job_id for r in fast_outcome.completed] == [r.job_id for r in ref_outcome.completed]
        for a, b in zip(fast_outcome.completed, ref_outcome.completed, strict=True):
            assert a.completion == pytest.approx(b.completion, rel=1e-10)
        state_fast, state_ref = fast.state, reference.state
        np.testing.assert_array_equal(state_fast.job_id, state_ref.job_id)
        np.testing.assert_allclose(state_fast.remaining, state_ref.remaining, rtol=1e-9)
        assert state_fast.work_done == pytest.approx(state_ref.work_done, rel=1e-10)
    assert fast.done


def test_fast_core_refuses_an_invalid_action_without_changing_state() -> None:
    env = gym.make("schedenv/Malleable-v0", n_jobs=5)
    env.reset(seed=0)
    inner = env.unwrapped
    core = FastCore(inner.params, inner.max_jobs, inner.scale)
    before = core.state
    action = np.ones(inner.max_jobs + 1)
    action[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        core.step(action)
    np.testing.assert_array_equal(core.state.remaining, before.remaining)
    assert core.time == before.time
