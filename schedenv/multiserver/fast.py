"""The env's compiled core: one numba call per step that advances time (docs/architecture.md).

``FastCore`` holds one copy of the family's state (``kernel.MultiserverArrays`` with B = 1, the
layout the batched env and the fast path use too) and runs ``kernel.env_step`` on it: the service
set (priority scores packed by ``packing``, or the slots a select-mode agent picked), the one
transition ``kernel.advance`` and the next epoch's window and observation. ``sim.py`` stays the
specification: a test steps both with the same actions and compares observations, rewards,
records and busy servers. ``state`` hands out read-only copies of the jobs present.
"""

from __future__ import annotations

import numpy as np

from schedenv.multiserver import kernel
from schedenv.multiserver.sim import MultiserverJobRecord, MultiserverParams, MultiserverState, StepOutcome

_NO_SCORES = np.empty(0)
_NO_SELECTION = np.empty(0, dtype=np.bool_)
_FAILURES = {
    kernel.BAD_SCORES: "scores must lie in [-1, 1] and be finite; got {scores}",
    kernel.OVER_CAPACITY: "the service set needs {busy} servers; only n_servers={k} exist",
    kernel.IDLE_FOREVER: "the service set is empty and no arrival is pending: the system would idle forever",
}


class FastCore:
    """The jobs present, the window of ``max_jobs`` slots and its observation for one episode."""

    def __init__(
        self, params: MultiserverParams, max_jobs: int, scale: float, size_known: bool, packing: str, obs: np.ndarray
    ) -> None:
        self.params, self.max_jobs, self.scale, self.size_known = params, max_jobs, scale, size_known
        self.packing = kernel.PACKINGS[packing]
        self.obs = obs
        """The observation buffer, rewritten in place at every epoch."""
        # One copy's arrays (views of B = 1 rows): everything below reads and passes only these.
        self._state = state = kernel.MultiserverArrays.zeros(
            1, params.arrival_times.size, params.n_servers, max_jobs
        ).views(0)
        state.times[:], state.needs[:], state.durations[:] = params.arrival_times, params.server_needs, params.durations
        self._window = np.empty(max_jobs, dtype=np.int64)
        # Python copies of the stream, for the records of completed jobs.
        self._lists = (state.times.tolist(), state.needs.tolist(), state.durations.tolist())
        kernel.open_episode(self._window, obs, *state, params.n_servers, scale, size_known)
        self._read()

    def _read(self) -> tuple[list[int], list[float]]:
        """Copy the counters the env reads after a kernel call; returns them all."""
        ints, floats = self._state.ints.tolist(), self._state.floats.tolist()
        self.n_jobs, self.next_arrival = ints[kernel.N_JOBS], ints[kernel.NEXT_ARRIVAL]
        self.n_completed, self.n_window = ints[kernel.N_COMPLETED], ints[kernel.N_WINDOW]
        self.time, self.busy_server_time = floats[kernel.TIME], floats[kernel.BUSY_TIME]
        self._cache: tuple[MultiserverState, np.ndarray] | None = None
        return ints, floats

    @property
    def done(self) -> bool:
        """Every job of the stream has arrived and completed."""
        return self.n_jobs == 0 and self.next_arrival >= len(self._lists[0])

    @property
    def state(self) -> MultiserverState:
        """A read-only copy of the jobs present (the pure simulator's layout); one object per epoch."""
        return self._snapshot()[0]

    @property
    def window(self) -> np.ndarray:
        """Positions in ``state``'s arrays of the window's jobs, in slot order (read-only)."""
        return self._snapshot()[1]

    def window_needs(self) -> np.ndarray:
        """Server needs of the window's jobs, in slot order."""
        return self._state.jobs_i[kernel.NEED, self._window[: self.n_window]]

    def step(self, scores: np.ndarray | None, selected: np.ndarray | None = None) -> StepOutcome:
        """Serve by priority ``scores`` (float64, one per slot) or, in select mode, the window slots
        flagged in ``selected``, until the next epoch. Raises ``ValueError`` (state unchanged) for a
        score outside [-1, 1], a service set needing more than k servers, or an empty one with no
        arrival pending."""
        before, k = self.time, self.params.n_servers
        status = kernel.env_step(
            _NO_SCORES if scores is None else scores, _NO_SELECTION if selected is None else selected, self.packing,
            self._window, self.obs, *self._state, k, self.scale, self.size_known,
        )  # fmt: skip
        if status:
            busy, shown = int(self._state.ints[kernel.BUSY]), np.asarray(scores).tolist()
            raise ValueError(_FAILURES[status].format(scores=shown, busy=busy, k=k))
        ints, floats = self._read()
        busy = ints[kernel.BUSY]
        elapsed, event, n_done = floats[kernel.ELAPSED], floats[kernel.EVENT], ints[kernel.N_DONE]
        completed: list[MultiserverJobRecord] = []
        if n_done:
            times, needs, durations = self._lists
            for j in self._state.done[:n_done].tolist():
                a, need, d = times[j], needs[j], durations[j]
                completed.append(MultiserverJobRecord(j, a, float(need) * d / k, event, (event - a) / d, need, d))
        return StepOutcome(self.time - before, floats[kernel.ACCRUED], completed, busy, busy * elapsed / k)

    def _snapshot(self) -> tuple[MultiserverState, np.ndarray]:
        if self._cache is None:
            n = self.n_jobs
            job_id, need = (row[:n].copy() for row in self._state.jobs_i)
            arrival, duration, remaining = (row[:n].copy() for row in self._state.jobs_f)
            in_service = self._state.in_service[:n].copy()
            window = self._window[: self.n_window].copy()
            for array in (job_id, arrival, need, duration, remaining, in_service, window):
                array.flags.writeable = False
            state = MultiserverState(
                self.time, job_id, arrival, need, duration, remaining, in_service, self.next_arrival,
                self.n_completed, self.busy_server_time, self.params.n_servers,
            )  # fmt: skip
            self._cache = (state, window)
        return self._cache
