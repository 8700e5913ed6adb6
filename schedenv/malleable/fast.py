"""A compiled env core for s(k) = k^p: one numba call per decision epoch.

Same semantics as ``ReferenceCore`` (``core.py``) and the pure simulator (``sim.py``), which stay the
specification: a test steps both with the same actions and compares completions and rewards.
Jobs live in preallocated arrays (capacity = the episode's job count), kept in arrival order and
compacted in place as jobs complete; ``state`` hands baselines read-only copies.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from schedenv.malleable.core import GLOBAL_FEATURES, SLOT_FEATURES, check_action
from schedenv.malleable.sim import COMPLETION_TOLERANCE, MalleableParams, MalleableState, StepOutcome
from schedenv.malleable.sorting import stable_order
from schedenv.records import JobRecord
from schedenv.validation import as_real_array
from schedenv.workloads import Power


@numba.njit(cache=True)
def _admit(
    job_id, arrival, size, remaining, weight, n_jobs, arrival_times, stream_sizes, next_arrival, now, s_n, slowdown
):
    """Append the stream's jobs that have arrived by ``now``; returns the new counts."""
    while next_arrival < arrival_times.size and arrival_times[next_arrival] <= now:
        x = stream_sizes[next_arrival]
        job_id[n_jobs] = next_arrival
        arrival[n_jobs] = arrival_times[next_arrival]
        size[n_jobs] = x
        remaining[n_jobs] = x
        weight[n_jobs] = s_n / x if slowdown else 1.0
        n_jobs += 1
        next_arrival += 1
    return n_jobs, next_arrival


@numba.njit(cache=True)
def _step(
    action, window, n_window, theta, job_id, arrival, size, remaining, weight, n_jobs,
    arrival_times, stream_sizes, next_arrival, now, n_servers, p, s_n, slowdown,
    done_id, done_arrival, done_size, fractions,
):  # fmt: skip
    """Validate ``action``, allocate, advance to the next epoch and compact; see ``sim.advance``.

    ``fractions``: the env's ``allocation="fractions"`` (a weight sum <= 1 is used as is, idling the rest).

    Returns (status, n_jobs, next_arrival, now, departure_time, accrued, work, n_done); status 1
    means an invalid action, and then nothing has been changed.
    """
    for value in action:
        if not (value >= 0.0 and value <= 1.0):  # also false for NaN
            return 1, n_jobs, next_arrival, now, now, 0.0, 0.0, 0
    n_outside = n_jobs - n_window
    for j in range(n_jobs):
        theta[j] = -1.0
    for s in range(n_window):
        theta[window[s]] = action[s]
    total = 0.0
    for j in range(n_jobs):
        if theta[j] < 0.0:
            theta[j] = action[action.size - 1] / n_outside
        total += theta[j]
    if total <= 0.0:
        for j in range(n_jobs):
            theta[j] = 1.0 / n_jobs
    elif total > 1.0 or not fractions:
        for j in range(n_jobs):
            theta[j] = theta[j] / total
    first, until_departure = -1, np.inf
    for j in range(n_jobs):
        rate = (theta[j] * n_servers) ** p
        if rate > 0.0:
            finish = remaining[j] / rate
            if finish < until_departure:
                first, until_departure = j, finish
    until_arrival = arrival_times[next_arrival] - now if next_arrival < arrival_times.size else np.inf
    elapsed = min(until_departure, until_arrival)
    accrued, work, kept, n_done = 0.0, 0.0, 0, 0
    event = now + elapsed
    for j in range(n_jobs):
        accrued += weight[j]
        served = (theta[j] * n_servers) ** p * elapsed
        left = remaining[j] - served
        if left <= COMPLETION_TOLERANCE * size[j] or (j == first and until_departure <= until_arrival):
            work += remaining[j]
            done_id[n_done], done_arrival[n_done], done_size[n_done] = job_id[j], arrival[j], size[j]
            n_done += 1
        else:
            work += served
            job_id[kept], arrival[kept], size[kept] = job_id[j], arrival[j], size[j]
            remaining[kept], weight[kept] = left, weight[j]
            kept += 1
    accrued *= elapsed
    n_jobs, next_arrival = _admit(
        job_id, arrival, size, remaining, weight, kept, arrival_times, stream_sizes, next_arrival, event, s_n, slowdown
    )
    now = event
    if n_jobs == 0 and next_arrival < arrival_times.size:  # idle until the next arrival (DESIGN §3)
        now = arrival_times[next_arrival]
        n_jobs, next_arrival = _admit(
            job_id, arrival, size, remaining, weight, 0, arrival_times, stream_sizes, next_arrival, now, s_n, slowdown
        )
    return 0, n_jobs, next_arrival, now, event, accrued, work, n_done


@numba.njit(cache=True)
def _observe(window, remaining, size, n_jobs, scale, obs, order):
    """Sort the window (least remaining first, stable) and fill the observation; returns its length.

    ``order`` is scratch space of at least ``n_jobs`` entries, so that the step allocates nothing.
    """
    stable_order(remaining, n_jobs, order)
    n_window = min(n_jobs, window.size)
    obs[:] = 0.0
    outside_work = 0.0
    for s in range(n_jobs):
        j = order[s]
        if s < n_window:
            window[s] = j
            obs[3 * s] = 1.0
            obs[3 * s + 1] = math.log1p(remaining[j] / scale)
            obs[3 * s + 2] = math.log1p(size[j] / scale)
        else:
            outside_work += remaining[j]
    end = obs.size
    obs[end - 3] = math.log1p(n_jobs)
    obs[end - 2] = math.log1p(n_jobs - n_window)
    obs[end - 1] = math.log1p(outside_work / scale)
    return n_window


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
        self.n_jobs, self.next_arrival = _admit(
            self._job_id, self._arrival, self._size, self._remaining, self._weight, 0,
            params.arrival_times, params.sizes, 0, self.time, params.speedup_at_n, self._slowdown,
        )  # fmt: skip
        self.n_completed, self.work_done = 0, 0.0
        self._n_window = _observe(self._window, self._remaining, self._size, self.n_jobs, scale, self._obs, self._order)

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

    def step(self, action: object) -> tuple[StepOutcome, np.ndarray]:
        """Apply ``action`` until the next epoch; returns the outcome and the theta used."""
        weights = as_real_array("action", action, allow_bool=True)
        if weights.shape != (self.max_jobs + 1,):
            check_action(weights, self.max_jobs)
        params, before, n_before = self.params, self.time, self.n_jobs
        status, self.n_jobs, self.next_arrival, self.time, event, accrued, work, n_done = _step(
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
        self._n_window = _observe(
            self._window, self._remaining, self._size, self.n_jobs, self.scale, self._obs, self._order
        )
        return StepOutcome(self.time - before, accrued, completed, work), self._theta[:n_before]

    def observation(self) -> np.ndarray:
        """The flat observation (a fresh array)."""
        return self._obs.copy()
