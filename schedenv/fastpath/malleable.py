"""Malleable baselines without the Gymnasium shell: one compiled loop per episode (docs/baselines/index.md).

The loop fuses a policy's allocation rule (``baselines.kernels.malleable``) with the event step of
the env's compiled core (``schedenv.malleable.kernel``): at every arrival and departure the policy
allocates over *all* jobs present, and, when ``emulate_env`` is true (the default), the allocation
then goes through exactly what the env does to an action (the window of ``max_jobs`` least-remaining
jobs, float32 action entries, the group weight split equally outside the window, and the env's
``allocation`` mode: renormalisation, or with ``"fractions"`` a sum below 1 kept so that servers idle,
as HELL as worded needs), so that completion times equal those of ``schedenv.evaluation.evaluate``
on the same seed (tests check it).
``emulate_env=False`` applies the policy's own fractions (no window, float64): the paper's policy.

The workload is drawn as the env draws it from ``reset(seed)``: inter-arrival gaps of the episode,
then its sizes. With ``chunk`` < ``n_arrivals`` it is drawn ``chunk`` jobs at a time instead (gaps
then sizes of each chunk), so that memory stays flat over 10^7 arrivals; that is a different (but
identically distributed) job stream than the env's for the same seed. Metrics are streamed; per-job
completion times are kept only on request.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numba
import numpy as np
from gymnasium.utils import seeding

from baselines.kernels.malleable import allocate, policy_code
from schedenv.fastpath.result import DEFAULT_CHUNK, FastRun
from schedenv.malleable.kernel import stable_order
from schedenv.malleable.sim import COMPLETION_TOLERANCE, MIN_ALLOCATION
from schedenv.workloads import Power, draw_sizes


@numba.njit(cache=True)
def _admit(job_id, arrival, size, remaining, weight, n_jobs, arrival_times, sizes, nxt, now, s_n, slowdown, id_offset):
    """Append the chunk's jobs that have arrived by ``now`` (as ``malleable.kernel.admit``, with global job ids)."""
    while nxt < arrival_times.size and arrival_times[nxt] <= now:
        x = sizes[nxt]
        job_id[n_jobs], arrival[n_jobs], size[n_jobs], remaining[n_jobs] = id_offset + nxt, arrival_times[nxt], x, x
        weight[n_jobs] = s_n / x if slowdown else 1.0
        n_jobs += 1
        nxt += 1
    return n_jobs, nxt


@numba.njit(cache=True)
def _through_action(theta, remaining, n, max_jobs, fractions, action, applied, order):
    """What the env applies for ``action_from_allocation(theta)`` (as the env kernel's ``step``).

    ``fractions``: the env's ``allocation="fractions"``: theta is scaled down only when it sums to more
    than 1, the group gets the sum of its jobs' fractions, and an applied sum <= 1 is kept (the rest idle).
    """
    stable_order(remaining, n, order)  # the env's window: least remaining first
    n_window = min(n, max_jobs)
    total = 0.0
    for j in range(n):
        total += theta[j]
    scale = max(total, 1.0) if fractions else total
    for j in range(n):
        applied[j] = -1.0
    for s in range(n_window):
        action[s] = np.float32(theta[order[s]] / scale)
        applied[order[s]] = np.float64(action[s])
    group = 0.0
    for j in range(n):  # the env's action[-1] = scaled[outside].sum() in float32, clipped to [0, 1]
        if applied[j] < 0.0:
            group += theta[j] / scale
    group = min(np.float64(np.float32(group)), 1.0)
    applied_total = 0.0
    for j in range(n):
        if applied[j] < 0.0:
            applied[j] = group / (n - n_window)
        applied_total += applied[j]
    for j in range(n):
        if applied_total < MIN_ALLOCATION:
            applied[j] = 1.0 / n
        elif applied_total > 1.0 or not fractions:
            applied[j] = applied[j] / applied_total


