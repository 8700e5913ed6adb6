"""Moldable-job schedulers of the HRF paper (Wu, Tuo, Jin, Yan, Weng, CF'15), env ``schedenv/Moldable-v0``.

A policy is a **resource allocation scheme** (how many processors each queued job gets, §3.1)
combined with a **job selection scheme** (which job starts when, §3.2):

- allocation: HRF (Algorithm 1, §5), SbmGrdy (Submit-time Greedy), SbmFair (Submit-time Fair),
  SchFair (Schedule-time Fair) (Srinivasan et al. 2003, as the paper describes them in §3.1), and
  Rigid (the job's own requested count, e.g. an SWF trace's);
- selection: FCFS (start the queue head when its count fits, else wait) and EASY, i.e. aggressive
  backfilling (Lifka 1995; §3.2: a later job may start now if it does not delay the head's
  reservation).

Choices where the paper is silent (each is tested in ``tests/moldable``):

- *Budget (HRF).* Following the §4.1 example (budget 5 = one initial processor for each of the three
  jobs plus two more), the initial processor of each job counts inside the budget
  floor(alpha m): Algorithm 1's loop hands out floor(alpha m) - (sum of initial counts) extra
  processors (none when the queue alone exhausts the budget). A job's initial count is its
  smallest allowed count (1 for Downey jobs).
- *Threshold.* A job may grow while x_i < threshold m (Algorithm 1, line 7), so its cap is
  ceil(threshold m), and at most m. The cap applies to every scheme (it is the cluster's limit on
  one job's share, §5), so the paper's (alpha, threshold) grid of §6.3 applies to all of them;
  alpha is the processor budget of HRF and the shared budget of the fair schemes.
- *Zero revenue (HRF).* A job whose RP is <= 0 (its runtime no longer falls, e.g. a Downey job
  beyond 2A - 1 processors) leaves the considering jobs: a processor that saves nothing is not
  "revenue". Ties in RP go to the earlier job in the queue.
- *When HRF and SchFair allocate.* Once per scheduling instant (an "allocation turn", §5), over
  the queue at that instant: a new turn starts whenever time has moved, i.e. after every arrival
  or completion (the paper re-allocates whenever a job joins the queue or a completion lets one
  leave it). Jobs started at the same instant do not start a new turn: their processors are
  spent from the turn's budget, not handed again to the jobs still waiting. With this rule the
  §4.1 example runs as its Strategy A. HRF allocates over *all* queued jobs; SchFair over the
  window's jobs.
- *SbmGrdy's count.* As §3.1 words it: the count of shortest runtime T(n) within the cap ("almost
  equivalent to the shortest runtime because the decision is made at submit-time"; §6.3: "every
  job occupies as many resources as possible"), independent of the queue; among counts of equal
  least runtime the fewest (processors that save nothing are not taken).
- *Turnaround estimate (SbmFair, SchFair).* The greedy count within the fair limit is the one of
  least estimated completion time start(n) + T(n), where start(n) is the earliest time n
  processors are free once the jobs ahead in the queue are placed in FCFS order at their own
  counts (runtimes are exact, so the estimate is the FCFS schedule); ties go to fewer processors.
- *Submit time.* Submit-time schemes (SbmGrdy, SbmFair) fix the count when the job is first seen,
  using the queue as it was at its submit time (the jobs ahead of it).
- *Fair share.* Weight = sequential runtime L (§3.1); job j's limit is
  max(n_min, floor(alpha m L_j / sum of L over the fair-share set)), the set being the jobs queued
  at j's submit time (SbmFair) or the window at schedule time (SchFair).
- *EASY and moldability.* The head's count is frozen when its reservation is made (otherwise a
  re-allocation could move the reservation); the reservation time is the earliest time the
  head's count is free given the running jobs. A later window job starts now if its count fits
  and it ends by the reservation time or uses only processors the head leaves spare then.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from baselines.base import Policy, best_by_return
from schedenv.moldable.core import PAPER_ALPHA, PAPER_THRESHOLD
from schedenv.moldable.sim import MoldableView
from schedenv.validation import check_int, check_positive, check_probability

ENV_ID = "schedenv/Moldable-v0"
REFERENCE = "hrf-easy"
DEFAULT_ALPHA = PAPER_ALPHA
"""Processor budget as a fraction of m (the paper fixes alpha = 1 in its Fig. 6)."""
DEFAULT_THRESHOLD = PAPER_THRESHOLD
"""Largest share of m one job may use (the paper fixes threshold = 0.9 in its Fig. 5)."""


# ----------------------------------------------------------------------------- allocation
def hrf_allocation(runtimes: np.ndarray, n_min: np.ndarray, n_procs: int, alpha: float, threshold: float) -> np.ndarray:
    """Algorithm 1 (highest revenue first) over the queued jobs' runtime rows (HRF paper §5).

    ``runtimes[i, n - 1]`` = T_i(n) (``inf`` where not allowed). Returns the counts x_i.
    """
    counts = np.asarray(n_min, dtype=np.int64).copy()
    extra = math.floor(alpha * n_procs + 1e-9) - int(counts.sum())
    cap = min(n_procs, math.ceil(threshold * n_procs - 1e-9))
    heap: list[tuple[float, int]] = []
    for i, x in enumerate(counts.tolist()):
        revenue = _revenue(runtimes[i], x, cap)
        if revenue > 0:
            heap.append((-revenue, i))
    heapq.heapify(heap)
    while extra > 0 and heap:
        _, i = heapq.heappop(heap)
        counts[i] += 1
        extra -= 1
        revenue = _revenue(runtimes[i], int(counts[i]), cap)
        if revenue > 0:
            heapq.heappush(heap, (-revenue, i))
    return counts


def _revenue(row: np.ndarray, x: int, cap: int) -> float:
    """RP(x) = T(x) - T(x + 1) (§4.2); -inf once x reaches the cap or x + 1 is not allowed."""
    if x >= cap or not row[x] < np.inf:
        return -math.inf
    return float(row[x - 1] - row[x])


class ProcessorProfile:
    """Free processors over time under an FCFS placement (for turnaround estimates and EASY).

    Starts from the running jobs; ``place`` puts a job at the earliest time >= the previous
    placement at which its count is free. After the last placement only completions remain, so
    the free count never falls again, which makes ``earliest_start`` exact for every count.
    """

    def __init__(self, now: float, free: int, running_end: np.ndarray, running_procs: np.ndarray) -> None:
        self.time = now
        self.free = free
        self.active: list[tuple[float, int]] = list(zip(running_end.tolist(), running_procs.tolist(), strict=True))
        heapq.heapify(self.active)

    def _release_until(self, procs: int) -> None:
        while self.free < procs:
            end, count = heapq.heappop(self.active)
            self.time = max(self.time, end)
            self.free += count

    def place(self, procs: int, runtime: float) -> float:
        """Place a job of ``procs`` processors FCFS; returns its start time."""
        self._release_until(procs)
        heapq.heappush(self.active, (self.time + runtime, procs))
        self.free -= procs
        return self.time

    def earliest_starts(self, counts: np.ndarray) -> np.ndarray:
        """Earliest start of one more job for each count in ``counts`` (each <= m)."""
        ends = sorted(self.active)
        times = np.array([self.time] + [max(self.time, end) for end, _ in ends])
        free = self.free + np.concatenate([[0], np.cumsum([count for _, count in ends])])
        return times[np.searchsorted(free, counts, side="left")]


def greedy_count(row: np.ndarray, n_min: int, limit: int, profile: ProcessorProfile) -> int:
    """The count in [n_min, limit] of least estimated completion start(n) + T(n); ties to fewer."""
    counts = np.arange(n_min, max(limit, n_min) + 1)
    completion = profile.earliest_starts(counts) + row[counts - 1]
    return int(counts[int(np.argmin(completion))])


def shortest_runtime_count(row: np.ndarray, n_min: int, cap: int) -> int:
    """SbmGrdy's count (§3.1): the n in [n_min, max(cap, n_min)] of least T(n); ties to fewer."""
    counts = np.arange(n_min, max(cap, n_min) + 1)
    return int(counts[int(np.argmin(row[counts - 1]))])


