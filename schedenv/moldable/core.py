"""Env cores of the moldable family: the translation between the env's actions and observations and
the simulator of one episode.

Two cores share one interface (``apply``, ``observation``, ``mask``, ``view`` and the counters the
env's ``info`` reports):

- ``ReferenceCore`` (here): the pure simulator ``MoldableSim`` plus numpy translation; the
  specification of the env's observation and mask.
- ``FastCore`` (``fast.py``): one numba call per step, used by the env; tested against this one
  step by step (``tests/moldable/test_fast_core.py``).
"""

from __future__ import annotations

import math

import numpy as np

from schedenv.moldable.sim import MoldableSim, MoldableView, Outcome, view_of
from schedenv.moldable.workload import MoldableJobSet

SLOT_FEATURES = 8
"""Per-slot features (see the env's Observation Space table)."""
GLOBAL_FEATURES = 7
"""Summary features after the slots (see the env's Observation Space table)."""


def encode_action(slot: int, procs: int, n_procs: int) -> int:
    """The Discrete action that starts window slot ``slot`` on ``procs`` processors."""
    return slot * n_procs + procs - 1


def decode_action(action: int, n_procs: int, max_jobs: int) -> tuple[int, int] | None:
    """``(slot, procs)`` of a start action, or None for the wait action (the last one)."""
    if action == max_jobs * n_procs:
        return None
    return action // n_procs, action % n_procs + 1


class ReferenceCore:
    """``MoldableSim`` with the observation and mask built in numpy (the specification)."""

    def __init__(self, jobs: MoldableJobSet, max_jobs: int, time_scale: float) -> None:
        self.jobs, self.max_jobs, self.time_scale = jobs, max_jobs, time_scale
        self.n_procs = jobs.n_procs
        self.sim = MoldableSim(jobs, max_jobs)
        self._counts = np.arange(1, self.n_procs + 1)
        self.mask = np.zeros(max_jobs * self.n_procs + 1, dtype=np.int8)
        self._refresh_mask()

    # ----------------------------------------------------------------- counters
    @property
    def done(self) -> bool:
        return self.sim.done

    @property
    def time(self) -> float:
        return self.sim.state.time

    @property
    def n_queued(self) -> int:
        return self.sim.state.n_queued

    @property
    def n_running(self) -> int:
        return self.sim.state.n_running

    @property
    def free(self) -> int:
        return self.sim.state.free

    @property
    def window_size(self) -> int:
        return self.sim.window_size

    @property
    def total_objective(self) -> float:
        return self.sim.state.total_objective

    # ----------------------------------------------------------------- steps
    def apply(self, action: int) -> Outcome:
        """Start or wait as the env's ``action`` says; ``ValueError`` (state unchanged) when it does not fit."""
        decision = decode_action(action, self.n_procs, self.max_jobs)
        outcome = self.sim.wait() if decision is None else self.sim.start(*decision)
        self._refresh_mask()
        return outcome

    def view(self) -> MoldableView:
        """A read-only snapshot of the state for baselines."""
        return view_of(self.sim)

    def observation(self) -> np.ndarray:
        """The flat observation of the env's Observation Space table (a fresh array)."""
        sim = self.sim
        s = sim.state
        m, scale = self.n_procs, self.time_scale
        obs = np.zeros(SLOT_FEATURES * self.max_jobs + GLOBAL_FEATURES, dtype=np.float32)
        w = sim.window_size
        if w:
            slots = obs[: SLOT_FEATURES * self.max_jobs].reshape(self.max_jobs, SLOT_FEATURES)[:w]
            features = s.queue_features[:w]
            count = np.minimum(features[:, 2], max(s.free, 1)).astype(np.int64)
            times = np.empty((w, 4))
            times[:, 0] = s.time - s.queue_submit[:w]
            times[:, 1:3] = features[:, 0:2]
            times[:, 3] = s.queue_runtime[np.arange(w), count - 1]
            times[np.isinf(times[:, 3]), 3] = 0.0
            slots[:, 0] = 1.0
            slots[:, 1:5] = np.log1p(times / scale)
            slots[:, 5:8] = features[:, 2:5] / m
        tail = obs[-GLOBAL_FEATURES:]
        tail[0] = s.free / m
        tail[1] = s.n_running / m
        tail[2] = math.log1p(s.n_queued)
        tail[3] = math.log1p(s.n_queued - w)
        if s.n_queued > w:
            tail[4] = math.log1p(float(s.queue_features[w : s.n_queued, 0].sum()) / (m * scale))
        if s.n_running:
            remaining = s.running_end[: s.n_running] - s.time
            tail[5] = math.log1p(float(remaining.min()) / scale)
            tail[6] = math.log1p(float(remaining @ s.running_procs[: s.n_running]) / (m * scale))
        return obs

    def _refresh_mask(self) -> None:
        sim, mask = self.sim, self.mask
        mask[:] = 0
        if not sim.done:
            s = sim.state
            w = sim.window_size
            fits = (s.queue_runtime[:w] < np.inf) & (self._counts <= s.free)
            mask[: w * self.n_procs] = fits.ravel()
            mask[-1] = sim.can_wait()
