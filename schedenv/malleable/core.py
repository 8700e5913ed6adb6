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

from schedenv.analysis.hesrpt import hesrpt_allocation, hesrpt_allocation_rows
from schedenv.malleable.sim import (
    MIN_ALLOCATION,
    MalleableParams,
    MalleableState,
    StepOutcome,
    advance,
    initial_state,
    is_done,
)
from schedenv.validation import as_real_array

SLOT_FEATURES = 3
"""Per-slot features: valid, log1p(remaining / scale), log1p(size / scale)."""
GLOBAL_FEATURES = 3
"""Summary features: log1p(jobs in system), log1p(jobs outside the window), log1p(their work / scale)."""


def check_action(action: object, max_jobs: int, low: float = 0.0, length: int | None = None) -> np.ndarray:
    """``action`` as float64 entries in [low, 1] (0 for weights, -1 for the signed modes), ``max_jobs + 1``
    of them (``length`` if given: 1 in the ``"exponent"`` mode), or ``ValueError`` naming what is wrong
    (docs/envs/index.md)."""
    values = as_real_array("action", action, allow_bool=True)
    expected = max_jobs + 1 if length is None else length
    if values.shape != (expected,):
        raise ValueError(f"action has shape {values.shape}; expected ({expected},)")
    if not np.isfinite(values).all():
        raise ValueError(f"action contains NaN or inf: {values.tolist()}")
    if values.min() < low or values.max() > 1.0:
        raise ValueError(f"action entries must lie in [{low:g}, 1]; got min {values.min()!r}, max {values.max()!r}")
    return values


