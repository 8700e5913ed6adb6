"""Gymnasium adapter for the multiserver-job queue, env id ``schedenv/MultiserverJob-v0``.

Provenance: the model of Grosof, Scully, Harchol-Balter and Scheller-Wolf, "Optimal Scheduling
in the Multiserver-job Model under Heavy Traffic", POMACS 6(3), Article 51, 2022, §3.1 and §6.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces

from schedenv.deprecation import warn_deprecated
from schedenv.envbase import INVALID_ACTION_MODES, SchedulingEnv
from schedenv.multiserver.fast import FastCore
from schedenv.multiserver.kernel import RANKED_COMMIT, pack_service_set, rank_options
from schedenv.multiserver.metrics import episode_metrics
from schedenv.multiserver.packing import PACKINGS
from schedenv.multiserver.render import render_servers, render_text
from schedenv.multiserver.sim import MultiserverJobRecord, MultiserverParams, MultiserverState, StepOutcome
from schedenv.multiserver.srpt1 import srpt1_mean_response_time
from schedenv.multiserver.trace import read_alibaba_gpu_trace, read_swf_jobs, scale_to_load, trace_format
from schedenv.multiserver.workload import (
    PARAMETERS,
    PARAMETERS_HIGH,
    MultiserverWorkload,
    empirical_need_sizes,
    parse_jobs,
    parse_server_needs,
    scenario_params,
)
from schedenv.validation import (
    MAX_JOBS,
    MAX_SERVERS,
    MAX_WINDOW,
    as_real_array,
    check_choice,
    check_flag,
    check_int,
    check_positive,
    check_stream_horizon,
    check_time_resolution,
    refuse_ignored,
    reject_unknown_kwargs,
)
from schedenv.workloads import Choice, Distribution, Exponential

SLOT_FEATURES = 7
"""Per slot: valid, need/k, log1p(remaining size), log1p(age), log1p(time in system), selected, was served."""
GLOBAL_FEATURES = 5
"""Free servers/k, log1p(jobs), log1p(jobs outside), log1p(their need/k), log1p(their remaining size)."""
INVALID_ACTIONS = INVALID_ACTION_MODES
"""What select and ranked modes do with a masked action (see ``MultiserverJobEnv``)."""
ACTION_MODES = ("priority", "select", "ranked", "residual")
"""The env's action modes (table in ``MultiserverJobEnv``'s docstring)."""
SCORE_MODES = ("priority", "residual")
"""The action modes that take a score per slot, one step per epoch (the others select slot by slot)."""


def residual_base(max_jobs: int) -> np.ndarray:
    """The residual mode's base scores: slot i gets (max_jobs - i) / (2 max_jobs), in (0, 1/2].

    They decrease with the slot, and the window lists its jobs least remaining size first when sizes are
    known (oldest first when not), so the base, packed by ServerFilling, is ServerFilling-SRPT (Grosof et al.
    2022, §3.2; ServerFilling when sizes are unknown), the paper policy over the window."""
    return (max_jobs - np.arange(max_jobs)) / (2.0 * max_jobs)


def residual_scores(actions: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Residual mode: the priority-mode scores of ``actions`` (..., max_jobs) in [-1, 1], each added to its
    slot's ``base`` (``residual_base``) and clipped to [-1, 1] (float64).

    Zero is the paper policy; a slot's score ranges over [base - 1, 1], so every order of the slots and every
    job held back (a negative score) can be expressed."""
    return np.clip(base + actions, -1.0, 1.0)


def _frequencies(needs: np.ndarray) -> tuple[list[float], list[float]]:
    values, counts = np.unique(needs, return_counts=True)
    return values.astype(float).tolist(), (counts / counts.sum()).tolist()


