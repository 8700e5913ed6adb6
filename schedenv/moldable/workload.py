"""Moldable job sets: explicit runtime tables, Downey jobs, the Cirne-style generator, SWF replay.

A moldable job j has a runtime T_j(n) on each processor count n = 1..m it may run with (HRF paper,
Wu et al., CF'15, §2.2, §4.1). Two descriptions are accepted:

- **Downey jobs** (the paper's §6.1.2 traces): sequential runtime L, average parallelism A and
  variance sigma; T(n) = L / S(n) with Downey's speedup (:class:`schedenv.workloads.DowneySpeedup`).
- **Runtime tables** ``{procs: seconds}`` (the paper's Table 1): counts missing from the table are
  not allowed for that job. Runtimes must not increase with the processor count: Downey's model
  and the paper's RP analysis (§4.2) assume that extra processors never slow a job down.

Every job also carries a ``requested`` processor count, the rigid request a user would submit
(used by the ``rigid-*`` baselines): an SWF trace's count; for Downey jobs without one, the power
of two nearest to A in log scale (users favour powers of two; Downey 1997 smooths them away, we
put them back for the rigid request only); for a table, the smallest count of least runtime.

The **Cirne-style generator** (:class:`CirneWorkload`) follows the facts listed in docs/envs/moldable.md (Downey 1997
as summarised by the Parallel Workloads Archive; Cirne and Berman 2001): Poisson arrivals with mean
gap ``arrival_interval`` (the paper's 2000 / 1000 / 600 s per job for light / middle / heavy load;
no daily cycle), A log-uniform on [1, m], L (node-seconds of work) log-uniform on
[``work_low``, ``work_high``], sigma uniform on [``sigma_low``, ``sigma_high``] (Cirne and Berman's
fitted sigma distribution is not in the paper; uniform on [0, 2] covers both of Downey's regimes).
The work range [100, 10^6] node-seconds is our choice: it puts the middle load (1000 s per job on
128 processors) near a work load of 0.85 (E[L] / (gap m)), so queues form as in the paper's Fig. 7.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedenv.traces import ReplayJobs
from schedenv.validation import (
    MAX_TIME_RATIO,
    SCALE_RANGE,
    check_int,
    check_nonnegative,
    check_sampled,
    check_scale,
    check_time_resolution,
    suggest,
)
from schedenv.workloads import DowneySpeedup

LOADS: dict[str, float] = {"light": 2000.0, "middle": 1000.0, "heavy": 600.0}
"""The paper's mean arrival intervals (seconds per job) for its three loads (§6.1.2)."""

_JOB_KEYS = ("submit", "runtimes", "L", "A", "sigma", "requested")


