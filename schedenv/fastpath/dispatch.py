"""Dispatch baselines without the Gymnasium shell: one compiled loop per episode (docs/baselines/index.md).

The loop (``run_chunk``) fuses a baseline's rule (``baselines.kernels.dispatch.decide``:
Central-Queue, Random, Round-Robin, Shortest-Queue, Least-Work-Remaining, SITA-E and TAGS of
Harchol-Balter, J. ACM 2002, §1-§4, and TAGS with cycle stealing or a central first stage) with the
compiled transcription of ``DispatchSim`` (``schedenv.dispatch.kernel.advance``), so per-job
completion times, the episode return and ``episode_metrics`` equal those of
``schedenv.evaluation.evaluate`` on the same seed (``tests/perf``). The env applies a Discrete action
exactly, so there is nothing to emulate.

The workload is drawn as ``DispatchEnv.reset(seed)`` draws it: all gaps of the episode, then its
sizes. Random's hosts come, as in ``RandomDispatch``, from a generator seeded by one draw of the
env's generator made after the workload. With ``chunk`` < ``n_arrivals`` the workload is drawn
``chunk`` jobs at a time instead (gaps then sizes of each chunk; Random's seed after the first
chunk), so memory stays flat over 10^7 arrivals: a different but identically distributed stream.
Metrics are streamed (``EpisodeTally``'s running sums); per-job results are kept only on request.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from gymnasium.utils import seeding

from baselines.kernels.dispatch import (
    LEAST_WORK,
    RANDOM,
    SITA_E,
    SIZE_AWARE,
    TAGS_RULES,
    decide,
    policy_code,
)
from schedenv.dispatch.kernel import (
    ACCRUED,
    CHUNK_END,
    FIRST_HOST_ROW,
    FULL,
    KILL_EVENTS,
    N_COMPLETED,
    NEXT_ARRIVAL,
    NO_NRT,
    PENDING,
    RETURN,
    STEPS,
    DispatchArrays,
    advance,
    begin_step,
    dispatch,
)
from schedenv.dispatch.metrics import episode_metrics
from schedenv.dispatch.records import DispatchRecord
from schedenv.fastpath.result import DEFAULT_CHUNK, FastRun
from schedenv.workloads import poisson_job_chunks


@numba.njit(cache=True, **NO_NRT)
def run_chunk(
    policy, jf, ji, hf, hi, qs, si, sf, ct, limits, bounds, per_size, waiting,
    arrivals, sizes, following, id_offset, done_f, done_i, cutoffs, tags_limits, choices,
):  # fmt: skip
    """Decide and advance until the episode ends (``END``), the chunk is used up or the pool is full."""
    n_limits = limits.size
    while True:
        if si[PENDING] < 0:
            status = advance(
                jf, ji, hf, hi, qs, si, sf, ct, limits, bounds, per_size, waiting,
                arrivals, sizes, following, id_offset, done_f, done_i,
            )  # fmt: skip
            if status in (CHUNK_END, FULL):
                return status
            sf[RETURN] -= sf[ACCRUED]
            if si[PENDING] < 0:
                return status
        destination, limit = decide(
            policy, si[PENDING], jf, ji, hf, hi, qs, si, sf, n_limits, cutoffs, tags_limits, choices, id_offset
        )
        dispatch(destination, limit, jf, ji, hf, hi, qs, si, sf, limits, per_size, waiting)
        si[STEPS] += 1
        begin_step(sf)


@dataclass(repr=False)
class DispatchFastRun(FastRun):
    """A fast-path episode of the dispatch family; ``records()`` gives ``DispatchRecord`` objects.

    Per job (``keep_completions=True``): ``wasted``, ``queueing``, ``runs``, ``final_host`` and
    ``first_host``. A job's host sequence is (final host,) after one run and (first host, 1, ..., runs - 1)
    after several: the TAGS rules are the only compiled policies that set finite limits, and they send
    attempt j >= 1 to host j (the first attempt may go elsewhere: cycle stealing, or the central queue
    of the ``tags-cq-*`` rules).
    """

    wasted: np.ndarray | None = None
    queueing: np.ndarray | None = None
    runs: np.ndarray | None = None
    final_host: np.ndarray | None = None
    first_host: np.ndarray | None = None

    def records(self) -> list[DispatchRecord]:  # type: ignore[override]
        """The env's ``DispatchRecord`` of every job, in job-id order (needs ``keep_completions=True``)."""
        if self.completion is None or self.arrival_times is None or self.sizes is None:
            raise ValueError("records need a run with keep_completions=True")
        assert self.wasted is not None and self.queueing is not None
        assert self.runs is not None and self.final_host is not None and self.first_host is not None
        columns = [
            self.arrival_times,
            self.sizes,
            self.completion,
            self.runs,
            self.final_host,
            self.first_host,
            self.wasted,
            self.queueing,
        ]
        return [
            DispatchRecord(j, a, x, c, (c - a) / x, (h,) if r == 1 else (f, *range(1, r)), w, q)
            for j, (a, x, c, r, h, f, w, q) in enumerate(zip(*(column.tolist() for column in columns), strict=True))
        ]


