"""The env's compiled core for s(k) = k^p: one call of ``kernel.step`` per decision epoch.

Same semantics as ``ReferenceCore`` (``core.py``) and the pure simulator (``sim.py``), which stay the
specification: a test steps both with the same actions and compares completions and rewards.
``FastCore`` owns the kernel's preallocated arrays for one episode; ``state`` hands baselines
read-only copies.
"""

from __future__ import annotations

import numpy as np

from schedenv.malleable.core import GLOBAL_FEATURES, SLOT_FEATURES, check_action
from schedenv.malleable.kernel import admit, observe, step
from schedenv.malleable.sim import MalleableParams, MalleableState, StepOutcome
from schedenv.records import JobRecord
from schedenv.validation import as_real_array
from schedenv.workloads import Power


class FastCore:
    """The compiled core (``Power`` speedups only; the env falls back to ``ReferenceCore`` otherwise)."""

    def __init__(self, params: MalleableParams, max_jobs: int, scale: float, allocation: str = "normalized") -> None:
        if not isinstance(params.speedup, Power):
            raise ValueError(f"FastCore needs a Power speedup, got {params.speedup!r}")
        self.params, self.max_jobs, self.scale, self.allocation = params, max_jobs, scale, allocation
        self._fractions = allocation == "fractions"
        self._p = params.speedup.p
        self._slowdown = params.objective == "slowdown"
        capacity = params.arrival_times.size
        self._job_id = np.empty(capacity, dtype=np.int64)
        self._arrival, self._size, self._remaining, self._weight, self._theta = (np.empty(capacity) for _ in range(5))
        self._done_id = np.empty(capacity, dtype=np.int64)
        self._order = np.empty(capacity, dtype=np.int64)
        self._done_arrival, self._done_size = np.empty(capacity), np.empty(capacity)
        self._window = np.empty(max_jobs, dtype=np.int64)
        self._obs = np.zeros(SLOT_FEATURES * max_jobs + GLOBAL_FEATURES, dtype=np.float32)
        self.time = float(params.arrival_times[0]) if capacity else 0.0
        self.n_jobs, self.next_arrival = admit(
            self._job_id, self._arrival, self._size, self._remaining, self._weight, 0,
            params.arrival_times, params.sizes, 0, self.time, params.speedup_at_n, self._slowdown,
        )  # fmt: skip
        self.n_completed, self.work_done = 0, 0.0
        self._observe()

    @property
    def done(self) -> bool:
        """Every job has arrived and completed."""
        return self.n_jobs == 0 and self.next_arrival >= self.params.arrival_times.size

    @property
    def window(self) -> np.ndarray:
        """Indices into ``state``'s arrays of the window's jobs, in slot order."""
        return self._window[: self._n_window].copy()

    @property
    def state(self) -> MalleableState:
        """A read-only copy of the jobs present (same layout as the pure simulator's state)."""
        n = self.n_jobs
        job_id, arrival, size, remaining, weight = (
            a[:n].copy() for a in (self._job_id, self._arrival, self._size, self._remaining, self._weight)
        )
        for array in (job_id, arrival, size, remaining, weight):
            array.flags.writeable = False
        return MalleableState(
            self.time, job_id, arrival, size, remaining, weight, self.next_arrival, self.n_completed, self.work_done
        )

    def load(self, state: MalleableState) -> None:
        """Continue from ``state`` (e.g. the reference core's), so that one transition can be compared alone."""
        n = state.n_jobs
        for target, source in (
            (self._job_id, state.job_id), (self._arrival, state.arrival), (self._size, state.size),
            (self._remaining, state.remaining), (self._weight, state.weight),
        ):  # fmt: skip
            target[:n] = source
        self.time, self.n_jobs, self.next_arrival = state.time, n, state.next_arrival
        self.n_completed, self.work_done = state.n_completed, state.work_done
        self._observe()

    def step(self, action: object) -> tuple[StepOutcome, np.ndarray]:
        """Apply ``action`` until the next epoch; returns the outcome and the theta used."""
        weights = as_real_array("action", action, allow_bool=True)
        if weights.shape != (self.max_jobs + 1,):
            check_action(weights, self.max_jobs)
        params, before, n_before = self.params, self.time, self.n_jobs
        status, self.n_jobs, self.next_arrival, self.time, event, accrued, work, n_done = step(
            weights, self._window, self._n_window, self._theta, self._job_id, self._arrival, self._size,
            self._remaining, self._weight, self.n_jobs, params.arrival_times, params.sizes, self.next_arrival,
            self.time, params.n_servers, self._p, params.speedup_at_n, self._slowdown,
            self._done_id, self._done_arrival, self._done_size, self._fractions,
        )  # fmt: skip
        if status:
            check_action(weights, self.max_jobs)  # raises with the precise reason
            raise ValueError(f"action {weights.tolist()} is invalid")
        s_n = params.speedup_at_n
        completed = [
            JobRecord(j, a, x, event, (event - a) * s_n / x)
            for j, a, x in zip(
                self._done_id[:n_done].tolist(),
                self._done_arrival[:n_done].tolist(),
                self._done_size[:n_done].tolist(),
                strict=True,
            )
        ]
        self.n_completed += n_done
        self.work_done += work
        self._observe()
        return StepOutcome(self.time - before, accrued, completed, work), self._theta[:n_before]

    def _observe(self) -> None:
        self._n_window = observe(
            self._window, self._remaining, self._size, self.n_jobs, self.scale, self._obs, self._order
        )

    def observation(self) -> np.ndarray:
        """The flat observation (a fresh array)."""
        return self._obs.copy()
