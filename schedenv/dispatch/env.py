"""Gymnasium adapter for non-preemptive multi-host dispatch (TAGS paper), env id ``schedenv/Dispatch-v0``.

Provenance: the model of M. Harchol-Balter, "Task assignment with unknown duration", Journal of
the ACM 49(2), 2002, §1 (hosts, Random / Round-Robin / Shortest-Queue / Least-Work-Remaining /
Central-Queue) and §4 (TAGS: time limits, kills, restarts from scratch).

The env translates; the dynamics run on the compiled core (``fast.FastCore`` over the numba
``kernel``, shared with the batched env). The pure simulator ``sim.DispatchSim`` with the Python
observation of ``core.ReferenceCore`` is the specification: ``tests/dispatch/test_fast_core.py``
steps both with the same actions and requires equal observations, rewards and records.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from scipy import optimize

from schedenv.analysis.queueing import support_bracket
from schedenv.dispatch.core import PARAMS_HIGH, ObservationLayout
from schedenv.dispatch.fast import FastCore
from schedenv.dispatch.records import SIZE_CLASS_QUANTILES
from schedenv.dispatch.render import render_queues, render_text
from schedenv.dispatch.sim import OBJECTIVES, DispatchParams, DispatchSim, PendingJob, StateView
from schedenv.dispatch.workload import default_size_dist, parse_jobs
from schedenv.envbase import INVALID_ACTION_MODES as INVALID_ACTION_MODES  # re-exported
from schedenv.envbase import SchedulingEnv
from schedenv.validation import (
    MAX_JOBS,
    MAX_SERVERS,
    MAX_WINDOW,
    as_real_array,
    check_action_index,
    check_choice,
    check_flag,
    check_int,
    check_positive,
    check_stream_horizon,
    refuse_ignored,
    reject_unknown_kwargs,
)
from schedenv.workloads import Distribution, PoissonArrivals, draw_sizes, poisson_job_stream

LIMITS_PER_DECADE = 4
"""Density of the default time-limit ladder (limits 10^(1/4) ≈ 1.78 apart)."""


def default_time_limits(size_dist: Distribution) -> np.ndarray:
    """A geometric ladder, ``LIMITS_PER_DECADE`` limits per decade, then ``inf``.

    For a distribution with ``lower``/``upper`` bounds (Bounded Pareto) it spans them; otherwise it
    spans 10^-2 to 10^4 times the mean.
    """
    low = getattr(size_dist, "lower", None)
    high = getattr(size_dist, "upper", None)
    if low is None or high is None:
        low, high = 1e-2 * size_dist.mean, 1e4 * size_dist.mean
    exponents = np.arange(math.log10(low), math.log10(high), 1.0 / LIMITS_PER_DECADE)
    return np.append(10.0**exponents, math.inf)


def encode_action(destination: int, limit_index: int, n_limits: int) -> int:
    """The ``Discrete`` action for (destination, limit index): ``destination * n_limits + limit_index``.

    ``destination`` is a host 0..h-1 or h for the central queue.
    """
    return destination * n_limits + limit_index


def decode_action(action: int, n_limits: int) -> tuple[int, int]:
    """The (destination, limit index) pair of a ``Discrete`` action (inverse of ``encode_action``)."""
    return divmod(int(action), n_limits)


@reject_unknown_kwargs
class DispatchEnv(SchedulingEnv[np.int64, FastCore]):
    """Dispatch jobs of unknown size to h FCFS, run-to-completion hosts, with optional time limits.

    ## Description
    Jobs arrive (Poisson, or an explicit list) at a dispatcher in front of h identical hosts. Each
    host serves its own queue first-come-first-served and never preempts. A run may carry a time
    limit: a job still running when it reaches its limit is killed, loses all its work and comes
    back to the dispatcher, which now knows its size exceeds that limit (TAGS, §4). Jobs sent to
    the central queue wait FCFS at the dispatcher and go to the first host that becomes idle (a
    host serves its own queue before the central one; §1's Central-Queue). Sizes are hidden from
    the dispatcher unless ``size_known=True``. Decision epochs are arrivals and kills; completions
    and central-queue hand-offs happen in between. When a kill frees a host, that host starts its
    next job (own queue, then central) before the killed job is dispatched.

    ## Action Space
    ``Discrete((n_hosts + 1) * n_limits)``: action ``a = destination * n_limits + limit_index``
    (``encode_action`` / ``decode_action``), destination 0..h-1 a host and h the central queue,
    ``limit_index`` into ``time_limits`` (whose last entry is ``inf``: run to completion). Masks
    (``action_masks()``, ``info["action_mask"]``) forbid only limits at or below the largest limit
    the job already exceeded: such a run is certain to be killed again, wasting work and time, and
    forbidding it bounds a job's runs by the ladder's length. Every destination is always allowed.

    A masked action is handled as ``invalid_action`` says:

    - ``"fallback"`` (default): the job goes to the requested destination with the smallest allowed
      limit at least the requested one, i.e. the ladder's next limit above the largest one the job
      already exceeded (``inf`` if that is the last); ``info["invalid_action"]`` is True. It keeps
      the agent's destination and comes closest to its limit, and it is the default so that every
      element of the action space is a legal argument to ``step``: Gymnasium's and SB3's
      ``check_env`` and an unmasked ``PPO("MlpPolicy", env)`` or ``DQN`` run as they are, and the
      return stays exactly minus the total objective.
    - ``"penalty"``: the same fallback, and ``invalid_action_penalty`` is subtracted from that
      step's reward (the return is then minus the total objective minus the penalties).
    - ``"raise"``: ``ValueError``, and nothing changes (for agents that must respect the masks).

    A value outside the action space (out of range, non-integer, NaN) raises ``ValueError`` in every
    mode and changes nothing. After the step that ends the episode the mask is all ones.

    ## Observation Space
    ``Box(float32)``; L = ``n_limits``, K = ``max_jobs``, h = ``n_hosts``, ``scale`` = E[X]; a
    limit index l is shown as (l + 1) / L (0: none) and ``inf`` is index L - 1. With
    ``size_known=True`` each host, slot and the pending job get one more feature, log1p(work or
    size / scale), and the layout shifts accordingly (F_h = 5, F_s = 5, F_p = 5).

    | index                    | meaning                                                     | min | max |
    |--------------------------|-------------------------------------------------------------|-----|-----|
    | F_h i + 0                | host i busy                                                 | 0   | 1   |
    | F_h i + 1                | log1p(jobs queued at host i)                                | 0   | inf |
    | F_h i + 2                | log1p(elapsed time of its current run / scale)              | 0   | inf |
    | F_h i + 3                | limit of its current run, (l + 1) / L                        | 0   | 1   |
    | F_h h                    | log1p(jobs in the central queue)                            | 0   | inf |
    | then, per queue q (hosts 0..h-1, central) and slot j < K, F_s features (FCFS order):     |||
    | + 0                      | slot holds a job                                            | 0   | 1   |
    | + 1                      | its limit, (l + 1) / L                                      | 0   | 1   |
    | + 2                      | largest limit it exceeded, (l + 1) / L                      | 0   | 1   |
    | + 3                      | log1p(its age / scale)                                      | 0   | inf |
    | then the pending job, F_p features:                                                     |||
    | + 0                      | log1p(its age / scale)                                      | 0   | inf |
    | + 1                      | largest limit it exceeded, (l + 1) / L                      | 0   | 1   |
    | + 2                      | log1p(runs it had, all killed)                              | 0   | inf |
    | + 3                      | last host it ran on, (i + 1) / h (0: none)                  | 0   | 1   |
    | then 4 summary features:                                                               |||
    | + 0                      | log1p(jobs in system)                                       | 0   | inf |
    | + 1                      | log1p(queued jobs outside the windows)                      | 0   | inf |
    | + 2                      | log1p(time since the previous decision / scale)             | 0   | inf |
    | + 3                      | fraction of the episode's arrivals so far                   | 0   | 1   |
    | then, with ``observe_params=True`` only, the scenario's parameters (``scenario_params``):  |||
    | + 0                      | load rho / (1 + rho) (1/3 at rho = 0.5; 1 if rho = inf)      | 0   | 1   |
    | + 1                      | 1 / h                                                       | 0   | 1   |
    | + 2                      | size variability min(log10(1 + C²), 10), C² = Var X / E[X]² | 0   | 10  |

    The scenario's parameters are constant over an episode; they let one agent be trained across
    loads and size distributions (the default observation does not carry them). rho is the ``load``
    argument (lambda E[X] / h) for Poisson arrivals; with explicit ``jobs`` it is theirs, the total
    size over h times the span of their arrival times (inf when they all arrive at once). C² is the
    size distribution's (0 for deterministic sizes, 1 for exponential ones, about 8 10^4 for the
    default Bounded Pareto; 10 stands for C² >= 10^10, infinite included), with explicit ``jobs`` their
    sizes'. With a Bounded Pareto of fixed mean and upper bound, C² determines the tail index alpha.

    ## Rewards
    Minus the objective accrued since the previous step: the integral of the number of jobs
    present (``"response_time"``, ``"waiting_time"``) or of the sum of 1/x over them
    (``"slowdown"``, ``"waiting_slowdown"``), minus x (``"waiting_time"``) or 1
    (``"waiting_slowdown"``) settled at each completion. The undiscounted return is exactly minus
    the episode's sum of T, T - x, T / x or (T - x) / x.

    Every reward (penalties included) is multiplied by ``reward_scale`` (1.0 by default; ``"auto"``
    makes the paper policy's return about -1 in this scenario, docs/envs/index.md); so is the return,
    while ``episode_metrics`` are never scaled.

    ## Starting State
    ``n_arrivals`` Poisson arrivals at rate lambda = load * h / E[X] (the paper's footnote 2),
    sizes from ``size_dist``, drawn at ``reset`` from the seed (gaps first, then sizes), so every
    contender sees the same jobs; or the explicit ``jobs``. The first step decides the first arrival.

    ## Episode End
    Terminates when every job has arrived and completed. Never truncates by itself.

    ## Information
    Every step: ``time``, ``n_jobs``, ``completed`` (``DispatchRecord``: job_id, arrival, size,
    completion, slowdown, hosts, wasted_work, queueing_time), ``action_mask``, ``killed`` (the
    pending job was killed rather than new), ``n_outside`` (queued jobs outside the windows),
    ``invalid_action`` (the step's action was masked and replaced by its fallback; False at reset).
    At the end ``episode_metrics``: mean_response_time, mean_waiting_time, mean_queueing_time,
    mean_slowdown, mean_waiting_slowdown, mean_queueing_slowdown (the paper's slowdown W / x),
    host_load_i, excess (wasted work per unit time, the appendix's Excess), total_wasted_work,
    wasted_work_fraction, kills_per_job, mean_slowdown_final_host_i (the paper's fairness classes),
    mean_slowdown_size_class_c (c = 0..4, sizes split at the workload's 0.5, 0.9, 0.99 and 0.999
    quantiles; ``nan`` when empty), makespan, n_completed. The key set is fixed per env.
    With ``reference`` (a baseline name of this env), the last step also has ``reference_metrics``:
    that baseline's ``episode_metrics`` on the very same episode (docs/envs/index.md).

    ## Arguments

    | argument               | default                   | meaning                                                |
    |------------------------|---------------------------|--------------------------------------------------------|
    | n_hosts                | 2                         | h                                                      |
    | load                   | 0.5                       | system load lambda E[X] / h                            |
    | size_dist              | see ``default_size_dist`` | sizes: Bounded Pareto, mean 3000, alpha 1.1, p 1e10    |
    | n_arrivals             | 1000                      | jobs per episode (ignored when ``jobs`` is given)      |
    | jobs                   | None                      | explicit (arrival, size) pairs                         |
    | size_known             | False                     | show sizes (and host work) to the dispatcher           |
    | time_limits            | 4 per decade over sizes   | increasing kill limits; ``inf`` is appended            |
    | objective              | "slowdown"                | or "response_time", "waiting_time", "waiting_slowdown" |
    | max_jobs               | 4                         | K, window slots per queue                              |
    | render_mode            | None                      | "ansi", "rgb_array" or "human" (pygame window or stdout) |
    | invalid_action         | "fallback"                | "raise", "fallback" or "penalty" (see Action Space)    |
    | invalid_action_penalty | 1.0                       | subtracted from a masked action's reward ("penalty")   |
    | observe_params         | False                     | append the scenario's parameters to the observation    |
    | reference              | None                      | baseline run on the same episode (Information)         |
    | reward_scale           | 1.0                       | rewards x this number > 0, or "auto" (see Rewards)     |

    >>> import gymnasium as gym, schedenv
    >>> env = gym.make("schedenv/Dispatch-v0", jobs=[(0.0, 5.0), (1.0, 2.0)], time_limits=[3.0])
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(env.unwrapped.encode_action(0, 0))

    ## References
    M. Harchol-Balter. Task assignment with unknown duration. Journal of the ACM 49(2):260-288, 2002.

    ## Version History
    - v0: initial version. Later additions that leave every trajectory of valid actions unchanged:
      ``invalid_action`` (masked actions fall back by default instead of raising), ``observe_params``,
      and the compiled core.
    - v0: ``reference`` (``info["reference_metrics"]``) and ``reward_scale`` added (defaults unchanged).
    """

    def __init__(
        self,
        n_hosts: int = 2,
        load: float = 0.5,
        size_dist: Distribution | None = None,
        n_arrivals: int = 1000,
        jobs: Any = None,
        size_known: bool = False,
        time_limits: Any = None,
        objective: str = "slowdown",
        max_jobs: int = 4,
        render_mode: str | None = None,
        invalid_action: str = "fallback",
        invalid_action_penalty: float = 1.0,
        observe_params: bool = False,
        reference: str | None = None,
        reward_scale: float | str = 1.0,
    ) -> None:
        arguments = dict(locals())  # before any other statement: the reference run rebuilds the env from them
        self.n_hosts = check_int("n_hosts", n_hosts, maximum=MAX_SERVERS)
        self.load = check_positive("load", load)
        if self.load >= 1:
            warnings.warn(
                f"load={self.load!r} >= 1: no dispatch policy is stable (TAGS even adds work), queues grow without "
                "bound and episode metrics depend on n_arrivals; use load < 1 to compare policies.",
                stacklevel=3,
            )
        if size_dist is not None and not isinstance(size_dist, Distribution):
            raise ValueError(f"size_dist={size_dist!r} is not allowed; it must be a schedenv.workloads.Distribution")
        self.size_dist = size_dist if size_dist is not None else default_size_dist()
        if not math.isfinite(self.size_dist.mean):
            raise ValueError(f"size_dist={self.size_dist!r} has an infinite mean; load needs a finite E[X]")
        self.n_arrivals = check_int("n_arrivals", n_arrivals, maximum=MAX_JOBS)
        self.jobs = parse_jobs(jobs)
        if self.jobs is not None:  # load and size_dist stay: model-based policies (TAGS, SITA-E) read them
            refuse_ignored(DispatchEnv, "explicit jobs", {"n_arrivals": n_arrivals})
        self.size_known = check_flag("size_known", size_known)
        self.observe_params = check_flag("observe_params", observe_params)
        self.time_limits = _parse_time_limits(time_limits, self.size_dist)
        self.objective = check_choice("objective", objective, OBJECTIVES)
        self.max_jobs = check_int("max_jobs", max_jobs, minimum=0, maximum=MAX_WINDOW)
        self._set_up_invalid_actions(invalid_action, invalid_action_penalty)
        self._set_up_rendering(render_mode)
        if self.jobs is None:
            check_stream_horizon(self.load, self.n_arrivals)
        self.arrival_process = PoissonArrivals.for_load(self.load, self.size_dist.mean, float(self.n_hosts))
        self.scale = float(self.jobs[1].mean()) if self.jobs is not None else float(self.size_dist.mean)
        self.size_class_bounds = _size_class_bounds(self.size_dist, self.jobs)
        self.scenario_params = _scenario_params(self.load, self.n_hosts, self.size_dist, self.jobs)
        """The scenario's parameters (Observation Space), appended to observations if ``observe_params``."""

        self.n_limits = int(self.time_limits.size)
        self.central = self.n_hosts
        """The destination index of the central queue."""
        self.layout = ObservationLayout(
            self.n_hosts,
            self.n_limits,
            self.max_jobs,
            self.scale,
            self.size_known,
            self.scenario_params if self.observe_params else (),
        )
        """Where each feature of the observation lies (Observation Space)."""
        self.observation_space = spaces.Box(0.0, self.layout.high(), dtype=np.float32)
        self.n_actions = (self.n_hosts + 1) * self.n_limits
        self.action_space = spaces.Discrete(self.n_actions)
        limit_ok = np.arange(self.n_limits)[None, :] > np.arange(-1, self.n_limits - 1)[:, None]
        self._masks = np.tile(limit_ok, (1, self.n_hosts + 1)).astype(np.int8)
        """Row r + 1: the mask of a pending job whose largest exceeded limit index is r (row 0: all ones)."""
        self._masks.flags.writeable = False
        self._core = None

        self._set_up_reference("schedenv/Dispatch-v0", arguments)

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        self._start_episode(seed)
        if self.jobs is not None:
            arrivals, sizes = self.jobs
        else:
            arrivals, sizes = poisson_job_stream(self.n_arrivals, self.arrival_process, self.size_dist, self.np_random)
        params = DispatchParams(self.n_hosts, self.time_limits, self.objective, arrivals, sizes, self.size_class_bounds)
        self._core = core = FastCore(params, self.layout)
        self._show()
        return core.observation(), self._info(core, [], False)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        core = self._live_core()
        destination, limit, invalid = self._checked_action(action, core)
        outcome = core.step(destination, limit)
        info = self._info(core, outcome.completed, invalid)
        if core.done:
            self._end_episode(info, core.metrics())
        reward = -outcome.accrued - self._penalty(invalid)
        self._show()
        return core.observation(), reward * self.reward_scale, core.done, False, info

    def _render_text(self) -> str:
        return render_text(self._require_core().sim)

    def _render_picture(self) -> np.ndarray:
        return render_queues(self._require_core().sim)

    # ----------------------------------------------------------------- for baselines and agents
    @property
    def sim(self) -> DispatchSim:
        """The simulator's state as a ``DispatchSim`` rebuilt from the compiled core: exact, but a copy.

        Changing it changes nothing in the env; baselines should read ``state`` (cheaper).
        """
        return self._require_core().sim

    @property
    def state(self) -> StateView:
        """A read-only snapshot of hosts, queues and the pending job (see ``StateView``)."""
        return self._require_core().state

    @property
    def pending_job(self) -> PendingJob:
        """The job awaiting a decision (cheaper than ``state`` when a policy needs only this)."""
        job = self._require_core().pending_view()
        if job is None:
            raise RuntimeError("the episode has ended; no job awaits a decision")
        return job

    def action_masks(self) -> np.ndarray:
        """int8 mask over actions: 1 where the pending job may go (see Action Space); all ones at the end."""
        return self._masks[self._require_core().exceeded + 1]

    def encode_action(self, destination: int, limit_index: int) -> int:
        """The action for (destination, limit index); destination ``self.central`` is the central queue."""
        return encode_action(destination, limit_index, self.n_limits)

    def decode_action(self, action: int) -> tuple[int, int]:
        """The (destination, limit index) of ``action``."""
        return decode_action(action, self.n_limits)

    def limit_index(self, limit: float) -> int:
        """The ladder index of the smallest limit >= ``limit`` (``inf`` if none is)."""
        return int(np.searchsorted(self.time_limits, limit, side="left"))

    # ----------------------------------------------------------------- internals
    def _checked_action(self, action: Any, core: FastCore) -> tuple[int, int, bool]:
        """(destination, limit index, whether the action was masked and replaced by its fallback)."""
        index = check_action_index(action, self.n_actions)
        destination, limit = divmod(index, self.n_limits)
        exceeded = core.exceeded
        if limit > exceeded:
            return destination, limit, False
        if self.invalid_action == "raise":
            raise ValueError(
                f"action={index} (destination {destination}, limit index {limit}, limit {self.time_limits[limit]:g}) "
                f"is masked: job {core.pending_id} already exceeded limit index {exceeded} "
                f"({self.time_limits[exceeded]:g}); choose a limit index > {exceeded}"
            )
        return destination, exceeded + 1, True

    def _info(self, core: FastCore, completed: list, invalid: bool) -> dict[str, Any]:
        return {
            "time": core.time,
            "n_jobs": core.n_jobs,
            "completed": completed,
            "action_mask": self._masks[core.exceeded + 1].copy(),
            "killed": core.killed,
            "n_outside": core.n_outside,
            "invalid_action": invalid,
        }


def _scenario_params(
    load: float, n_hosts: int, size_dist: Distribution, jobs: tuple[np.ndarray, np.ndarray] | None
) -> tuple[float, float, float]:
    """rho / (1 + rho), 1 / h and min(log10(1 + C²), 10): see the env's Observation Space."""
    if jobs is None:
        rho, scv = load, size_dist.scv
    else:
        arrivals, sizes = jobs
        span = float(arrivals[-1] - arrivals[0])
        rho = float(sizes.sum()) / (n_hosts * span) if span > 0 else math.inf
        scv = float(sizes.var()) / float(sizes.mean()) ** 2
    occupancy = 1.0 if math.isinf(rho) else rho / (1.0 + rho)
    return occupancy, 1.0 / n_hosts, min(math.log10(1.0 + scv), PARAMS_HIGH[2])


def _size_class_bounds(size_dist: Distribution, jobs: tuple[np.ndarray, np.ndarray] | None) -> tuple[float, ...]:
    """The sizes at ``SIZE_CLASS_QUANTILES``: of the explicit jobs, else of ``size_dist`` (its cdf, or 10^5 draws)."""
    if jobs is not None:
        return tuple(float(q) for q in np.quantile(jobs[1], SIZE_CLASS_QUANTILES))
    try:
        size_dist.cdf(size_dist.mean)
    except NotImplementedError:
        draws = draw_sizes("size_dist", size_dist, np.random.default_rng(0), 100_000)
        return tuple(float(q) for q in np.quantile(draws, SIZE_CLASS_QUANTILES))
    low, high = support_bracket(size_dist)
    if not math.isfinite(high):  # infinite variance (Pareto, alpha <= 2): widen until the top quantile is inside
        high = 10.0 * size_dist.mean
        while float(size_dist.cdf(high)) < SIZE_CLASS_QUANTILES[-1]:
            high *= 10.0
    log_low, log_high = math.log(low), math.log(high)

    def below(v: float, q: float) -> float:  # the bracket's ends exactly: exp(log(x)) may round below an atom x
        return float(size_dist.cdf(low if v <= log_low else high if v >= log_high else math.exp(v))) - q

    bounds = []
    for q in SIZE_CLASS_QUANTILES:
        if float(size_dist.cdf(low)) >= q:
            bounds.append(low)
            continue
        bounds.append(float(np.exp(optimize.brentq(below, log_low, log_high, args=(q,)))))
    return tuple(bounds)


def _parse_time_limits(time_limits: Any, size_dist: Distribution) -> np.ndarray:
    """The ladder: strictly increasing positive limits, with ``inf`` appended if it is missing."""
    if time_limits is None:
        return default_time_limits(size_dist)
    ladder = as_real_array("time_limits", time_limits)
    if ladder.ndim != 1:
        raise ValueError(f"time_limits={time_limits!r} is not allowed; it must be a flat sequence of numbers")
    if (~(ladder > 0)).any():
        raise ValueError(f"time_limits={ladder.tolist()!r} is not allowed; every limit must be > 0 (inf allowed)")
    if not np.isfinite(ladder[:-1]).all():
        index = int(np.flatnonzero(~np.isfinite(ladder[:-1]))[0])
        raise ValueError(
            f"time_limits={ladder.tolist()!r} is not allowed; time_limits[{index}]={float(ladder[index])!r}: only "
            "the last limit may be inf (run to completion)"
        )
    if not (np.diff(ladder) > 0).all():
        raise ValueError(f"time_limits={ladder.tolist()!r} is not allowed; limits must be strictly increasing")
    if ladder.size == 0 or not math.isinf(ladder[-1]):
        ladder = np.append(ladder, math.inf)
    return ladder
