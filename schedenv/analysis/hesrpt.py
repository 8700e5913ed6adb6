"""heSRPT closed forms (Berg, Vesilo, Harchol-Balter, "heSRPT: Parallel scheduling to minimize
mean slowdown", Performance Evaluation 2020, §3 Theorems 5 and 6, Corollary 1).

With speedup s(k) = k^p, 0 < p <= 1, and jobs ordered x_1 >= ... >= x_M, the optimal fraction of
the N servers for job i while m jobs remain is

    theta_i = (z(i) / z(m))^(1/(1-p)) - (z(i-1) / z(m))^(1/(1-p)),   z(k) = w_1 + ... + w_k,

and the optimal total weighted flow time is

    F* = (1 / s(N)) * sum_k x_k [z(k)^(1/(1-p)) - z(k-1)^(1/(1-p))]^(1-p).

For p close to 1 the exponent 1/(1-p) is huge (100 at p = 0.99), so both are evaluated in ratio
form, r^c = exp(c log r) with r <= 1, which never overflows; p = 1 is the SRPT limit.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from schedenv.validation import check_choice, check_positive, check_positive_array, check_probability

Weights = Literal["slowdown", "flow_time"] | np.ndarray


def hesrpt_weights(sizes: np.ndarray, weights: Weights, speedup_at_n: float = 1.0) -> np.ndarray:
    """Corollary 1's weights: w_i = s(N) / x_i for slowdown, 1 for flow time, or given ones."""
    if isinstance(weights, str):
        check_choice("weights", weights, ("slowdown", "flow_time"))
        return speedup_at_n / sizes if weights == "slowdown" else np.ones_like(sizes)
    return check_positive_array("weights", weights)


