"""Gymnasium adapter for moldable parallel jobs (HRF paper), env id ``schedenv/Moldable-v0``.

Provenance: the model of Wu, Tuo, Jin, Yan and Weng, "HRF: a resource allocation scheme for
moldable jobs", CF'15 (§2.2 Downey's model, §4.1 the Table 1 example, §6.1 the set-up), with
Downey's speedup (DESIGN §4).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from schedenv.moldable.core import GLOBAL_FEATURES, SLOT_FEATURES, decode_action, encode_action
from schedenv.moldable.fast import FastCore
from schedenv.moldable.render import render_gantt, render_text
from schedenv.moldable.sim import MoldableJobRecord, MoldableView
from schedenv.moldable.workload import LOADS, CirneWorkload, MoldableJobSet, parse_jobs, trace_jobs
from schedenv.records import basic_metrics
from schedenv.traces import SWFTrace, read_swf, replay_jobs
from schedenv.validation import check_choice, check_int, check_nonnegative, check_positive

DEFAULT_N_PROCS = 128
"""The paper's simulated cluster (§6.1.1)."""
DEFAULT_N_JOBS = 200
"""The paper's 200 jobs per trace (§6.1.2)."""


class MoldableEnv(gym.Env[np.ndarray, np.int64]):
    """Choose which queued moldable job starts next, and on how many processors.

    ## Description
    m identical processors. Moldable jobs arrive over time; each waits in an FCFS-ordered queue
    until the agent starts it on n processors, which it holds for its runtime T(n) = L / S(n)
    (Downey's speedup; or an explicit runtime table). The count never changes once started (the
    HRF paper, Wu et al. 2015, §1). Decision epochs are arrivals and completions while a job
    of the window waits and fits in the free processors; the env jumps from one to the next.
    Several jobs may start at the same instant: after a start the env stays at the same time and
    asks again, until the agent waits or nothing in the window fits any more; time advances only
    on "wait" (or when nothing fits). The objective is the mean turnaround time (ATT).
    Each step is one call of a compiled core (``fast.py``, numba) that applies the action, advances
    and writes the observation and mask; the pure simulator (``sim.py``) with its numpy translation
    (``core.py``) is the specification, and a test steps both with the same actions and compares
    observations, masks, rewards and records.

    ## Action Space
    ``Discrete(max_jobs * n_procs + 1)``: action ``slot * n_procs + (procs - 1)`` starts the job in
    window slot ``slot`` on ``procs`` processors; the last action, ``max_jobs * n_procs``, waits.
    Use ``encode(slot, procs)``, ``decode(action)`` and ``wait_action``. ``action_masks()`` (and
    ``info["action_mask"]``, int8) allow exactly the starts that fit: a real job in the slot,
    ``procs`` <= free processors, and ``procs`` allowed for the job (finite runtime); "wait" is
    allowed unless nothing runs and no job is still to arrive. A masked, out-of-range or
    non-integer action raises ``ValueError`` and leaves the state unchanged.

    ## Observation Space
    ``Box(float32)`` of length ``8 * max_jobs + 7``; K = ``max_jobs``, slot i occupies
    ``8i .. 8i+7``. Slots hold the queued jobs in arrival (FCFS) order. Times are divided by
    ``time_scale`` (the mean arrival interval for generated workloads, else the mean job size).

    | index   | meaning                                                                 | min | max |
    |---------|-------------------------------------------------------------------------|-----|-----|
    | 8i      | slot i holds a job (1) or is padding (0)                                 | 0   | 1   |
    | 8i + 1  | log1p(time waited / time_scale)                                          | 0   | inf |
    | 8i + 2  | log1p(size / time_scale) (work, node-seconds)                            | 0   | inf |
    | 8i + 3  | log1p(fastest runtime min_n T(n) / time_scale)                           | 0   | inf |
    | 8i + 4  | log1p(T(k) / time_scale), k = max(1, min(free, 8i+5 count)); 0 if not allowed | 0 | inf |
    | 8i + 5  | smallest count reaching the fastest runtime / m                          | 0   | 1   |
    | 8i + 6  | smallest allowed count n_min / m                                         | 0   | 1   |
    | 8i + 7  | rigid requested count / m                                                | 0   | 1   |
    | 8K      | free processors / m                                                      | 0   | 1   |
    | 8K + 1  | running jobs / m                                                         | 0   | 1   |
    | 8K + 2  | log1p(queued jobs)                                                       | 0   | inf |
    | 8K + 3  | log1p(queued jobs outside the window)                                    | 0   | inf |
    | 8K + 4  | log1p(their total size / (m time_scale))                                 | 0   | inf |
    | 8K + 5  | log1p(time to the next completion / time_scale) (0 if none runs)         | 0   | inf |
    | 8K + 6  | log1p(sum of procs x remaining runtime of running jobs / (m time_scale)) | 0   | inf |

    ## Rewards
    Minus the turnaround time accrued since the last step: (jobs in system) x (elapsed time).
    The undiscounted return is exactly minus the sum of the jobs' turnaround times, i.e.
    ``-n_jobs * ATT``.

    ## Starting State
    The job set is drawn at ``reset`` from the seed (or fixed by ``jobs`` / ``trace``); the env
    starts at the first arrival. Same seed, same jobs, for every contender.

    ## Episode End
    Terminates when every job has arrived and completed (several completions may be run through
    in the last step). Never truncates by itself.

    ## Information
    Every step: ``time``, ``n_jobs`` (in system), ``n_queued``, ``n_running``, ``free_procs``,
    ``n_outside`` (queued jobs outside the window), ``completed`` (a ``MoldableJobRecord`` per job
    finished during the step: job_id, arrival (submit), size, completion, slowdown = turnaround /
    runtime, start, procs), ``action_mask``. At the end, ``episode_metrics``: mean_response_time
    (= ATT, mean turnaround), ATT, AWT (mean waiting time, also mean_waiting_time), ART (mean
    runtime, also mean_runtime), mean_slowdown, utilisation (the paper's U, §6.1.4: sum procs x
    runtime / (m (last completion - first submit))), makespan, n_completed, overflow_fraction
    (fraction of decision epochs with queued jobs outside the window).

    ## Arguments

    | argument         | default   | meaning                                                           |
    |------------------|-----------|-------------------------------------------------------------------|
    | n_procs          | 128       | m (with a trace: its MaxProcs header when given, else 128)        |
    | workload         | "cirne"   | "cirne" or a ``CirneWorkload`` (generator parameters)             |
    | arrival_interval | 1000.0    | mean seconds between arrivals, or "light"/"middle"/"heavy"        |
    | n_jobs           | 200       | jobs per episode (a trace: its first n_jobs; all when None)       |
    | trace            | None      | an SWF path or ``SWFTrace``, replayed as Downey jobs              |
    | trace_sigma      | 1.0       | Downey sigma given to every trace job                             |
    | jobs             | None      | list of dicts: submit, and runtimes {procs: s} or L, A, sigma     |
    | max_jobs         | 32        | window size K (the backfilling depth)                             |
    | render_mode      | None      | "ansi" or "rgb_array"                                             |

    The paper's Table 1 example (3 jobs, 3 processors):

    >>> import gymnasium as gym, schedenv
    >>> table1 = [{"runtimes": {1: 10, 2: 5}}, {"runtimes": {1: 10, 2: 7}}, {"runtimes": {1: 10, 2: 9}}]
    >>> env = gym.make("schedenv/Moldable-v0", jobs=table1, n_procs=3, max_jobs=3)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(env.unwrapped.encode(0, 2))
    >>> info["time"], info["free_procs"]
    (0.0, 1)

    ## References
    S. Wu, Q. Tuo, H. Jin, C. Yan, Q. Weng. HRF: a resource allocation scheme for moldable jobs.
    CF'15, 2015. A. B. Downey. A model for speedup of parallel programs. UCB/CSD-97-933, 1997.
    W. Cirne, F. Berman. A comprehensive model of the supercomputer workload. WWC 2001.

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        n_procs: int | None = None,
        workload: str | CirneWorkload = "cirne",
        arrival_interval: float | str | None = None,
        n_jobs: int | None = None,
        trace: str | os.PathLike[str] | SWFTrace | None = None,
        trace_sigma: float = 1.0,
        jobs: Sequence[Mapping[str, Any]] | None = None,
        max_jobs: int = 32,
        render_mode: str | None = None,
    ) -> None:
        if jobs is not None and trace is not None:
            raise ValueError("jobs and trace were both given; give one of them")
        self.render_mode = (
            None if render_mode is None else check_choice("render_mode", render_mode, ("ansi", "rgb_array"))
        )
        self.max_jobs = check_int("max_jobs", max_jobs)
        self.trace_sigma = check_nonnegative("trace_sigma", trace_sigma)
        self.generator: CirneWorkload | None = None
        self.fixed_jobs: MoldableJobSet | None = None
        if trace is not None:
            swf = trace if isinstance(trace, SWFTrace) else read_swf(trace)
            self.n_procs = check_int("n_procs", n_procs if n_procs is not None else swf.max_procs or DEFAULT_N_PROCS)
            replay = replay_jobs(swf, None if n_jobs is None else check_int("n_jobs", n_jobs))
            self.fixed_jobs = trace_jobs(replay, self.n_procs, self.trace_sigma)
            self.time_scale = float(replay.run_time.mean())
        else:
            self.n_procs = check_int("n_procs", n_procs if n_procs is not None else DEFAULT_N_PROCS)
            if jobs is not None:
                if n_jobs is not None:
                    raise ValueError(f"n_jobs={n_jobs!r} is not allowed with explicit jobs (their count is len(jobs))")
                self.fixed_jobs = parse_jobs(jobs, self.n_procs)
                self.time_scale = float(self.fixed_jobs.size.mean())
            else:
                self.generator = _generator(workload, arrival_interval)
                self.time_scale = self.generator.arrival_interval
        self.n_jobs = (
            self.fixed_jobs.n_jobs
            if self.fixed_jobs is not None
            else check_int("n_jobs", n_jobs if n_jobs is not None else DEFAULT_N_JOBS)
        )
        length = SLOT_FEATURES * self.max_jobs + GLOBAL_FEATURES
        high = np.full(length, np.inf, dtype=np.float32)
        slots = high[: SLOT_FEATURES * self.max_jobs].reshape(self.max_jobs, SLOT_FEATURES)
        slots[:, [0, 5, 6, 7]] = 1.0
        high[-GLOBAL_FEATURES : -GLOBAL_FEATURES + 2] = 1.0
        self.observation_space = spaces.Box(0.0, high, dtype=np.float32)
        self._n_actions = self.max_jobs * self.n_procs + 1
        self.action_space = spaces.Discrete(self._n_actions)
        self._core: FastCore | None = None
        self._records: list[MoldableJobRecord] = []
        self._epochs = 0
        self._overflow_epochs = 0

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if self.fixed_jobs is not None:
            job_set = self.fixed_jobs
        else:
            assert self.generator is not None
            job_set = self.generator.sample(self.np_random, self.n_jobs, self.n_procs)
        self._core = FastCore(job_set, self.max_jobs, self.time_scale)
        self._records, self._epochs, self._overflow_epochs = [], 0, 0
        self._count_epoch()
        return self._core.observation(), self._info([])

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        core = self._require_core()
        if core.done:
            raise RuntimeError("the episode has ended; call reset()")
        outcome = core.apply(self._as_action(action))
        self._records.extend(outcome.completed)
        terminated = core.done
        if not terminated:
            self._count_epoch()
        info = self._info(outcome.completed)
        if terminated:
            info["episode_metrics"] = self._episode_metrics()
        return core.observation(), -outcome.accrued_objective, terminated, False, info

    def render(self) -> Any:
        if self.render_mode is None or self._core is None:
            return None
        if self.render_mode == "ansi":
            return render_text(self.state)
        return render_gantt(self._records, self.state)

    # ----------------------------------------------------------------- actions
    @property
    def wait_action(self) -> int:
        """The action that waits for the next arrival or completion."""
        return self.max_jobs * self.n_procs

    def encode(self, slot: int, procs: int) -> int:
        """The action starting window slot ``slot`` on ``procs`` processors."""
        if not (0 <= slot < self.max_jobs and 1 <= procs <= self.n_procs):
            raise ValueError(
                f"slot={slot!r}, procs={procs!r} is not allowed; "
                f"slot in [0, {self.max_jobs}), procs in [1, {self.n_procs}]"
            )
        return encode_action(slot, procs, self.n_procs)

    def decode(self, action: int) -> tuple[int, int] | None:
        """``(slot, procs)`` of a start action, None for wait."""
        return decode_action(action, self.n_procs, self.max_jobs)

    def action_masks(self) -> np.ndarray:
        """int8 mask over the Discrete actions (see Action Space)."""
        return self._require_core().mask.copy()

    # ----------------------------------------------------------------- for baselines and agents
    @property
    def state(self) -> MoldableView:
        """A read-only snapshot of the simulator state (queue in FCFS order, running jobs)."""
        return self._require_core().view()

    @property
    def job_set(self) -> MoldableJobSet:
        """The episode's jobs (submit times, Downey parameters or runtime tables)."""
        return self._require_core().jobs

    @property
    def records(self) -> list[MoldableJobRecord]:
        """Records of every job finished so far in this episode."""
        return list(self._records)

    # ----------------------------------------------------------------- internals
    def _require_core(self) -> FastCore:
        if self._core is None:
            raise RuntimeError("call reset() before using the env")
        return self._core

    def _as_action(self, action: Any) -> int:
        # plain ints (what masked samplers and baselines give) skip numpy's conversion
        if type(action) is int or isinstance(action, np.integer):
            value = int(action)
        else:
            array = np.asarray(action)
            if array.size != 1 or not np.issubdtype(array.dtype, np.integer):
                raise ValueError(f"action={action!r} is not allowed; it must be one integer in [0, {self._n_actions})")
            value = int(array.reshape(()))
        if not 0 <= value < self._n_actions:
            raise ValueError(f"action={value} is out of range [0, {self._n_actions})")
        if not self._require_core().mask[value]:
            decision = self.decode(value)
            what = "wait (nothing runs and no job is still to arrive)" if decision is None else f"start {decision}"
            raise ValueError(f"action={value} ({what}) is masked: it does not fit the current state")
        return value

    def _count_epoch(self) -> None:
        self._epochs += 1
        self._overflow_epochs += self._require_core().n_queued > self.max_jobs

    def _info(self, completed: list[MoldableJobRecord]) -> dict[str, Any]:
        core = self._require_core()
        n_queued, n_running = core.n_queued, core.n_running
        return {
            "time": core.time,
            "n_jobs": n_queued + n_running,
            "n_queued": n_queued,
            "n_running": n_running,
            "free_procs": core.free,
            "n_outside": n_queued - core.window_size,
            "completed": completed,
            "action_mask": core.mask.copy(),
        }

    def _episode_metrics(self) -> dict[str, float]:
        return episode_metrics(self._records, self.n_procs, self._overflow_epochs, self._epochs)