@reject_unknown_kwargs
class MultiserverJobEnv(SchedulingEnv[Any, FastCore]):
    """Choose which jobs hold the k servers of a multiserver-job queue, to minimise mean response time.

    ## Description
    k identical servers; job j needs k_j of them at once for a duration d_j, and its size is
    s_j = k_j d_j / k (§3.1). The jobs in service may need at most k servers in total. Preemption
    loses no work. Decision epochs are arrivals and completions: at each one the agent picks the
    service set, which then runs until the next epoch. ServerFilling-SRPT (§3.2) fills all k
    servers whenever the jobs present need at least k (power-of-two needs) while favouring small
    remaining sizes, and is optimal in heavy traffic (Theorem 4.2).

    ## Action Space

    | action_mode          | space                   | steps per epoch  | action                                   |
    |----------------------|-------------------------|------------------|------------------------------------------|
    | "priority" (default) | Box(-1, 1, (max_jobs,)) | 1                | a score per slot, packed by ``packing``  |
    | "select"             | Discrete(max_jobs + 1)  | jobs + commit    | a window slot to add, or commit          |
    | "ranked"             | Discrete(max_jobs)      | jobs + commit    | an option, in ServerFilling-SRPT's order |
    | "residual"           | Box(-1, 1, (max_jobs,)) | 1                | a change to ServerFilling-SRPT's scores  |

    ``action_mode="priority"`` (default, so that any sample of the space is a valid action):
    ``Box(-1, 1, (max_jobs,), float32)``, a score per slot. Slots with a score >= 0 are eligible
    (if none is, every occupied slot is); they are ordered by decreasing score (ties: slot order)
    and packed by ``packing``: "serverfilling" (§3.2), "firstfit" or "greedy" (§6). A negative
    score holds a job back. One step per epoch.
    ``action_mode="select"``: ``Discrete(max_jobs + 1)``, for masked discrete agents
    (MaskablePPO). Action i < max_jobs adds the job in window slot i to the service set being
    built; action ``max_jobs`` commits it. A decision epoch therefore spans several steps with
    zero elapsed time; time advances only on a commit, and the env commits by itself as soon as
    no other job fits. ``action_masks()`` (and ``info["action_mask"]``, int8) allow the slots that
    hold a job, are not selected yet and fit in the free servers; commit is allowed once at least
    one job is selected (an all-idle system is never useful with preemption).
    Jobs outside the window are never served.
    ``action_mode="ranked"``: select mode with each step's choices listed in the paper policy's order,
    so that option 0 at every step IS ServerFilling-SRPT (§3.2), bit for bit, and an agent learns
    where to deviate from it. At each epoch the env computes ServerFilling's service set over the
    window order (SRPT when ``size_known``; else arrival order, which makes option 0 ServerFilling);
    the options of a step are then: the jobs of that set not selected yet that fit (slot order), then
    commit (once a job is selected), then the other unselected jobs that fit (slot order). Action i
    takes option i (``ranked_options`` gives each option's window slot, -1 for commit); the mask
    allows the options and nothing after them. Once the paper's set is selected, option 0 commits,
    as the paper does even where a job would still fit (needs that are not powers of two). The
    equivalence needs ``max_jobs >= n_servers`` (ServerFilling's candidate set, at most k jobs, then
    lies in the window).
    ``action_mode="residual"``: priority mode relative to the paper policy, the base computed by the env.
    Slot i's score is ``clip(b_i + a_i, -1, 1)`` with ``b_i = (max_jobs - i) / (2 max_jobs)``
    (``residual_base``): decreasing over the window, which lists the jobs least remaining size first, so
    the action 0 IS ServerFilling-SRPT (§3.2; ServerFilling when sizes are unknown), bit for bit, and an
    agent whose mean action starts near 0 starts at the paper policy (with ``packing="firstfit"`` or
    ``"greedy"``: FirstFit-SRPT or GreedySRPT, §6, that packing of the same order). Every order and every held-back job
    (negative score) remains expressible. One step per epoch, any sample valid, as in priority mode.
    Helpers: ``commit_action``, ``slot_of_job`` and ``action_from_service_set`` (the action that
    serves a given set, in every mode: a baseline acts in ranked mode through it, ServerFilling-SRPT
    always with 0).

    Every element of the action space is a legal argument to ``step`` (docs/envs/index.md). In priority
    mode every score vector in [-1, 1] is a valid action, so nothing is masked. In select mode a
    masked action (an empty, already selected or non-fitting slot, or commit with nothing
    selected), and in ranked mode an index past the last option, is handled by ``invalid_action``
    (ranked mode's fallback is option 0, the paper's choice):

    - ``"fallback"`` (default): commit instead, if commit is allowed (at least one job selected:
      the agent asked for a job that cannot join, so the service set stays as the agent built
      it); otherwise, at the start of an epoch, select slot 0 (least remaining size first when
      ``size_known``, else the oldest job), which then always fits. ``info["invalid_action"]``
      is True. Rewards are unchanged, so the return stays minus the total response time. It is
      the default so that Gymnasium's and SB3's ``check_env`` and an unmasked ``PPO`` or ``DQN``
      (which sample actions without masks) run.
    - ``"penalty"``: the same fallback, and ``invalid_action_penalty`` (flow-time units) is
      subtracted from that step's reward.
    - ``"raise"``: ``ValueError``, state unchanged (for masked agents that must never err).

    A value outside the space (out of range, not an integer, NaN, wrong shape, a score outside
    [-1, 1]) raises ``ValueError`` in every mode and leaves the state unchanged.

    ## Observation Space
    ``Box(float32)`` of length ``7 * max_jobs + 5``. The window holds up to ``max_jobs`` jobs: by
    least remaining size first (ties: arrival) when ``size_known``, else oldest first. ``scale``
    is the mean size E[S] (time units). Slot i occupies entries ``7i .. 7i+6``. In ranked mode slot
    i describes option i instead (jobs already selected and jobs that do not fit are not listed;
    the commit option has entry 7i = 1, entry 7i + 5 = 1 and 0 elsewhere; padding after the options):

    | index  | meaning                                                         | min | max |
    |--------|-----------------------------------------------------------------|-----|-----|
    | 7i     | slot i holds a job (1) or is padding (0)                        | 0   | 1   |
    | 7i + 1 | server need k_j / k                                             | 0   | 1   |
    | 7i + 2 | log1p(remaining size / scale); 0 when sizes are hidden          | 0   | inf |
    | 7i + 3 | log1p(age / scale), age = size served so far                    | 0   | inf |
    | 7i + 4 | log1p(time in system / scale)                                   | 0   | inf |
    | 7i + 5 | selected for the service set being built; ranked mode: commit   | 0   | 1   |
    | 7i + 6 | served during the previous interval                             | 0   | 1   |
    | 7K     | free servers / k given the current selection                    | 0   | 1   |
    | 7K + 1 | log1p(jobs in system)                                           | 0   | inf |
    | 7K + 2 | log1p(jobs outside the window)                                  | 0   | inf |
    | 7K + 3 | log1p(total need of the jobs outside / k)                       | 0   | inf |
    | 7K + 4 | log1p(their remaining size / scale); 0 when sizes are hidden    | 0   | inf |

    With ``observe_params=True`` the scenario's parameters follow (length ``7K + 12``), constant over
    an episode, so that one agent can be trained across scenarios (``workload.scenario_params``):

    | index   | meaning                                                                  | min | max        |
    |---------|--------------------------------------------------------------------------|-----|------------|
    | 7K + 5  | log2(k) / 10 (k = 8 gives 0.3, k = 1024 gives 1)                         | 0   | inf        |
    | 7K + 6  | load rho (a trace's scaled load; 0 for an explicit job set)              | 0   | inf        |
    | 7K + 7  | E[K] / k, the mean server need (a job set: its empirical law)            | 0   | 1          |
    | 7K + 8  | std(K) / k                                                               | 0   | 1          |
    | 7K + 9  | largest server need / k                                                  | 0   | 1          |
    | 7K + 10 | log1p(Var[S] / E[S]^2) with the ratio capped at 100 (job set: its sizes) | 0   | log1p(100) |
    | 7K + 11 | 1 if sizes are known (``size_known``), else 0                            | 0   | 1          |

    ## Rewards
    Minus the flow time accrued since the last step: (jobs in system) x (elapsed time). Select
    steps that do not commit earn 0. The undiscounted return is exactly minus the total
    response time of the episode's jobs.

    Every reward (penalties included) is multiplied by ``reward_scale`` (1.0 by default; ``"auto"``
    makes the paper policy's return about -1 in this scenario, docs/envs/index.md); so is the return,
    while ``episode_metrics`` are never scaled.

    ## Starting State
    Online (default): ``n_arrivals`` Poisson arrivals at rate lambda = load / E[S], so that
    ``load`` is rho = lambda E[S] (§3.1); the episode starts at the first arrival. Needs are drawn
    from ``server_needs`` and sizes from ``size_dist`` (duration d = s k / k_j) or durations from
    ``duration_dist``, independently of the need. ``jobs`` replaces the random stream by an
    explicit job set; ``trace="alibaba"`` replays the Alibaba GPU trace of 2023 (need = GPUs,
    duration = run time; arrival times scaled by one factor so that the replayed tasks' load is
    ``load``; an SWF file, plain or gzip (the format is recognised by content), replays a Parallel
    Workloads Archive trace, processors scaled to k; see ``schedenv.multiserver.trace``). The
    workload is drawn at ``reset`` from the seed (gaps, then sizes, then needs), so every contender
    sees the same jobs for the same seed.

    ## Episode End
    Terminates when every job has arrived and completed. Never truncates by itself.

    ## Information
    Every step: ``time``, ``n_jobs``, ``n_outside`` (jobs outside the window), ``completed``
    (``MultiserverJobRecord``: job_id, arrival, size, completion, slowdown = T / d, server_need,
    duration), ``invalid_action`` (True when a masked select action was replaced by the fallback;
    always False in priority mode and on reset) and, in select and ranked modes, ``action_mask`` (all ones
    after the step that ends the episode: nothing is left to decide). Steps that advance time add
    ``busy_servers``
    (servers in use over the interval just simulated) and ``elapsed`` (time advanced; it includes
    the wait of an emptied system for the next arrival, when no server is busy). At the end,
    ``episode_metrics``: mean_response_time, mean_slowdown, mean_waiting_time, utilisation,
    mean_number_in_system, total_flow_time, makespan, n_completed, overflow_fraction (fraction of
    epochs with jobs outside the window).
    With ``reference`` (a baseline name of this env), the last step also has ``reference_metrics``:
    that baseline's ``episode_metrics`` on the very same episode (docs/envs/index.md).
    It also has ``bound_metrics``: the mean response time of SRPT-1 on the episode's jobs (one
    server of k servers' capacity serving s_j = k_j d_j / k by SRPT, Grosof et al. 2022, §4.1), a
    lower bound on every policy's on the same arrivals.

    ## Arguments

    | argument               | default          | meaning                                                      |
    |------------------------|------------------|--------------------------------------------------------------|
    | n_servers              | 8                | k                                                            |
    | server_needs           | (1, 2, 4, 8)     | need values (uniform) or a ``Choice`` of integers            |
    | size_dist              | Exponential(1.0) | law of S = K D / k, independent of K                         |
    | duration_dist          | None             | law of D instead (give exactly one of the two)               |
    | load                   | 0.7              | rho = lambda E[S]                                            |
    | n_arrivals             | 500              | arrivals per episode                                         |
    | jobs                   | None             | (need, duration) pairs at t = 0 or (arrival, need, duration) |
    | trace                  | None             | "alibaba", its CSV path or an SWF path: replay n_arrivals    |
    | size_known             | True             | sizes visible (SRPT order) or hidden (ages only)             |
    | action_mode            | "priority"       | "priority", "select", "ranked" or "residual" (Action Space)  |
    | packing                | "serverfilling"  | priority mode: "serverfilling", "firstfit" or "greedy"       |
    | max_jobs               | 16               | window size K                                                |
    | render_mode            | None             | "ansi", "rgb_array" or "human" (pygame window or stdout)     |
    | observe_params         | False            | append the scenario's parameters to the observation          |
    | invalid_action         | "fallback"       | masked select/ranked actions: "fallback", "penalty", "raise" |
    | invalid_action_penalty | 1.0              | subtracted from the reward of an invalid step ("penalty")    |
    | reference              | None             | baseline run on the same episode (Information)               |
    | reward_scale           | 1.0              | rewards x this number > 0, or "auto" (see Rewards)           |

    The defaults are the paper's Fig. 2 setting (k = 8, needs uniform on {1, 2, 4, 8},
    exponential sizes) at load 0.7.

    >>> import gymnasium as gym, schedenv
    >>> env = gym.make("schedenv/MultiserverJob-v0", jobs=[(4, 1.0), (8, 2.0), (4, 0.5)])
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    >>> select = gym.make("schedenv/MultiserverJob-v0", action_mode="select")
    >>> obs, info = select.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = select.step(int(info["action_mask"].argmax()))
    >>> ranked = gym.make("schedenv/MultiserverJob-v0", action_mode="ranked")
    >>> obs, info = ranked.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = ranked.step(0)  # ServerFilling-SRPT's choice

    ## References
    I. Grosof, Z. Scully, M. Harchol-Balter, A. Scheller-Wolf. Optimal Scheduling in the
    Multiserver-job Model under Heavy Traffic. Proc. ACM Meas. Anal. Comput. Syst. 6(3), 2022.

    ## Version History
    - v0: initial version; ``invalid_action`` added later (its default, "fallback", changes no
      reward of a valid action; before it, masked select actions raised).
    - v0: ``reference`` (``info["reference_metrics"]``) and ``reward_scale`` added (defaults unchanged).
    - v0: ``action_mode="ranked"`` added (the other modes unchanged).
    - v0: ``action_mode="residual"`` added (the other modes unchanged).
    """

    def __init__(
        self,
        n_servers: int = 8,
        server_needs: Any = (1, 2, 4, 8),
        size_dist: Distribution | None = None,
        duration_dist: Distribution | None = None,
        load: float = 0.7,
        n_arrivals: int = 500,
        jobs: Any = None,
        trace: str | None = None,
        size_known: bool = True,
        action_mode: str = "priority",
        packing: str = "serverfilling",
        max_jobs: int = 16,
        render_mode: str | None = None,
        invalid_action: str = "fallback",
        invalid_action_penalty: float = 1.0,
        observe_params: bool = False,
        reference: str | None = None,
        reward_scale: float | str = 1.0,
    ) -> None:
        arguments = dict(locals())  # before any other statement: the reference run rebuilds the env from them
        self.n_servers = check_int("n_servers", n_servers, maximum=MAX_SERVERS)
        self.action_mode = check_choice("action_mode", action_mode, ACTION_MODES)
        self.packing = check_choice("packing", packing, PACKINGS)
        self.max_jobs = check_int("max_jobs", max_jobs, maximum=MAX_WINDOW)
        self._set_up_invalid_actions(invalid_action, invalid_action_penalty)
        self.size_known = check_flag("size_known", size_known)
        self.observe_params = check_flag("observe_params", observe_params)
        self._set_up_rendering(render_mode)
        for name, law in (("size_dist", size_dist), ("duration_dist", duration_dist)):
            if law is not None and not isinstance(law, Distribution):
                raise ValueError(f"{name}={law!r} is not allowed; it must be a schedenv.workloads.Distribution")
        if size_dist is not None and duration_dist is not None:
            raise ValueError("give exactly one of size_dist and duration_dist, not both")
        if jobs is not None:
            ignored = {"server_needs": server_needs, "size_dist": size_dist, "duration_dist": duration_dist}
            refuse_ignored(MultiserverJobEnv, "explicit jobs", {**ignored, "load": load, "n_arrivals": n_arrivals})
        if size_dist is None and duration_dist is None:
            size_dist = Exponential(1.0)
        self.load = check_positive("load", load)
        self.n_arrivals = check_int("n_arrivals", n_arrivals, maximum=MAX_JOBS)
        self.jobs = None if jobs is None else parse_jobs(jobs, self.n_servers)
        self.trace = trace
        if trace is not None:
            if jobs is not None:
                raise ValueError("give at most one of jobs and trace")
            self.jobs = self._replay_trace(trace)
        # A job set brings its own needs: the need law is then its empirical one.
        need_law = parse_server_needs(
            server_needs if self.jobs is None else Choice(*_frequencies(self.jobs[1])), self.n_servers
        )
        self.workload = MultiserverWorkload(self.n_servers, need_law, size_dist, duration_dist)
        self.arrival_rate = float("nan")
        """lambda of the Poisson stream (nan for a job set or trace)."""
        if self.jobs is None:
            check_stream_horizon(self.load, self.n_arrivals)
            self.arrival_rate = self.workload.arrival_rate(self.load)
            if self.load >= 1:
                warnings.warn(
                    f"load={self.load!r} >= 1: every policy is unstable and the episode's response times grow with "
                    "n_arrivals; use load < 1",
                    stacklevel=2,
                )
            self.scale = self.workload.mean_size
        else:
            sizes = self.jobs[1] * self.jobs[2] / self.n_servers
            self.scale = float(sizes.mean())
        if self.max_jobs < self.n_servers:
            warnings.warn(
                f"max_jobs={self.max_jobs} < n_servers={self.n_servers}: ServerFilling's candidate set can hold up "
                "to k jobs, so window-bound policies may leave servers idle; use max_jobs >= n_servers",
                stacklevel=2,
            )

        self.slot_features = SLOT_FEATURES
        """Features per window slot (the layout ``agents.extractors`` reads)."""
        length = SLOT_FEATURES * self.max_jobs + GLOBAL_FEATURES
        high = np.full(length + (PARAMETERS if observe_params else 0), np.inf, dtype=np.float32)
        for feature in (0, 1, 5, 6):
            high[feature : SLOT_FEATURES * self.max_jobs : SLOT_FEATURES] = 1.0
        high[SLOT_FEATURES * self.max_jobs] = 1.0
        if observe_params:
            high[length:] = PARAMETERS_HIGH
        self.observation_space = spaces.Box(0.0, high, dtype=np.float32)
        self.action_space: spaces.Space[Any]
        if self.action_mode == "select":
            self.action_space = spaces.Discrete(self.max_jobs + 1)
        elif self.action_mode == "ranked":
            self.action_space = spaces.Discrete(self.max_jobs)
        else:
            self.action_space = spaces.Box(-1.0, 1.0, (self.max_jobs,), dtype=np.float32)

        self._core = None
        self._window_need = np.empty(0, dtype=np.int64)
        self._window_selected = np.empty(0, dtype=bool)
        self._mask = np.zeros(self.max_jobs + 1, dtype=np.int8)
        # Ranked mode: the options of the current step (window slots, or RANKED_COMMIT) and their mask,
        # the paper's service set over the window and the window-order slot features (kernel.rank_options).
        self._options = np.zeros(self.max_jobs, dtype=np.int64)
        self._ranked_mask = np.zeros(self.max_jobs, dtype=np.int8)
        self._plan = np.zeros(self.max_jobs, dtype=np.bool_)
        self._features = np.zeros(SLOT_FEATURES * self.max_jobs, dtype=np.float32)
        self._slots = np.arange(self.max_jobs, dtype=np.int64)
        self._rank_work = np.zeros(2 * self.max_jobs + 2 * self.n_servers, dtype=np.int64)
        self._n_options = 0
        self._residual_base = residual_base(self.max_jobs)
        """Residual mode: the scores of the action 0 (``residual_base``)."""
        self._free = self.n_servers
        self._records: list[MultiserverJobRecord] = []
        self._epochs = 0
        self._overflow_epochs = 0
        self._total_flow = 0.0
        self._obs = np.zeros(high.size, dtype=np.float32)
        """The observation, rewritten in place by the core; the parameters at its end never change."""
        if observe_params:
            self._obs[length:] = self.scenario_params

        self._set_up_reference("schedenv/MultiserverJob-v0", arguments)

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        self._start_episode(seed)
        if self.jobs is not None:
            arrivals, needs, durations = self.jobs
        else:
            arrivals, needs, durations = self.workload.draw(self.np_random, self.n_arrivals, self.load)
        params = MultiserverParams(self.n_servers, arrivals, needs, durations)
        self._core = FastCore(params, self.max_jobs, self.scale, self.size_known, self.packing, self._obs)
        self._records, self._epochs, self._overflow_epochs, self._total_flow = [], 0, 0, 0.0
        self._start_epoch()
        self._show()
        return self._obs.copy(), self._info([])

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        core = self._live_core()
        if self.action_mode in SCORE_MODES:
            scores = np.array(as_real_array("action", action, allow_bool=True))  # a writable contiguous copy
            if scores.shape != (self.max_jobs,) or self.action_mode == "residual":
                self._check_scores(scores)  # raises with the precise reason
            if self.action_mode == "residual":
                scores = residual_scores(scores, self._residual_base)
            try:
                outcome = core.step(scores)
            except ValueError:
                self._check_scores(scores)  # the precise reason for a bad score
                raise
            return self._commit(outcome)
        slot = self._check_slot(action)
        if self.action_mode == "ranked":
            return self._step_ranked(slot)
        invalid = not self._mask[slot]
        if invalid:
            if self.invalid_action == "raise":
                reason = (
                    "commit needs at least one selected job"
                    if slot == self.max_jobs
                    else "the slot is empty, already selected, or its job does not fit in the free servers"
                )
                raise ValueError(f"action={slot} is masked: {reason}")
            slot = self.fallback_action
        return self._select(slot, invalid)

    def _step_ranked(self, choice: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Ranked mode: option ``choice`` (a masked one: option 0, the paper's) as the select step it names."""
        invalid = not self._ranked_mask[choice]
        if invalid:
            if self.invalid_action == "raise":
                n = self._n_options
                raise ValueError(f"action={choice} is masked: this decision has {n} options (0..{n - 1})")
            choice = self.fallback_action
        slot = int(self._options[choice])
        return self._select(self.max_jobs if slot == RANKED_COMMIT else slot, invalid)

    def _select(self, slot: int, invalid: bool) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Select or ranked mode: add window slot ``slot`` to the service set, or commit it (``max_jobs``)."""
        core = self._require_core()
        penalty = self._penalty(invalid)
        if slot == self.max_jobs:
            return self._commit(core.step(None, self._window_selected), invalid, penalty)
        self._window_selected[slot] = True
        self._free -= int(self._window_need[slot])
        selectable = ~self._window_selected & (self._window_need <= self._free)
        if not selectable.any():
            return self._commit(core.step(None, self._window_selected), invalid, penalty)
        self._mask[: selectable.size] = selectable
        self._mask[self.max_jobs] = 1
        self._obs[SLOT_FEATURES * slot + 5] = 1.0
        self._obs[SLOT_FEATURES * self.max_jobs] = self._free / self.n_servers
        if self.action_mode == "ranked":
            self._rank(new_epoch=False)
        info = self._info([], invalid=invalid)
        self._show()
        return self._obs.copy(), -penalty * self.reward_scale if penalty else 0.0, False, False, info

    def _render_text(self) -> str:
        return render_text(self.state, self.window, self.selected, self.scale)

    def _render_picture(self) -> np.ndarray:
        return render_servers(self.state, self.window)

    # ----------------------------------------------------------------- for baselines and agents
    @property
    def state(self) -> MultiserverState:
        """The simulator state (read-only arrays of the jobs present, in arrival order)."""
        return self._require_core().state

    @property
    def params(self) -> MultiserverParams:
        """The episode's job stream and server count."""
        return self._require_core().params

    @property
    def window(self) -> np.ndarray:
        """Positions in ``state``'s arrays of the jobs in the window, in slot order (read-only)."""
        return self._require_core().window

    @property
    def commit_action(self) -> int:
        """The action that commits the service set: ``max_jobs`` in select mode; in ranked mode the index
        of the commit option (``ValueError`` while it is not an option: nothing is selected yet)."""
        if self.action_mode == "ranked":
            hits = np.flatnonzero(self._options[: self._n_options] == RANKED_COMMIT)
            if not hits.size:
                raise ValueError("commit is not an option of this decision: no job is selected yet")
            return int(hits[0])
        return self.max_jobs

    @property
    def scenario_params(self) -> np.ndarray:
        """The entries ``observe_params=True`` appends to the observation (table in the class docstring)."""
        if self.jobs is None:
            size_scv, load = self.workload.size_scv, self.load
        else:
            sizes = self.jobs[1] * self.jobs[2] / self.n_servers
            size_scv, load = float(sizes.var() / sizes.mean() ** 2), self.load if self.trace is not None else 0.0
        return scenario_params(self.n_servers, load, self.workload.server_needs, size_scv, self.size_known)

    def scenario_parameters(self) -> np.ndarray:
        """Deprecated: ``scenario_params`` (docs/glossary.md)."""
        warn_deprecated("MultiserverJobEnv.scenario_parameters()", "MultiserverJobEnv.scenario_params")
        return self.scenario_params

    @property
    def fallback_action(self) -> int:
        """The action a masked one is replaced by: select mode, commit if allowed, else slot 0; ranked
        mode, option 0 (the paper policy's choice)."""
        if self.action_mode == "ranked":
            return 0
        return self.max_jobs if self._mask[self.max_jobs] else 0

    @property
    def ranked_options(self) -> np.ndarray:
        """Ranked mode: the options of the current decision, in order: the window slot each selects,
        or ``RANKED_COMMIT`` (-1) for commit (a copy; see Action Space)."""
        if self.action_mode != "ranked":
            raise ValueError(f"ranked_options exists only for action_mode='ranked'; got {self.action_mode!r}")
        return self._options[: self._n_options].copy()

    def action_masks(self) -> np.ndarray:
        """Select mode: int8 mask of the legal actions (slots, then commit); ranked mode: of the options."""
        if self.action_mode in SCORE_MODES:
            raise ValueError(
                f"action_masks() exists only for action_mode='select' or 'ranked'; {self.action_mode} mode takes "
                "any scores"
            )
        return (self._ranked_mask if self.action_mode == "ranked" else self._mask).copy()

    @property
    def selected(self) -> np.ndarray:
        """Select mode: which jobs (positions in ``state``'s arrays) the current epoch has selected."""
        serve = np.zeros(self.state.n_jobs, dtype=bool)
        serve[self.window[self._window_selected]] = True
        return serve

    def slot_of_job(self, position: int) -> int | None:
        """The window slot of the job at ``position`` in ``state``'s arrays, or None if outside."""
        hits = np.flatnonzero(self.window == position)
        return int(hits[0]) if hits.size else None

    def size_distribution(self, need: int) -> Distribution:
        """The size law of need-``need`` jobs (the empirical one for an explicit job set), §5.1."""
        if self.jobs is None:
            return self.workload.size_distribution(need)
        _, needs, durations = self.jobs
        laws = empirical_need_sizes(needs, needs * durations / self.n_servers, self.n_servers)
        if need not in laws:
            raise ValueError(f"no job of the job set has server need {need}; needs present: {sorted(laws)}")
        return laws[need]

    @property
    def need_values(self) -> np.ndarray:
        """Every server need the episode's jobs can have."""
        return self.workload.need_values

    def action_from_service_set(self, serve: np.ndarray) -> Any:
        """An action that moves the env toward serving ``serve`` (positions in ``state``'s arrays).

        Priority mode: score 1 for the window slots of ``serve``, -1 for the others (every packing
        then serves exactly them, as their needs fit); residual mode: the action that gives those scores
        (1 - b_i, and -1, which ``residual_scores`` makes b_i - 1 < 0). Select mode: the first job of
        ``serve`` (by decreasing need) that is in the window and not selected yet, or commit when none is left.
        Ranked mode: the first option that is such a job, else the commit option (else option 0).
        Jobs of ``serve`` outside the window are dropped.
        """
        chosen = np.zeros(self.state.n_jobs, dtype=bool)
        chosen[serve] = True
        in_window = chosen[self.window]
        if self.action_mode in SCORE_MODES:
            scores = np.full(self.max_jobs, -1.0, dtype=np.float32)
            scores[: self.window.size] = np.where(in_window, 1.0, -1.0)
            if self.action_mode == "residual":
                served = scores > 0
                scores[served] -= self._residual_base[served].astype(np.float32)
            return scores
        pending = np.flatnonzero(in_window & ~self._window_selected)
        if self.action_mode == "ranked":
            options = self._options[: self._n_options]
            hits = np.flatnonzero(np.isin(options, pending))
            if not hits.size:
                hits = np.flatnonzero(options == RANKED_COMMIT)
            return int(hits[0]) if hits.size else 0
        if pending.size == 0:
            return self.commit_action
        return int(pending[int(np.argmax(self._window_need[pending]))])

    def service_set_from_scores(self, action: Any) -> np.ndarray:
        """Priority or residual mode: validate ``action`` and return the boolean service set it induces."""
        scores = as_real_array("action", action, allow_bool=True)
        self._check_scores(scores)
        if self.action_mode == "residual":
            scores = residual_scores(scores, self._residual_base)
        state, window = self.state, self.window
        occupied = scores[: window.size]
        slots = np.flatnonzero(occupied >= 0.0)
        if slots.size == 0:
            slots = np.arange(window.size)
        order = slots[np.argsort(-occupied[slots], kind="stable")]
        return pack_service_set(self.packing, window[order], state.server_need, self.n_servers)

    # ----------------------------------------------------------------- internals
    def _replay_trace(self, trace: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not isinstance(trace, str):
            raise ValueError(
                f"trace={trace!r} is not allowed; give 'alibaba', the path of the Alibaba CSV file or of an SWF file"
            )
        if trace == "alibaba":
            arrivals, needs, durations = read_alibaba_gpu_trace(None)
        elif trace_format(trace) == "swf":
            arrivals, needs, durations = read_swf_jobs(trace, self.n_servers)
        else:
            arrivals, needs, durations = read_alibaba_gpu_trace(trace)
        arrivals, needs, durations = arrivals[: self.n_arrivals], needs[: self.n_arrivals], durations[: self.n_arrivals]
        if needs.max() > self.n_servers:
            raise ValueError(
                f"the trace has tasks needing {int(needs.max())} GPUs; n_servers={self.n_servers} is too small"
            )
        arrivals = scale_to_load(arrivals, needs, durations, self.n_servers, self.load)
        check_time_resolution("trace", arrivals, durations)
        return arrivals, needs, durations

    def _check_scores(self, scores: np.ndarray) -> None:
        if scores.shape != (self.max_jobs,):
            raise ValueError(f"action has shape {scores.shape}; expected ({self.max_jobs},), one score per slot")
        if not np.isfinite(scores).all():
            raise ValueError(f"action contains NaN or inf: {scores.tolist()}")
        if scores.min() < -1.0 or scores.max() > 1.0:
            raise ValueError(f"scores must lie in [-1, 1]; got min {scores.min()!r}, max {scores.max()!r}")

    def _check_slot(self, action: Any) -> int:
        high = self.max_jobs - 1 if self.action_mode == "ranked" else self.max_jobs
        mode = f"{self.action_mode} mode"
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer, np.ndarray)):
            raise ValueError(f"action={action!r} is not allowed; {mode} takes an integer in 0..{high}")
        if isinstance(action, np.ndarray):
            if action.shape != () or action.dtype.kind not in "iu":
                raise ValueError(f"action={action!r} is not allowed; {mode} takes one integer")
            action = action.item()
        slot = int(action)
        if not 0 <= slot <= high:
            raise ValueError(f"action={slot} is out of range; {mode} takes 0..{high}")
        return slot

    def _commit(
        self, outcome: StepOutcome, invalid: bool = False, penalty: float = 0.0
    ) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._records.extend(outcome.completed)
        self._total_flow += outcome.accrued_objective
        terminated = self._require_core().done
        self._start_epoch()
        info = self._info(outcome.completed, outcome, invalid)
        if terminated:
            self._end_episode(info, self._episode_metrics())
            if self.reference is not None:
                info["bound_metrics"] = self._bound_metrics()
        reward = (-outcome.accrued_objective - penalty if penalty else -outcome.accrued_objective) * self.reward_scale
        self._show()
        return self._obs.copy(), reward, terminated, False, info

    def _start_epoch(self) -> None:
        """Bookkeeping of a new epoch; the core has already built its window and observation."""
        core = self._require_core()
        if core.n_jobs:
            self._epochs += 1
            self._overflow_epochs += core.n_jobs > self.max_jobs
        if self.action_mode not in SCORE_MODES:
            self._window_need = core.window_needs()
            self._window_selected = np.zeros(core.n_window, dtype=bool)
            self._free = self.n_servers
            self._mask[:] = 1 if core.done else 0  # after the last step any action is accepted
            self._mask[: core.n_window] = 1
        if self.action_mode == "ranked":
            self._rank(new_epoch=True)
            if core.done:
                self._ranked_mask[:] = 1

    def _rank(self, new_epoch: bool) -> None:
        """Ranked mode: list this step's options, their mask and observation (``kernel.rank_options``)."""
        n_window = self._window_selected.size
        self._n_options = rank_options(
            self._slots[:n_window], self._window_need, self._window_selected, self._free, self.n_servers, new_epoch,
            self._plan, self._features, self._obs, self._options, self._ranked_mask, self._rank_work,
        )  # fmt: skip

    def _info(
        self, completed: list[MultiserverJobRecord], outcome: StepOutcome | None = None, invalid: bool = False
    ) -> dict[str, Any]:
        core = self._require_core()
        info: dict[str, Any] = {
            "time": core.time,
            "n_jobs": core.n_jobs,
            "n_outside": core.n_jobs - core.n_window,
            "completed": completed,
            "invalid_action": invalid,
        }
        if outcome is not None:
            info["busy_servers"] = outcome.busy_servers
            info["elapsed"] = outcome.elapsed
        if self.action_mode not in SCORE_MODES:
            info["action_mask"] = self.action_masks()
        return info

    def _bound_metrics(self) -> dict[str, float]:
        """SRPT-1 on this episode's jobs (Grosof et al. 2022, §4.1): a lower bound on any policy's mean."""
        params = self._require_core().params
        return {"mean_response_time": srpt1_mean_response_time(params.arrival_times, params.sizes)}

    def _episode_metrics(self) -> dict[str, float]:
        core = self._require_core()
        metrics = episode_metrics(
            self._records,
            self.n_servers,
            float(core.params.arrival_times[0]),
            core.time,
            core.busy_server_time,
            self._total_flow,
        )
        metrics["overflow_fraction"] = self._overflow_epochs / max(self._epochs, 1)
        return metrics
