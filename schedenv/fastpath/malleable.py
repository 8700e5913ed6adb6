"""Malleable baselines without the Gymnasium shell: one compiled loop per episode (docs/baselines/index.md).

The loop is the env's compiled transition (``schedenv.malleable.kernel``: ``advance`` on the
kernel's state arrays, ``MalleableArrays``) driven by a policy's allocation rule
(``baselines.kernels.malleable``): at every arrival and departure the policy allocates over *all*
jobs present, and, when ``emulate_env`` is true (the default), the allocation then becomes the
action the env's ``action_from_allocation`` gives (the window of ``max_jobs`` least-remaining jobs,
float32 entries, the group's weight last), which the kernel's ``apply_weights`` turns into fractions
as the env's step does (the group's weight split equally outside the window, and the env's
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
from schedenv.malleable import kernel
from schedenv.workloads import Power, draw_sizes, poisson_job_chunks


@numba.njit(cache=True)
def _env_action(theta, order, n, n_window, fractions, action, outside):
    """The action the env gets from ``action_from_allocation(theta)`` (``order``: its window first).

    Window slots get theta scaled to sum to 1 (with ``fractions``, only when it sums to more than 1),
    rounded to float32; the last entry the float32 sum of the rest, clipped to 1. ``outside`` is scratch.
    """
    total = 0.0
    for j in range(n):
        total += theta[j]
        outside[j] = 1.0
    scale = max(total, 1.0) if fractions else total
    for s in range(n_window):
        action[s] = np.float32(theta[order[s]] / scale)
        outside[order[s]] = 0.0
    group = 0.0
    for j in range(n):  # in state order, as the env's action[-1] = scaled[outside].sum()
        if outside[j] > 0.0:
            group += theta[j] / scale
    action[action.size - 1] = min(np.float64(np.float32(group)), 1.0)


@numba.njit(cache=True)
def _run_chunk(
    policy, alpha, max_jobs, emulate, fractions, last, run_max, ids, jobs, ints, floats,
    arrival_times, sizes, n_servers, p, s_n, slowdown, completion, action, theta, scratch,
):  # fmt: skip
    """Run epochs until the chunk's arrivals are used up (or all jobs are done on the last chunk).

    Each epoch: the policy's allocation (``allocate``), through the env's action (``_env_action`` and
    the kernel's ``apply_weights``) when ``emulate``, then the kernel's ``advance``. The state
    (``ids``, ``jobs``, ``ints``, ``floats``: ``kernel.MalleableArrays``) carries over between calls.
    Returns 1 when the job arrays need more capacity (the state is then settled, so a call with larger
    arrays goes on from it), else 0.
    """
    order, remaining, size, weight = ids[kernel.ORDER], jobs[kernel.REMAINING], jobs[kernel.SIZE], jobs[kernel.WEIGHT]
    out = theta if emulate else jobs[kernel.THETA]  # unemulated, the policy's fractions apply as they are
    if ints[kernel.N_JOBS] + 2 * run_max > ids.shape[1]:
        return 1
    kernel.settle(ids, jobs, ints, floats, arrival_times, sizes, s_n, slowdown)  # advance settles after each step
    while ints[kernel.N_JOBS] > 0 and (ints[kernel.NEXT_ARRIVAL] < arrival_times.size or last):
        n = ints[kernel.N_JOBS]
        if n + 2 * run_max > ids.shape[1]:
            return 1  # settled: the next call goes on from here
        ints[kernel.N_WINDOW] = min(n, max_jobs)
        allocate(policy, remaining, size, weight, n, p, alpha, n_servers, out, order, scratch)
        if emulate:
            kernel.stable_order(remaining, n, order)  # the env's window: least remaining first
            _env_action(theta, order, n, ints[kernel.N_WINDOW], fractions, action, scratch)
            kernel.apply_weights(action, order, jobs, ints, fractions)
        event, _, _, n_done = kernel.advance(ids, jobs, ints, floats, arrival_times, sizes, n_servers, p, s_n, slowdown)
        for k in range(n_done if completion.size else 0):
            completion[ids[kernel.DONE_ID, k]] = event
    return 0


def _workload(inner: Any, rng: np.random.Generator, chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The env's job stream (``MalleableEnv._draw_workload``), ``chunk`` jobs at a time online."""
    if inner.jobs is not None:
        yield inner.jobs
        return
    if inner.mode == "offline":
        yield np.zeros(inner.n_jobs), draw_sizes("size_dist", inner.size_dist, rng, inner.n_jobs)
    else:
        yield from poisson_job_chunks(inner.n_arrivals, inner.arrival_process, inner.size_dist, rng, chunk)


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
    arrays = kernel.MalleableArrays(1, 1024)  # an empty system at time 0; grown as needed
    work = np.empty((2, 1024))  # the policy's fractions and scratch space
    action = np.zeros(max_jobs + 1)
    chunks = list(_workload(inner, rng, chunk)) if keep_completions else None
    n_total = sum(arrivals.size for arrivals, _ in chunks) if chunks is not None else 0
    completion = np.full(n_total, np.nan) if keep_completions else np.empty(0)
    iterator = iter(chunks) if chunks is not None else _workload(inner, rng, chunk)
    following = next(iterator, None)
    offset = 0
    while following is not None:
        arrivals, sizes = following
        following = next(iterator, None)
        ints = arrays.ints[0]
        ints[kernel.NEXT_ARRIVAL], ints[kernel.ARRIVED_BEFORE] = 0, offset
        run_max = _max_ties(arrivals)
        while _run_chunk(
            code, alpha, max_jobs, emulate_env, fractions, following is None, run_max, *arrays.views(0),
            arrivals, sizes, n_servers, p, s_n, slowdown, completion, action, work[0], work[1],
        ):  # fmt: skip
            arrays.grow()
            work = np.empty((2, 2 * work.shape[1]))
        offset += arrivals.size
    ints, floats = arrays.ints[0], arrays.floats[0]
    steps, overflow, completed = int(ints[kernel.EPOCHS]), int(ints[kernel.OVERFLOW]), int(ints[kernel.N_COMPLETED])
    mean_response, mean_slowdown = floats[kernel.RESPONSE] / completed, floats[kernel.SLOWDOWN] / completed
    metrics = {
        "n_completed": float(completed),
        "mean_response_time": float(mean_response),
        "mean_slowdown": float(mean_slowdown),
        "total_flow_time": float(mean_response * completed),
        "total_slowdown": float(mean_slowdown * completed),
        "makespan": float(floats[kernel.TIME]),
        "overflow_fraction": overflow / max(steps, 1),
    }
    result = FastRun(
        int(seed), metrics, -float(floats[kernel.OBJECTIVE]), steps, offset + completed, time.perf_counter() - started
    )
    if chunks is not None:
        result.arrival_times = np.concatenate([a for a, _ in chunks])
        result.sizes = np.concatenate([x for _, x in chunks])
        result.completion = completion
        result.speedup_at_n = s_n
    return result
