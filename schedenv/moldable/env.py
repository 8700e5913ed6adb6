"""Gymnasium adapter for moldable parallel jobs (HRF paper), env id ``schedenv/Moldable-v0``.

Provenance: the model of Wu, Tuo, Jin, Yan and Weng, "HRF: a resource allocation scheme for
moldable jobs", CF'15 (§2.2 Downey's model, §4.1 the Table 1 example, §6.1 the set-up), with
Downey's speedup (docs/envs/moldable.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from schedenv.deprecation import warn_deprecated
from schedenv.display import RENDER_WINDOW
from schedenv.envbase import INVALID_ACTION_MODES as INVALID_ACTION_MODES  # re-exported
from schedenv.envbase import SchedulingEnv
from schedenv.moldable.core import (
    CANDIDATE_FEATURES,
    DEFAULT_MAX_RUNNING,
    GLOBAL_FEATURES,
    PARAM_FEATURES,
    RELEASE_FEATURES,
    RESERVATION_FEATURES,
    SLOT_FEATURES,
    decode_action,
    encode_action,
    n_candidates,
    obs_length,
    ranked_obs_length,
    scenario_params,
)
from schedenv.moldable.fast import FastCore, RankedCore
from schedenv.moldable.kernel import fallback_action
from schedenv.moldable.metrics import episode_metrics
from schedenv.moldable.render import render_gantt, render_text
from schedenv.moldable.sim import MoldableJobRecord, MoldableView
from schedenv.moldable.workload import LOADS, CirneWorkload, MoldableJobSet, parse_jobs, trace_jobs
from schedenv.traces import SWFTrace, read_replay, replay_jobs
from schedenv.validation import (
    MAX_JOBS,
    MAX_SERVERS,
    MAX_WINDOW,
    check_action_index,
    check_choice,
    check_flag,
    check_int,
    check_nonnegative,
    check_scale,
    refuse_ignored,
    reject_unknown_kwargs,
)

DEFAULT_N_PROCS = 128
"""The paper's simulated cluster (§6.1.1)."""
DEFAULT_N_JOBS = 200
"""The paper's 200 jobs per trace (§6.1.2)."""
ACTION_MODES: tuple[str, ...] = ("flat", "factored", "ranked")
"""The three action spaces (see the env's Action Space)."""