def fair_limit(size: float, total_size: float, n_min: int, n_procs: int, alpha: float, cap: int) -> int:
    """Fair-share limit max(n_min, floor(alpha m L_j / sum L)), at most ``cap``."""
    share = math.floor(alpha * n_procs * size / total_size + 1e-9)
    return max(n_min, min(share, cap))


# ----------------------------------------------------------------------------- policies
@dataclass
class _Reservation:
    job: int
    procs: int
    time: float


class MoldablePolicy(Policy):
    """An allocation scheme combined with FCFS or EASY selection (HRF paper §3, §6.1.3)."""

    scheme: ClassVar[str]
    selection: ClassVar[str]

    def __init__(self, alpha: float = DEFAULT_ALPHA, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.alpha = check_positive("alpha", alpha)
        self.threshold = check_probability("threshold", threshold, open_low=True, open_high=False)
        self._submit_counts: dict[int, int] = {}
        self._turn_time = -math.inf
        self._turn_counts_by_job: dict[int, int] = {}
        self.reservation: _Reservation | None = None
        self.reservations: list[tuple[int, int, float]] = []
        """Every reservation made this episode: (job_id, procs, reserved start time)."""

    def reset(self, env: gym.Env) -> None:
        self._submit_counts, self._turn_time, self._turn_counts_by_job = {}, -math.inf, {}
        self.reservation, self.reservations = None, []

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha!r}, threshold={self.threshold!r})"

    # ------------------------------------------------------------- allocation
    def counts(self, view: MoldableView) -> np.ndarray:
        """Processor counts of the window's jobs (queue positions 0..window_size-1)."""
        w = view.window_size
        m = view.n_procs
        cap = min(m, math.ceil(self.threshold * m - 1e-9))
        if self.scheme == "rigid":
            return view.queue_requested[:w].copy()
        if self.scheme in ("hrf", "schfair"):
            return self._turn_counts(view, w, cap)
        return self._submit_time_counts(view, w, cap)

    def _turn_counts(self, view: MoldableView, w: int, cap: int) -> np.ndarray:
        """Schedule-time counts, computed once per allocation turn (one scheduling instant)."""
        window = view.queue_job[:w].tolist()
        if view.time != self._turn_time or any(job not in self._turn_counts_by_job for job in window):
            # a job that entered the window during the turn (SchFair allocates over the window) opens a new turn
            self._turn_time = view.time
            if self.scheme == "hrf":
                fresh = hrf_allocation(view.queue_runtime, view.queue_n_min, view.n_procs, self.alpha, self.threshold)
            else:
                fresh = self._estimated_counts(view, w, cap, fair_set_end=w)
            self._turn_counts_by_job = dict(zip(view.queue_job[: fresh.size].tolist(), fresh.tolist(), strict=True))
        return np.array([self._turn_counts_by_job[job] for job in window], dtype=np.int64)

    def _submit_time_counts(self, view: MoldableView, w: int, cap: int) -> np.ndarray:
        jobs = view.queue_job.tolist()
        unseen = [p for p in range(w) if jobs[p] not in self._submit_counts]
        if unseen:
            fresh = self._estimated_counts(view, unseen[-1] + 1, cap, fair_set_end=None, known=self._submit_counts)
            for p in unseen:
                self._submit_counts[jobs[p]] = int(fresh[p])
        return np.array([self._submit_counts[job] for job in jobs[:w]], dtype=np.int64)

    def _estimated_counts(
        self, view: MoldableView, upto: int, cap: int, fair_set_end: int | None, known: dict[int, int] | None = None
    ) -> np.ndarray:
        """Greedy counts (fair-limited for the fair schemes) for queue positions 0..upto-1, in order."""
        m = view.n_procs
        profile = ProcessorProfile(view.time, view.free, view.running_end, view.running_procs)
        sizes = view.queue_size
        prefix = np.cumsum(sizes)
        counts = np.zeros(upto, dtype=np.int64)
        for p in range(upto):
            job = int(view.queue_job[p])
            row = view.queue_runtime[p]
            n_min = int(view.queue_n_min[p])
            if known is not None and job in known:
                counts[p] = known[job]
            elif self.scheme == "sbmgrdy":
                counts[p] = shortest_runtime_count(row, n_min, cap)
            else:
                total = float(prefix[p]) if fair_set_end is None else float(prefix[fair_set_end - 1])
                limit = fair_limit(float(sizes[p]), total, n_min, m, self.alpha, cap)
                counts[p] = greedy_count(row, n_min, limit, profile)
            profile.place(int(counts[p]), float(row[counts[p] - 1]))
        return counts

    # ------------------------------------------------------------- selection
    def act(self, observation: Any, env: gym.Env) -> int | np.ndarray:
        """The decision as a flat action, given in the env's own action space (``from_flat``: flat or factored)."""
        inner: Any = env.unwrapped
        return inner.from_flat(self._flat_action(inner))

    def _flat_action(self, inner: Any) -> int:
        view: MoldableView = inner.state
        counts = self.counts(view)
        head = int(view.queue_job[0])
        if self.reservation is not None and self.reservation.job == head:
            counts[0] = self.reservation.procs
        if counts[0] <= view.free:
            self.reservation = None
            return int(inner.encode(0, int(counts[0])))
        if self.selection == "easy":
            slot = self._backfill(view, counts)
            if slot is not None:
                return int(inner.encode(slot, int(counts[slot])))
        return int(inner.wait_action)

    def _backfill(self, view: MoldableView, counts: np.ndarray) -> int | None:
        """The first window job that may start now without delaying the head's reservation."""
        head = int(view.queue_job[0])
        if self.reservation is None or self.reservation.job != head:
            profile = ProcessorProfile(view.time, view.free, view.running_end, view.running_procs)
            shadow = float(profile.earliest_starts(np.array([counts[0]]))[0])
            self.reservation = _Reservation(head, int(counts[0]), shadow)
            self.reservations.append((head, int(counts[0]), shadow))
        shadow, need = self.reservation.time, self.reservation.procs
        spare = view.free + int(view.running_procs[view.running_end <= shadow].sum()) - need
        for slot in range(1, view.window_size):
            procs = int(counts[slot])
            if procs > view.free:
                continue
            if view.time + float(view.queue_runtime[slot, procs - 1]) <= shadow or procs <= spare:
                return slot
        return None