@dataclass(frozen=True)
class MoldableJobSet:
    """The jobs of one episode on ``n_procs`` processors (aligned arrays, one entry per job).

    Job j is a Downey job when ``L[j]`` is finite, otherwise its runtimes are ``tables[j]``.
    ``size`` is the job's work on its smallest allowed count n_min, n_min T(n_min) (= L for a
    Downey job); it is the ``size`` of the job's record.
    """

    n_procs: int
    submit: np.ndarray
    size: np.ndarray
    requested: np.ndarray
    L: np.ndarray
    A: np.ndarray
    sigma: np.ndarray
    tables: Mapping[int, np.ndarray]

    @property
    def n_jobs(self) -> int:
        return int(self.submit.size)

    def runtime_rows(self, jobs: np.ndarray) -> np.ndarray:
        """T_j(n) for the given jobs (rows) and n = 1..m (columns); ``inf`` where not allowed."""
        jobs = np.asarray(jobs, dtype=np.int64)
        counts = np.arange(1, self.n_procs + 1, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            speedup = DowneySpeedup.formula(counts, self.A[jobs, None], self.sigma[jobs, None])
            rows = np.asarray(self.L[jobs, None] / speedup, dtype=np.float64)
        for index, job in enumerate(jobs.tolist()):
            if job in self.tables:
                rows[index] = self.tables[job]
        return rows

    def arrival_order(self) -> np.ndarray:
        """Job indices by submit time, ties by index."""
        return np.argsort(self.submit, kind="stable")

    def shortest_runtimes(self) -> np.ndarray:
        """Each job's run time on the count that runs it fastest: T_j(m) for a Downey job, a table's least entry."""
        with np.errstate(invalid="ignore"):
            fastest = np.asarray(self.L / DowneySpeedup.formula(float(self.n_procs), self.A, self.sigma), dtype=float)
        for job, row in self.tables.items():
            fastest[job] = row[np.isfinite(row)].min()
        return fastest


def power_of_two_request(A: np.ndarray, n_procs: int) -> np.ndarray:
    """The power of two nearest to A in log scale, within [1, n_procs]."""
    powers = np.exp2(np.rint(np.log2(np.maximum(np.asarray(A, dtype=float), 1.0))))
    return np.clip(powers, 1, n_procs).astype(np.int64)


def downey_jobs(
    submit: np.ndarray,
    L: np.ndarray,
    A: np.ndarray,
    sigma: np.ndarray,
    n_procs: int,
    requested: np.ndarray | None = None,
) -> MoldableJobSet:
    """A job set of Downey jobs (all arrays aligned, already validated)."""
    submit = np.asarray(submit, dtype=np.float64)
    request = power_of_two_request(A, n_procs) if requested is None else np.asarray(requested, dtype=np.int64)
    return MoldableJobSet(
        n_procs=n_procs,
        submit=submit,
        size=np.asarray(L, dtype=np.float64),
        requested=request,
        L=np.asarray(L, dtype=np.float64),
        A=np.asarray(A, dtype=np.float64),
        sigma=np.asarray(sigma, dtype=np.float64),
        tables={},
    )


@dataclass(frozen=True)
class CirneWorkload:
    """The Cirne-style synthetic generator of moldable Downey jobs (see the module docstring)."""

    arrival_interval: float = 1000.0
    work_low: float = 100.0
    work_high: float = 1e6
    sigma_low: float = 0.0
    sigma_high: float = 2.0

    def __post_init__(self) -> None:
        check_scale("arrival_interval", self.arrival_interval)
        check_scale("work_low", self.work_low)
        check_scale("work_high", self.work_high)
        if not self.work_high >= self.work_low:
            raise ValueError(f"work_high={self.work_high!r} is not allowed; it must be >= work_low={self.work_low!r}")
        check_nonnegative("sigma_low", self.sigma_low)
        check_nonnegative("sigma_high", self.sigma_high)
        if self.sigma_high > SCALE_RANGE[1]:
            raise ValueError(
                f"sigma_high={self.sigma_high!r} is not allowed; it must lie in [0, {SCALE_RANGE[1]:g}] (SCALE_RANGE, "
                "as DowneySpeedup's sigma)"
            )
        if not self.sigma_high >= self.sigma_low:
            raise ValueError(
                f"sigma_high={self.sigma_high!r} is not allowed; it must be >= sigma_low={self.sigma_low!r}"
            )

    @property
    def mean_work(self) -> float:
        """E[L] of the log-uniform work distribution (node-seconds)."""
        if self.work_high == self.work_low:
            return self.work_low
        return (self.work_high - self.work_low) / math.log(self.work_high / self.work_low)

    def check_resolution(self, n_jobs: int, n_procs: int) -> None:
        """Refuse an arrival interval whose stream float64 clocks cannot resolve against the shortest job.

        ``n_jobs`` arrivals span about ``n_jobs * arrival_interval`` seconds; no job runs shorter than
        ``work_low / n_procs`` (its least work on every processor). Their ratio must stay within
        ``MAX_TIME_RATIO``, the bound every explicit job set meets.
        """
        span, shortest = n_jobs * self.arrival_interval, self.work_low / n_procs
        if not span <= MAX_TIME_RATIO * shortest:
            raise ValueError(
                f"arrival_interval={self.arrival_interval!r} is not allowed with n_jobs={n_jobs} and "
                f"n_procs={n_procs}: the arrivals span about {span:.3g} s, more than {MAX_TIME_RATIO:g} times the "
                f"shortest possible run time (work_low / n_procs = {shortest:.3g} s), which float64 clocks cannot "
                "resolve; use "
                f"arrival_interval <= {MAX_TIME_RATIO * shortest / n_jobs:.3g}"
            )

    def work_load(self, n_procs: int) -> float:
        """E[L] / (arrival_interval m): the load if every job ran at perfect efficiency."""
        return self.mean_work / (self.arrival_interval * n_procs)

    def draw(self, rng: np.random.Generator, n_jobs: int, n_procs: int) -> MoldableJobSet:
        """``sample`` with its works L passed through the sampled-value gate (``check_sampled``), so a
        subclass's ``sample`` returning NaN, 0, negative or infinite work is refused naming it."""
        jobs = self.sample(rng, n_jobs, n_procs)
        check_sampled("workload", jobs.L, n_jobs, source=self)
        return jobs

    def sample(self, rng: np.random.Generator, n_jobs: int, n_procs: int) -> MoldableJobSet:
        """``n_jobs`` jobs; the first arrives at t = 0. Draw order: gaps, A, L, sigma (common random numbers)."""
        submit, L, A, sigma = self.columns(self.raw_draws(rng, n_jobs), n_procs)
        return downey_jobs(submit, L, A, sigma, n_procs)

    def raw_draws(self, rng: np.random.Generator, n_jobs: int) -> np.ndarray:
        """``sample``'s draws from ``rng``, in its order, as rows of a (4, n_jobs) array: the exponential
        gaps, the uniforms of A, the log works and the sigmas."""
        draws = np.empty((4, n_jobs))
        draws[0] = rng.exponential(self.arrival_interval, n_jobs)
        draws[1] = rng.random(n_jobs)
        draws[2] = rng.uniform(math.log(self.work_low), math.log(self.work_high), n_jobs)
        draws[3] = rng.uniform(self.sigma_low, self.sigma_high, n_jobs)
        return draws

    @staticmethod
    def columns(draws: np.ndarray, n_procs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``sample``'s submit times, works L, parallelisms A (>= 1) and sigmas from ``raw_draws``: one
        episode's (4, n_jobs) draws, or a stack (..., 4, n_jobs) of several episodes' (the batched env's
        resets), element by element the same operations."""
        gaps = draws[..., 0, :]
        submit = np.zeros(gaps.shape)
        np.cumsum(gaps[..., :-1], axis=-1, out=submit[..., 1:])
        A = np.maximum(np.exp(draws[..., 1, :] * math.log(n_procs)), 1.0)
        return submit, np.exp(draws[..., 2, :]), A, draws[..., 3, :]


def trace_jobs(replay: ReplayJobs, n_procs: int, sigma: float) -> MoldableJobSet:
    """Moldable Downey jobs from an SWF trace (the trace replay of docs/envs/moldable.md).

    Each trace job keeps its submit time; its recorded processor count p becomes both its rigid
    request and its average parallelism A = p, and L = runtime S(p), so that the job runs exactly
    its recorded time on its recorded count (rigid replay reproduces the trace's runtimes).
    """
    too_big = replay.procs > n_procs
    if too_big.any():
        first = int(np.flatnonzero(too_big)[0])
        raise ValueError(
            f"trace job {int(replay.job_number[first])} uses {int(replay.procs[first])} processors, above "
            f"n_procs={n_procs} ({int(too_big.sum())} such jobs); raise n_procs to the trace's machine size"
        )
    A = replay.procs.astype(np.float64)
    sigmas = np.full(A.size, sigma)
    L = replay.run_time * DowneySpeedup.formula(A, A, sigmas)
    jobs = downey_jobs(replay.submit, L, A, sigmas, n_procs, requested=replay.procs)
    check_time_resolution("trace", replay.submit, replay.run_time, jobs.shortest_runtimes())
    return jobs


def parse_jobs(jobs: Sequence[Mapping[str, Any]], n_procs: int) -> MoldableJobSet:
    """Explicit jobs: dicts with ``submit`` (default 0) and either ``runtimes`` {procs: seconds} or
    ``L``, ``A``, ``sigma``; optionally ``requested`` (the rigid request)."""
    if isinstance(jobs, (str, bytes, Mapping)) or not isinstance(jobs, Sequence) or len(jobs) == 0:
        raise ValueError(f"jobs={jobs!r} is not allowed; give a non-empty list of dicts")
    n = len(jobs)
    submit, size, requested = np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64)
    L, A, sigma = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    tables: dict[int, np.ndarray] = {}
    for j, job in enumerate(jobs):
        if not isinstance(job, Mapping):
            raise ValueError(f"jobs[{j}]={job!r} is not allowed; each job is a dict")
        for key in job:
            if key not in _JOB_KEYS:
                raise ValueError(f"jobs[{j}] has unknown key {key!r}{suggest(str(key), _JOB_KEYS)}; known: {_JOB_KEYS}")
        submit[j] = check_nonnegative(f"jobs[{j}]['submit']", job.get("submit", 0.0))
        if "runtimes" in job:
            if any(key in job for key in ("L", "A", "sigma")):
                raise ValueError(f"jobs[{j}] gives both 'runtimes' and Downey parameters; give one of the two")
            row = _runtime_table(job["runtimes"], n_procs, f"jobs[{j}]['runtimes']")
            tables[j] = row
            n_min = int(np.flatnonzero(np.isfinite(row))[0]) + 1
            size[j] = n_min * row[n_min - 1]
            fastest = np.flatnonzero(row == row[np.isfinite(row)].min())
            default_request = int(fastest[0]) + 1
        elif all(key in job for key in ("L", "A", "sigma")):
            L[j] = size[j] = check_scale(f"jobs[{j}]['L']", job["L"])
            speedup = DowneySpeedup(job["A"], job["sigma"])
            A[j], sigma[j] = speedup.A, speedup.sigma
            default_request = int(power_of_two_request(np.array([speedup.A]), n_procs)[0])
        else:
            raise ValueError(f"jobs[{j}]={dict(job)!r} needs 'runtimes' {{procs: seconds}} or all of 'L', 'A', 'sigma'")
        requested[j] = _request(job.get("requested", default_request), n_procs, tables.get(j), j)
    job_set = MoldableJobSet(n_procs, submit, size, requested, L, A, sigma, tables)
    check_time_resolution("jobs", submit, size, job_set.shortest_runtimes())
    return job_set


def _runtime_table(runtimes: Any, n_procs: int, name: str) -> np.ndarray:
    if not isinstance(runtimes, Mapping) or not runtimes:
        raise ValueError(f"{name}={runtimes!r} is not allowed; give a non-empty dict {{procs: seconds}}")
    row = np.full(n_procs, np.inf)
    for count, seconds in runtimes.items():
        procs = check_int(
            f"{name} processor count", int(count) if isinstance(count, str) and count.isdigit() else count
        )
        if procs > n_procs:
            raise ValueError(f"{name} has processor count {procs}, above n_procs={n_procs}")
        row[procs - 1] = check_scale(f"{name}[{procs}]", seconds)
    allowed = np.flatnonzero(np.isfinite(row))
    rises = np.flatnonzero(np.diff(row[allowed]) > 0)
    if rises.size:
        low, high = allowed[rises[0]] + 1, allowed[rises[0] + 1] + 1
        raise ValueError(
            f"{name} runtime increases from {float(row[low - 1])!r} s on {low} to "
            f"{float(row[high - 1])!r} s on {high} processors; "
            "runtimes must not increase with processors (Downey's model, HRF §4.2)"
        )
    return row


def _request(value: Any, n_procs: int, table: np.ndarray | None, j: int) -> int:
    procs = check_int(f"jobs[{j}]['requested']", value)
    if procs > n_procs:
        raise ValueError(f"jobs[{j}]['requested']={procs} is not allowed; it is above n_procs={n_procs}")
    if table is not None and not np.isfinite(table[procs - 1]):
        raise ValueError(f"jobs[{j}]['requested']={procs} is not allowed; the job's runtimes do not list that count")
    return procs