@numba.njit(cache=True)
def _run_chunk(
    policy, p, alpha, n_servers, s_n, slowdown, max_jobs, emulate, fractions,
    arrival_times, sizes, id_offset, last, run_max,
    job_id, arrival, size, remaining, weight, counters, totals, completion, theta, applied, action, order, scratch,
):  # fmt: skip
    """Run epochs until the chunk's arrivals are used up (or all jobs are done on the last chunk).

    ``counters`` = (n_jobs, next_arrival, steps, overflow_epochs, completed) and ``totals`` =
    (now, accrued objective, sum of response times, sum of slowdowns) carry the state between
    calls. Returns 1 when the job arrays need more capacity (nothing changed), else 0.
    """
    n_jobs, nxt, now = counters[0], counters[1], totals[0]
    n_stream, capacity = arrival_times.size, job_id.size
    while True:
        if n_jobs + 2 * run_max > capacity:
            counters[0], counters[1], totals[0] = n_jobs, nxt, now
            return 1
        n_jobs, nxt = _admit(
            job_id, arrival, size, remaining, weight, n_jobs, arrival_times, sizes, nxt, now, s_n, slowdown, id_offset
        )
        if n_jobs == 0:
            if nxt >= n_stream:
                break
            now = arrival_times[nxt]  # idle until the next arrival (docs/envs/index.md)
            n_jobs, nxt = _admit(
                job_id, arrival, size, remaining, weight, 0, arrival_times, sizes, nxt, now, s_n, slowdown, id_offset
            )
        if nxt >= n_stream and not last:
            break
        counters[2] += 1
        counters[3] += n_jobs > max_jobs
        allocate(policy, remaining, size, weight, n_jobs, p, alpha, n_servers, theta, order, scratch)
        if emulate:
            _through_action(theta, remaining, n_jobs, max_jobs, fractions, action, applied, order)
        else:
            for j in range(n_jobs):
                applied[j] = theta[j]
        first, until_departure = -1, np.inf
        for j in range(n_jobs):
            rate = (applied[j] * n_servers) ** p
            if rate > 0.0:
                finish = remaining[j] / rate
                if finish < until_departure:
                    first, until_departure = j, finish
        until_arrival = arrival_times[nxt] - now if nxt < n_stream else np.inf
        elapsed = min(until_departure, until_arrival)
        event = now + elapsed
        accrued, kept = 0.0, 0
        for j in range(n_jobs):
            accrued += weight[j]
            left = remaining[j] - (applied[j] * n_servers) ** p * elapsed
            if left <= COMPLETION_TOLERANCE * size[j] or (j == first and until_departure <= until_arrival):
                response = event - arrival[j]
                totals[2] += response
                totals[3] += response * s_n / size[j]
                counters[4] += 1
                if completion.size:
                    completion[job_id[j]] = event
            else:
                job_id[kept], arrival[kept], size[kept] = job_id[j], arrival[j], size[j]
                remaining[kept], weight[kept] = left, weight[j]
                kept += 1
        totals[1] += accrued * elapsed
        now = event
        n_jobs, nxt = _admit(
            job_id, arrival, size, remaining, weight, kept, arrival_times, sizes, nxt, now, s_n, slowdown, id_offset
        )
    counters[0], counters[1], totals[0] = n_jobs, nxt, now
    return 0


