"""The env's compiled core for s(k) = k^p: one call of ``kernel.step`` per decision epoch.

Same semantics as ``ReferenceCore`` (``core.py``) and the pure simulator (``sim.py``), which stay the
specification: a test steps both with the same actions and compares completions and rewards.
``FastCore`` owns one episode's kernel state (``kernel.MalleableArrays`` with one copy: the layout of
the batched env and the fast path); ``state`` hands baselines read-only copies.
"""

from __future__ import annotations

import numpy as np

from schedenv.malleable import kernel
from schedenv.malleable.core import GLOBAL_FEATURES, SLOT_FEATURES, check_action
from schedenv.malleable.sim import MalleableParams, MalleableState, StepOutcome
from schedenv.records import JobRecord
from schedenv.validation import as_real_array
from schedenv.workloads import Power

_PRESENT = [kernel.ARRIVAL, kernel.SIZE, kernel.REMAINING, kernel.WEIGHT]
"""The rows of ``jobs`` that ``MalleableState`` holds (after ``ids[JOB_ID]``)."""


class FastCore:
    """The compiled core (``Power`` speedups only; the env falls back to ``ReferenceCore`` otherwise)."""

    time: float
    """The current decision epoch (read from the kernel's state after every change, as ``n_jobs`` and ``done``)."""
    n_jobs: int
    """Jobs in the system."""
    done: bool
    """Every job has arrived and completed."""

    def __init__(self, params: MalleableParams, max_jobs: int, scale: float, allocation: str = "normalized") -> None:
        if not isinstance(params.speedup, Power):
            raise ValueError(f"FastCore needs a Power speedup, got {params.speedup!r}")
        self.params, self.max_jobs, self.scale, self.allocation = params, max_jobs, scale, allocation
        self._fractions = allocation == "fractions"
        self._p = params.speedup.p
        self._slowdown = params.objective == "slowdown"
        self._state = kernel.MalleableArrays(1, params.arrival_times.size).views(0)
        self._ids, self._jobs, self._ints, self._floats = self._state
        self._window = np.empty(max_jobs, dtype=np.int64)
        self._obs = np.zeros(SLOT_FEATURES * max_jobs + GLOBAL_FEATURES, dtype=np.float32)
        kernel.start(*self._state, params.arrival_times, params.sizes, params.speedup_at_n, self._slowdown)
        self._observe()

    @property
    def window(self) -> np.ndarray:
        """Indices into ``state``'s arrays of the window's jobs, in slot order."""
        return self._window[: self._ints[kernel.N_WINDOW]].copy()

    @property
    def state(self) -> MalleableState:
        """A read-only copy of the jobs present (same layout as the pure simulator's state)."""
        n, ints = self.n_jobs, self._ints
        job_id = self._ids[kernel.JOB_ID, :n].copy()
        arrival, size, remaining, weight = self._jobs[_PRESENT, :n]  # a copy
        for array in (job_id, arrival, size, remaining, weight):
            array.flags.writeable = False
        return MalleableState(
            self.time, job_id, arrival, size, remaining, weight,
            int(ints[kernel.NEXT_ARRIVAL]), int(ints[kernel.N_COMPLETED]), float(self._floats[kernel.WORK]),
        )  # fmt: skip

    def load(self, state: MalleableState) -> None:
        """Continue from ``state`` (e.g. the reference core's), so that one transition can be compared alone."""
        n = state.n_jobs
        self._ids[kernel.JOB_ID, :n] = state.job_id
        for row, source in zip(_PRESENT, (state.arrival, state.size, state.remaining, state.weight), strict=True):
            self._jobs[row, :n] = source
        self._ints[[kernel.N_JOBS, kernel.NEXT_ARRIVAL, kernel.N_COMPLETED]] = n, state.next_arrival, state.n_completed
        self._floats[[kernel.TIME, kernel.WORK]] = state.time, state.work_done
        self._observe()

    def step(self, action: object) -> tuple[StepOutcome, np.ndarray]:
        """Apply ``action`` until the next epoch; returns the outcome and the theta used."""
        weights = as_real_array("action", action, allow_bool=True)
        if weights.shape != (self.max_jobs + 1,):
            check_action(weights, self.max_jobs)
        params, before, n_before = self.params, self.time, self.n_jobs
        status, event, accrued, work, n_done = kernel.step(
            weights, self._window, *self._state, params.arrival_times, params.sizes,
            params.n_servers, self._p, params.speedup_at_n, self._slowdown, self._fractions,
        )  # fmt: skip
        if status:
            check_action(weights, self.max_jobs)  # raises with the precise reason
            raise ValueError(f"action {weights.tolist()} is invalid")
        s_n, ids, jobs = params.speedup_at_n, self._ids, self._jobs
        completed = [
            JobRecord(j, a, x, event, (event - a) * s_n / x)
            for j, a, x in zip(
                ids[kernel.DONE_ID, :n_done].tolist(),
                jobs[kernel.DONE_ARRIVAL, :n_done].tolist(),
                jobs[kernel.DONE_SIZE, :n_done].tolist(),
                strict=True,
            )
        ]
        self._observe()
        return StepOutcome(self.time - before, accrued, completed, work), self._jobs[kernel.THETA, :n_before]

    def _observe(self) -> None:
        kernel.observe(self._window, self._ids, self._jobs, self._ints, self.scale, self._obs)
        self.time, self.n_jobs = self._floats.item(kernel.TIME), self._ints.item(kernel.N_JOBS)
        self.done = self.n_jobs == 0 and self._ints.item(kernel.NEXT_ARRIVAL) >= self.params.arrival_times.size

    def observation(self) -> np.ndarray:
        """The flat observation (a fresh array)."""
        return self._obs.copy()
