"""Env cores: the translation layer between the env's action/observation and the simulator.

A core owns the simulator state of one episode and turns a validated action into the next epoch,
keeping the job window and observation up to date. Two cores share this interface:

- ``ReferenceCore`` (here): the pure simulator ``sim.advance`` plus numpy translation; any speedup.
- ``FastCore`` (``fast.py``): one numba kernel (``kernel.step``) per step for s(k) = k^p; tested against the reference
  step by step (same completions and rewards to rounding).
"""

from __future__ import annotations

import math

import numpy as np

from schedenv.malleable.sim import MalleableParams, MalleableState, StepOutcome, advance, initial_state, is_done
from schedenv.validation import as_real_array

SLOT_FEATURES = 3
"""Per-slot features: valid, log1p(remaining / scale), log1p(size / scale)."""
GLOBAL_FEATURES = 3
"""Summary features: log1p(jobs in system), log1p(jobs outside the window), log1p(their work / scale)."""


def check_action(action: object, max_jobs: int) -> np.ndarray:
    """``action`` as float64 weights, or ``ValueError`` naming what is wrong (docs/envs/index.md)."""
    weights = as_real_array("action", action, allow_bool=True)
    if weights.shape != (max_jobs + 1,):
        raise ValueError(f"action has shape {weights.shape}; expected ({max_jobs + 1},)")
    if not np.isfinite(weights).all():
        raise ValueError(f"action contains NaN or inf: {weights.tolist()}")
    if weights.min() < 0.0 or weights.max() > 1.0:
        raise ValueError(f"action entries must lie in [0, 1]; got min {weights.min()!r}, max {weights.max()!r}")
    return weights


ALLOCATION_MODES = ("normalized", "fractions")
"""How an action becomes fractions theta (the env's ``allocation`` argument):

- "normalized": the counted weights are scaled to sum to 1 (every server busy; the default).
- "fractions": the counted weights are fractions of the servers; a sum <= 1 is used as is (the rest
  of the servers idle, as the heSRPT paper's model allows, Lemma 1), a sum > 1 is scaled to 1.

In both modes an all-zero action splits the servers equally among the jobs (EQUI).
"""


def allocation(weights: np.ndarray, window: np.ndarray, n_jobs: int, mode: str = "normalized") -> np.ndarray:
    """Fractions theta (in state order) from validated slot weights; see ``ALLOCATION_MODES``."""
    n_window = window.size
    n_outside = n_jobs - n_window
    theta = np.empty(n_jobs)
    theta[window] = weights[:n_window]
    if n_outside:
        outside = np.ones(n_jobs, dtype=bool)
        outside[window] = False
        theta[outside] = weights[-1] / n_outside
    total = theta.sum()
    if total <= 0.0:
        return np.full(n_jobs, 1.0 / n_jobs)
    if mode == "fractions" and total <= 1.0:
        return theta
    return theta / total


class ReferenceCore:
    """The pure simulator with numpy translation (works for every speedup)."""

    def __init__(self, params: MalleableParams, max_jobs: int, scale: float, allocation: str = "normalized") -> None:
        self.params, self.max_jobs, self.scale, self.allocation = params, max_jobs, scale, allocation
        self.state: MalleableState = initial_state(params)
        self.window = np.empty(0, dtype=np.int64)
        self._refresh_window()

    @property
    def done(self) -> bool:
        """Every job has arrived and completed."""
        return is_done(self.params, self.state)

    @property
    def time(self) -> float:
        """The current decision epoch."""
        return self.state.time

    @property
    def n_jobs(self) -> int:
        """Jobs in the system."""
        return self.state.n_jobs

    def step(self, action: object) -> tuple[StepOutcome, np.ndarray]:
        """Apply ``action`` until the next epoch; returns the outcome and the theta used."""
        theta = allocation(check_action(action, self.max_jobs), self.window, self.state.n_jobs, self.allocation)
        self.state, outcome = advance(self.params, self.state, theta)
        self._refresh_window()
        return outcome, theta

    def observation(self) -> np.ndarray:
        """The flat observation of the env's Observation Space table."""
        state, window = self.state, self.window
        obs = np.zeros(SLOT_FEATURES * self.max_jobs + GLOBAL_FEATURES, dtype=np.float32)
        slots = obs[: SLOT_FEATURES * self.max_jobs].reshape(self.max_jobs, SLOT_FEATURES)
        slots[: window.size, 0] = 1.0
        slots[: window.size, 1] = np.log1p(state.remaining[window] / self.scale)
        slots[: window.size, 2] = np.log1p(state.size[window] / self.scale)
        n_outside = state.n_jobs - window.size
        outside_work = float(state.remaining.sum() - state.remaining[window].sum()) if n_outside else 0.0
        obs[-3] = math.log1p(state.n_jobs)
        obs[-2] = math.log1p(n_outside)
        obs[-1] = math.log1p(max(outside_work, 0.0) / self.scale)
        return obs

    def _refresh_window(self) -> None:
        # Least remaining size first; the stable sort keeps arrival order among ties.
        self.window = np.argsort(self.state.remaining, kind="stable")[: self.max_jobs]