def _order_and_weights(
    sizes: object, weights: Weights, speedup_at_n: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = check_positive_array("sizes", sizes)
    w = hesrpt_weights(x, weights, speedup_at_n)
    if w.shape != x.shape:
        raise ValueError(f"weights has shape {w.shape}, sizes has shape {x.shape}; they must match")
    # Largest first (x_1 >= ... >= x_M); ties broken by input position so the order is stable.
    order = np.lexsort((np.arange(x.size), -x))
    return x, w, order


def _weights_favor_small_jobs(x_sorted: np.ndarray, w_sorted: np.ndarray) -> None:
    smaller = np.diff(x_sorted) < 0
    if (np.diff(w_sorted)[smaller] < -1e-12 * w_sorted[1:][smaller]).any():
        raise ValueError(
            "weights must favor small jobs (w_1 <= ... <= w_M for x_1 >= ... >= x_M, heSRPT §2); "
            "Theorems 5 and 6 do not hold otherwise"
        )


def hesrpt_allocation(sizes: object, p: float, weights: Weights = "slowdown") -> np.ndarray:
    """Theorem 5: the optimal server fractions for the jobs ``sizes`` (aligned with the input).

    ``sizes`` are the jobs present now (remaining sizes, which heSRPT keeps in the order of the
    original ones). Fractions sum to 1 and grow as size shrinks. At p = 1 all servers go to the
    smallest job (SRPT); equal sizes are ordered by input position.
    """
    p = check_probability("p", p)
    _, w, order = _order_and_weights(sizes, weights, 1.0)
    z = np.cumsum(w[order])
    if p == 1.0:
        sorted_theta = np.zeros_like(z)
        sorted_theta[-1] = 1.0
    else:
        sorted_theta = _sorted_fractions(z[None, :], z[None, -1:], np.array([[1.0 / (1.0 - p)]]))[0]
    theta = np.empty_like(sorted_theta)
    theta[order] = sorted_theta
    return theta


def hesrpt_allocation_rows(sizes: np.ndarray, weights: np.ndarray, counts: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Theorem 5 for a batch of job sets: row i is ``hesrpt_allocation(sizes[i, :counts[i]], p[i],
    weights=weights[i, :counts[i]])`` bit for bit (the same operations on each element), zeros beyond
    ``counts[i]``. The inputs are an env's state and are not checked: positive sizes and weights in
    each row's first ``counts[i]`` entries, each p in (0, 1]."""
    sizes, counts, p = np.asarray(sizes, dtype=np.float64), np.asarray(counts), np.asarray(p, dtype=np.float64)
    valid = np.arange(sizes.shape[1]) < counts[:, None]
    # Largest first, ties by position (``_order_and_weights``'s order); the empty entries last.
    order = np.argsort(np.where(valid, -sizes, np.inf), axis=1, kind="stable")
    z = np.cumsum(np.take_along_axis(np.where(valid, weights, 1.0), order, axis=1), axis=1)
    last = np.maximum(counts - 1, 0)[:, None]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # in the empty entries and rows with p = 1
        sorted_theta = _sorted_fractions(z, np.take_along_axis(z, last, axis=1), (1.0 / (1.0 - p))[:, None])
    srpt = np.flatnonzero(p == 1.0)  # the SRPT limit: every server to the smallest job
    sorted_theta[srpt] = 0.0
    sorted_theta[srpt, last[srpt, 0]] = 1.0
    theta = np.zeros_like(z)
    np.put_along_axis(theta, order, np.where(valid, sorted_theta, 0.0), axis=1)
    return theta


def _sorted_fractions(z: np.ndarray, z_last: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Theorem 5's fractions of jobs ordered largest first, row by row, from the cumulative weights ``z``,
    each row's total ``z_last`` (B x 1) and c = 1 / (1 - p) (B x 1)."""
    upper = np.exp(c * np.log(z / z_last))
    # theta_i = (z_i/z_m)^c * (1 - (z_{i-1}/z_i)^c), the second factor via expm1 for accuracy.
    previous = np.empty_like(z)
    previous[:, 0] = -np.inf
    previous[:, 1:] = np.log(z[:, :-1] / z[:, 1:])
    return upper * -np.expm1(c * previous)


def hesrpt_weighted_flow_time(sizes: object, p: float, n_servers: float, weights: Weights = "slowdown") -> float:
    """Theorem 6: the optimal total weighted flow time of the jobs ``sizes`` all present at t = 0.

    With ``weights="slowdown"`` (w_i = s(N)/x_i) this is the optimal *total* slowdown; with
    ``"flow_time"`` the optimal total flow time (Corollary 1). Explicit weights must favor small
    jobs, as Theorem 6 requires.
    """
    p = check_probability("p", p)
    n = check_positive("n_servers", n_servers)
    s_n = n**p
    x, w, order = _order_and_weights(sizes, weights, s_n)
    x_sorted, w_sorted = x[order], w[order]
    _weights_favor_small_jobs(x_sorted, w_sorted)
    z = np.cumsum(w_sorted)
    if p == 1.0:
        bracket = z
    else:
        c = 1.0 / (1.0 - p)
        previous = np.concatenate([[-np.inf], np.log(z[:-1] / z[1:])])
        # [z_k^c - z_{k-1}^c]^(1-p) = z_k * (1 - (z_{k-1}/z_k)^c)^(1-p)
        bracket = z * np.power(-np.expm1(c * previous), 1.0 - p)
    return float(np.sum(x_sorted * bracket) / s_n)


def hesrpt_mean_slowdown(sizes: object, p: float, n_servers: float) -> float:
    """Optimal mean slowdown of an offline job set (Theorem 6 with Corollary 1's weights)."""
    x = check_positive_array("sizes", sizes)
    return hesrpt_weighted_flow_time(x, p, n_servers, "slowdown") / x.size


def hesrpt_mean_flow_time(sizes: object, p: float, n_servers: float) -> float:
    """Optimal mean flow time of an offline job set (Theorem 6 with w_i = 1)."""
    x = check_positive_array("sizes", sizes)
    return hesrpt_weighted_flow_time(x, p, n_servers, "flow_time") / x.size