# Module-level classes (not built with type()) so that policies pickle, as Ray and multiprocessing need.
# The choices made where the paper is silent are in the module docstring.
class HrfFcfs(MoldablePolicy):
    """Highest Revenue First (Algorithm 1) allocation, FCFS selection (HRF paper §5, Table 2)."""

    name = "hrf-fcfs"
    scheme = "hrf"
    selection = "fcfs"


class HrfEasy(MoldablePolicy):
    """Highest Revenue First (Algorithm 1) allocation, EASY backfilling (HRF paper §5, Table 2)."""

    name = "hrf-easy"
    scheme = "hrf"
    selection = "easy"


class SbmgrdyFcfs(MoldablePolicy):
    """Submit-time Greedy allocation, FCFS selection (HRF paper §3.1, §6.1.3)."""

    name = "sbmgrdy-fcfs"
    scheme = "sbmgrdy"
    selection = "fcfs"


class SbmgrdyEasy(MoldablePolicy):
    """Submit-time Greedy allocation, EASY backfilling (HRF paper §3.1, §6.1.3)."""

    name = "sbmgrdy-easy"
    scheme = "sbmgrdy"
    selection = "easy"


class SbmfairFcfs(MoldablePolicy):
    """Submit-time Fair allocation, FCFS selection (HRF paper §3.1, §6.1.3)."""

    name = "sbmfair-fcfs"
    scheme = "sbmfair"
    selection = "fcfs"


