"""Erlang-C: the M/M/k first-come-first-served central queue (the reference model of docs/results/speed.md).

k servers, Poisson arrivals at rate lambda, exponential service at rate mu per server, offered load
a = lambda / mu and utilisation rho = a / k < 1. The probability that an arrival waits is Erlang's C
formula, computed from the Erlang-B recursion B(0) = 1, B(j) = a B(j-1) / (j + a B(j-1)), which is
numerically stable for any k:

    C(k, a) = B(k) / (1 - rho (1 - B(k))),   E[W] = C / (k mu - lambda),   E[T] = E[W] + 1 / mu.
"""

from __future__ import annotations

from schedenv.validation import check_int, check_positive


def _check_stable(arrival_rate: float, service_rate: float, n_servers: int) -> tuple[float, float, int]:
    lam = check_positive("arrival_rate", arrival_rate)
    mu = check_positive("service_rate", service_rate)
    k = check_int("n_servers", n_servers)
    if lam >= k * mu:
        raise ValueError(
            f"arrival_rate={lam!r} >= n_servers * service_rate = {k * mu!r}: the M/M/k queue is unstable; "
            "use arrival_rate < n_servers * service_rate"
        )
    return lam, mu, k


def erlang_c_wait_probability(arrival_rate: float, service_rate: float, n_servers: int) -> float:
    """P(an arrival waits) in M/M/k (Erlang's C formula, via the stable Erlang-B recursion)."""
    lam, mu, k = _check_stable(arrival_rate, service_rate, n_servers)
    offered = lam / mu
    blocking = 1.0
    for j in range(1, k + 1):
        blocking = offered * blocking / (j + offered * blocking)
    return blocking / (1.0 - offered / k * (1.0 - blocking))


def erlang_c_mean_waiting_time(arrival_rate: float, service_rate: float, n_servers: int) -> float:
    """E[W], the mean time in queue of M/M/k FCFS: C(k, a) / (k mu - lambda)."""
    lam, mu, k = _check_stable(arrival_rate, service_rate, n_servers)
    return erlang_c_wait_probability(lam, mu, k) / (k * mu - lam)


def erlang_c_mean_response_time(arrival_rate: float, service_rate: float, n_servers: int) -> float:
    """E[T] = E[W] + 1/mu, the mean response time of M/M/k FCFS."""
    return erlang_c_mean_waiting_time(arrival_rate, service_rate, n_servers) + 1.0 / service_rate
