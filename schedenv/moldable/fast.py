"""The env's compiled core of the moldable family: one call of ``kernel.step`` per env step (docs/architecture.md).

Same semantics as ``ReferenceCore`` (``core.py``) over the pure simulator (``sim.py``), which stay
the specification: ``tests/moldable/test_fast_core.py`` steps both with the same actions and
compares observations, masks, rewards, elapsed times, completion records and state views.
``FastCore`` owns the kernel's arrays for one episode (their layout: ``kernel.py``) and doubles the
queue when the kernel stops with ``NEED_QUEUE``.
"""

from __future__ import annotations

import numpy as np

from schedenv.moldable.core import DEFAULT_MAX_RUNNING, n_candidates, obs_length, ranked_obs_length
from schedenv.moldable.kernel import (
    A_TABLE,
    A_TIME,
    ACCRUED,
    ADVANCE,
    ELAPSED,
    FREE,
    INVALID,
    N_DONE,
    N_INTS,
    N_JOBS,
    N_QUEUED,
    N_RUNNING,
    NEED_QUEUE,
    NEXT_ARRIVAL,
    OK,
    Q_COLUMNS,
    Q_JOB,
    Q_N_MIN,
    Q_REQUESTED,
    Q_SIZE,
    Q_SUBMIT,
    QUEUE_START,
    R_COLUMNS,
    R_END,
    R_JOB,
    R_PROCS,
    R_START,
    TIME,
    TOTAL_OBJECTIVE,
    WORK_ROWS,
    arrival_arrays,
    arrival_rows,
    follow_paper_policy,
    initial_policy_state,
    initial_queue_rows,
    rank,
    runtime_rows,
    start_episode,
    step,
    write_factored_mask,
)
from schedenv.moldable.sim import MoldableJobRecord, MoldableView, Outcome
from schedenv.moldable.workload import CirneWorkload, MoldableJobSet