class SbmfairEasy(MoldablePolicy):
    """Submit-time Fair allocation, EASY backfilling (HRF paper §3.1, §6.1.3)."""

    name = "sbmfair-easy"
    scheme = "sbmfair"
    selection = "easy"


class SchfairFcfs(MoldablePolicy):
    """Schedule-time Fair allocation, FCFS selection (HRF paper §3.1, §6.1.3)."""

    name = "schfair-fcfs"
    scheme = "schfair"
    selection = "fcfs"


class SchfairEasy(MoldablePolicy):
    """Schedule-time Fair allocation, EASY backfilling (HRF paper §3.1, §6.1.3)."""

    name = "schfair-easy"
    scheme = "schfair"
    selection = "easy"


class RigidFcfs(MoldablePolicy):
    """Rigid (requested processors) allocation, FCFS selection (HRF paper §1, §3.2)."""

    name = "rigid-fcfs"
    scheme = "rigid"
    selection = "fcfs"


class RigidEasy(MoldablePolicy):
    """Rigid (requested processors) allocation, EASY backfilling (HRF paper §1, §3.2)."""

    name = "rigid-easy"
    scheme = "rigid"
    selection = "easy"


class HrfEasyRollout(Policy):
    """HRF-EASY improved by a one-step lookahead on redrawn futures: a rollout policy (Bertsekas, Tsitsiklis and
    Wu, "Rollout algorithms for combinatorial optimization", J. Heuristics 1997; docs/baselines/moldable.md,
    "A planner").

    At each decision of the env's ranked mode every allowed candidate is played, then HRF-EASY (candidate 0) to
    the episode's end, on ``futures`` futures redrawn from the workload generator given everything seen so far
    (``MoldableEnv.paper_policy_returns``; every candidate meets the same futures), and the candidate of the
    highest mean return is taken: HRF-EASY's own unless another's exceeds it by over 1e-9 of its magnitude. It
    is an online policy: it knows the present state and the workload's law, not the drawn future. Its futures
    are drawn from ``seed`` and the episode's arrival times, so an episode replays exactly. A decision costs
    ``futures`` remainders of the episode per allowed candidate (tens of milliseconds on the 200-job episodes),
    so it is named explicitly (``--contenders``, ``warm_start``), not run by default (``PLANNERS``).
    """

    name = "hrf-easy-rollout"

    def __init__(self, futures: int = 16, seed: int = 0) -> None:
        self.futures = check_int("futures", futures, minimum=1)
        self.seed = check_int("seed", seed, minimum=0)
        self._rng = np.random.default_rng(self.seed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(futures={self.futures!r}, seed={self.seed!r})"

    def reset(self, env: gym.Env) -> None:
        inner: Any = env.unwrapped
        if getattr(inner, "action_mode", None) != "ranked" or inner.generator is None:
            raise ValueError(
                f"{self.name} plays the ranked candidates on redrawn futures, so it needs action_mode='ranked' and a "
                f"generated workload; here action_mode={getattr(inner, 'action_mode', None)!r}"
                + ("" if inner.generator is not None else " with explicit jobs or a trace")
            )
        arrivals = np.ascontiguousarray(inner.job_set.submit)
        self._rng = np.random.default_rng([self.seed, zlib.crc32(arrivals.tobytes())])

    def act(self, observation: Any, env: gym.Env) -> int:
        """The candidate of the highest mean return over the redrawn futures (candidate 0 on ties)."""
        inner: Any = env.unwrapped
        allowed = np.flatnonzero(inner.action_masks())
        if allowed.size == 1:
            return int(allowed[0])
        seed = int(self._rng.integers(2**63))
        returns = inner.paper_policy_returns(allowed.tolist(), futures=self.futures, seed=seed)
        return best_by_return(allowed, returns, own=0)


POLICIES: dict[str, Callable[..., Policy]] = {
    "hrf-fcfs": HrfFcfs,
    "hrf-easy": HrfEasy,
    "sbmgrdy-fcfs": SbmgrdyFcfs,
    "sbmgrdy-easy": SbmgrdyEasy,
    "sbmfair-fcfs": SbmfairFcfs,
    "sbmfair-easy": SbmfairEasy,
    "schfair-fcfs": SchfairFcfs,
    "schfair-easy": SchfairEasy,
    "rigid-fcfs": RigidFcfs,
    "rigid-easy": RigidEasy,
}
"""The ten policies: hrf-, sbmgrdy-, sbmfair-, schfair-, rigid- x fcfs / easy."""

PLANNERS: dict[str, Callable[..., Policy]] = {"hrf-easy-rollout": HrfEasyRollout}
"""Policies that plan by simulating futures: seconds an episode, so only where named (``baselines.available``
lists them with ``planners=True``)."""

PAPER_POLICIES: tuple[str, ...] = tuple(
    f"{s}-{sel}" for s in ("hrf", "sbmgrdy", "sbmfair", "schfair") for sel in ("fcfs", "easy")
)
"""The eight policies of the paper's Table 2."""
ALPHA_GRID: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2)
"""The paper's alpha values (§6.2, §6.3)."""
THRESHOLD_GRID: tuple[float, ...] = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The paper's threshold values of the 56 combinations (§6.3)."""
