"""The env's compiled core: one numba call per step that advances time (docs/architecture.md).

``FastCore`` does what the env used to do with numpy around the pure simulator: service set
(priority scores packed by ``packing``, or the slots a select-mode agent picked), ``sim.advance``
and the next epoch's window and observation, in ``kernel.env_step``. ``sim.py`` stays the
specification: a test steps both with the same actions and compares observations, rewards,
records and busy servers. Jobs live in preallocated arrays (capacity = the episode's job count),
in arrival order, compacted in place as jobs complete; ``state`` hands out read-only copies.
"""

from __future__ import annotations

import numpy as np

from schedenv.multiserver import kernel
from schedenv.multiserver.sim import MultiserverJobRecord, MultiserverParams, MultiserverState, StepOutcome

_NO_SCORES = np.empty(0)
_NO_SELECTION = np.empty(0, dtype=np.bool_)


class FastCore:
    """The jobs present, the window of ``max_jobs`` slots and its observation for one episode."""

    def __init__(
        self, params: MultiserverParams, max_jobs: int, scale: float, size_known: bool, packing: str, obs: np.ndarray
    ) -> None:
        self.params, self.max_jobs, self.scale, self.size_known = params, max_jobs, scale, size_known
        self.packing = kernel.PACKINGS[packing]
        self.obs = obs
        """The observation buffer, rewritten in place at every epoch."""
        self._times = np.ascontiguousarray(params.arrival_times, dtype=np.float64)
        self._needs = np.ascontiguousarray(params.server_needs, dtype=np.int64)
        self._durations = np.ascontiguousarray(params.durations, dtype=np.float64)
        # Python copies of the stream, for the records of completed jobs.
        self._lists = (self._times.tolist(), self._needs.tolist(), self._durations.tolist())
        capacity = self._times.size
        self._job_id, self._need = np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.int64)
        self._arrival, self._duration, self._remaining = (np.empty(capacity) for _ in range(3))
        self._in_service, self._serve = np.zeros(capacity, dtype=np.bool_), np.zeros(capacity, dtype=np.bool_)
        self._done = np.empty(capacity, dtype=np.int64)
        self._window = np.empty(max_jobs, dtype=np.int64)
        int_size, float_size = kernel.scratch_sizes(capacity, max_jobs, params.n_servers)
        self._work, self._keys = np.empty(int_size, dtype=np.int64), np.empty(float_size)
        self.time = float(self._times[0])
        n = int(np.searchsorted(self._times, self.time, side="right"))
        self._job_id[:n] = np.arange(n)
        self._arrival[:n], self._need[:n] = self._times[:n], self._needs[:n]
        self._duration[:n], self._remaining[:n] = self._durations[:n], self._durations[:n]
        self.n_jobs, self.next_arrival, self.n_completed, self.busy_server_time = n, n, 0, 0.0
        self.n_window = self._open_epoch()
        self._cache: tuple[MultiserverState, np.ndarray] | None = None

    @property
    def done(self) -> bool:
        """Every job of the stream has arrived and completed."""
        return self.n_jobs == 0 and self.next_arrival >= self._times.size

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
        return self._need[self._window[: self.n_window]]

    def step(self, scores: np.ndarray | None, selected: np.ndarray | None = None) -> StepOutcome:
        """Serve by priority ``scores`` (float64, one per slot) or, in select mode, the window slots
        flagged in ``selected``, until the next epoch. Raises ``ValueError`` (state unchanged) for a
        score outside [-1, 1], a service set needing more than k servers, or an empty one with no
        arrival pending."""
        before, n_before, params = self.time, self.n_jobs, self.params
        result = kernel.env_step(
            _NO_SCORES if scores is None else scores, _NO_SELECTION if selected is None else selected, self.packing,
            self._window, self.n_window, self.obs, self._job_id, self._arrival, self._need, self._duration,
            self._remaining, self._in_service, n_before, self.next_arrival, before, self._times, self._needs,
            self._durations, params.n_servers, self.scale, self.size_known, self._serve, self._done, self._keys,
            self._work,
        )  # fmt: skip
        status, self.n_jobs, self.next_arrival, self.time, event, self.n_window, elapsed, busy, n_done = result
        if status:
            if status == 1:
                raise ValueError(f"scores must lie in [-1, 1] and be finite; got {np.asarray(scores).tolist()}")
            if status == 2:
                raise ValueError(f"the service set needs {busy} servers; only n_servers={params.n_servers} exist")
            raise ValueError("the service set is empty and no arrival is pending: the system would idle forever")
        self._cache = None
        accrued = n_before * elapsed
        self.busy_server_time += busy * elapsed
        self.n_completed += n_done
        completed: list[MultiserverJobRecord] = []
        if n_done:
            times, needs, durations = self._lists
            k = params.n_servers
            for j in self._done[:n_done].tolist():
                a, need, d = times[j], needs[j], durations[j]
                completed.append(MultiserverJobRecord(j, a, float(need) * d / k, event, (event - a) / d, need, d))
        return StepOutcome(self.time - before, accrued, completed, busy, busy * elapsed / params.n_servers)

    def _open_epoch(self) -> int:
        n = self.n_jobs
        return int(
            kernel.open_epoch(
                self._window, self.obs, self._need[:n], self._duration[:n], self._remaining[:n], self._arrival[:n],
                self._in_service[:n], self.time, self.params.n_servers, self.scale, self.size_known, self._keys,
                self._work,
            )
        )  # fmt: skip

    def _snapshot(self) -> tuple[MultiserverState, np.ndarray]:
        if self._cache is None:
            n = self.n_jobs
            arrays = [
                a[:n].copy()
                for a in (self._job_id, self._arrival, self._need, self._duration, self._remaining, self._in_service)
            ]
            window = self._window[: self.n_window].copy()
            for array in (*arrays, window):
                array.flags.writeable = False
            job_id, arrival, need, duration, remaining, in_service = arrays
            state = MultiserverState(
                self.time, job_id, arrival, need, duration, remaining, in_service, self.next_arrival,
                self.n_completed, self.busy_server_time, self.params.n_servers,
            )  # fmt: skip
            self._cache = (state, window)
        return self._cache
