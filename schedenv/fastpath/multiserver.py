"""Run a multiserver policy on the simulator without the Gymnasium shell (docs/baselines/index.md).

The env's workload is drawn by ``env.reset(seed)`` exactly as in ``evaluate``; the policy then
chooses the service set over *all* jobs present (no window). Policies that are an order plus a
packing (``KernelSpec``) run in the numba-compiled loop of ``schedenv.multiserver.kernel``; the
others (DivisorFilling) drive the pure core ``sim.advance`` from Python. When no job ever falls
outside the env's window, both give the same completion times as the Gymnasium loop on the same
seed (tests check it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from baselines.kernels.multiserver import KernelSpec
from schedenv.multiserver import kernel
from schedenv.multiserver.sim import MultiserverJobRecord, MultiserverParams, MultiserverState, advance, is_done


class ServiceSetPolicy(Protocol):
    """A policy that can pick a service set from the full state (the multiserver baselines)."""

    name: str

    def reset(self, env: gym.Env) -> None: ...

    def service_set(self, state: MultiserverState, candidates: np.ndarray | None = None) -> np.ndarray: ...

    def kernel_spec(self) -> KernelSpec | None: ...


@dataclass
class FastResult:
    """One fast-path episode: per-job completion times (stream order) and the totals.

    Not a ``FastRun``: this path serves every job present, outside the env's window, so it has no
    decision count or return to report and its numbers are not ``evaluate``'s (docs/families.md).
    """

    params: MultiserverParams
    completion: np.ndarray
    total_flow_time: float
    busy_server_time: float
    stopped_early: bool = False
    """True when the run was cut because more than ``max_in_system`` jobs were present (a sign of
    instability); unfinished jobs then have completion time inf and the means are inf."""

    @property
    def response_times(self) -> np.ndarray:
        """T_j = completion - arrival, in stream (job id) order."""
        return self.completion - self.params.arrival_times

    @property
    def metrics(self) -> dict[str, float]:
        """The env's ``episode_metrics`` keys (overflow_fraction aside: there is no window)."""
        params, response = self.params, self.response_times
        if self.stopped_early:
            names = ("mean_response_time", "mean_slowdown", "mean_waiting_time", "mean_number_in_system")
            return {"n_completed": float(np.isfinite(self.completion).sum())} | {name: np.inf for name in names}
        start, end = float(params.arrival_times[0]), float(self.completion.max())
        span = end - start
        return {
            "n_completed": float(response.size),
            "mean_response_time": float(response.mean()),
            "mean_slowdown": float((response / params.durations).mean()),
            "mean_waiting_time": float((response - params.durations).mean()),
            "utilisation": self.busy_server_time / (params.n_servers * span) if span > 0 else float("nan"),
            "mean_number_in_system": self.total_flow_time / span if span > 0 else float("nan"),
            "total_flow_time": self.total_flow_time,
            "makespan": end,
        }

    def records(self) -> list[MultiserverJobRecord]:
        """One record per job (built on demand: long runs rarely need them)."""
        params, k = self.params, self.params.n_servers
        return [
            MultiserverJobRecord(j, a, n * d / k, c, (c - a) / d, n, d)
            for j, (a, n, d, c) in enumerate(
                zip(
                    params.arrival_times.tolist(),
                    params.server_needs.tolist(),
                    params.durations.tolist(),
                    self.completion.tolist(),
                    strict=True,
                )
            )
        ]


def run_fast(
    env: gym.Env, policy: ServiceSetPolicy, seed: int, *, compiled: bool = True, max_in_system: int = 0
) -> FastResult:
    """One episode of ``policy`` on ``env``'s workload for ``seed``, straight on the simulator.

    ``compiled=False`` forces the Python loop over ``sim.advance`` even when a kernel exists.
    ``max_in_system`` > 0 stops the compiled loop once more jobs than that are present (unstable
    policies otherwise make long runs quadratic); the Python loop ignores it.
    """
    inner: Any = env.unwrapped
    inner.reset(seed=int(seed))
    policy.reset(env)
    params: MultiserverParams = inner.params
    spec = policy.kernel_spec() if compiled else None
    if spec is not None:
        completion, total_flow, busy_time, stopped = kernel.simulate(
            params.arrival_times,
            params.server_needs,
            params.durations,
            params.n_servers,
            kernel.ORDERS[spec.order],
            kernel.PACKINGS[spec.packing],
            spec.need_values,
            spec.table,
            spec.rank_ages,
            spec.rank_values,
            max_in_system,
        )
        return FastResult(params, completion, float(total_flow), float(busy_time), bool(stopped))
    state = inner.state
    completion = np.empty(params.arrival_times.size)
    total_flow = 0.0
    while not is_done(params, state):
        serve = np.zeros(state.n_jobs, dtype=bool)
        serve[policy.service_set(state)] = True
        state, outcome = advance(params, state, serve)
        for record in outcome.completed:
            completion[record.job_id] = record.completion
        total_flow += outcome.accrued_objective
    return FastResult(params, completion, total_flow, state.busy_server_time)