@reject_unknown_kwargs
class MoldableEnv(SchedulingEnv[Any, FastCore]):
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
    observations, masks, rewards and records. ``gym.make_vec(id, num_envs=B)`` builds the native
    batched env (``vector.py``), equal to B of these envs in a ``SyncVectorEnv``.

    ## Action Space
    ``action_mode="flat"`` (default): ``Discrete(max_jobs * n_procs + 1)``; action
    ``slot * n_procs + (procs - 1)`` starts the job in window slot ``slot`` on ``procs`` processors;
    the last action, ``max_jobs * n_procs``, waits. Use ``encode(slot, procs)``, ``decode(action)``
    and ``wait_action``. ``action_masks()`` (and ``info["action_mask"]``, int8) allow exactly the
    starts that fit: a real job in the slot, ``procs`` <= free processors, and ``procs`` allowed for
    the job (finite runtime); "wait" is allowed unless nothing runs and no job is still to arrive.

    ``action_mode="factored"``: ``MultiDiscrete([max_jobs + 1, n_procs])``, ``(slot, procs - 1)``
    with slot ``max_jobs`` meaning wait (the count is then ignored). It is the flat action
    ``encode(slot, procs)`` (or wait) under another name, for policies that choose the job and the
    count with two heads. Its mask (``max_jobs + 1 + n_procs`` entries, MaskablePPO's layout for
    ``MultiDiscrete``) is per component: slot i is allowed if it can start on some count (wait as
    above), count n if some window job can start on n. Both allowed separately does not make the
    pair allowed (slot i may not take count n); such a pair is a masked action.

    ``action_mode="ranked"``: ``Discrete(5 max_jobs + 2)`` (162 with the defaults), a choice among
    candidate decisions the env lists at each decision epoch, so that the agent adjusts the paper
    policy's decision (pair scoring: each candidate is a (job, count) pair). Candidate 0 is always
    HRF-EASY's decision in this state (the ``hrf-easy`` baseline's start or wait, computed by its
    compiled rule with its allocation turn and EASY reservation carried along the episode): an agent
    that always picks 0 is HRF-EASY, step for step. Candidate ``1 + 5i + k`` starts window slot i
    (HRF-EASY's job order: the head, then the backfilling scan) on its k-th width: k = 0 HRF's count
    for the job (the head's reserved count), 1 HRF's count shrunk to the free processors, 2 half
    HRF's count (at least n_min), 3 the smallest count n_min, 4 the fastest count that fits now
    (each a width the job allows: the largest allowed count at most the target). The last candidate
    waits. ``candidate(k)`` gives ``(slot, procs)`` (None for wait). ``action_masks()`` allows a
    candidate that fits now (a window job, count <= free processors and allowed; wait as above) and
    is not the same decision as an earlier candidate, so the allowed candidates are distinct
    decisions and candidate 0 is always allowed. Baselines act through ``from_flat``: their decision
    if it is a candidate (always for ``hrf-easy``: candidate 0), else the nearest allowed width of
    the same job, else candidate 0.

    A masked action (an element of the space that does not fit now) is handled as
    ``invalid_action`` says (in the ranked mode, fallback takes candidate 0):

    - ``"fallback"`` (default): the valid action closest to the agent's intent is taken instead,
      and ``info["invalid_action"]`` is True. A start of slot s on n processors becomes slot s on
      the largest allowed count <= n, else on the smallest allowed count above n (the agent's job,
      the nearest count, preferring not to take processors it did not ask for); if slot s cannot
      start at all (padding, or no count of it fits), the env waits when waiting is allowed (nothing
      the agent named can start, so nothing starts), else it takes the first valid action. A masked
      wait (nothing runs and no job is still to arrive, so time cannot move) becomes the first valid
      action: the earliest window slot on its smallest allowed count. It is the default so that
      every element of the action space is a legal argument to ``step``: Gymnasium's and SB3's
      ``check_env`` and an unmasked ``PPO("MlpPolicy", env)`` or ``DQN`` run as they are, and the
      return stays exactly minus the total turnaround time.
    - ``"penalty"``: the same fallback, and ``invalid_action_penalty`` (in the reward's units,
      job-seconds) is subtracted from that step's reward (the return is then minus the total
      turnaround time minus the penalties). The default 1.0 is small against a step's reward
      (jobs in system x elapsed seconds, often thousands); scale it with ``time_scale``.
    - ``"raise"``: ``ValueError``, and nothing changes (for agents that must respect the masks).

    A value outside the action space (out of range, non-integer, wrong shape) raises ``ValueError``
    in every mode and changes nothing. After the step that ends the episode the mask is all ones.

    ## Observation Space
    ``Box(float32)`` of length ``8 K + 7 + 2 R`` (+ 4 with ``observe_params``), K = ``max_jobs``,
    R = ``max_running``: K window slots of 8 features (slot i occupies ``8i .. 8i+7``), 7 summary
    features, the release profile (R running jobs of 2 features), then the scenario parameters.
    Slots hold the queued jobs in arrival (FCFS) order. Times are divided by ``time_scale`` (the
    mean arrival interval for generated workloads, else the mean job size). The layout is exposed as
    ``env.unwrapped.max_jobs``, ``slot_features`` (8) and ``slots_start`` (0).

    | index          | meaning                                                                 | min | max |
    |----------------|-------------------------------------------------------------------------|-----|-----|
    | 8i             | slot i holds a job (1) or is padding (0)                                 | 0   | 1   |
    | 8i + 1         | log1p(time waited / time_scale)                                          | 0   | inf |
    | 8i + 2         | log1p(size / time_scale) (work, node-seconds)                            | 0   | inf |
    | 8i + 3         | log1p(fastest runtime min_n T(n) / time_scale)                           | 0   | inf |
    | 8i + 4         | log1p(T(k) / time_scale), k = max(1, min(free, 8i+5 count)); 0 if not allowed | 0 | inf |
    | 8i + 5         | smallest count reaching the fastest runtime / m                          | 0   | 1   |
    | 8i + 6         | smallest allowed count n_min / m                                         | 0   | 1   |
    | 8i + 7         | rigid requested count / m                                                | 0   | 1   |
    | 8K             | free processors / m                                                      | 0   | 1   |
    | 8K + 1         | running jobs / m                                                         | 0   | 1   |
    | 8K + 2         | log1p(queued jobs)                                                       | 0   | inf |
    | 8K + 3         | log1p(queued jobs outside the window)                                    | 0   | inf |
    | 8K + 4         | log1p(their total size / (m time_scale))                                 | 0   | inf |
    | 8K + 5         | log1p(time to the next completion / time_scale) (0 if none runs)         | 0   | inf |
    | 8K + 6         | log1p(sum of procs x remaining runtime of running jobs / (m time_scale)) | 0   | inf |
    | 8K + 7 + 2r    | log1p(remaining runtime of the r-th running job by end time / time_scale) | 0  | inf |
    | 8K + 8 + 2r    | its processors / m (0: fewer than r + 1 jobs run)                        | 0   | 1   |
    | 8K + 7 + 2R    | log2(m) / 10                                                             | 0   | inf |
    | 8K + 8 + 2R    | work load rho / (1 + rho), rho = mean work / (m x mean arrival gap)      | 0   | 1   |
    | 8K + 9 + 2R    | mean Downey sigma s / (1 + s)                                            | 0   | 1   |
    | 8K + 10 + 2R   | log10(largest work / smallest work) / 10                                 | 0   | inf |

    ``action_mode="ranked"``: ``Box(float32)`` of length ``8 C + 7 + 2 R + 3`` (+ 4 with
    ``observe_params``), C = 5 K + 2 candidates (``1338`` with the defaults): the candidates' 8 features
    each (candidate j occupies ``8j .. 8j+7``; ``slot_features`` 8, ``n_slots`` C), the 7 summary
    features and the release profile as above (rows ``8C ..``), HRF-EASY's EASY reservation, then the
    scenario parameters.

    | index          | meaning (ranked mode)                                                    | min | max |
    |----------------|-------------------------------------------------------------------------|-----|-----|
    | 8j             | candidate j is allowed (its mask entry)                                  | 0   | 1   |
    | 8j + 1         | it starts a job (1), or waits / is padding (0)                           | 0   | 1   |
    | 8j + 2         | log1p(the job's time waited / time_scale)                                | 0   | inf |
    | 8j + 3         | log1p(the job's size / time_scale)                                       | 0   | inf |
    | 8j + 4         | the candidate's count / m                                                | 0   | 1   |
    | 8j + 5         | log1p(T(count) / time_scale) (0 if the count is not allowed)             | 0   | inf |
    | 8j + 6         | it keeps the head's reservation (EASY, 0 if the count is not allowed)    | 0   | 1   |
    | 8j + 7         | its window slot / K                                                      | 0   | 1   |
    | 8C .. 8C+6+2R  | the summary and release profile (rows 8K .. 8K+6+2R above)               | 0   | inf |
    | 8C + 7 + 2R    | the head's reserved count / m (0: no reservation, the head starts now)   | 0   | 1   |
    | 8C + 8 + 2R    | log1p((shadow time - now) / time_scale)                                  | 0   | inf |
    | 8C + 9 + 2R    | EASY's extra processors (free at the shadow time beyond the head's) / m  | 0   | 1   |

    A candidate keeps the head's reservation when it starts the head, or the head has none (it
    starts now), or it ends by the shadow time, or its count is at most the extra processors: the
    test EASY backfilling applies (HRF paper §3.2).

    The release profile (rows ``8K + 7 ..``) lists the running jobs in order of end time (ties in
    start order), at most R of them: it is what EASY (aggressive) backfilling reads (HRF paper §3.2,
    §6.1.3). The head job's shadow time is the end of the first running job by which the free
    processors plus those released reach its count, and the extra processors are those then left
    over; jobs beyond the R listed release m - free - (listed processors) processors, all after the
    last listed end. The default R = 16 covers the running jobs of HRF-EASY at the paper's light
    load and the median at its heavy load (99th percentiles 15, 23 and 32 running jobs at light,
    middle and heavy load, over three episodes of 200 jobs).

    The scenario parameters (``observe_params=True``, appended last) let one agent train across
    scenarios; they are constant over an env's episodes. For the Cirne generator: rho =
    ``CirneWorkload.work_load(m)`` (E[L] / (arrival_interval m); 0.42, 0.85, 1.41 at the paper's
    light, middle and heavy loads), s = (sigma_low + sigma_high) / 2, the work range
    work_high / work_low. For explicit jobs or a trace, the same statistics of the job set: rho =
    mean size / (m x (last submit - first submit) / (n - 1)) (1 in the table when every job is
    submitted at once), s the mean sigma of its Downey jobs (0 if none), sizes for the work range.

    ## Rewards
    Minus the turnaround time accrued since the last step: (jobs in system) x (elapsed time).
    The undiscounted return is exactly minus the sum of the jobs' turnaround times, i.e.
    ``-n_jobs * ATT``.

    Every reward (penalties included) is multiplied by ``reward_scale`` (1.0 by default; ``"auto"``
    makes the paper policy's return about -1 in this scenario, docs/envs/index.md); so is the return,
    while ``episode_metrics`` are never scaled.

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
    runtime, start, procs), ``action_mask``, ``invalid_action`` (the step's action was masked and
    replaced by its fallback; False at reset). At the end, ``episode_metrics``: mean_response_time
    (= ATT, mean turnaround), ATT, AWT (mean waiting time, also mean_waiting_time), ART (mean
    runtime, also mean_runtime), mean_slowdown, utilisation (the paper's U, §6.1.4: sum procs x
    runtime / (m (last completion - first submit))), makespan, n_completed, overflow_fraction
    (fraction of decision epochs with queued jobs outside the window).
    With ``reference`` (a baseline name of this env), the last step also has ``reference_metrics``:
    that baseline's ``episode_metrics`` on the very same episode (docs/envs/index.md).

    ## Arguments

    | argument         | default   | meaning                                                           |
    |------------------|-----------|-------------------------------------------------------------------|
    | n_procs          | 128       | m (with a trace: its MaxProcs header when given, else 128)        |
    | workload         | "cirne"   | "cirne" or a ``CirneWorkload`` (generator parameters)             |
    | arrival_interval | 1000.0    | mean seconds between arrivals, or "light"/"middle"/"heavy"        |
    | n_jobs           | 200       | jobs per episode (a trace: its first n_jobs; all when None)       |
    | trace            | None      | an SWF path or ``SWFTrace``, replayed as Downey jobs (streamed;   |
    |                  |           | malformed fields as ``schedenv.traces.SWF_POLICY`` says)          |
    | trace_sigma      | 1.0       | Downey sigma given to every trace job                             |
    | jobs             | None      | list of dicts: submit, and runtimes {procs: s} or L, A, sigma     |
    | max_jobs         | 32        | window size K (the backfilling depth)                             |
    | max_running      | 16        | running jobs R in the release profile (0: none)                   |
    | action_mode      | "flat"    | "flat", "factored" or "ranked" (candidates), see Action Space     |
    | invalid_action   | "fallback"| "raise", "fallback" or "penalty" (see Action Space)               |
    | invalid_action_penalty | 1.0 | subtracted from the reward of a masked action's step ("penalty")  |
    | observe_params   | False     | append the scenario parameters to the observation                 |
    | render_mode      | None      | "ansi", "rgb_array" or "human" (pygame window or stdout)          |
    | reference        | None      | a baseline name: its metrics on the same episode (Information)    |
    | reward_scale     | 1.0       | rewards x this number > 0, or "auto" (see Rewards)                |

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
    - v0: initial version; then, within v0 (the dynamics and rewards are unchanged): the release
      profile appended to the observation, ``invalid_action`` (masked actions fall back by
      default instead of raising), all-ones masks after the last step, ``action_mode``,
      ``observe_params``, ``max_running`` and the batched env (``vector.py``).
    - v0: ``reference`` (``info["reference_metrics"]``) and ``reward_scale`` added (defaults unchanged).
    - v0: ``action_mode="ranked"`` added (defaults unchanged).
    """

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
        max_running: int = DEFAULT_MAX_RUNNING,
        action_mode: str = "flat",
        invalid_action: str = "fallback",
        invalid_action_penalty: float = 1.0,
        observe_params: bool = False,
        reference: str | None = None,
        reward_scale: float | str = 1.0,
    ) -> None:
        arguments = dict(locals())  # before any other statement: the reference run rebuilds the env from them
        if jobs is not None and trace is not None:
            raise ValueError("jobs and trace were both given; give one of them")
        if jobs is not None or trace is not None:
            because = "explicit jobs" if jobs is not None else "a trace"
            refuse_ignored(MoldableEnv, because, {"workload": workload, "arrival_interval": arrival_interval})
        self._set_up_rendering(render_mode)
        self.max_jobs = check_int("max_jobs", max_jobs, maximum=MAX_WINDOW)
        self.max_running = check_int("max_running", max_running, minimum=0, maximum=MAX_WINDOW)
        self.action_mode = check_choice("action_mode", action_mode, ACTION_MODES)
        self._set_up_invalid_actions(invalid_action, invalid_action_penalty)
        self.observe_params = check_flag("observe_params", observe_params)
        self.trace_sigma = check_nonnegative("trace_sigma", trace_sigma)
        self.generator: CirneWorkload | None = None
        self.fixed_jobs: MoldableJobSet | None = None
        if trace is not None:
            if not isinstance(trace, (SWFTrace, str, os.PathLike)):
                raise ValueError(f"trace={trace!r} is not allowed; give the path of an SWF file or an SWFTrace")
            count = None if n_jobs is None else check_int("n_jobs", n_jobs, maximum=MAX_JOBS)
            replay = replay_jobs(trace, count) if isinstance(trace, SWFTrace) else read_replay(trace, count)
            self.n_procs = check_int(
                "n_procs", n_procs if n_procs is not None else replay.max_procs or DEFAULT_N_PROCS, maximum=MAX_SERVERS
            )
            self.fixed_jobs = trace_jobs(replay, self.n_procs, self.trace_sigma)
            self.time_scale = float(replay.run_time.mean())
        else:
            self.n_procs = check_int(
                "n_procs", n_procs if n_procs is not None else DEFAULT_N_PROCS, maximum=MAX_SERVERS
            )
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
            else check_int("n_jobs", n_jobs if n_jobs is not None else DEFAULT_N_JOBS, maximum=MAX_JOBS)
        )
        if self.generator is not None:
            self.generator.check_resolution(self.n_jobs, self.n_procs)
        self._ranked = self.action_mode == "ranked"
        self.slot_features, self.slots_start = (CANDIDATE_FEATURES if self._ranked else SLOT_FEATURES), 0
        self.n_slots = n_candidates(self.max_jobs) if self._ranked else self.max_jobs
        """Rows of ``slot_features`` at the start of the observation: window slots, or candidates (ranked)."""
        self.scenario_params = scenario_params(self.n_procs, self.generator, self.fixed_jobs)
        """The scenario parameters (float32; appended to the observation with ``observe_params``)."""
        self.observation_space = (
            ranked_observation_space(self.max_jobs, self.max_running, self.observe_params)
            if self._ranked
            else observation_space(self.max_jobs, self.max_running, self.observe_params)
        )
        self._n_actions = n_candidates(self.max_jobs) if self._ranked else self.max_jobs * self.n_procs + 1
        self.action_space: spaces.Space[Any] = (
            spaces.MultiDiscrete([self.max_jobs + 1, self.n_procs])
            if self.action_mode == "factored"
            else spaces.Discrete(self._n_actions)
        )
        self._core = None
        self._records: list[MoldableJobRecord] = []
        self._epochs = 0
        self._overflow_epochs = 0

        self._set_up_reference("schedenv/Moldable-v0", arguments)

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        self._start_episode(seed)
        if self.fixed_jobs is not None:
            job_set = self.fixed_jobs
        else:
            assert self.generator is not None
            job_set = self.generator.draw(self.np_random, self.n_jobs, self.n_procs)
        core = RankedCore if self._ranked else FastCore
        self._core = core(job_set, self.max_jobs, self.time_scale, self.max_running)
        self._records, self._epochs, self._overflow_epochs = [], 0, 0
        self._count_epoch()
        self._show()
        return self._observation(), self._info([], invalid=False)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        core = self._live_core()
        chosen = self._as_action(action)
        if isinstance(core, RankedCore):
            invalid = not core.candidate_mask[chosen]
            if invalid and self.invalid_action == "raise":
                pair = self.candidate(chosen)
                raise ValueError(
                    f"action={action!r} (candidate {pair if pair is not None else 'wait'}) is masked: "
                    "it does not fit the current state or repeats an earlier candidate"
                )
            chosen = core.flat_action(0 if invalid else chosen)
        else:
            invalid = not core.mask[chosen]
            if invalid and self.invalid_action == "raise":
                decision = self.decode(chosen)
                what = "wait (nothing runs and no job is still to arrive)" if decision is None else f"start {decision}"
                raise ValueError(f"action={action!r} ({what}) is masked: it does not fit the current state")
            if invalid:
                chosen = fallback_action(chosen, core.mask, self.n_procs)
        outcome = core.step(chosen)
        self._records.extend(outcome.completed)
        terminated = core.done
        if not terminated:
            self._count_epoch()
        info = self._info(outcome.completed, invalid)
        if terminated:
            self._end_episode(info, self._episode_metrics())
        reward = -outcome.accrued_objective - self._penalty(invalid)
        self._show()
        return self._observation(), reward * self.reward_scale, terminated, False, info

    def _render_text(self) -> str:
        return render_text(self.state)

    def _render_picture(self) -> np.ndarray:
        return render_gantt(self._records[-RENDER_WINDOW:], self.state)

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

    def from_flat(self, action: int) -> int | np.ndarray:
        """The flat action ``action`` (``encode``, ``wait_action``) as an element of this env's action space.

        Flat mode: ``action`` itself; factored mode: ``[slot, procs - 1]`` (``[max_jobs, 0]`` for wait);
        ranked mode: the first allowed candidate making that decision (``hrf-easy``'s is candidate 0),
        else the allowed candidate of the same job with the nearest count (ties to fewer), else 0.
        Baselines decide in flat actions and return ``from_flat(...)``, so they act in every mode.
        """
        if self.action_mode == "flat":
            return int(action)
        if self.action_mode == "ranked":
            return self._nearest_candidate(int(action))
        decoded = self.decode(int(action))
        slot, procs = (self.max_jobs, 1) if decoded is None else decoded
        return np.array([slot, procs - 1], dtype=np.int64)

    def decode(self, action: int) -> tuple[int, int] | None:
        """``(slot, procs)`` of a flat start action, None for wait."""
        return decode_action(action, self.n_procs, self.max_jobs)

    def candidate(self, index: int) -> tuple[int, int] | None:
        """``(slot, procs)`` of ranked candidate ``index`` now, None for wait (``action_mode="ranked"``).

        ``procs`` is 0 for a width the job does not have (a masked candidate).
        """
        core = self._require_core()
        if not isinstance(core, RankedCore):
            raise ValueError(f"candidate() needs action_mode='ranked'; action_mode={self.action_mode!r}")
        index = check_int("index", index, minimum=0, maximum=self._n_actions - 1)
        slot, procs = core.candidates[index].tolist()
        return None if slot < 0 else (slot, procs)

    def action_masks(self) -> np.ndarray:
        """int8 mask over the actions (flat: one entry per action; factored: per component; ranked: per
        candidate; see Action Space)."""
        core = self._require_core()
        if isinstance(core, RankedCore):
            return core.candidate_mask.copy()
        return core.mask.copy() if self.action_mode == "flat" else core.factored_mask()

    # ----------------------------------------------------------------- for baselines and agents
    @property
    def params(self) -> np.ndarray:
        """Deprecated: ``scenario_params`` (docs/glossary.md)."""
        warn_deprecated("MoldableEnv.params", "MoldableEnv.scenario_params")
        return self.scenario_params

    def paper_policy_return(self, action: int) -> float:
        """The return from now to the episode's end of taking ranked candidate ``action`` (an allowed one) now and
        candidate 0, HRF-EASY's decision, at every later decision, worked out in compiled code on copies of the
        state (the env is unchanged): what stepping a deep copy of the env so would return, to rounding. The
        one-step lookahead's trials (docs/rl/index.md, "Warm start"); ``action_mode="ranked"`` only."""
        return float(self.paper_policy_returns([action])[0])

    def paper_policy_returns(self, actions: Sequence[int], futures: int = 0, seed: int | None = None) -> np.ndarray:
        """``paper_policy_return`` of each of ``actions`` (allowed ranked candidates), over the episode's own drawn
        future (``futures=0``: clairvoyant), or as the mean over ``futures`` futures redrawn from the workload
        generator (``FastCore.future_arrivals``; docs/envs/moldable.md, "A future of the workload"), every action
        played against the same futures (common random numbers), drawn from ``numpy.random.default_rng(seed)``.
        The env is unchanged. Redrawn futures need a generated workload (not ``jobs`` or ``trace``)."""
        core = self._live_core()
        if not isinstance(core, RankedCore):
            raise ValueError(f"paper_policy_return() needs action_mode='ranked'; action_mode={self.action_mode!r}")
        futures = check_int("futures", futures, minimum=0)
        if futures and self.generator is None:
            raise ValueError(
                f"futures={futures!r} is not allowed with explicit jobs or a trace: redrawn futures need a generated "
                "workload (the workload argument); use futures=0"
            )
        indices = [check_int("action", action, minimum=0, maximum=self._n_actions - 1) for action in actions]
        for index in indices:
            if not core.candidate_mask[index]:
                raise ValueError(f"action={index!r} is masked now; paper_policy_return() takes an allowed candidate")
        if not futures:
            objectives = np.array([core.paper_policy_objective(index) for index in indices])
        else:
            assert self.generator is not None
            rng = np.random.default_rng(seed)
            objectives = np.zeros(len(indices))
            for _ in range(futures):
                arrivals = core.future_arrivals(self.generator, rng)
                objectives += [core.paper_policy_objective(index, arrivals) for index in indices]
            objectives /= futures
        return -objectives * self.reward_scale

    @property
    def option_zero_baseline(self) -> str | None:
        """The baseline whose every decision is action 0 in this action mode: ``"hrf-easy"`` in the ranked mode
        (candidate 0, Action Space), else None; a one-step lookahead plays it on with action 0 (docs/rl/index.md,
        "Warm start")."""
        return "hrf-easy" if self.action_mode == "ranked" else None

    @property
    def state(self) -> MoldableView:
        """A read-only snapshot of the simulator state (queue in FCFS order, running jobs)."""
        return self._require_core().state

    @property
    def job_set(self) -> MoldableJobSet:
        """The episode's jobs (submit times, Downey parameters or runtime tables)."""
        return self._require_core().jobs

    @property
    def records(self) -> list[MoldableJobRecord]:
        """Records of every job finished so far in this episode."""
        return list(self._records)

    # ----------------------------------------------------------------- internals
    def _as_action(self, action: Any) -> int:
        """The flat action of an element of the action space; ``ValueError`` for anything else."""
        if self.action_mode == "factored":
            return self._as_factored(action)
        return check_action_index(action, self._n_actions)

    def _as_factored(self, action: Any) -> int:
        array = np.asarray(action)
        if array.shape != (2,) or not np.issubdtype(array.dtype, np.integer):
            raise ValueError(
                f"action={action!r} is not allowed; it must be two integers (slot in [0, {self.max_jobs}], "
                f"procs - 1 in [0, {self.n_procs}))"
            )
        slot, count = int(array[0]), int(array[1])
        if not (0 <= slot <= self.max_jobs and 0 <= count < self.n_procs):
            raise ValueError(
                f"action={array.tolist()} is out of range: "
                f"slot in [0, {self.max_jobs}], procs - 1 in [0, {self.n_procs})"
            )
        return self.wait_action if slot == self.max_jobs else slot * self.n_procs + count

    def _nearest_candidate(self, action: int) -> int:
        """``from_flat`` in the ranked mode (see there)."""
        core = self._require_core()
        assert isinstance(core, RankedCore)
        decision = self.decode(action)
        slot, procs = (-1, 0) if decision is None else decision
        allowed = np.flatnonzero(core.candidate_mask)
        pairs = core.candidates[allowed]
        exact = allowed[(pairs[:, 0] == slot) & (pairs[:, 1] == procs)]
        if exact.size:
            return int(exact[0])
        same = allowed[pairs[:, 0] == slot] if slot >= 0 else allowed[:0]
        if not same.size:
            return 0
        counts = core.candidates[same, 1]
        return int(same[np.lexsort((counts, np.abs(counts - procs)))[0]])

    def _observation(self) -> np.ndarray:
        observation = self._require_core().observation()
        return np.concatenate((observation, self.scenario_params)) if self.observe_params else observation

    def _count_epoch(self) -> None:
        self._epochs += 1
        self._overflow_epochs += self._require_core().n_queued > self.max_jobs

    def _info(self, completed: list[MoldableJobRecord], invalid: bool) -> dict[str, Any]:
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
            "action_mask": self.action_masks(),
            "invalid_action": invalid,
        }

    def _episode_metrics(self) -> dict[str, float]:
        return episode_metrics(self._records, self.n_procs, self._overflow_epochs, self._epochs)


def observation_space(max_jobs: int, max_running: int, observe_params: bool) -> spaces.Box:
    """The Box of the Observation Space table."""
    core = obs_length(max_jobs, max_running)
    high = np.full(core + (PARAM_FEATURES if observe_params else 0), np.inf, dtype=np.float32)
    slots = high[: SLOT_FEATURES * max_jobs].reshape(max_jobs, SLOT_FEATURES)
    slots[:, [0, 5, 6, 7]] = 1.0
    summary = SLOT_FEATURES * max_jobs
    high[summary : summary + 2] = 1.0
    high[summary + GLOBAL_FEATURES + 1 : core : RELEASE_FEATURES] = 1.0
    if observe_params:
        high[core + 1 : core + 3] = 1.0
    return spaces.Box(0.0, high, dtype=np.float32)


def ranked_observation_space(max_jobs: int, max_running: int, observe_params: bool) -> spaces.Box:
    """The Box of the Observation Space, ranked mode (its table)."""
    core = ranked_obs_length(max_jobs, max_running)
    high = np.full(core + (PARAM_FEATURES if observe_params else 0), np.inf, dtype=np.float32)
    n = n_candidates(max_jobs)
    rows = high[: CANDIDATE_FEATURES * n].reshape(n, CANDIDATE_FEATURES)
    rows[:, [0, 1, 4, 6, 7]] = 1.0
    summary = CANDIDATE_FEATURES * n
    high[summary : summary + 2] = 1.0
    reservation = core - RESERVATION_FEATURES
    high[summary + GLOBAL_FEATURES + 1 : reservation : RELEASE_FEATURES] = 1.0
    high[reservation] = high[reservation + 2] = 1.0
    if observe_params:
        high[core + 1 : core + 3] = 1.0
    return spaces.Box(0.0, high, dtype=np.float32)


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
    return CirneWorkload(arrival_interval=check_scale("arrival_interval", arrival_interval))
