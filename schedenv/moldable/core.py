"""Env cores of the moldable family: the translation between the env's actions and observations and
the simulator of one episode.

Two cores share one interface (``step``, ``observation``, ``mask``, ``state`` and the counters the
env's ``info`` reports):

- ``ReferenceCore`` (here): the pure simulator ``MoldableSim`` plus numpy translation; the
  specification of the env's observation and mask.
- ``FastCore`` (``fast.py``): one numba call (``kernel.step``) per step, used by the env; tested against this one
  step by step (``tests/moldable/test_fast_core.py``).
"""

from __future__ import annotations

import math

import numpy as np

from schedenv.moldable.sim import MoldableSim, MoldableView, Outcome, view_of
from schedenv.moldable.workload import CirneWorkload, MoldableJobSet

SLOT_FEATURES = 8
"""Per-slot features (see the env's Observation Space table)."""
GLOBAL_FEATURES = 7
"""Summary features after the slots (see the env's Observation Space table)."""
RELEASE_FEATURES = 2
"""Features per running job of the release profile after the summary (remaining time, processors)."""
PARAM_FEATURES = 4
"""Scenario parameters appended with ``observe_params`` (see the env's Observation Space table)."""
WIDTH_KINDS = 5
"""Widths offered per window job in the ranked action mode (see the env's Action Space)."""
CANDIDATE_FEATURES = 8
"""Features per candidate in the ranked action mode (see the env's Observation Space table)."""
RESERVATION_FEATURES = 3
"""The EASY reservation's features at the end of the ranked observation (before the scenario parameters)."""
PAPER_ALPHA = 1.0
"""HRF's processor budget as a fraction of m in the paper's comparisons (HRF paper §6.2, Fig. 6)."""
PAPER_THRESHOLD = 0.9
"""HRF's largest share of m for one job in the paper's comparisons (HRF paper §6.2, Fig. 5)."""
DEFAULT_MAX_RUNNING = 16
"""Running jobs in the release profile by default (HRF-EASY's 99th percentile at the paper's light load)."""


def obs_length(max_jobs: int, max_running: int) -> int:
    """Length of the core's observation: window slots, summary, release profile (no scenario parameters)."""
    return SLOT_FEATURES * max_jobs + GLOBAL_FEATURES + RELEASE_FEATURES * max_running


def n_candidates(max_jobs: int) -> int:
    """Candidates of the ranked action mode: the paper policy's decision, ``WIDTH_KINDS`` per window slot, wait."""
    return 1 + WIDTH_KINDS * max_jobs + 1


def ranked_obs_length(max_jobs: int, max_running: int) -> int:
    """Length of the ranked mode's core observation: candidates, summary, release profile, EASY reservation."""
    return (
        CANDIDATE_FEATURES * n_candidates(max_jobs)
        + GLOBAL_FEATURES
        + RELEASE_FEATURES * max_running
        + RESERVATION_FEATURES
    )


def encode_action(slot: int, procs: int, n_procs: int) -> int:
    """The Discrete action that starts window slot ``slot`` on ``procs`` processors."""
    return slot * n_procs + procs - 1


def decode_action(action: int, n_procs: int, max_jobs: int) -> tuple[int, int] | None:
    """``(slot, procs)`` of a start action, or None for the wait action (the last one)."""
    if action == max_jobs * n_procs:
        return None
    return action // n_procs, action % n_procs + 1


def factored_mask(mask: np.ndarray, max_jobs: int, n_procs: int) -> np.ndarray:
    """The factored action space's mask (slot or wait, then count) from flat masks (last axis): a slot is
    allowed if it may start on some count, a count if some slot may start on it (all ones once done).

    The definition: the envs write the same mask from the state (``kernel.write_factored_mask``), checked
    equal to this in ``tests/moldable/test_vector.py``."""
    starts = mask[..., : max_jobs * n_procs].reshape(*mask.shape[:-1], max_jobs, n_procs)
    return np.concatenate((starts.max(axis=-1), mask[..., -1:], starts.max(axis=-2)), axis=-1)


def scenario_params(n_procs: int, generator: CirneWorkload | None, jobs: MoldableJobSet | None) -> np.ndarray:
    """The scenario parameters of the env's Observation Space table (float32): log2(m) / 10, the work
    load rho / (1 + rho), the mean sigma s / (1 + s), log10 of the work range / 10. From the
    generator's parameters when there is one, else from the statistics of the fixed job set."""
    if generator is not None:
        rho = generator.work_load(n_procs)
        sigma = (generator.sigma_low + generator.sigma_high) / 2
        spread = generator.work_high / generator.work_low
    else:
        assert jobs is not None
        span = float(jobs.submit.max() - jobs.submit.min())
        rho = float(jobs.size.mean()) * (jobs.n_jobs - 1) / (n_procs * span) if span > 0 else math.inf
        downey = np.isfinite(jobs.L)
        sigma = float(jobs.sigma[downey].mean()) if downey.any() else 0.0
        spread = float(jobs.size.max() / jobs.size.min())
    load = 1.0 if math.isinf(rho) else rho / (1 + rho)
    return np.array([math.log2(n_procs) / 10, load, sigma / (1 + sigma), math.log10(spread) / 10], dtype=np.float32)


class ReferenceCore:
    """``MoldableSim`` with the observation and mask built in numpy (the specification)."""

    def __init__(
        self, jobs: MoldableJobSet, max_jobs: int, time_scale: float, max_running: int = DEFAULT_MAX_RUNNING
    ) -> None:
        self.jobs, self.max_jobs, self.time_scale, self.max_running = jobs, max_jobs, time_scale, max_running
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
    def step(self, action: int) -> Outcome:
        """Start or wait as the env's ``action`` says; ``ValueError`` (state unchanged) when it does not fit."""
        decision = decode_action(action, self.n_procs, self.max_jobs)
        outcome = self.sim.wait() if decision is None else self.sim.start(*decision)
        self._refresh_mask()
        return outcome

    @property
    def state(self) -> MoldableView:
        """A read-only snapshot of the state for baselines."""
        return view_of(self.sim)

    def observation(self) -> np.ndarray:
        """The flat observation of the env's Observation Space table (a fresh array)."""
        sim = self.sim
        s = sim.state
        m, scale = self.n_procs, self.time_scale
        obs = np.zeros(obs_length(self.max_jobs, self.max_running), dtype=np.float32)
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
        tail = obs[SLOT_FEATURES * self.max_jobs :]
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
            by_end = np.argsort(s.running_end[: s.n_running], kind="stable")[: self.max_running]
            release = tail[GLOBAL_FEATURES : GLOBAL_FEATURES + RELEASE_FEATURES * by_end.size]
            release[0::2] = np.log1p(remaining[by_end] / scale)
            release[1::2] = s.running_procs[by_end] / m
        return obs

    def _refresh_mask(self) -> None:
        """The decision's mask; all ones once the episode is over (nothing is left to decide)."""
        sim, mask = self.sim, self.mask
        mask[:] = sim.done
        if not sim.done:
            s = sim.state
            w = sim.window_size
            fits = (s.queue_runtime[:w] < np.inf) & (self._counts <= s.free)
            mask[: w * self.n_procs] = fits.ravel()
            mask[-1] = sim.can_wait()
