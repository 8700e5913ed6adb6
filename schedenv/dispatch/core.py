"""Env cores of the dispatch family: the translation between ``DispatchEnv`` and the simulator.

A core owns one episode's simulator state and turns a validated (destination, limit) decision into
the next decision epoch, keeping what the env reports up to date. Two cores share this interface:

- ``ReferenceCore`` (here): the pure simulator ``sim.DispatchSim`` and the observation built in
  Python from its state. It is the specification of the env's dynamics and observation.
- ``FastCore`` (``fast.py``): the compiled kernels (``kernel.py``), which the env runs. It is tested
  against the reference step by step (``tests/dispatch/test_fast_core.py``): same observations,
  rewards, records, masks, views and metrics, exactly.

The observation's layout (the env's Observation Space table) is ``ObservationLayout``.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from itertools import islice

import numpy as np

from schedenv.dispatch.sim import DispatchParams, DispatchSim, Outcome, PendingJob, StateView

PARAMS_HIGH: tuple[float, ...] = (1.0, 1.0, 10.0)
"""Upper bounds of the scenario-parameter slots (``observe_params=True``; see the env's Observation Space)."""
SUMMARY_FEATURES = 4
"""Jobs in system, queued jobs outside the windows, time since the previous decision, arrivals so far."""


@dataclass(frozen=True)
class ObservationLayout:
    """Where each feature of the flat observation lies (the env's Observation Space table)."""

    n_hosts: int
    n_limits: int
    max_jobs: int
    scale: float
    """E[X] (the mean of the explicit jobs' sizes when given): the unit of times and work."""
    size_known: bool
    shown_params: tuple[float, ...]
    """The scenario's parameters appended at the end (empty unless ``observe_params``)."""

    @property
    def features(self) -> int:
        """Features per host, per window slot and of the pending job (one more with known sizes)."""
        return 5 if self.size_known else 4

    @property
    def slots_start(self) -> int:
        return self.features * self.n_hosts + 1

    @property
    def pending_start(self) -> int:
        return self.slots_start + (self.n_hosts + 1) * self.max_jobs * self.features

    @property
    def summary_end(self) -> int:
        """Where the scenario's parameters start (the observation's length without them)."""
        return self.pending_start + self.features + SUMMARY_FEATURES

    @property
    def length(self) -> int:
        return self.summary_end + len(self.shown_params)

    def high(self) -> np.ndarray:
        """The Box's upper bounds (the lower bounds are 0)."""
        high = np.full(self.length, np.inf, dtype=np.float32)
        for host in range(self.n_hosts):
            base = self.features * host
            high[base] = high[base + 3] = 1.0
        slots = high[self.slots_start : self.pending_start].reshape(-1, self.features)
        slots[:, :3] = 1.0
        high[self.pending_start + 1] = high[self.pending_start + 3] = 1.0
        high[self.summary_end - 1] = 1.0
        high[self.summary_end :] = PARAMS_HIGH[: len(self.shown_params)]
        return high


class ReferenceCore:
    """The pure simulator with the observation built in Python (the specification of ``FastCore``)."""

    def __init__(self, params: DispatchParams, layout: ObservationLayout) -> None:
        self.layout = layout
        self.sim = DispatchSim(params)
        """The live simulator."""
        self._format = f"={layout.length}f"
        self._empty_slot = [0.0] * layout.features
        self._empty_window = self._empty_slot * layout.max_jobs
        self._limit_feature = [(limit + 1) / layout.n_limits for limit in range(-1, layout.n_limits)]
        """(l + 1) / L, indexed by l + 1 (l = -1 is "none")."""
        self.n_outside = 0
        """Queued jobs outside the windows."""
        outcome = self.sim.advance()
        self.killed, self._decision_gap = outcome.killed, outcome.elapsed
        self._observation = self._observe()

    # ----------------------------------------------------------------- the core interface
    @property
    def done(self) -> bool:
        return self.sim.done

    @property
    def time(self) -> float:
        return self.sim.time

    @property
    def n_jobs(self) -> int:
        """Jobs in the system."""
        return len(self.sim.present)

    @property
    def exceeded(self) -> int:
        """Ladder index of the largest limit the pending job exceeded (-1: none, or no pending job)."""
        pending = self.sim.pending
        return -1 if pending is None else pending.exceeded

    @property
    def pending_id(self) -> int:
        """The pending job's id (-1 if none)."""
        pending = self.sim.pending
        return -1 if pending is None else pending.job_id

    def step(self, destination: int, limit: int) -> Outcome:
        """Dispatch the pending job (a valid decision) and advance to the next decision epoch."""
        self.sim.dispatch(destination, limit)
        outcome = self.sim.advance()
        self.killed, self._decision_gap = outcome.killed, outcome.elapsed
        self._observation = self._observe()
        return outcome

    def observation(self) -> np.ndarray:
        """The flat float32 observation (a fresh array)."""
        return self._observation.copy()

    @property
    def state(self) -> StateView:
        return self.sim.view()

    def pending_view(self) -> PendingJob | None:
        return self.sim.pending_view()

    def metrics(self) -> dict[str, float]:
        """``episode_metrics`` so far."""
        return self.sim.tally.metrics(self.sim.time)

    # ----------------------------------------------------------------- the observation
    def _observe(self) -> np.ndarray:
        sim, layout = self.sim, self.layout
        now, scale, feature = sim.time, layout.scale, self._limit_feature
        known, max_jobs, log1p = layout.size_known, layout.max_jobs, math.log1p
        values: list[float] = []
        work = sim.host_work() if known else []
        queues, run_start = sim.queues, sim.run_start
        for host, job in enumerate(sim.running):
            if job is None:
                values += (0.0, log1p(len(queues[host])), 0.0, 0.0)
            else:
                elapsed = (now - run_start[host]) / scale
                values += (1.0, log1p(len(queues[host])), log1p(elapsed), feature[job.limit + 1])
            if known:
                values.append(log1p(work[host] / scale))
        values.append(log1p(len(sim.central)))
        outside = 0
        empty = self._empty_slot
        for queue in (*queues, sim.central):
            if not queue:
                values += self._empty_window
                continue
            shown = min(len(queue), max_jobs)
            for job in islice(queue, shown):
                values += (1.0, feature[job.limit + 1], feature[job.exceeded + 1], log1p((now - job.arrival) / scale))
                if known:
                    values.append(log1p(job.size / scale))
            values += empty * (max_jobs - shown)
            outside += len(queue) - shown
        pending = sim.pending
        if pending is None:
            values += self._empty_slot
        else:
            hosts = pending.hosts
            values += (
                log1p((now - pending.arrival) / scale),
                feature[pending.exceeded + 1],
                log1p(len(hosts)),
                (hosts[-1] + 1) / layout.n_hosts if hosts else 0.0,
            )
            if known:
                values.append(log1p(pending.size / scale))
        values += (
            log1p(len(sim.present)),
            log1p(outside),
            log1p(self._decision_gap / scale),
            sim.next_arrival / sim.n_jobs,
            *layout.shown_params,
        )
        self.n_outside = outside
        # struct rounds each double to float32 as numpy does, at half the cost of np.array(values, float32).
        return np.frombuffer(bytearray(struct.pack(self._format, *values)), dtype=np.float32)