class FastCore:
    """The compiled core (every job set: Downey jobs and runtime tables); the env's default."""

    def __init__(
        self, jobs: MoldableJobSet, max_jobs: int, time_scale: float, max_running: int = DEFAULT_MAX_RUNNING
    ) -> None:
        self.jobs, self.max_jobs, self.time_scale, self.max_running = jobs, max_jobs, time_scale, max_running
        m = self.n_procs = jobs.n_procs
        n = jobs.n_jobs
        self._arrivals_f, self._arrivals_i, self._tables = arrival_arrays(jobs)
        self._ints = np.zeros(N_INTS, dtype=np.int64)
        self._floats = np.zeros(5)
        start_episode(self._ints, self._floats, max_jobs, m, n, max_running, time_scale, self._arrivals_f[0, A_TIME])
        self._queue = np.zeros((initial_queue_rows(n), Q_COLUMNS))
        self._running = np.zeros((m, R_COLUMNS))
        self._done = np.zeros((m, 6))  # enough: see the module docstring
        self._obs = np.zeros(obs_length(max_jobs, max_running), dtype=np.float32)
        self.mask = np.zeros(max_jobs * m + 1, dtype=np.int8)
        self._arrays = self._kernel_arrays()
        self._run(ADVANCE)
        self._counters = self._ints.tolist()
        self._time = float(self._floats[TIME])

    # ----------------------------------------------------------------- counters
    @property
    def done(self) -> bool:
        c = self._counters
        return c[NEXT_ARRIVAL] == c[N_JOBS] and c[N_QUEUED] + c[N_RUNNING] == 0

    @property
    def time(self) -> float:
        return self._time

    @property
    def n_queued(self) -> int:
        return self._counters[N_QUEUED]

    @property
    def n_running(self) -> int:
        return self._counters[N_RUNNING]

    @property
    def free(self) -> int:
        return self._counters[FREE]

    @property
    def window_size(self) -> int:
        return min(self._counters[N_QUEUED], self.max_jobs)

    @property
    def total_objective(self) -> float:
        return float(self._floats[TOTAL_OBJECTIVE])

    # ----------------------------------------------------------------- steps
    def step(self, action: int) -> Outcome:
        """Start or wait as the env's ``action`` says; ``ValueError`` (state unchanged) when it does not fit."""
        if not 0 <= action < self.mask.size or self._run(action) == INVALID:
            raise ValueError(f"action={action!r} does not fit the current state (see action_masks())")
        counters = self._counters = self._ints.tolist()
        floats = self._floats.tolist()
        self._time = floats[TIME]
        n_done = counters[N_DONE]
        return Outcome(floats[ELAPSED], floats[ACCRUED], self._completed(n_done) if n_done else [])

    def _run(self, action: int) -> int:
        status = step(action, *self._arrays)
        while status == NEED_QUEUE:
            self._queue = _grown(self._queue)
            self._arrays = self._kernel_arrays()
            status = step(ADVANCE, *self._arrays)
        return int(status)

    def _kernel_arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self._ints, self._floats, self._queue, self._running, self._arrivals_f, self._arrivals_i, self._tables,
            self._done, self._obs, self.mask,
        )  # fmt: skip

    def _completed(self, n_done: int) -> list[MoldableJobRecord]:
        return [
            MoldableJobRecord(int(job), submit, size, end, (end - submit) / (end - start), start, int(procs))
            for job, submit, size, start, end, procs in self._done[:n_done].tolist()
        ]

    def factored_mask(self) -> np.ndarray:
        """The factored action space's mask (``kernel.write_factored_mask``; a fresh int8 array)."""
        mask = np.empty(self.max_jobs + 1 + self.n_procs, dtype=np.int8)
        write_factored_mask(self._ints, self.queued_rows(), self._tables, mask)
        return mask

    def queued_rows(self) -> np.ndarray:
        """The kernel's queue array from the first queued job's row: the queued jobs in FCFS order, then
        free rows (a view; ``kernel.live_queue``)."""
        return self._queue[int(self._ints[QUEUE_START]) :]

    def observation(self) -> np.ndarray:
        """The flat observation of the env's Observation Space table (a fresh array)."""
        return self._obs.copy()

    @property
    def state(self) -> MoldableView:
        """A read-only snapshot of the state for baselines (the layout of ``sim.view_of``)."""
        c = self._counters
        queue, running = self.queued_rows()[: c[N_QUEUED]], self._running[: c[N_RUNNING]]

        def frozen(array: np.ndarray, dtype: type = np.float64) -> np.ndarray:
            copy: np.ndarray = np.array(array, dtype=dtype)
            copy.flags.writeable = False
            return copy

        return MoldableView(
            time=self.time,
            n_procs=self.n_procs,
            free=c[FREE],
            window_size=self.window_size,
            can_wait=c[N_RUNNING] > 0 or c[NEXT_ARRIVAL] < c[N_JOBS],
            n_pending=c[N_JOBS] - c[NEXT_ARRIVAL],
            queue_job=frozen(queue[:, Q_JOB], np.int64),
            queue_submit=frozen(queue[:, Q_SUBMIT]),
            queue_runtime=frozen(runtime_rows(queue, self._tables, self.n_procs)),
            queue_size=frozen(queue[:, Q_SIZE]),
            queue_n_min=frozen(queue[:, Q_N_MIN], np.int64),
            queue_requested=frozen(queue[:, Q_REQUESTED], np.int64),
            running_job=frozen(running[:, R_JOB], np.int64),
            running_start=frozen(running[:, R_START]),
            running_end=frozen(running[:, R_END]),
            running_procs=frozen(running[:, R_PROCS], np.int64),
        )


