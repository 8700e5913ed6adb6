"""Closed forms for the multiserver-job queue (Grosof, Scully, Harchol-Balter, Scheller-Wolf,
"Optimal Scheduling in the Multiserver-job Model under Heavy Traffic", POMACS 6(3) 2022, §4).

The resource-pooled M/G/1 under SRPT ("SRPT-1", §4.1) is a lower bound on the optimal mean
response time of the multiserver-job system with the same arrival rate and size law S = K D / k.
Its mean response time is the Schrage-Miller formula; Theorem 4.1 bounds how far
ServerFilling-SRPT can lie above it. With unknown sizes the single-server reference is Gittins-1
(§5, Theorem 5.1); for size laws with a decreasing hazard rate the Gittins policy is
foreground-background, whose mean response time is ``fb_mg1_response_time``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import cumulative_trapezoid

from schedenv.validation import check_int, check_positive, check_probability
from schedenv.workloads import Distribution

GRID_POINTS = 40_000
TAIL_PROBABILITY = 1e-12


def srpt_mg1_response_time(size_dist: Distribution, arrival_rate: float) -> float:
    """E[T] of the M/G/1 under preemptive SRPT (Schrage and Miller 1966).

    For a job of size x, with rho(x) = lambda int_0^x t dF(t),

        E[T(x)] = lambda int_0^x t^2 dF(t) + lambda x^2 (1 - F(x))    int_0^x      dt
                  ----------------------------------------------  +  |      ----------- ,
                              2 (1 - rho(x))^2                       0      1 - rho(t)

    and E[T] = int E[T(x)] dF(x). The partial moments are rewritten with the survival function,
    int_0^x t dF = int_0^x (1 - F) - x (1 - F(x)) and the numerator above = 2 lambda int_0^x t (1 - F),
    so only ``size_dist.cdf`` is needed. All integrals are evaluated with scipy's cumulative
    trapezoid rule on a geometric grid of 40,000 sizes from 1e-9 E[S] to where 1 - F < 1e-12
    (relative error about 1e-6 for smooth laws; atoms are resolved to the grid spacing).
    """
    rate = check_positive("arrival_rate", arrival_rate)
    mean = size_dist.mean
    load = rate * mean
    if not load < 1:
        raise ValueError(
            f"arrival_rate={arrival_rate!r} gives load {load:.6g} with E[S]={mean:.6g}; SRPT-1 is stable only below 1"
        )
    x, cdf = _size_grid(size_dist)
    survival = 1.0 - cdf
    first = cumulative_trapezoid(survival, x, initial=0.0) - x * survival
    rho = rate * np.maximum(first, 0.0)
    waiting_numerator = 2.0 * rate * cumulative_trapezoid(x * survival, x, initial=0.0)
    residence = cumulative_trapezoid(1.0 / (1.0 - rho), x, initial=0.0)
    response = waiting_numerator / (2.0 * (1.0 - rho) ** 2) + residence
    return _stieltjes_mean(response, cdf)


def fb_mg1_response_time(size_dist: Distribution, arrival_rate: float) -> float:
    """E[T] of the M/G/1 under foreground-background (FB: least attained service first, ties shared).

    A job of size x sees only the work of others truncated at x (Schrage 1967; Kleinrock, Queueing
    Systems vol. 2, ch. 4): with rho_x = lambda E[min(S, x)] = lambda int_0^x (1 - F) and
    E[min(S, x)^2] = 2 int_0^x t (1 - F(t)) dt,

        E[T(x)] = x / (1 - rho_x) + lambda E[min(S, x)^2] / (2 (1 - rho_x)^2),

    and E[T] = int E[T(x)] dF(x), on the grid and quadrature of ``srpt_mg1_response_time``. For a
    size law with a decreasing hazard rate (hyperexponential, Pareto) the Gittins rank increases
    with the age and the Gittins policy is FB (Aalto, Ayesta and Righter, Queueing Systems 63,
    2009), so this is E[T^Gittins-1], the single-server reference of the ServerFilling paper's
    Theorem 5.1 (§5.3), for such laws. For an exponential law every size-blind policy gives
    E[S] / (1 - rho), and so does this.
    """
    rate = check_positive("arrival_rate", arrival_rate)
    load = rate * size_dist.mean
    if not load < 1:
        raise ValueError(
            f"arrival_rate={arrival_rate!r} gives load {load:.6g} with E[S]={size_dist.mean:.6g}; FB is stable "
            "only below 1"
        )
    x, cdf = _size_grid(size_dist)
    survival = 1.0 - cdf
    rho = rate * cumulative_trapezoid(survival, x, initial=0.0)
    second = 2.0 * cumulative_trapezoid(x * survival, x, initial=0.0)
    response = x / (1.0 - rho) + rate * second / (2.0 * (1.0 - rho) ** 2)
    return _stieltjes_mean(response, cdf)


def _size_grid(size_dist: Distribution) -> tuple[np.ndarray, np.ndarray]:
    """0, then 40,000 geometric sizes from 1e-9 E[S] to where 1 - F < 1e-12, and the cdf there."""
    mean = size_dist.mean
    top = mean
    for _ in range(200):
        if 1.0 - float(size_dist.cdf(top)) < TAIL_PROBABILITY:
            break
        top *= 2.0
    x = np.concatenate([[0.0], np.geomspace(1e-9 * mean, top, GRID_POINTS - 1)])
    return x, np.clip(np.asarray(size_dist.cdf(x), dtype=np.float64), 0.0, 1.0)


def _stieltjes_mean(values: np.ndarray, cdf: np.ndarray) -> float:
    """int values dF: each interval's probability mass at the mean of its two end values."""
    mass = np.diff(cdf, prepend=0.0)
    midpoint = np.concatenate([[values[0]], 0.5 * (values[1:] + values[:-1])])
    return float(midpoint @ mass)


def sfs_gap_bound(n_servers: int, arrival_rate: float, load: float) -> float:
    """Theorem 4.1: E[T^SFS-k] - E[T^SRPT-1] <= (k - 1)/lambda * ((e + 1) ln(1/(1 - rho)) + e).

    The proof adds Theorem 4.6, e (k - 1) ceil(ln 1/(1 - rho)) / lambda, and Theorem 4.7,
    (k - 1) ln(1/(1 - rho)) / lambda, and uses ceil(x) <= x + 1; this is that sum. (The printed
    statement of the theorem shows the constant term as e / lambda, without the factor k - 1 the
    proof yields; we use the proof's bound.) The same bound holds for DivisorFilling-SRPT.
    """
    k = check_int("n_servers", n_servers)
    rate = check_positive("arrival_rate", arrival_rate)
    rho = check_probability("load", load, open_low=False, open_high=True)
    log_term = -math.log1p(-rho)
    return (k - 1) / rate * ((math.e + 1.0) * log_term + math.e)