def _workload(inner: Any, rng: np.random.Generator, chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The env's job stream (``MalleableEnv._draw_workload``), ``chunk`` jobs at a time online."""
    if inner.jobs is not None:
        yield inner.jobs
        return
    if inner.mode == "offline":
        yield np.zeros(inner.n_jobs), draw_sizes("size_dist", inner.size_dist, rng, inner.n_jobs)
        return
    left, clock = inner.n_arrivals, 0.0
    while left:
        m = min(chunk, left)
        gaps = inner.arrival_process.interarrival_times(rng, m)
        sizes = draw_sizes("size_dist", inner.size_dist, rng, m)
        arrivals = clock + np.cumsum(gaps)
        clock, left = float(arrivals[-1]), left - m
        yield arrivals, sizes


def _max_ties(arrival_times: np.ndarray) -> int:
    """The longest run of equal arrival times (jobs one admission can add)."""
    if arrival_times.size < 2:
        return int(arrival_times.size)
    edges = np.flatnonzero(np.diff(arrival_times) != 0.0)
    bounds = np.concatenate([[-1], edges, [arrival_times.size - 1]])
    return int(np.diff(bounds).max())


OPTIONS = frozenset({"emulate_env", "chunk", "keep_completions"})
"""The options of ``schedenv.fastpath.run_fast`` that ``run`` takes."""


def supports(agent: Any, env_kwargs: dict[str, Any]) -> bool:
    """True when the baseline object ``agent`` has a compiled path on ``Malleable-v0(**env_kwargs)``."""
    if policy_code(agent) is None:
        return False
    if env_kwargs.get("p_range") is not None or env_kwargs.get("load_range") is not None:
        return False  # the compiled loop has one p and one load per run
    if env_kwargs.get("action_mode", "weights") != "weights":
        return False  # it emulates the "weights" encoding; the other modes' nearest actions go through the env
    return isinstance(env_kwargs.get("speedup", 0.5), int | float | Power)


def run(
    inner: Any,
    policy: Any,
    seed: int,
    *,
    emulate_env: bool = True,
    chunk: int = DEFAULT_CHUNK,
    keep_completions: bool = False,
) -> FastRun:
    """One episode of the malleable baseline ``policy`` on the unwrapped env ``inner``'s configuration."""
    started = time.perf_counter()
    found = policy_code(policy)
    if found is None or not isinstance(inner.speedup, Power):
        raise ValueError(f"no compiled path for policy {policy!r} with speedup {inner.speedup!r}")
    code, alpha = found
    rng = seeding.np_random(int(seed))[0]
    p, n_servers, s_n = inner.speedup.p, float(inner.n_servers), float(inner.speedup(inner.n_servers))
    slowdown, max_jobs = inner.objective == "slowdown", int(inner.max_jobs)
    fractions = inner.allocation == "fractions"
    capacity = 1024
    ids = [np.empty(capacity, dtype=np.int64) for _ in range(2)]  # job_id, order
    reals = [np.empty(capacity) for _ in range(7)]  # arrival, size, remaining, weight, theta, applied, scratch
    counters, totals = np.zeros(5, dtype=np.int64), np.zeros(4)
    action = np.empty(max_jobs + 1, dtype=np.float32)
    chunks = list(_workload(inner, rng, chunk)) if keep_completions else None
    n_total = sum(arrivals.size for arrivals, _ in chunks) if chunks is not None else 0
    completion = np.full(n_total, np.nan) if keep_completions else np.empty(0)
    iterator = iter(chunks) if chunks is not None else _workload(inner, rng, chunk)
    following = next(iterator, None)
    offset = 0
    while following is not None:
        arrivals, sizes = following
        following = next(iterator, None)
        counters[1] = 0
        run_max = _max_ties(arrivals)
        while True:
            (job_id, order), (arrival, size, remaining, weight, theta, applied, scratch) = ids, reals
            status = _run_chunk(
                code, p, alpha, n_servers, s_n, slowdown, max_jobs, emulate_env, fractions,
                arrivals, sizes, offset, following is None, run_max,
                job_id, arrival, size, remaining, weight, counters, totals, completion,
                theta, applied, action, order, scratch,
            )  # fmt: skip
            if status == 0:
                break
            capacity *= 2
            ids, reals = [np.resize(x, capacity) for x in ids], [np.resize(x, capacity) for x in reals]
        offset += arrivals.size
    steps, overflow, completed = int(counters[2]), int(counters[3]), int(counters[4])
    mean_response, mean_slowdown = totals[2] / completed, totals[3] / completed
    metrics = {
        "n_completed": float(completed),
        "mean_response_time": float(mean_response),
        "mean_slowdown": float(mean_slowdown),
        "total_flow_time": float(mean_response * completed),
        "total_slowdown": float(mean_slowdown * completed),
        "makespan": float(totals[0]),
        "overflow_fraction": overflow / max(steps, 1),
    }
    result = FastRun(int(seed), metrics, -float(totals[1]), steps, offset + completed, time.perf_counter() - started)
    if chunks is not None:
        result.arrival_times = np.concatenate([a for a, _ in chunks])
        result.sizes = np.concatenate([x for _, x in chunks])
        result.completion = completion
        result.speedup_at_n = s_n
    return result