class RankedCore(FastCore):
    """``FastCore`` that also ranks the candidates of the env's ``action_mode="ranked"`` at every
    decision epoch (``kernel.rank``: HRF-EASY's decision first, its state carried along the episode)."""

    def __init__(
        self, jobs: MoldableJobSet, max_jobs: int, time_scale: float, max_running: int = DEFAULT_MAX_RUNNING
    ) -> None:
        n, k = jobs.n_jobs, n_candidates(max_jobs)
        self._policy = initial_policy_state()
        self._turn_of, self._count_of = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
        self._work = np.zeros((WORK_ROWS, 0))
        self._counts = np.zeros(max_jobs, dtype=np.int64)
        self.candidates = np.zeros((k, 2), dtype=np.int64)
        """(slot, procs) of each candidate (slot -1: wait; procs 0: no start), see ``kernel.rank``."""
        self.candidate_mask = np.zeros(k, dtype=np.int8)
        self._robs = np.zeros(ranked_obs_length(max_jobs, max_running), dtype=np.float32)
        super().__init__(jobs, max_jobs, time_scale, max_running)

    def _run(self, action: int) -> int:
        status = super()._run(action)
        if status == OK:
            if self._work.shape[1] < self._queue.shape[0]:  # the turn's scratch, as long as the queue
                self._work = np.zeros((WORK_ROWS, self._queue.shape[0]))
            rank(
                self._ints, self._floats, self.queued_rows(), self._running, self._tables, self._obs, self._policy,
                self._turn_of, self._count_of, self._work, self._counts, self.candidates, self.candidate_mask,
                self._robs,
            )  # fmt: skip
        return status

    def flat_action(self, candidate: int) -> int:
        """The flat action (``encode``, wait = ``max_jobs * n_procs``) of ``candidate``."""
        slot, procs = self.candidates[candidate].tolist()
        return self.max_jobs * self.n_procs if slot < 0 else slot * self.n_procs + procs - 1

    def observation(self) -> np.ndarray:
        """The ranked observation (the env's Observation Space, ranked mode; a fresh array)."""
        return self._robs.copy()

    def paper_policy_objective(self, candidate: int, arrivals: tuple[np.ndarray, np.ndarray] | None = None) -> float:
        """The objective accrued from now to the episode's end when ``candidate`` (allowed) is taken now and
        candidate 0, HRF-EASY's decision, at every later decision (``kernel.follow_paper_policy``), worked out on
        copies of the state: this core is unchanged. ``arrivals``: the arrival rows (float part, int part) to play
        the trial on, e.g. ``future_arrivals``'s; the episode's own by default."""
        arrivals_f, arrivals_i = (self._arrivals_f, self._arrivals_i) if arrivals is None else arrivals
        ints, floats, running, done = self._ints.copy(), self._floats.copy(), self._running.copy(), self._done.copy()
        queue, counts = self._queue.copy(), self._counts.copy()
        policy, turn_of, count_of = self._policy.copy(), self._turn_of.copy(), self._count_of.copy()
        before, action = floats[TOTAL_OBJECTIVE], self.flat_action(candidate)
        while True:
            work = np.zeros((WORK_ROWS, queue.shape[0]))
            status = follow_paper_policy(
                action, ints, floats, queue, running, arrivals_f, arrivals_i, self._tables, done, policy, turn_of,
                count_of, work, counts,
            )  # fmt: skip
            if status != NEED_QUEUE:
                break
            queue, action = _grown(queue), ADVANCE
        if status != OK:
            raise ValueError(f"candidate={candidate!r} does not fit the current state (see action_masks())")
        return float(floats[TOTAL_OBJECTIVE] - before)

    def future_arrivals(self, generator: CirneWorkload, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The episode's arrival rows with the jobs that have not arrived yet redrawn from ``generator`` (copies;
        docs/envs/moldable.md, "A future of the workload"): what an online scheduler may assume of the future.

        The arrived jobs keep their rows. The rest keep their job numbers and count; their sizes, speedups and
        requests are a fresh ``generator.draw``, and their arrival times now + g + that draw's own (the first at
        now + g), g ~ Exp(``arrival_interval``). The Cirne generator's arrivals are a Poisson process, so given
        no arrival since the last one the next comes after an exponential gap from now: the redrawn future has
        the law of the true one given everything seen so far."""
        arrivals_f, arrivals_i = self._arrivals_f.copy(), self._arrivals_i.copy()
        arrived = int(self._ints[NEXT_ARRIVAL])
        left = arrivals_f.shape[0] - arrived
        if left:
            gap = rng.exponential(generator.arrival_interval)
            jobs = generator.draw(rng, left, self.n_procs)
            rows_f, rows_i = arrival_rows(
                self._time + gap + jobs.submit, jobs.size, jobs.L, jobs.A, jobs.sigma, np.full(left, -1), jobs.requested
            )
            arrivals_f[arrived:] = rows_f
            arrivals_i[arrived:, A_TABLE:] = rows_i[:, A_TABLE:]  # the job numbers stay
        return arrivals_f, arrivals_i


def _grown(array: np.ndarray) -> np.ndarray:
    bigger = np.zeros((2 * array.shape[0], array.shape[1]))
    bigger[: array.shape[0]] = array
    return bigger
