"""A compiled M/M/k first-come-first-served central queue: the speed reference of docs/results/speed.md.

The same model Ciw and SimPy simulate in ``benchmarks/speed.py`` (and the central queue of the
dispatch family): Poisson arrivals, k servers, exponential service, one FCFS queue. It is a plain
event loop (next arrival vs the earliest of the k departures, a ring-buffer queue), so that its
events per second compare like with like against event-driven simulators. Checked against
Erlang-C (``schedenv.analysis.queueing_mmk``) in ``tests/perf``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from schedenv.validation import check_int, check_positive


@numba.njit(cache=True)
def _simulate(rng, arrival_rate, service_rate, n_servers, n_arrivals, warmup):
    """Returns (sum of response times, sum of waits, jobs counted, events) after ``warmup`` jobs."""
    done_at = np.full(n_servers, np.inf)
    job_arrival = np.zeros(n_servers)
    job_start = np.zeros(n_servers)
    queue = np.empty(1024)
    head, length = 0, 0
    mean_gap, mean_service = 1.0 / arrival_rate, 1.0 / service_rate
    next_arrival = rng.exponential(mean_gap)
    arrived, departed, events = 0, 0, 0
    total_response, total_wait, counted = 0.0, 0.0, 0
    while departed < n_arrivals:
        server, departure = 0, done_at[0]
        for s in range(1, n_servers):
            if done_at[s] < departure:
                server, departure = s, done_at[s]
        events += 1
        if arrived < n_arrivals and next_arrival <= departure:
            now = next_arrival
            arrived += 1
            next_arrival = now + rng.exponential(mean_gap)
            idle = -1
            for s in range(n_servers):
                if done_at[s] == np.inf:
                    idle = s
                    break
            if idle >= 0:
                job_arrival[idle], job_start[idle] = now, now
                done_at[idle] = now + rng.exponential(mean_service)
            else:
                if length == queue.size:  # grow the ring buffer, unrolled in order
                    bigger = np.empty(2 * queue.size)
                    for i in range(length):
                        bigger[i] = queue[(head + i) % queue.size]
                    queue, head = bigger, 0
                queue[(head + length) % queue.size] = now
                length += 1
        else:
            now = departure
            departed += 1
            if departed > warmup:
                total_response += now - job_arrival[server]
                total_wait += job_start[server] - job_arrival[server]
                counted += 1
            if length:
                job_arrival[server], job_start[server] = queue[head], now
                head, length = (head + 1) % queue.size, length - 1
                done_at[server] = now + rng.exponential(mean_service)
            else:
                done_at[server] = np.inf
    return total_response, total_wait, counted, events


@dataclass(frozen=True)
class MMkRun:
    """Result of ``simulate_mmk_fcfs``: streamed means and the event count."""

    mean_response_time: float
    mean_waiting_time: float
    """Mean time in queue of the counted jobs."""
    n_jobs: int
    n_events: int
    seconds: float

    @property
    def events_per_second(self) -> float:
        """Simulated events (arrivals + departures) per wall-clock second."""
        return self.n_events / self.seconds


def simulate_mmk_fcfs(
    arrival_rate: float, service_rate: float, n_servers: int, n_arrivals: int, seed: int, warmup: int = 0
) -> MMkRun:
    """Simulate ``n_arrivals`` jobs of M/M/k FCFS from an empty system; statistics skip ``warmup`` jobs.

    Jobs are counted at departure: the first ``warmup`` departures are skipped.
    """
    lam, mu = check_positive("arrival_rate", arrival_rate), check_positive("service_rate", service_rate)
    k, n = check_int("n_servers", n_servers), check_int("n_arrivals", n_arrivals)
    if not 0 <= warmup < n:
        raise ValueError(f"warmup={warmup!r} is not allowed; it must satisfy 0 <= warmup < n_arrivals={n}")
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    response, wait, counted, events = _simulate(rng, lam, mu, k, n, warmup)
    seconds = time.perf_counter() - started
    return MMkRun(response / counted, wait / counted, int(counted), int(events), seconds)
