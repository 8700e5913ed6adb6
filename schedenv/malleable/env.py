"""Gymnasium adapter for malleable parallel jobs (heSRPT paper), env id ``schedenv/Malleable-v0``.

Provenance: the model of Berg, Vesilo and Harchol-Balter, "heSRPT: Parallel scheduling to
minimize mean slowdown", Performance Evaluation 144 (2020), §2 (offline) and §5.3 (online).
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from schedenv.analysis.hesrpt import Weights, hesrpt_weighted_flow_time
from schedenv.deprecation import warn_deprecated
from schedenv.display import RENDER_WINDOW
from schedenv.envbase import SchedulingEnv
from schedenv.malleable.core import (
    ACTION_MODES,
    ALLOCATION_MODES,
    GLOBAL_FEATURES,
    SLOT_FEATURES,
    ReferenceCore,
    allocation,
    check_action,
    exponent_weights,
    hesrpt_slot_fractions,
    log_weights,
    nearest_exponent,
    residual_weights,
    signed_action,
)
from schedenv.malleable.fast import FastCore
from schedenv.malleable.metrics import episode_metrics
from schedenv.malleable.render import Interval, render_allocation, render_text
from schedenv.malleable.sim import MalleableParams, MalleableState
from schedenv.malleable.workload import parse_jobs
from schedenv.records import CompletedJobs, JobRecord
from schedenv.validation import (
    MAX_JOBS,
    MAX_WINDOW,
    check_choice,
    check_flag,
    check_int,
    check_positive,
    check_probability,
    check_scale,
    check_stream_horizon,
    refuse_ignored,
    reject_unknown_kwargs,
)
from schedenv.workloads import (
    Distribution,
    Pareto,
    PoissonArrivals,
    Power,
    Speedup,
    as_speedup,
    draw_sizes,
    poisson_job_stream,
)

PARAM_FEATURES = 4
"""Scenario features appended with ``observe_params=True``: p, load, objective, log10(1 + N) / 6."""


@reject_unknown_kwargs
class MalleableEnv(SchedulingEnv[np.ndarray, FastCore | ReferenceCore]):
    """Allocate N servers among malleable jobs to minimise mean slowdown or mean flow time.

    ## Description
    N identical servers are continuously divisible among the jobs present. A job of size x
    holding the fraction theta of the servers is served at rate s(theta N), with a concave speedup
    s (default s(k) = k^p); its allocation may change at any arrival or departure. With all jobs
    present at t = 0 (``mode="offline"``) the optimal policy is heSRPT (Theorem 5); with Poisson
    arrivals (``mode="online"``) Adaptive-heSRPT recomputes it at every epoch (§5.3).
    Decision epochs are arrivals and departures; the env jumps from one to the next.

    With s(k) = k^p the env runs on a compiled core (``fast.py``, numba); with other speedups on the
    pure simulator (``sim.py``). Both give the same trajectories (tested step by step).

    ## Action Space
    ``Box(0, 1, (max_jobs + 1,), float32)``: a nonnegative weight per window slot and, last, one
    weight for the group of jobs outside the window. The env normalises the weights of the
    occupied slots (and of the group, when it is not empty) into fractions theta that sum to 1; the
    group's fraction is split equally among its jobs. Weights of empty slots are ignored. If every
    counted weight is 0, the servers are split equally among all jobs present (EQUI). NaN, inf,
    values outside [0, 1] or a wrong shape raise ``ValueError`` and leave the state unchanged.
    The default allocation is work-conserving by construction: for a concave s, idle servers never
    help.
    With ``allocation="fractions"`` the counted weights are instead fractions of the servers: a sum
    <= 1 is used as is and the rest of the servers idle (the paper's model allows it, Lemma 1; HELL
    as worded needs it), a sum > 1 is normalised as above, and all-zero is still EQUI. Float32
    rounding of a full allocation then leaves at most ~1e-7 of the servers idle.

    Three more parameterisations, chosen with ``action_mode`` (with the default ``allocation``),
    let a policy express allocations that span orders of magnitude, as heSRPT's do, away from the
    edge of the Box where Gaussian policies clip:

    | action_mode  | action space             | slot s gets                                              | a = 0 is   |
    |--------------|--------------------------|----------------------------------------------------------|------------|
    | "weights"    | ``Box(0, 1, (K + 1,))``  | weight a_s (above)                                       | EQUI       |
    | "log"        | ``Box(-1, 1, (K + 1,))`` | weight 10^(6 a_s)                                        | EQUI       |
    | "residual"   | ``Box(-1, 1, (K + 1,))`` | heSRPT's fraction (Theorem 5; A-heSRPT online, §5.3)     | the paper  |
    |              |                          | for its job times 10^(2 a_s); the last entry scales the  | policy     |
    |              |                          | outside group's total fraction                           |            |
    | "exponent"   | ``Box(-1, 1, (1,))``     | heSRPT's fraction computed with the exponent             | the paper  |
    |              |                          | p' = p^(2^a) in place of p (one number per decision)     | policy     |

    The env computes the residual and exponent modes' allocations itself from the state (they
    need s(k) = k^p). The signed modes are refused with ``allocation="fractions"``. Online, the
    exponent mode spans the policies "A-heSRPT with a mis-specified p'" (§5.3), some of which beat
    A-heSRPT itself (docs/envs/malleable.md).
    Every element of the Box (all-zero included) is a valid action, so there is no mask and no
    ``invalid_action`` argument: ``action_space.sample()``, Gymnasium's and SB3's ``check_env`` and
    plain ``PPO("MlpPolicy", env)``, ``SAC`` or ``A2C`` (which clip or squash into the Box) work on
    the defaults.

    ## Observation Space
    ``Box(float32)`` of length ``3 * max_jobs + 3``. Slots are ordered by least remaining size
    first (ties by arrival); slot i occupies entries ``3i .. 3i+2``. ``scale`` is the mean size of
    the workload (its median when the mean is infinite, as for Pareto alpha <= 1).

    | index            | meaning                                        | min | max |
    |------------------|------------------------------------------------|-----|-----|
    | 3i               | slot i holds a job (1) or is padding (0)       | 0   | 1   |
    | 3i + 1           | log1p(remaining size / scale)                  | 0   | inf |
    | 3i + 2           | log1p(original size / scale)                   | 0   | inf |
    | 3K               | log1p(jobs in system)                          | 0   | inf |
    | 3K + 1           | log1p(jobs outside the window)                 | 0   | inf |
    | 3K + 2           | log1p(remaining work outside the window/scale) | 0   | inf |

    With ``observe_params=True`` four scenario features follow (length ``3K + 7``), so that one
    agent can be trained across scenarios (the default observation has none of them):

    | index            | meaning                                                       | min | max |
    |------------------|---------------------------------------------------------------|-----|-----|
    | 3K + 3           | speedup exponent p of s(k) = k^p (the episode's, with         | 0   | 1   |
    |                  | ``p_range``); other speedups: elasticity N s'(N) / s(N)       |     |     |
    | 3K + 4           | load rho (online with Poisson arrivals, the episode's with    | 0   | inf |
    |                  | ``load_range``; 0 offline or with explicit ``jobs``)          |     |     |
    | 3K + 5           | objective: 1 slowdown, 0 flow time                            | 0   | 1   |
    | 3K + 6           | log10(1 + N) / 6 (1 at a million servers)                     | 0   | inf |

    The layout is exposed as ``env.unwrapped.max_jobs``, ``slot_features`` (3) and
    ``global_features`` (3), for permutation-aware feature extractors.

    ## Rewards
    Minus the objective accrued since the last step: the integral over the step of the sum of
    the present jobs' weights, w_i = 1 for ``"flow_time"`` and w_i = s(N) / x_i for
    ``"slowdown"`` (Corollary 1). The undiscounted return is exactly minus the episode's total
    flow time, or total slowdown sum_i T_i / (x_i / s(N)).

    Every reward is multiplied by ``reward_scale`` (1.0 by default; ``"auto"``
    makes the paper policy's return about -1 in this scenario, docs/envs/index.md); so is the return,
    while ``episode_metrics`` are never scaled.

    ## Starting State
    With ``p_range`` the episode's p is drawn first from the reset's generator, then with
    ``load_range`` the episode's load, then the workload (whose online arrival rate depends on the
    load and on s(N) = N^p); every contender sees the same p and load for a seed.
    Offline: the jobs of ``jobs``, or ``n_jobs`` sizes drawn from ``size_dist``, all at t = 0.
    Online: ``n_arrivals`` Poisson arrivals at rate lambda = load * s(N) / E[X] (so load is
    rho = lambda E[X] / s(N), the work brought per unit time relative to one job's full rate);
    the episode starts at the first arrival. The workload is drawn at ``reset`` from the seed, so
    every contender sees the same jobs for the same seed.

    ## Episode End
    Terminates when every job has arrived and completed. Never truncates by itself; wrap it in
    ``TimeLimit`` to cut episodes (``evaluate`` refuses truncated episodes).

    ## Information
    Every step and reset: ``time``, ``n_jobs`` (in system), ``n_outside`` (jobs outside the window),
    ``completed`` (a ``JobRecord`` per job finished during the step: job_id, arrival, size,
    completion, slowdown), ``invalid_action`` (always False: every element of the Box is a valid
    action; the key is there for uniformity with the masked envs, whose fallback sets it). At the
    end, ``episode_metrics``: mean_response_time (mean flow time), mean_slowdown, total_flow_time,
    total_slowdown, makespan, n_completed, overflow_fraction (the fraction of decision epochs with
    jobs outside the window).
    With ``reference`` (a baseline name of this env), the last step also has ``reference_metrics``:
    that baseline's ``episode_metrics`` on the very same episode (docs/envs/index.md).
    Offline with s(k) = k^p, it also has ``optimal_metrics``: the optimal total and mean of the
    objective for the episode's jobs (Theorem 6), a bound no policy beats.

    ## Arguments

    | argument       | default           | meaning                                                                |
    |----------------|-------------------|------------------------------------------------------------------------|
    | mode           | "offline"         | "offline" (jobs at t = 0) or "online" (Poisson arrivals)               |
    | jobs           | None              | explicit sizes (offline) or (arrival, size) pairs                      |
    | n_jobs         | 8                 | offline job count when ``jobs`` is None                                |
    | size_dist      | Pareto(alpha=1.5) | size distribution (a ``Distribution``)                                 |
    | load           | 0.8               | online load rho = lambda E[X] / s(N)                                   |
    | n_arrivals     | 1000              | online arrivals per episode                                            |
    | n_servers      | 1000.0            | N (a float: servers are divisible)                                     |
    | speedup        | 0.5               | p for s(k) = k^p, or a ``Speedup`` / callable                          |
    | objective      | "slowdown"        | "slowdown" or "flow_time"                                              |
    | max_jobs       | 16                | window size K                                                          |
    | render_mode    | None              | "ansi", "rgb_array" or "human" (pygame window or stdout)               |
    | allocation     | "normalized"      | "normalized" (every server busy) or "fractions" (see Action Space)     |
    | observe_params | False             | append p, load, objective, log N (see Observation Space)               |
    | p_range        | None              | (lo, hi): p ~ U[lo, hi) drawn at every reset; replaces ``speedup``'s p |
    | action_mode    | "weights"         | "weights", "log", "residual" or "exponent" (see Action Space)          |
    | load_range     | None              | (lo, hi): online load ~ U[lo, hi) drawn at every reset; replaces load  |
    | reference      | None              | a baseline name: its metrics on the same episode (Information)         |
    | reward_scale   | 1.0               | rewards x this number > 0, or "auto" (see Rewards)                     |

    >>> import gymnasium as gym, schedenv
    >>> env = gym.make("schedenv/Malleable-v0", jobs=[1.0, 1.0], n_servers=10.0, speedup=0.5,
    ...                objective="flow_time")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

    ## References
    B. Berg, R. Vesilo, M. Harchol-Balter. heSRPT: Parallel scheduling to minimize mean slowdown.
    Performance Evaluation 144 (2020) 102147.

    ## Version History
    - v0: initial version; ``allocation``, ``observe_params``, ``p_range`` and ``info["invalid_action"]``
      added later (defaults unchanged).
    - v0: ``reference`` (``info["reference_metrics"]``) and ``reward_scale`` added (defaults unchanged).
    """

    def __init__(
        self,
        mode: str = "offline",
        jobs: Any = None,
        n_jobs: int = 8,
        size_dist: Distribution | None = None,
        load: float = 0.8,
        n_arrivals: int = 1000,
        n_servers: float = 1000.0,
        speedup: float | Speedup | Any = 0.5,
        objective: str = "slowdown",
        max_jobs: int = 16,
        render_mode: str | None = None,
        allocation: str = "normalized",
        observe_params: bool = False,
        p_range: tuple[float, float] | None = None,
        action_mode: str = "weights",
        load_range: tuple[float, float] | None = None,
        reference: str | None = None,
        reward_scale: float | str = 1.0,
    ) -> None:
        arguments = dict(locals())  # before any other statement: the reference run rebuilds the env from them
        self.mode = check_choice("mode", mode, ("offline", "online"))
        self.objective = check_choice("objective", objective, ("slowdown", "flow_time"))
        self.n_servers = check_scale("n_servers", n_servers)
        self.speedup = as_speedup(speedup, max_servers=self.n_servers)
        self.max_jobs = check_int("max_jobs", max_jobs, maximum=MAX_WINDOW)
        self._set_up_rendering(render_mode)
        if size_dist is not None and not isinstance(size_dist, Distribution):
            raise ValueError(f"size_dist={size_dist!r} is not allowed; it must be a schedenv.workloads.Distribution")
        self.size_dist = size_dist if size_dist is not None else Pareto(alpha=1.5)
        self.jobs = parse_jobs(jobs, self.mode)
        if self.jobs is not None:
            ignored = {"n_jobs": n_jobs, "size_dist": size_dist, "load": load, "n_arrivals": n_arrivals}
            refuse_ignored(MalleableEnv, "explicit jobs", ignored)
        self.n_jobs = check_int("n_jobs", n_jobs, maximum=MAX_JOBS)
        self.n_arrivals = check_int("n_arrivals", n_arrivals, maximum=MAX_JOBS)
        self.load = check_positive("load", load)
        self.allocation = check_choice("allocation", allocation, ALLOCATION_MODES)
        self.action_mode = _check_action_mode(action_mode, self.allocation, self.speedup)
        self.observe_params = check_flag("observe_params", observe_params)
        self.p_range = _check_p_range(p_range, self.speedup)
        if self.p_range is not None:
            self.speedup = Power(self.p_range[1])  # the largest p: the strictest load check below
            if not self.observe_params:
                warnings.warn(
                    f"p_range={p_range!r} changes p every episode but observe_params=False hides it from the agent; "
                    "pass observe_params=True so that a policy can adapt to p",
                    stacklevel=2,
                )
        self.load_range = _check_load_range(load_range, self.mode, self.jobs is not None)
        if self.load_range is not None:
            self.load = self.load_range[1]  # the largest load: the strictest stability check below
            if not self.observe_params:
                warnings.warn(
                    f"load_range={load_range!r} changes the load every episode but observe_params=False hides it "
                    "from the agent; pass observe_params=True so that a policy can adapt to the load",
                    stacklevel=2,
                )
        self.arrival_process: PoissonArrivals | None = None
        if self.mode == "online" and self.jobs is None:
            self.arrival_process = self._online_arrivals()
        self.scale = _size_scale(self.size_dist, self.jobs)

        self.slot_features = SLOT_FEATURES
        self.global_features = GLOBAL_FEATURES
        self.param_features = PARAM_FEATURES if self.observe_params else 0
        length = SLOT_FEATURES * self.max_jobs + GLOBAL_FEATURES + self.param_features
        high = np.full(length, np.inf, dtype=np.float32)
        high[0 : SLOT_FEATURES * self.max_jobs : SLOT_FEATURES] = 1.0
        if self.observe_params:
            high[-4], high[-2] = 1.0, 1.0  # p (or elasticity) and the objective flag
        self.observation_space = spaces.Box(0.0, high, dtype=np.float32)
        low = 0.0 if self.action_mode == "weights" else -1.0
        self.action_space = spaces.Box(low, 1.0, (self.action_length,), dtype=np.float32)

        self._params: MalleableParams | None = None
        self._core = None
        self._completed = CompletedJobs()
        self._epochs = 0
        self._overflow_epochs = 0
        self._history: deque[Interval] = deque(maxlen=RENDER_WINDOW)  # kept for rgb_array / human only
        self._params_observed: np.ndarray | None = None

        self._set_up_reference("schedenv/Malleable-v0", arguments)

    def _online_arrivals(self) -> PoissonArrivals:
        mean = self.size_dist.mean
        if not math.isfinite(mean):
            raise ValueError(
                f"size_dist={self.size_dist!r} has an infinite mean, so load={self.load!r} is undefined "
                "in online mode; use a size distribution with a finite mean (e.g. Pareto alpha > 1)"
            )
        check_stream_horizon(self.load, self.n_arrivals)
        if self.load >= 1:
            if isinstance(self.speedup, Power) and self.speedup.p == 1.0:
                raise ValueError(
                    f"load={self.load!r} is not allowed with linear speedup (p = 1): every policy is "
                    "unstable; use load < 1"
                )
            warnings.warn(
                f"load={self.load!r} >= 1: policies that give all servers to one job (SRPT, RS) are unstable; only "
                "policies that spread servers (EQUI, heSRPT) can keep up. Use load < 1 to compare all policies.",
                stacklevel=3,
            )
        return PoissonArrivals.for_load(self.load, mean, float(self.speedup(self.n_servers)))

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        self._start_episode(seed)
        arrival_times, sizes = self._draw_episode()
        self._params = MalleableParams(self.n_servers, self.speedup, self.objective, arrival_times, sizes)
        # The compiled core covers s(k) = k^p; other speedups run on the reference simulator.
        core_class = FastCore if isinstance(self.speedup, Power) else ReferenceCore
        self._core = core_class(self._params, self.max_jobs, self.scale, self.allocation)
        self._params_observed = self.scenario_params if self.observe_params else None
        self._completed, self._epochs, self._overflow_epochs = CompletedJobs(), 0, 0
        self._history.clear()
        self._count_overflow()
        self._show()
        return self._observation(), self._info([])

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        core = self._live_core()
        before = (core.time, core.state.job_id) if self.render_mode in ("rgb_array", "human") else None
        outcome, theta = core.step(self._weights(action))
        if before is not None:
            self._history.append((before[0], core.time, before[1], theta.copy()))
        self._completed.extend(outcome.completed)
        self._epochs += 1
        self._count_overflow()
        terminated = core.done
        info = self._info(outcome.completed)
        if terminated:
            self._end_episode(info, self._episode_metrics())
            if self.reference is not None and self.mode == "offline" and isinstance(self.speedup, Power):
                info["optimal_metrics"] = self._optimal_metrics()
        self._show()
        return self._observation(), -outcome.accrued_objective * self.reward_scale, terminated, False, info

    def _render_text(self) -> str:
        core = self._require_core()
        return render_text(core.state, core.window, self.n_servers)

    def _render_picture(self) -> np.ndarray:
        return render_allocation(self._history, self._require_core().time)

    # ----------------------------------------------------------------- for baselines and agents
    @property
    def state(self) -> MalleableState:
        """The simulator state (read-only arrays of the jobs present, in arrival order)."""
        return self._require_core().state

    @property
    def window(self) -> np.ndarray:
        """Indices into ``state``'s arrays of the jobs in the window, in slot order."""
        return self._require_core().window

    @property
    def params(self) -> MalleableParams:
        """The episode's fixed parameters (servers, speedup, objective, job stream)."""
        return self._require_core().params

    def action_from_allocation(self, theta: np.ndarray) -> np.ndarray:
        """The action that makes the env apply ``theta`` (one fraction per job in ``state`` order).

        In ``action_mode`` "log" or "residual" it is the nearest action of that Box
        (``core.signed_action``): exact to float32 rounding unless a fraction lies beyond the Box's
        edge (a zero, as SRPT gives, becomes 1e-12 of the largest weight, or 1/100 of heSRPT's).
        In "exponent" mode it is the exponent whose heSRPT allocation is nearest
        (``core.nearest_exponent``): exact for heSRPT (a = 0), approximate for other policies.

        Exact when no job is outside the window; otherwise the group gets the sum of its jobs'
        fractions, which the env then splits equally among them. With ``allocation="fractions"`` a
        theta summing to less than 1 is kept (its idle share stays idle); in the default mode the env
        scales it up to every server.
        """
        core = self._require_core()
        n_jobs, window = core.n_jobs, core.window
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (n_jobs,):
            raise ValueError(f"theta has shape {theta.shape}; expected ({n_jobs},), one entry per job present")
        action = np.zeros(self.max_jobs + 1, dtype=np.float32)
        total = theta.sum()
        if total <= 0:
            return action
        scaled = theta / (max(total, 1.0) if self.allocation == "fractions" else total)
        action[: window.size] = scaled[window]
        if n_jobs > window.size:
            outside = np.ones(n_jobs, dtype=bool)
            outside[window] = False
            action[-1] = scaled[outside].sum()
        # Rounding may leave an entry a hair outside [0, 1]; the space's bounds are exact.
        action = np.clip(action, 0.0, 1.0)
        if self.action_mode == "weights":
            return action
        if self.action_mode == "log":
            signed, exact = signed_action(action, "log")
        elif self.action_mode == "residual":
            base = hesrpt_slot_fractions(core.state.remaining, core.state.weight, window, self.max_jobs, self._p())
            signed, exact = signed_action(action, "residual", base)
        else:
            state = core.state
            signed, exact = nearest_exponent(action, state.remaining, state.weight, window, self.max_jobs, self._p())
        if not exact:
            warnings.warn(
                f"action_mode={self.action_mode!r} cannot express this allocation exactly (a fraction lies beyond "
                "the Box's edge); the nearest action is used. Evaluate such a policy with action_mode='weights'",
                stacklevel=2,
            )
        return signed

    def allocation_from_action(self, action: Any) -> np.ndarray:
        """Validate ``action`` and turn it into fractions theta aligned with ``state`` (see Action Space)."""
        core = self._require_core()
        return allocation(check_action(self._weights(action), self.max_jobs), core.window, core.n_jobs, self.allocation)

    @property
    def action_length(self) -> int:
        """Entries of an action: 1 in the ``"exponent"`` mode, else ``max_jobs + 1`` (see Action Space)."""
        return 1 if self.action_mode == "exponent" else self.max_jobs + 1

    @property
    def scenario_params(self) -> np.ndarray:
        """The ``observe_params`` slots of the current episode (see Observation Space)."""
        if isinstance(self.speedup, Power):
            exponent = self.speedup.p
        else:  # the local exponent of s at N: p for k^p, within [0, 1] for a concave s with s(0) = 0
            n = self.n_servers
            elasticity = n * float(self.speedup.derivative(n)) / float(self.speedup(n))
            exponent = min(max(elasticity, 0.0), 1.0)
        load = self.load if self.arrival_process is not None else 0.0
        objective = 1.0 if self.objective == "slowdown" else 0.0
        return np.array([exponent, load, objective, math.log10(1.0 + self.n_servers) / 6.0], dtype=np.float32)

    def scenario_features(self) -> np.ndarray:
        """Deprecated: ``scenario_params`` (docs/glossary.md)."""
        warn_deprecated("MalleableEnv.scenario_features()", "MalleableEnv.scenario_params")
        return self.scenario_params

    # ----------------------------------------------------------------- internals
    def _weights(self, action: Any) -> Any:
        """The ``"weights"``-mode action that ``action`` stands for in this env's ``action_mode``."""
        if self.action_mode == "weights":
            return action
        values = check_action(action, self.max_jobs, low=-1.0, length=self.action_length)
        if self.action_mode == "log":
            return log_weights(values)
        state, p = self.state, self._p()
        if self.action_mode == "exponent":
            return exponent_weights(float(values[0]), state.remaining, state.weight, self.window, self.max_jobs, p)
        return residual_weights(values, state.remaining, state.weight, self.window, p)

    def _p(self) -> float:
        assert isinstance(self.speedup, Power)  # the residual and exponent modes are refused otherwise
        return self.speedup.p

    def _observation(self) -> np.ndarray:
        observation = self._require_core().observation()
        if self._params_observed is None:
            return observation
        return np.concatenate([observation, self._params_observed])

    def _draw_episode(self) -> tuple[np.ndarray, np.ndarray]:
        """Draw the episode from ``np_random``: p (with ``p_range``), then the load (with ``load_range``),
        then the workload."""
        if self.p_range is not None:
            self.speedup = Power(float(self.np_random.uniform(*self.p_range)))
        if self.load_range is not None:
            self.load = float(self.np_random.uniform(*self.load_range))
        if self.arrival_process is not None and (self.p_range is not None or self.load_range is not None):
            rate_at_n = float(self.speedup(self.n_servers))  # lambda = load s(N) / E[X] follows p and the load
            self.arrival_process = PoissonArrivals.for_load(self.load, self.size_dist.mean, rate_at_n)
        return self._draw_workload()

    def _draw_workload(self) -> tuple[np.ndarray, np.ndarray]:
        if self.jobs is not None:
            return self.jobs
        if self.mode == "offline":
            return np.zeros(self.n_jobs), draw_sizes("size_dist", self.size_dist, self.np_random, self.n_jobs)
        assert self.arrival_process is not None
        return poisson_job_stream(self.n_arrivals, self.arrival_process, self.size_dist, self.np_random)

    def _count_overflow(self) -> None:
        core = self._require_core()
        self._overflow_epochs += core.n_jobs > self.max_jobs

    def _info(self, completed: list[JobRecord]) -> dict[str, Any]:
        core = self._require_core()
        return {
            "time": core.time,
            "n_jobs": core.n_jobs,
            "n_outside": max(core.n_jobs - self.max_jobs, 0),
            "completed": completed,
            "invalid_action": False,
        }

    def _optimal_metrics(self) -> dict[str, float]:
        """Theorem 6: the optimal total (and mean) objective of this offline episode's jobs."""
        assert isinstance(self.speedup, Power)
        sizes = self.params.sizes
        weights: Weights = "slowdown" if self.objective == "slowdown" else "flow_time"
        total = hesrpt_weighted_flow_time(sizes, self.speedup.p, self.n_servers, weights)
        if self.objective == "slowdown":
            return {"total_slowdown": total, "mean_slowdown": total / sizes.size}
        return {"total_flow_time": total, "mean_response_time": total / sizes.size}

    def _episode_metrics(self) -> dict[str, float]:
        return episode_metrics(self._completed, self._require_core().time, self._overflow_epochs, self._epochs)


def _check_pair(name: str, value: Any, check: Callable[[str, float], float], allowed: str) -> tuple[float, float]:
    """``value`` as (lo, hi) with lo <= hi, each end passing ``check`` (``allowed`` words the bounds)."""
    try:
        lo, hi = (float(end) for end in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is not allowed; give a pair (lo, hi) with {allowed}") from None
    check(f"{name}[0]", lo)
    check(f"{name}[1]", hi)
    if lo > hi:
        raise ValueError(f"{name}={value!r} is not allowed; it needs lo <= hi")
    return lo, hi


def _check_load_range(load_range: Any, mode: str, explicit_jobs: bool) -> tuple[float, float] | None:
    """``load_range`` as (lo, hi) with 0 < lo <= hi, for online Poisson arrivals only."""
    if load_range is None:
        return None
    pair = _check_pair("load_range", load_range, check_positive, "0 < lo <= hi")
    if mode != "online" or explicit_jobs:
        raise ValueError(
            f"load_range={load_range!r} draws the load of Poisson arrivals; "
            "it needs mode='online' without explicit jobs"
        )
    return pair


def _check_p_range(p_range: Any, speedup: Speedup) -> tuple[float, float] | None:
    """``p_range`` as (lo, hi) with 0 < lo <= hi <= 1, for a power speedup only."""
    if p_range is None:
        return None
    pair = _check_pair("p_range", p_range, check_probability, "0 < lo <= hi <= 1")
    if not isinstance(speedup, Power):
        raise ValueError(
            f"p_range={p_range!r} draws p of s(k) = k^p, but speedup={speedup!r}; leave speedup as a number"
        )
    return pair


def _check_action_mode(action_mode: Any, allocation_mode: str, speedup: Speedup) -> str:
    """``action_mode`` if it fits the env's ``allocation`` and speedup (see Action Space)."""
    mode = check_choice("action_mode", action_mode, ACTION_MODES)
    if mode != "weights" and allocation_mode != "normalized":
        raise ValueError(
            f"action_mode={mode!r} is not allowed with allocation={allocation_mode!r}; "
            "its weights are normalised, so use allocation='normalized'"
        )
    if mode in ("residual", "exponent") and not isinstance(speedup, Power):
        raise ValueError(
            f"action_mode={mode!r} adjusts heSRPT, which needs s(k) = k^p, but speedup={speedup!r}; "
            "use a number p for speedup, or action_mode 'weights' or 'log'"
        )
    return mode


def _size_scale(size_dist: Distribution, jobs: tuple[np.ndarray, np.ndarray] | None) -> float:
    """The size unit of the observation: the mean size (the median if the mean is infinite)."""
    if jobs is not None:
        return float(jobs[1].mean())
    mean = size_dist.mean
    if math.isfinite(mean):
        return float(mean)
    return float(np.median(draw_sizes("size_dist", size_dist, np.random.default_rng(0), 4097)))