ALLOCATION_MODES = ("normalized", "fractions")
"""How an action becomes fractions theta (the env's ``allocation`` argument):

- "normalized": the counted weights are scaled to sum to 1 (every server busy; the default).
- "fractions": the counted weights are fractions of the servers; a sum <= 1 is used as is (the rest
  of the servers idle, as the heSRPT paper's model allows, Lemma 1), a sum > 1 is scaled to 1.

In both modes an all-zero action splits the servers equally among the jobs (EQUI), as does one
whose total is below ``MIN_ALLOCATION`` (subnormal weights).
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
    if total < MIN_ALLOCATION:
        return np.full(n_jobs, 1.0 / n_jobs)
    if mode == "fractions" and total <= 1.0:
        return theta
    return theta / total


ACTION_MODES = ("weights", "log", "residual", "exponent")
"""How the env reads an action (the env's ``action_mode`` argument; see its Action Space section):

- "weights": ``Box(0, 1)`` weights per slot and one for the group outside the window (the default).
- "log": ``Box(-1, 1)`` log-weights: slot s gets weight 10^(LOG_DECADES * a_s), so one action spans
  12 orders of magnitude of allocations and a = 0 is EQUI; every weight is positive.
- "residual": ``Box(-1, 1)`` adjustments of the paper policy: the env computes heSRPT's allocation
  (Theorem 5; Adaptive-heSRPT online, §5.3) for the jobs present and multiplies slot s's fraction by
  10^(RESIDUAL_DECADES * a_s) (the group's by that of the last entry); a = 0 is the paper policy.
- "exponent": ``Box(-1, 1, (1,))``, one number: the env applies heSRPT's allocation (Theorem 5) for the
  jobs present computed with the exponent p' = p^(2^a) instead of the speedup's p, so p' ranges over
  [p^2, sqrt(p)] inside (0, 1) and a = 0 is the paper policy. Online, A-heSRPT is not optimal
  (§5.3), and a mis-specified p' can beat it (docs/envs/malleable.md measures by how much).

The signed modes end in weights that the ``"normalized"`` allocation turns into fractions.
"""
LOG_DECADES = 6.0
"""Decades of weight per unit of a log-space action: a in [-1, 1] gives weights in [1e-6, 1e6]."""
RESIDUAL_DECADES = 2.0
"""Decades per unit of a residual action: a in [-1, 1] scales the paper policy's fraction by [0.01, 100]."""


EXPONENT_BASE = 2.0
"""p' = p^(EXPONENT_BASE^a) in the ``"exponent"`` mode: a in [-1, 1] gives p' in [p^2, sqrt(p)]."""


def effective_exponent(value: float, p: float) -> float:
    """The heSRPT exponent p' = p^(EXPONENT_BASE^a) that the ``"exponent"`` action ``value`` stands for."""
    return float(p ** (EXPONENT_BASE**value))


def log_weights(values: np.ndarray) -> np.ndarray:
    """Weights in (0, 1] from a checked log-space action: 10^(LOG_DECADES * (a - max a))."""
    return np.power(10.0, LOG_DECADES * (values - values.max(axis=-1, keepdims=True)))


def hesrpt_slot_fractions(
    remaining: np.ndarray, weight: np.ndarray, window: np.ndarray, max_jobs: int, p: float
) -> np.ndarray:
    """heSRPT's fractions (Theorem 5 with the jobs' weights, Corollary 1) per window slot, and last
    the total of the jobs outside the window; zeros for empty slots (the residual mode's base).
    ``slot_fractions_rows`` is the same for a batch (of copies of the batched env)."""
    fractions = np.zeros(max_jobs + 1)
    n_jobs = remaining.size
    if n_jobs == 0:
        return fractions
    base = hesrpt_allocation(remaining, p, weights=weight)
    fractions[: window.size] = base[window]
    if n_jobs > window.size:
        fractions[-1] = _outside_total(base, window)
    return fractions


def _outside_total(theta: np.ndarray, window: np.ndarray) -> float:
    """The total fraction of the jobs outside the window (``theta`` in state order)."""
    outside = np.ones(theta.size, dtype=bool)
    outside[window] = False
    return float(theta[outside].sum())


def slot_fractions_rows(
    remaining: np.ndarray,
    weight: np.ndarray,
    n_jobs: np.ndarray,
    window: np.ndarray,
    n_window: np.ndarray,
    p: np.ndarray,
) -> np.ndarray:
    """``hesrpt_slot_fractions`` of a batch, (B, K + 1), bit for bit: row i's jobs are ``remaining[i, :n_jobs[i]]``
    and ``weight[i, :n_jobs[i]]`` (state order), its window ``window[i, :n_window[i]]`` (K = ``window.shape[1]``).
    Both compute Theorem 5 with ``schedenv.analysis.hesrpt``'s one formula."""
    b, max_jobs = window.shape
    fractions = np.zeros((b, max_jobs + 1))
    columns = int(n_jobs.max(initial=0))  # the jobs present are each row's first n_jobs entries
    if columns == 0:
        return fractions
    theta = hesrpt_allocation_rows(remaining[:, :columns], weight[:, :columns], n_jobs, p)
    in_window = np.arange(max_jobs) < n_window[:, None]
    fractions[:, :max_jobs] = np.where(in_window, np.take_along_axis(theta, np.where(in_window, window, 0), 1), 0.0)
    for i in np.flatnonzero(n_jobs > n_window):  # row by row: numpy's summation order depends on the count
        fractions[i, -1] = _outside_total(theta[i, : n_jobs[i]], window[i, : n_window[i]])
    return fractions


def normalized_rows(weights: np.ndarray) -> np.ndarray:
    """Each row of ``weights`` divided by its largest entry (rows of zeros stay zero)."""
    top = weights.max(axis=-1, keepdims=True)
    return np.divide(weights, top, out=weights.copy(), where=top > 0)


def residual_weights(
    values: np.ndarray, remaining: np.ndarray, weight: np.ndarray, window: np.ndarray, p: float
) -> np.ndarray:
    """Weights in [0, 1] that apply heSRPT's fractions adjusted by a checked residual action ``values``.

    heSRPT's fraction of each job in the window is multiplied by 10^(RESIDUAL_DECADES * a_slot); the
    jobs outside the window share their total fraction times 10^(RESIDUAL_DECADES * a_last) (split
    equally by the allocation). With a = 0 and no job outside the window, the env applies heSRPT's
    allocation exactly (to rounding). ``remaining`` and ``weight`` are the jobs present, in state order.
    """
    return normalized_rows(
        hesrpt_slot_fractions(remaining, weight, window, values.size - 1, p) * _residual_factors(values)
    )


def _residual_factors(values: np.ndarray) -> np.ndarray:
    """The residual mode's factor 10^(RESIDUAL_DECADES * a) of each entry of a checked action."""
    return np.power(10.0, RESIDUAL_DECADES * values)


def exponent_weights(
    value: float, remaining: np.ndarray, weight: np.ndarray, window: np.ndarray, max_jobs: int, p: float
) -> np.ndarray:
    """Weights in [0, 1] that apply heSRPT's fractions computed with the exponent p' of a checked
    ``"exponent"`` action ``value`` (``effective_exponent``); a = 0 is heSRPT itself."""
    return normalized_rows(hesrpt_slot_fractions(remaining, weight, window, max_jobs, effective_exponent(value, p)))


def weights_of_rows(
    actions: np.ndarray,
    mode: str,
    remaining: np.ndarray,
    weight: np.ndarray,
    window: np.ndarray,
    n_jobs: np.ndarray,
    n_window: np.ndarray,
    p: np.ndarray,
) -> np.ndarray:
    """The batched env's ``"weights"`` actions, (B, K + 1), for a checked batch in ``mode`` ("log",
    "residual": (B, K + 1); "exponent": (B, 1)): the single env's conversions (``log_weights``,
    ``residual_weights``, ``exponent_weights``) done on every copy at once (copy i's jobs are
    ``remaining[i, :n_jobs[i]]``, ``weight[i, :n_jobs[i]]``, ``window[i, :n_window[i]]``), equal to
    them bit for bit: the same operations on each element (``tests/malleable/test_action_modes.py``).
    """
    if mode == "log":
        return log_weights(actions)
    if mode == "residual":
        return normalized_rows(
            slot_fractions_rows(remaining, weight, n_jobs, window, n_window, p) * _residual_factors(actions)
        )
    exponents = np.array([effective_exponent(float(a), float(q)) for a, q in zip(actions[:, 0], p, strict=True)])
    return normalized_rows(slot_fractions_rows(remaining, weight, n_jobs, window, n_window, exponents))


EXPONENT_GRID = np.linspace(-1.0, 1.0, 401)
"""The ``"exponent"`` actions ``nearest_exponent`` compares (a = 0 among them)."""


def nearest_exponent(
    weights: np.ndarray, remaining: np.ndarray, weight: np.ndarray, window: np.ndarray, max_jobs: int, p: float
) -> tuple[np.ndarray, bool]:
    """The ``"exponent"`` action on ``EXPONENT_GRID`` whose allocation is nearest (largest fraction
    difference) to that of the ``"weights"`` action ``weights``, and whether it is exact (within 1e-6).

    Only heSRPT-family allocations are exact (heSRPT itself at a = 0); for other policies it is the
    closest one the one-number Box can express.
    """
    total = float(np.sum(weights))
    target = np.asarray(weights, dtype=np.float64) / total if total > 0 else np.zeros(max_jobs + 1)
    distances = []
    for value in EXPONENT_GRID:
        fractions = hesrpt_slot_fractions(remaining, weight, window, max_jobs, effective_exponent(value, p))
        distances.append(float(np.abs(fractions - target).max(initial=0.0)))
    best = min(range(EXPONENT_GRID.size), key=lambda i: (distances[i], abs(EXPONENT_GRID[i])))  # ties: a = 0
    return np.array([EXPONENT_GRID[best]], dtype=np.float32), distances[best] <= 1e-6


def signed_action(weights: np.ndarray, mode: str, base: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """The ``"log"`` or ``"residual"`` action nearest to the ``"weights"`` action ``weights``.

    Log mode: log10(w / max w) / LOG_DECADES; residual mode: log10(w / base) / RESIDUAL_DECADES with
    ``base`` from ``hesrpt_slot_fractions`` (0 where both are 0). Clipped to [-1, 1]: a weight
    below 1e-12 of the largest (log) or a factor outside [0.01, 100] of heSRPT's (residual) is
    the Box's edge, which is how SRPT-like allocations (zeros) are approximated in these modes.
    Returns the action and whether it is exact (nothing clipped).
    """
    weights = np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "log":
            top = weights.max()
            action = np.log10(weights / top) / LOG_DECADES if top > 0 else np.zeros_like(weights)
        else:
            assert base is not None
            action = np.log10(weights / base) / RESIDUAL_DECADES
            action[(weights == 0) & (base == 0)] = 0.0
    action = np.nan_to_num(action, nan=0.0, posinf=2.0, neginf=-2.0)
    exact = bool(np.abs(action).max(initial=0.0) <= 1.0 + 1e-6)
    return np.clip(action, -1.0, 1.0).astype(np.float32), exact


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