def episode_metrics(
    records: Sequence[MoldableJobRecord], n_procs: int, overflow_epochs: int, epochs: int
) -> dict[str, float]:
    """The env's ``episode_metrics`` (see Information) from an episode's records, in completion order."""
    metrics = basic_metrics(records)
    waiting = np.fromiter((r.start - r.arrival for r in records), float, len(records))
    runtime = np.fromiter((r.completion - r.start for r in records), float, len(records))
    procs = np.fromiter((r.procs for r in records), float, len(records))
    first = min(r.arrival for r in records)
    last = max(r.completion for r in records)
    metrics["ATT"] = metrics["mean_response_time"]
    metrics["AWT"] = metrics["mean_waiting_time"] = float(waiting.mean())
    metrics["ART"] = metrics["mean_runtime"] = float(runtime.mean())
    metrics["utilisation"] = float(procs @ runtime / (n_procs * (last - first))) if last > first else 0.0
    metrics["makespan"] = last - first
    metrics["overflow_fraction"] = overflow_epochs / max(epochs, 1)
    return metrics


def _generator(workload: str | CirneWorkload, arrival_interval: float | str | None) -> CirneWorkload:
    if isinstance(workload, CirneWorkload):
        if arrival_interval is not None:
            raise ValueError("arrival_interval was given with a CirneWorkload; set it on the CirneWorkload instead")
        return workload
    check_choice("workload", workload, ("cirne",))
    if arrival_interval is None:
        return CirneWorkload()
    if isinstance(arrival_interval, str):
        return CirneWorkload(arrival_interval=LOADS[check_choice("arrival_interval", arrival_interval, tuple(LOADS))])
    return CirneWorkload(arrival_interval=check_positive("arrival_interval", arrival_interval))
