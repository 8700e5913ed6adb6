"""Task-assignment policies of the TAGS paper (Harchol-Balter, "Task assignment with unknown
duration", J. ACM 2002) for ``schedenv/Dispatch-v0``.

Every policy returns a ``Discrete`` action ``destination * n_limits + limit_index``. Policies
other than TAGS never set a finite limit (index ``n_limits - 1`` is ``inf``), so their jobs are
never killed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from baselines.base import Policy
from schedenv import family as families
from schedenv.analysis.queueing import sita_e_cutoffs
from schedenv.analysis.tags import TagsObjective, tags_optimal_cutoffs
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.sim import StateView
from schedenv.validation import check_int

ENV_ID = "schedenv/Dispatch-v0"
REFERENCE = "tags-slowdown"


def _env(env: gym.Env) -> DispatchEnv:
    inner = env.unwrapped
    if not isinstance(inner, DispatchEnv):
        raise TypeError(f"this policy acts on {ENV_ID}, not on {type(inner).__name__}")
    return inner


def _run_to_completion(env: DispatchEnv, destination: int) -> np.int64:
    return np.int64(env.encode_action(destination, env.n_limits - 1))


def _need_sizes(env: DispatchEnv, name: str) -> None:
    if not env.size_known:
        raise ValueError(f"policy {name!r} needs job sizes; build the env with size_known=True")


class RandomDispatch(Policy):
    """Random (§1, §5.1): each job goes to a host chosen uniformly, run to completion.

    Its random stream is seeded from the env's generator at ``reset`` (after the workload was drawn).
    """

    name: ClassVar[str] = "random"

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def reset(self, env: gym.Env) -> None:
        self._rng = np.random.default_rng(int(_env(env).np_random.integers(2**63)))

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        return _run_to_completion(inner, int(self._rng.integers(inner.n_hosts)))


class RoundRobin(Policy):
    """Round-Robin (§1): the i-th job goes to host i mod h, run to completion."""

    name: ClassVar[str] = "round-robin"

    def __init__(self) -> None:
        self._next = 0

    def reset(self, env: gym.Env) -> None:
        self._next = 0

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        host = self._next % inner.n_hosts
        self._next += 1
        return _run_to_completion(inner, host)


class ShortestQueue(Policy):
    """Shortest-Queue (§1): the host with the fewest jobs (queued plus running); ties to the lowest index."""

    name: ClassVar[str] = "shortest-queue"

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        state = inner.state
        return _run_to_completion(inner, int(np.argmin(state.queue_length + state.busy)))


class LeastWorkRemaining(Policy):
    """Least-Work-Remaining (§1): the host with the least remaining work; needs ``size_known=True``."""

    name: ClassVar[str] = "least-work-remaining"

    def reset(self, env: gym.Env) -> None:
        _need_sizes(_env(env), self.name)

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        return _run_to_completion(inner, int(np.argmin(inner.state.host_work)))


class CentralQueue(Policy):
    """Central-Queue (§1, Fig. 2): every job waits FCFS at the dispatcher for the first idle host.

    Needs no sizes and gives the same completion times as Least-Work-Remaining ([12] in the paper).
    """

    name: ClassVar[str] = "central-queue"

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        return _run_to_completion(inner, inner.central)


class SitaE(Policy):
    """SITA-E (§2; Harchol-Balter, Crovella, Murta 1999): host i serves the sizes of the i-th of h
    intervals that each carry an equal share of the load; needs ``size_known=True``.
    """

    name: ClassVar[str] = "sita-e"

    def __init__(self) -> None:
        self.cutoffs = np.empty(0)

    def reset(self, env: gym.Env) -> None:
        inner = _env(env)
        _need_sizes(inner, self.name)
        self.cutoffs = sita_e_cutoffs(inner.size_dist, inner.n_hosts)

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        host = int(np.searchsorted(self.cutoffs, inner.pending_job.size, side="left"))
        return _run_to_completion(inner, host)


class Tags(Policy):
    """TAGS (§4): attempt j (0-based) goes to host j with limit s_{j+1}; the last host runs to completion.

    The cutoffs minimise the appendix's analysis for the env's size distribution, load and host
    count (``tags_optimal_cutoffs``), unless ``cutoffs`` (h - 1 values) is given; each is then
    placed on the env's ladder at the nearest limit in log scale, keeping them strictly increasing.
    """

    name: ClassVar[str] = "tags"
    objective: ClassVar[TagsObjective] = "slowdown"

    def __init__(self, cutoffs: Any = None) -> None:
        self.requested = None if cutoffs is None else np.asarray(cutoffs, dtype=np.float64).ravel()
        self.cutoffs = np.empty(0)
        self.limit_indices: list[int] = []
        self._key: tuple | None = None

    def reset(self, env: gym.Env) -> None:
        inner = _env(env)
        key = (inner.size_dist.identity, inner.load, inner.n_hosts, tuple(inner.time_limits))
        if key == self._key:
            return
        if self.requested is not None:
            cutoffs = self.requested
        else:
            cutoffs = tags_optimal_cutoffs(inner.size_dist, inner.load, inner.n_hosts, self.objective).cutoffs
        self.limit_indices = place_on_ladder(cutoffs, inner.time_limits)
        self.cutoffs = inner.time_limits[self.limit_indices[:-1]]
        self._key = key

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        attempt = len(inner.pending_job.hosts)
        return np.int64(inner.encode_action(attempt, self.limit_indices[attempt]))

    @classmethod
    def at_rungs(cls, time_limits: np.ndarray, rungs: tuple[int, ...]) -> Tags:
        """The rule at the ladder indices ``rungs``, the coordinates that ``search_rungs`` moves: here the h - 1
        cutoffs."""
        return cls(cutoffs=time_limits[list(rungs)])

    @classmethod
    def rung_range(cls, position: int, rungs: tuple[int, ...], n_finite: int) -> range:
        """The finite rungs that coordinate ``position`` of ``rungs`` may take with the others fixed: the cutoffs
        stay strictly increasing."""
        low = rungs[position - 1] + 1 if position > 0 else 0
        high = rungs[position + 1] if position + 1 < len(rungs) else n_finite
        return range(low, high)

    @classmethod
    def search_start(cls, inner: DispatchEnv) -> list[int]:
        """Where ``search_rungs`` starts on ``inner``'s scenario: TAGS-slowdown's rungs (the analysis's)."""
        start = TagsSlowdown()  # whatever this policy played before
        start.reset(inner)
        return start.limit_indices[:-1]

    def play_rungs(self, time_limits: np.ndarray, rungs: list[int]) -> None:
        """Play the ladder indices ``rungs`` (``at_rungs``'s coordinates) from now on."""
        self.limit_indices = [*rungs, time_limits.size - 1]
        self.cutoffs = time_limits[self.limit_indices[:-1]]

    def kernel_rungs(self) -> list[int]:
        """What the compiled rule reads after the ladder index per attempt (``baselines.kernels.dispatch``):
        nothing for TAGS itself."""
        return []


class TagsSlowdown(Tags):
    """TAGS-opt-slowdown (§4): cutoffs minimising the analysis's mean slowdown."""

    name: ClassVar[str] = "tags-slowdown"
    objective: ClassVar[TagsObjective] = "slowdown"


class TagsWaiting(Tags):
    """TAGS-opt-waitingtime (§4): cutoffs minimising the analysis's mean waiting time."""

    name: ClassVar[str] = "tags-waiting"
    objective: ClassVar[TagsObjective] = "waiting_time"


class TagsFair(Tags):
    """TAGS-opt-fairness (§4): cutoffs equalising the per-host mean slowdowns E[S_i]."""

    name: ClassVar[str] = "tags-fair"
    objective: ClassVar[TagsObjective] = "fairness"


def _long_host_idle(state: StateView) -> bool:
    """The last (long-job) host idles with nothing queued there."""
    return not state.busy[-1] and state.queue_length[-1] == 0


class TagsSlowdownCycleStealing(TagsSlowdown):
    """TAGS-opt-slowdown with cycle stealing (not in the TAGS paper): a new job, whose first attempt TAGS
    sends to host 0 under the first cutoff, goes instead to the last host, to run to completion, when host
    0 is busy and the last host is idle with nothing queued there or at the dispatcher. Otherwise it acts
    as ``tags-slowdown``, with the same cutoffs.

    The rule the fine-tuned Dispatch agents learnt (docs/rl/index.md, "Dispatch beats TAGS-slowdown"): a host
    that TAGS keeps for long jobs idles while short ones queue at host 0; stealing its idle cycles for a
    new job cannot delay a long job that is already present (there is none), and a long job that arrives
    later waits at most the stolen job's run.
    """

    name: ClassVar[str] = "tags-slowdown-cs"

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        if not inner.pending_job.hosts:
            state = inner.state
            if state.busy[0] and _long_host_idle(state) and state.central_length == 0:
                return _run_to_completion(inner, inner.n_hosts - 1)
        return super().act(observation, env)


class TagsCentralQueue(TagsSlowdown):
    """TAGS whose first stage is the central queue (not in the TAGS paper): a new job joins the central queue
    with the first cutoff as its limit, and a killed job goes on as in TAGS (attempt j >= 1 to host j).

    Hosts serve their own queue before the central one (the env's Central-Queue rule), so host 0 runs the
    first stage, while a later host takes a new job from the central queue only when it idles with nothing
    of its own queued: a TAGS form of cycle stealing with a central queue (CS-CQ, analysed for known job
    classes by Harchol-Balter, Li, Osogami, Scheller-Wolf and Squillante, ICDCS 2003), where
    ``tags-slowdown-cs`` steals at dispatch (their CS-ID, SPAA 2003). A stolen job keeps the first cutoff, so
    a long job arriving later waits at most that long for it, and a new job is bound to a host only when one
    is free.
    Registered at a cutoff chosen for it: ``tags-cq-tuned``.
    """

    name: ClassVar[str] = "tags-slowdown-cq"

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        if not inner.pending_job.hosts:
            return np.int64(inner.encode_action(inner.central, self.limit_indices[0]))
        return super().act(observation, env)


TUNING_SEEDS: tuple[int, ...] = tuple(range(2**41, 2**41 + 20))
"""The episodes the tuned TAGS rules choose their cutoffs on: twenty seeds above every range of
``agents.protocol`` (as ``reward_scale="auto"``'s, docs/envs/index.md), so the choice depends on the
scenario only, never on a test, sealed or validation seed."""

_TUNED: dict[tuple, list[int]] = {}
"""The tuned rules' ladder indices per (rule, scenario) (``_scenario_key``), searched once per process."""


def _scenario_key(inner: DispatchEnv) -> tuple:
    """What an episode of ``inner`` depends on, besides its seed: the scenario that the search is kept for."""
    jobs = None if inner.jobs is None else hashlib.sha256(b"".join(a.tobytes() for a in inner.jobs)).hexdigest()
    limits = tuple(inner.time_limits)
    return (inner.size_dist.identity, inner.load, inner.n_hosts, limits, inner.n_arrivals, inner.objective, jobs)


class TunedCutoffs(Tags):
    """A TAGS rule (``rule``) at the cutoffs that minimise the env's own objective under it, found by simulation.

    TAGS-slowdown's cutoffs come from the appendix's analysis of TAGS alone. Under a rule that lets idle
    later hosts take new jobs, host 0 sheds work, so a later cutoff loses less to kills
    (docs/baselines/dispatch.md, "Cutoffs for cycle stealing"). The search (``search_rungs``) starts at the
    rule's ``search_start`` (TAGS-slowdown's rungs) and moves one coordinate at a time to the best rung of
    the env's ladder that the rule allows (``rung_range``: cutoffs kept increasing), until no move lowers
    the mean total objective (minus the return) over ``TUNING_SEEDS`` on the env's scenario; every rung sees
    the same episodes. The episodes run on the family's compiled fast path, which the baselines reach through
    the family registry at run time (as the envs reach it for ``reference``, docs/envs/index.md). Given
    ``cutoffs``, it plays those and searches nothing.
    """

    rule: ClassVar[type[Tags]]
    """The rule whose cutoffs are searched (the tuned policy acts as it)."""

    def reset(self, env: gym.Env) -> None:
        inner = _env(env)
        if self.requested is not None or inner.n_hosts == 1:
            super().reset(env)
            return
        key = (self.rule, *_scenario_key(inner))
        if key not in _TUNED:
            _TUNED[key] = search_rungs(inner, self.rule, self.rule.search_start(inner))
        self.play_rungs(inner.time_limits, _TUNED[key])


class TagsCycleStealingTuned(TunedCutoffs, TagsSlowdownCycleStealing):
    """TAGS with cycle stealing (``tags-slowdown-cs``'s rule) at cutoffs chosen for it by simulation
    (``TunedCutoffs``; not in the TAGS paper)."""

    name: ClassVar[str] = "tags-cs-tuned"
    rule: ClassVar[type[Tags]] = TagsSlowdownCycleStealing


class TagsCentralQueueTuned(TunedCutoffs, TagsCentralQueue):
    """TAGS with a central first stage (``TagsCentralQueue``: cycle stealing with a central queue) at cutoffs
    chosen for it by simulation (``TunedCutoffs``; not in the TAGS paper)."""

    name: ClassVar[str] = "tags-cq-tuned"
    rule: ClassVar[type[Tags]] = TagsCentralQueue


class TagsCentralQueueIdle(TagsCentralQueue):
    """TAGS with a central first stage (``TagsCentralQueue``) whose new job's limit depends on the long-job host
    (not in the TAGS paper): while the last host idles with nothing queued there, a new job joins the central
    queue with ``idle_cutoff`` as its limit, otherwise with the first cutoff; a killed job goes on as in TAGS.

    An idle long-job host takes a new job from the central queue only when host 0 is busy (hosts serve their
    own queue first), and one that the lower limit kills restarts on it at once while host 0 turns to the
    next short job (docs/baselines/dispatch.md, "Cutoffs for cycle stealing"). Without ``idle_cutoff`` (and
    on one host) both limits are the first cutoff: the rule is then ``TagsCentralQueue``. ``idle_cutoff`` is
    placed on the env's ladder at the nearest finite limit in log scale, as the cutoffs are.
    Registered at cutoffs chosen for it: ``tags-cq-idle-tuned``.
    """

    name: ClassVar[str] = "tags-cq-idle"

    def __init__(self, cutoffs: Any = None, idle_cutoff: float | None = None) -> None:
        super().__init__(cutoffs)
        self.requested_idle = idle_cutoff
        self.idle_index = 0
        self.idle_cutoff = math.inf
        """The idle host's first cutoff played since the last ``reset`` (ladder index ``idle_index``)."""

    def reset(self, env: gym.Env) -> None:
        inner = _env(env)
        super().reset(env)
        self.idle_index = self._placed(self.requested_idle, inner)
        self.idle_cutoff = float(inner.time_limits[self.idle_index])

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner = _env(env)
        if inner.pending_job.hosts:
            return super().act(observation, env)
        return np.int64(inner.encode_action(inner.central, self._first_rung(inner.state)))

    def _first_rung(self, state: StateView) -> int:
        """A new job's ladder index: the idle host's while the long-job host idles, else the first cutoff's."""
        return self.idle_index if _long_host_idle(state) else self.limit_indices[0]

    def _placed(self, requested: float | None, inner: DispatchEnv) -> int:
        """The ladder index of a ``requested`` first cutoff (``place_on_ladder``), or the first cutoff's when none is
        requested or on one host."""
        if requested is None or inner.n_hosts == 1:
            return self.limit_indices[0]
        return place_on_ladder([requested], inner.time_limits)[0]

    @classmethod
    def at_rungs(cls, time_limits: np.ndarray, rungs: tuple[int, ...]) -> Tags:
        """The rule at ladder indices ``rungs``: the h - 1 cutoffs, then the idle host's first cutoff."""
        return cls(cutoffs=time_limits[list(rungs[:-1])], idle_cutoff=float(time_limits[rungs[-1]]))

    @classmethod
    def rung_range(cls, position: int, rungs: tuple[int, ...], n_finite: int) -> range:
        """The cutoffs stay strictly increasing; the idle host's first cutoff may take any finite rung."""
        if position == len(rungs) - 1:
            return range(n_finite)
        return super().rung_range(position, rungs[:-1], n_finite)

    @classmethod
    def search_start(cls, inner: DispatchEnv) -> list[int]:
        """``tags-cq-tuned``'s rungs, with the idle host's first cutoff at its first: the search can only improve
        on ``tags-cq-tuned`` over ``TUNING_SEEDS``."""
        tuned = TagsCentralQueueTuned()
        tuned.reset(inner)
        return [*tuned.limit_indices[:-1], tuned.limit_indices[0]]

    def play_rungs(self, time_limits: np.ndarray, rungs: list[int]) -> None:
        super().play_rungs(time_limits, rungs[:-1])
        self.idle_index = rungs[-1]
        self.idle_cutoff = float(time_limits[self.idle_index])

    def kernel_rungs(self) -> list[int]:
        """The idle long-job host's first rung."""
        return [self.idle_index]


class TagsCentralQueueIdleTuned(TunedCutoffs, TagsCentralQueueIdle):
    """``TagsCentralQueueIdle`` at its cutoffs and idle-host cutoff chosen together by simulation
    (``TunedCutoffs``, starting from ``tags-cq-tuned``'s; not in the TAGS paper)."""

    name: ClassVar[str] = "tags-cq-idle-tuned"
    rule: ClassVar[type[Tags]] = TagsCentralQueueIdle

    def __init__(self, cutoffs: Any = None, idle_cutoff: float | None = None) -> None:
        if idle_cutoff is not None and cutoffs is None:
            raise ValueError(
                f"idle_cutoff={idle_cutoff!r} without cutoffs is not allowed for {self.name!r}: give both to play"
                " them, or neither to search both"
            )
        super().__init__(cutoffs, idle_cutoff)


class TagsCentralQueueCrowd(TagsCentralQueueIdle):
    """``TagsCentralQueueIdle`` with a third first cutoff for a crowded central queue (not in the TAGS paper):
    while the long-job host is busy (or has jobs queued) and at least ``crowd_threshold`` jobs wait in the
    central queue, a new job joins it with ``crowd_cutoff`` as its limit; otherwise the rule is
    ``TagsCentralQueueIdle``'s (the idle host's cutoff, else the first cutoff).

    With the long-job host occupied, host 0 alone runs the first stage while the central queue holds jobs: a
    lower limit bounds how long a job that is long after all holds the short ones behind it, at the cost of a
    restart on the last host (docs/baselines/dispatch.md, "tags-cq-crowd-tuned"). Without ``crowd_cutoff`` the
    rule is ``TagsCentralQueueIdle``. ``crowd_cutoff`` is placed on the env's ladder as the cutoffs are.
    Registered at cutoffs and threshold chosen for it: ``tags-cq-crowd-tuned``.
    """

    name: ClassVar[str] = "tags-cq-crowd"

    CROWD_THRESHOLDS: ClassVar[range] = range(1, 17)
    """The thresholds the search may take: 1 to 16 jobs in the central queue."""
    START_THRESHOLD: ClassVar[int] = 8
    """The threshold the search starts from, and the rule's default."""

    def __init__(
        self,
        cutoffs: Any = None,
        idle_cutoff: float | None = None,
        crowd_cutoff: float | None = None,
        crowd_threshold: int = START_THRESHOLD,
    ) -> None:
        super().__init__(cutoffs, idle_cutoff)
        self.requested_crowd = crowd_cutoff
        self.crowd_threshold = check_int("crowd_threshold", crowd_threshold)
        self.crowd_index = 0
        self.crowd_cutoff = math.inf
        """The crowded central queue's first cutoff played since the last ``reset`` (ladder index ``crowd_index``)."""

    def reset(self, env: gym.Env) -> None:
        inner = _env(env)
        super().reset(env)
        self.crowd_index = self._placed(self.requested_crowd, inner)
        self.crowd_cutoff = float(inner.time_limits[self.crowd_index])

    def _first_rung(self, state: StateView) -> int:
        """The crowded queue's ladder index while the long-job host is occupied and the queue is crowded, else
        ``TagsCentralQueueIdle``'s."""
        if not _long_host_idle(state) and state.central_length >= self.crowd_threshold:
            return self.crowd_index
        return super()._first_rung(state)

    @classmethod
    def at_rungs(cls, time_limits: np.ndarray, rungs: tuple[int, ...]) -> Tags:
        """The rule at ``rungs``: the h - 1 cutoffs, the idle host's first cutoff, the crowded queue's first cutoff
        (ladder indices), then the crowd threshold (a job count)."""
        return cls(
            cutoffs=time_limits[list(rungs[:-3])],
            idle_cutoff=float(time_limits[rungs[-3]]),
            crowd_cutoff=float(time_limits[rungs[-2]]),
            crowd_threshold=int(rungs[-1]),
        )

    @classmethod
    def rung_range(cls, position: int, rungs: tuple[int, ...], n_finite: int) -> range:
        """The idle host's and crowded queue's first cutoffs may take any finite rung, the threshold
        ``CROWD_THRESHOLDS``; the cutoffs stay strictly increasing."""
        if position == len(rungs) - 1:
            return cls.CROWD_THRESHOLDS
        if position == len(rungs) - 2:
            return range(n_finite)
        return super().rung_range(position, rungs[:-2], n_finite)

    @classmethod
    def search_start(cls, inner: DispatchEnv) -> list[int]:
        """``tags-cq-idle-tuned``'s rungs, the crowded queue's first cutoff at the first cutoff (the rule is then
        ``tags-cq-idle-tuned`` whatever the threshold) and the threshold at ``START_THRESHOLD``: the search can
        only improve on ``tags-cq-idle-tuned`` over ``TUNING_SEEDS``."""
        tuned = TagsCentralQueueIdleTuned()
        tuned.reset(inner)
        return [*tuned.limit_indices[:-1], tuned.idle_index, tuned.limit_indices[0], cls.START_THRESHOLD]

    def play_rungs(self, time_limits: np.ndarray, rungs: list[int]) -> None:
        super().play_rungs(time_limits, rungs[:-2])
        self.crowd_index, self.crowd_threshold = rungs[-2], rungs[-1]
        self.crowd_cutoff = float(time_limits[self.crowd_index])

    def kernel_rungs(self) -> list[int]:
        """The idle long-job host's first rung, the crowded queue's, then the crowd threshold."""
        return [self.idle_index, self.crowd_index, self.crowd_threshold]


class TagsCentralQueueCrowdTuned(TunedCutoffs, TagsCentralQueueCrowd):
    """``TagsCentralQueueCrowd`` at its cutoffs, idle-host and crowded-queue cutoffs and threshold chosen together
    by simulation (``TunedCutoffs``, starting from ``tags-cq-idle-tuned``'s; not in the TAGS paper)."""

    name: ClassVar[str] = "tags-cq-crowd-tuned"
    rule: ClassVar[type[Tags]] = TagsCentralQueueCrowd

    def __init__(
        self,
        cutoffs: Any = None,
        idle_cutoff: float | None = None,
        crowd_cutoff: float | None = None,
        crowd_threshold: int = TagsCentralQueueCrowd.START_THRESHOLD,
    ) -> None:
        if (idle_cutoff is not None or crowd_cutoff is not None) and cutoffs is None:
            raise ValueError(
                f"idle_cutoff={idle_cutoff!r} and crowd_cutoff={crowd_cutoff!r} without cutoffs are not allowed for "
                f"{self.name!r}: give the cutoffs to play them, or none of them to search all"
            )
        super().__init__(cutoffs, idle_cutoff, crowd_cutoff, crowd_threshold)


def search_rungs(
    inner: DispatchEnv,
    rule: type[Tags],
    start: list[int],
    seeds: tuple[int, ...] = TUNING_SEEDS,
    exhaustive: bool = False,
) -> list[int]:
    """Ladder indices of the TAGS ``rule``'s search coordinates (``Tags.at_rungs``: the h - 1 cutoffs, and more
    for a rule with more) on ``inner``'s scenario, by coordinate descent from ``start`` (``TunedCutoffs``): the
    lowest mean total objective over ``seeds`` (the first seed only when the env replays a fixed job list,
    whose episodes are all the same).

    A move's episodes stop once it cannot be the lowest: an episode's total objective is never negative, so
    when the totals of a move's first seeds already exceed ``len(seeds)`` times the lowest mean found among the
    moves of its coordinate (by more than ``PRUNE_MARGIN``, far above the rounding of 20 sums), its own mean
    exceeds that one too. Every move that can win is played on every seed, so the result is the exhaustive
    coordinate descent's, rung for rung (``tests/dispatch/test_search_pruning.py``), in a fraction of the
    episodes: most rungs lose by far within a seed or two. ``exhaustive`` plays every move on every seed (the
    reference that the test compares the stops with)."""
    run = families.resolve(f"{families.of_env(ENV_ID).fast_path}:run")
    seeds = seeds[:1] if inner.jobs is not None else seeds
    n_finite = int(np.isfinite(inner.time_limits).sum())
    totals: dict[tuple[int, ...], list[float]] = {}  # the totals played so far, seed by seed

    def cost(indices: tuple[int, ...], bound: float) -> float:
        """The mean total objective at ``indices``, or inf once it is sure to exceed ``bound``."""
        bound = math.inf if exhaustive else bound
        played = totals.setdefault(indices, [])
        if len(played) < len(seeds):  # some seeds are still to play (a fully played move is not rebuilt)
            policy = rule.at_rungs(inner.time_limits, indices)
            while len(played) < len(seeds):
                if sum(played) > bound * len(seeds) * (1.0 + PRUNE_MARGIN) and min(played) >= 0.0:
                    return math.inf
                played.append(-float(run(inner, policy, seeds[len(played)]).episode_return))
        return float(np.mean(played))

    best = tuple(start)
    while True:
        current = best
        for position in range(len(best)):
            moves = [
                (*best[:position], rung, *best[position + 1 :]) for rung in rule.rung_range(position, best, n_finite)
            ]
            lowest = cost(best, math.inf) if best in moves else math.inf
            keys = {}
            for indices in moves:
                keys[indices] = cost(indices, lowest)
                lowest = min(lowest, keys[indices])
            best = min(moves, key=lambda indices: (keys[indices], indices != best))
        if best == current:
            return list(best)


PRUNE_MARGIN = 1e-9
"""``search_rungs`` stops a move's episodes only when their totals exceed the bound by this relative margin."""


def place_on_ladder(cutoffs: Any, time_limits: np.ndarray) -> list[int]:
    """Ladder indices for TAGS hosts 1..h: each cutoff's nearest finite limit (log scale), then ``inf``.

    Indices are made strictly increasing (a collision moves to the next limit); a ladder with too
    few finite limits for h - 1 distinct cutoffs raises ``ValueError``.
    """
    cuts = np.asarray(cutoffs, dtype=np.float64).ravel()
    finite = np.log(time_limits[np.isfinite(time_limits)])
    if finite.size < cuts.size:
        raise ValueError(
            f"time_limits has {finite.size} finite limits; TAGS with {cuts.size + 1} hosts needs at least {cuts.size}"
        )
    indices: list[int] = []
    for position, cut in enumerate(cuts):
        index = int(np.argmin(np.abs(finite - math.log(cut))))
        index = max(index, indices[-1] + 1 if indices else 0)
        index = min(index, finite.size - (cuts.size - position))
        indices.append(index)
    return [*indices, int(time_limits.size - 1)]


POLICIES: dict[str, Callable[..., Policy]] = {
    "random": RandomDispatch,
    "round-robin": RoundRobin,
    "shortest-queue": ShortestQueue,
    "least-work-remaining": LeastWorkRemaining,
    "central-queue": CentralQueue,
    "sita-e": SitaE,
    "tags-slowdown": TagsSlowdown,
    "tags-waiting": TagsWaiting,
    "tags-fair": TagsFair,
    "tags-slowdown-cs": TagsSlowdownCycleStealing,
    "tags-cs-tuned": TagsCycleStealingTuned,
    "tags-cq-tuned": TagsCentralQueueTuned,
    "tags-cq-idle-tuned": TagsCentralQueueIdleTuned,
    "tags-cq-crowd-tuned": TagsCentralQueueCrowdTuned,
}
