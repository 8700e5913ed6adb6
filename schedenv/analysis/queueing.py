"""Single- and multi-server FCFS queueing formulas used by the TAGS paper (Harchol-Balter,
"Task assignment with unknown duration", J. ACM 2002, §5.1 and §6.1).

- M/G/1 FCFS (Theorem 1, Pollaczek-Khinchine): E[W] = lambda E[X^2] / (2 (1 - rho)) and, since
  W and X are independent under FCFS, E[W / X] = E[W] E[1/X].
- Random (§5.1): Bernoulli splitting makes every host an M/G/1 queue with rate lambda / h.
- Least-Work-Remaining = Central-Queue = M/G/h (§5.1). §5.1 prints
  E[Q_M/G/h] = E[Q_M/M/h] E[X^2] / E[X]^2 (Sozaki-Ross, Wolff); the usual Lee-Longton form has
  E[X^2] / (2 E[X]^2) = (1 + C^2) / 2 instead, exact for h = 1. The default is the Lee-Longton form
  because it reproduces the paper's own worked example (§6.1: at alpha = 0.6, 2 hosts at load 0.7,
  LWR needs 13 hosts for mean slowdown <= 3; the printed form needs 14); ``variant`` chooses.

"Waiting time" and "slowdown" here are the paper's: time in queue W and W / X.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, special

from schedenv.validation import check_choice, check_int, check_positive
from schedenv.workloads import (
    BoundedPareto,
    Choice,
    Deterministic,
    Distribution,
    Empirical,
    Exponential,
    HyperExponential,
    Uniform,
)


def partial_moment(size_dist: Distribution, order: float, low: float, high: float) -> float:
    """E[X^order ; low < X <= high] for the workloads with closed forms (order -1, 0, 1, 2, ...).

    Supported: BoundedPareto, Exponential, HyperExponential, Uniform, Deterministic, Choice and
    Empirical. ``E[X^-1]`` is infinite for densities positive at 0 (Exponential, Uniform from 0).
    """
    if high <= low:
        return 0.0
    if isinstance(size_dist, BoundedPareto):
        return size_dist.partial_moment(order, low, high)
    if isinstance(size_dist, (Choice, Empirical, Deterministic)):
        values, probs = _atoms(size_dist)
        inside = (values > low) & (values <= high)
        return float((values[inside] ** order * probs[inside]).sum())
    if isinstance(size_dist, Exponential):
        return _exponential_moment(size_dist.mean, order, low, high)
    if isinstance(size_dist, HyperExponential):
        return sum(
            float(q) * _exponential_moment(float(m), order, low, high)
            for q, m in zip(size_dist.probabilities, size_dist.means, strict=True)
        )
    if isinstance(size_dist, Uniform):
        a, b = max(low, size_dist.low), min(high, size_dist.high)
        if b <= a:
            return 0.0
        width = size_dist.high - size_dist.low
        if order == -1:
            return math.inf if a == 0 else math.log(b / a) / width
        return (b ** (order + 1) - a ** (order + 1)) / ((order + 1) * width)
    raise ValueError(
        f"size_dist={size_dist!r} is not allowed here; partial moments are known for BoundedPareto, Exponential, "
        "HyperExponential, Uniform, Deterministic, Choice and Empirical"
    )


def _atoms(size_dist: Distribution) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(size_dist, Deterministic):
        return np.array([size_dist.value]), np.array([1.0])
    if isinstance(size_dist, Empirical):
        return size_dist.samples, np.full(size_dist.samples.size, 1.0 / size_dist.samples.size)
    assert isinstance(size_dist, Choice)
    return size_dist.values, size_dist.probabilities


def _exponential_moment(mean: float, order: float, low: float, high: float) -> float:
    a, b = max(low, 0.0) / mean, high / mean
    if order == -1:
        if a == 0:
            return math.inf
        return float(special.exp1(a) - (special.exp1(b) if math.isfinite(b) else 0.0)) / mean
    upper = 1.0 if math.isinf(b) else float(special.gammainc(order + 1, b))
    return mean**order * math.gamma(order + 1) * (upper - float(special.gammainc(order + 1, a)))


def moment(size_dist: Distribution, order: float) -> float:
    """E[X^order] (``order = -1`` gives E[1/X], needed for slowdown)."""
    return partial_moment(size_dist, order, -math.inf if order >= 0 else 0.0, math.inf)


@dataclass(frozen=True)
class PolicyAnalysis:
    """Mean queueing time W, mean slowdown W / X and mean response time W + E[X] of a policy."""

    mean_waiting_time: float
    mean_slowdown: float
    mean_response_time: float


def mg1_waiting_time(arrival_rate: float, size_dist: Distribution) -> float:
    """Pollaczek-Khinchine: E[W] = lambda E[X^2] / (2 (1 - rho)), ``inf`` when rho >= 1 (Theorem 1)."""
    rate = check_positive("arrival_rate", arrival_rate)
    rho = rate * size_dist.mean
    return math.inf if rho >= 1 else rate * size_dist.second_moment() / (2.0 * (1.0 - rho))


def mg1_slowdown(arrival_rate: float, size_dist: Distribution) -> float:
    """E[W / X] = E[W] E[1/X] for M/G/1 FCFS (Theorem 1: W and X are independent)."""
    return mg1_waiting_time(arrival_rate, size_dist) * moment(size_dist, -1)


def random_analysis(size_dist: Distribution, load: float, n_hosts: int) -> PolicyAnalysis:
    """Random (§5.1): each host is M/G/1 with rate lambda / h = load / E[X]; independent of h."""
    load = check_positive("load", load)
    check_int("n_hosts", n_hosts)
    wait = mg1_waiting_time(load / size_dist.mean, size_dist)
    return PolicyAnalysis(wait, wait * moment(size_dist, -1), wait + size_dist.mean)


def erlang_c(n_servers: int, offered_load: float) -> float:
    """P(wait) in M/M/c with c = ``n_servers`` and offered load a = lambda E[X] < c (stable recursion)."""
    c = check_int("n_servers", n_servers)
    a = check_positive("offered_load", offered_load)
    if a >= c:
        return 1.0
    blocking = 1.0
    for k in range(1, c + 1):
        blocking = a * blocking / (k + a * blocking)
    rho = a / c
    return blocking / (1.0 - rho * (1.0 - blocking))


def lwr_analysis(
    size_dist: Distribution, load: float, n_hosts: int, variant: Literal["paper", "lee-longton"] = "lee-longton"
) -> PolicyAnalysis:
    """Least-Work-Remaining = Central-Queue as M/G/h (§5.1), W from E[Q] = lambda E[W] (Little).

    ``"lee-longton"`` (default): E[Q] = E[Q_M/M/h] E[X^2] / (2 E[X]^2), exact P-K for h = 1; the
    form that reproduces the paper's worked example in §6.1 (13 hosts at alpha = 0.6, see the module
    docstring), so the one the paper's figures evidently used.
    ``"paper"``: E[Q] = E[Q_M/M/h] E[X^2] / E[X]^2, the formula as printed in §5.1 (twice the wait).
    """
    load = check_positive("load", load)
    h = check_int("n_hosts", n_hosts)
    check_choice("variant", variant, ("paper", "lee-longton"))
    if load >= 1:
        return PolicyAnalysis(math.inf, math.inf, math.inf)
    mean = size_dist.mean
    rate = load * h / mean
    wait_mmh = erlang_c(h, rate * mean) * mean / (h * (1.0 - load))
    factor = size_dist.second_moment() / mean**2
    wait = wait_mmh * (factor if variant == "paper" else factor / 2.0)
    return PolicyAnalysis(wait, wait * moment(size_dist, -1), wait + mean)


def sita_e_cutoffs(size_dist: Distribution, n_hosts: int) -> np.ndarray:
    """SITA-E's interior size cutoffs c_1 < ... < c_{h-1}: each size interval brings E[X] / h load.

    Host i (0-based) serves the sizes in (c_i, c_{i+1}] (c_0 = 0, c_h = inf); Harchol-Balter,
    Crovella, Murta (1999), cited in §2.
    """
    h = check_int("n_hosts", n_hosts)
    mean = size_dist.mean
    low, high = support_bracket(size_dist)
    cutoffs = []
    for i in range(1, h):
        target = mean * i / h

        def gap(log_x: float, target: float = target) -> float:
            return partial_moment(size_dist, 1, 0.0, math.exp(log_x)) - target

        cutoffs.append(math.exp(optimize.brentq(gap, math.log(low), math.log(high), xtol=1e-12)))
    return np.array(cutoffs)


def support_bracket(size_dist: Distribution) -> tuple[float, float]:
    """A bracket (low, high) holding essentially all of the distribution's mass and load."""
    low = getattr(size_dist, "lower", None)
    high = getattr(size_dist, "upper", None)
    if low is not None and high is not None:
        return float(low), float(high)
    if isinstance(size_dist, (Choice, Empirical, Deterministic)):
        values, _ = _atoms(size_dist)
        return float(values.min()) * (1 - 1e-9), float(values.max())
    return 1e-9 * size_dist.mean, 1e4 * size_dist.mean * (1.0 + size_dist.scv)
