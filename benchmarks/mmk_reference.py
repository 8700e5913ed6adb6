"""M/M/k FCFS in Ciw and in SimPy, the outside references of ``speed.py`` (docs/results/speed.md).

Each simulator runs the same model as ``schedenv.mmk.simulate_mmk_fcfs`` (Poisson arrivals, k
servers, exponential service, one FCFS queue) for a given number of jobs and reports the mean
response time and the events per second, counting one arrival and one departure per job, as the
compiled kernel does. Ciw and SimPy are the ``bench`` extra (``pip install schedenv[bench]``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Generator
from typing import Any


def ciw_mmk(arrival_rate: float, service_rate: float, n_servers: int, n_jobs: int, seed: int) -> tuple[float, float]:
    """(mean response time, events per second) of Ciw on M/M/k FCFS over about ``n_jobs`` jobs."""
    import ciw

    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=arrival_rate)],
        service_distributions=[ciw.dists.Exponential(rate=service_rate)],
        number_of_servers=[n_servers],
    )
    ciw.seed(seed)
    simulation = ciw.Simulation(network)
    started = time.perf_counter()
    simulation.simulate_until_max_customers(n_jobs, method="Finish")
    seconds = time.perf_counter() - started
    records = simulation.get_all_records()
    mean = sum(r.waiting_time + r.service_time for r in records) / len(records)
    return mean, 2 * len(records) / seconds


def simpy_mmk(arrival_rate: float, service_rate: float, n_servers: int, n_jobs: int, seed: int) -> tuple[float, float]:
    """(mean response time, events per second) of SimPy on M/M/k FCFS over ``n_jobs`` jobs."""
    import simpy

    rng = random.Random(seed)
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=n_servers)
    responses: list[float] = []

    def customer() -> Generator[Any, Any, None]:
        arrived = env.now
        with servers.request() as request:
            yield request
            yield env.timeout(rng.expovariate(service_rate))
        responses.append(env.now - arrived)

    def source() -> Generator[Any, Any, None]:
        for _ in range(n_jobs):
            yield env.timeout(rng.expovariate(arrival_rate))
            env.process(customer())

    env.process(source())
    started = time.perf_counter()
    env.run()
    seconds = time.perf_counter() - started
    return sum(responses) / len(responses), 2 * len(responses) / seconds