def _chunks(inner: Any, rng: np.random.Generator, chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The env's job stream (``DispatchEnv.reset``), ``chunk`` jobs at a time; drawn lazily, in order."""
    if inner.jobs is not None:
        yield inner.jobs
        return
    yield from poisson_job_chunks(inner.n_arrivals, inner.arrival_process, inner.size_dist, rng, chunk)


def _policy_arrays(code: int, policy: Any, inner: Any) -> tuple[np.ndarray, np.ndarray]:
    """SITA-E's cutoffs and TAGS's ladder indices per attempt (then the rule's ``kernel_rungs``), from the
    policy's own ``reset``."""
    cutoffs, tags_limits = np.empty(0), np.empty(0, dtype=np.int64)
    if code in (LEAST_WORK, SITA_E, *TAGS_RULES):
        policy.reset(inner)
    if code == SITA_E:
        cutoffs = np.asarray(policy.cutoffs, dtype=np.float64)
    elif code in TAGS_RULES:
        tags_limits = np.asarray([*policy.limit_indices, *policy.kernel_rungs()], dtype=np.int64)
    return cutoffs, tags_limits


OPTIONS = frozenset({"chunk", "keep_completions"})
"""The options of ``schedenv.fastpath.run_fast`` that ``run`` takes (actions apply exactly: no ``emulate_env``)."""


def supports(agent: Any, env_kwargs: dict[str, Any]) -> bool:
    """True when the baseline object ``agent`` has a compiled path on ``Dispatch-v0(**env_kwargs)``."""
    code = policy_code(agent)
    return code is not None and (code not in SIZE_AWARE or bool(env_kwargs.get("size_known")))


def run(inner: Any, policy: Any, seed: int, *, chunk: int = DEFAULT_CHUNK, keep_completions: bool = False) -> FastRun:
    """One episode of the dispatch baseline ``policy`` on the unwrapped env ``inner``'s configuration."""
    started = time.perf_counter()
    code = policy_code(policy)
    if code is None:
        raise ValueError(f"no compiled path for policy {policy!r}")
    cutoffs, tags_limits = _policy_arrays(code, policy, inner)
    rng = seeding.np_random(int(seed))[0]
    limits = np.asarray(inner.time_limits, dtype=np.float64)
    bounds = np.asarray(inner.size_class_bounds, dtype=np.float64)
    per_size = inner.objective in ("slowdown", "waiting_slowdown")
    waiting = inner.objective in ("waiting_time", "waiting_slowdown")
    state = DispatchArrays(1, inner.n_hosts, bounds.size + 1, 256)
    stream = _chunks(inner, rng, chunk)
    current: tuple[np.ndarray, np.ndarray] | None = next(stream)
    policy_rng = np.random.default_rng(int(rng.integers(2**63))) if code == RANDOM else None
    kept: list[tuple[np.ndarray, np.ndarray]] | None = [] if keep_completions else None
    n_total = (inner.n_arrivals if inner.jobs is None else inner.jobs[0].size) if keep_completions else 0
    done_f, done_i = np.full((3, n_total), np.nan), np.zeros((FIRST_HOST_ROW + 1, n_total), dtype=np.int64)
    offset = 0
    while current is not None:
        arrivals, sizes = current
        if kept is not None:
            kept.append(current)
        following = next(stream, None)
        choices = np.empty(0, dtype=np.int64)
        if policy_rng is not None:
            choices = policy_rng.integers(inner.n_hosts, size=arrivals.size)
        next_time = float(following[0][0]) if following is not None else np.inf
        state.si[0, NEXT_ARRIVAL] = 0
        while True:
            status = run_chunk(
                code, *state.views(0), limits, bounds, per_size, waiting,
                arrivals, sizes, next_time, offset, done_f, done_i, cutoffs, tags_limits, choices,
            )  # fmt: skip
            if status != FULL:
                break
            state.grow()
        offset += arrivals.size
        current = following
    return _result(inner, int(seed), state, kept, done_f, done_i, offset, time.perf_counter() - started)


def _result(
    inner: Any,
    seed: int,
    state: DispatchArrays,
    kept: list[tuple[np.ndarray, np.ndarray]] | None,
    done_f: np.ndarray,
    done_i: np.ndarray,
    n_arrivals: int,
    seconds: float,
) -> DispatchFastRun:
    """The run's metrics, return and (on request) per-job arrays."""
    hf, si, sf, ct = state.hf[0], state.si[0], state.sf[0], state.ct[0]
    metrics = episode_metrics(inner.n_hosts, inner.size_class_bounds, hf, si, sf, ct)
    n_events = n_arrivals + int(si[N_COMPLETED]) + int(si[KILL_EVENTS])
    result = DispatchFastRun(seed, metrics, float(sf[RETURN]), int(si[STEPS]), n_events, seconds)
    if kept is not None:
        result.arrival_times = np.concatenate([a for a, _ in kept])
        result.sizes = np.concatenate([x for _, x in kept])
        result.completion, result.wasted, result.queueing = done_f[0], done_f[1], done_f[2]
        result.runs, result.final_host, result.first_host = done_i[0], done_i[1], done_i[FIRST_HOST_ROW]
    return result
