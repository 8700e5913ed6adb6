"""Scheduling policies for the multiserver-job queue (Grosof, Scully, Harchol-Balter,
Scheller-Wolf, "Optimal Scheduling in the Multiserver-job Model under Heavy Traffic", 2022).

Every policy is an *order* of the jobs present (SRPT: least remaining size; arrival; Gittins
rank) followed by a *packing* of that order onto the k servers (``schedenv.multiserver.packing``).
``service_set(state, candidates)`` computes the set over the given jobs (all jobs present by
default); ``act`` turns it into an action in the env's own action space with
``env.unwrapped.action_from_service_set`` (priority mode: one step per epoch; select mode: one
step per selected job, then commit). The env only serves window jobs: if none of the chosen jobs
is in the window, the policy is applied to the window's jobs instead. The set is recomputed at
every arrival and completion (the policies are preemptive, §3.2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from baselines.base import Policy
from baselines.kernels.multiserver import KernelSpec
from schedenv.multiserver.gittins import GittinsRank
from schedenv.multiserver.packing import divisorfilling, is_power_of_two, maxweight, maxweight_table, pack
from schedenv.multiserver.sim import MultiserverState

ENV_ID = "schedenv/MultiserverJob-v0"
REFERENCE = "serverfilling-srpt"


class MultiserverPolicy(Policy):
    """An order of the jobs plus a packing (§3.2, §6)."""

    order: ClassVar[str] = "srpt"
    """"srpt" (least remaining size), "arrival" or "gittins" (§5.1); ties by arrival."""
    setting: ClassVar[str] = "any"
    """"power-of-two" (ServerFilling, §3.2), "divisible" (DivisorFilling, App. C) or "any"."""
    packing: ClassVar[str] = "serverfilling"
    """The packing (``schedenv.multiserver.packing``) applied to the order."""

    def __init__(self) -> None:
        self._ranks: dict[int, GittinsRank] = {}
        self._rank_cache: dict[str, GittinsRank] = {}
        self._cached: tuple[MultiserverState | None, np.ndarray] = (None, np.empty(0, dtype=np.int64))

    def reset(self, env: gym.Env) -> None:
        inner: Any = env.unwrapped
        k, needs = int(inner.n_servers), [int(v) for v in inner.need_values]
        if self.order == "srpt" and not inner.size_known:
            raise ValueError(f"{self.name} orders jobs by remaining size; it needs size_known=True")
        if self.setting == "power-of-two" and not (is_power_of_two(k) and all(map(is_power_of_two, needs))):
            raise ValueError(
                f"{self.name} is defined in the power-of-two setting (§3.2): n_servers and every server need must "
                f"be powers of two; got n_servers={k}, needs {needs}. Use the divisorfilling policies when needs "
                "divide n_servers"
            )
        if self.setting == "divisible" and any(k % v for v in needs):
            raise ValueError(
                f"{self.name} is defined in the divisible setting (Appendix C): every server need must divide "
                f"n_servers={k}; got needs {needs}"
            )
        if self.order == "gittins":
            self._ranks = {v: self._rank_for(inner.size_distribution(v)) for v in needs}
        self._cached = (None, np.empty(0, dtype=np.int64))

    def _rank_for(self, law: Any) -> GittinsRank:
        key = repr(law)
        if key not in self._rank_cache:
            self._rank_cache[key] = GittinsRank(law)
        return self._rank_cache[key]

    def ordered(self, state: MultiserverState, candidates: np.ndarray) -> np.ndarray:
        """``candidates`` (positions in ``state``'s arrays) in this policy's priority order."""
        candidates = np.sort(candidates)  # state arrays are in arrival order
        if self.order == "arrival":
            return candidates
        if self.order == "srpt":
            key = state.server_need[candidates] * state.remaining_duration[candidates]
        else:
            key = self.gittins_ranks(state, candidates)
        return candidates[np.argsort(key, kind="stable")]

    def gittins_ranks(self, state: MultiserverState, candidates: np.ndarray) -> np.ndarray:
        """Gittins ranks (§5.1) of ``candidates``, from each need's size law and the job's age."""
        need = state.server_need[candidates]
        age = need * (state.duration[candidates] - state.remaining_duration[candidates]) / state.n_servers
        ranks = np.empty(candidates.size)
        for value, rank in self._ranks.items():
            members = need == value
            if members.any():
                ranks[members] = rank(age[members])
        return ranks

    def service_set(self, state: MultiserverState, candidates: np.ndarray | None = None) -> np.ndarray:
        """Positions (in ``state``'s arrays) of the jobs to serve, chosen among ``candidates``."""
        pool = np.arange(state.n_jobs) if candidates is None else np.asarray(candidates, dtype=np.int64)
        ordered = self.ordered(state, pool)
        return ordered[self.pack(state.server_need[ordered], state.n_servers)]

    def pack(self, needs: np.ndarray, n_servers: int) -> np.ndarray:
        """Positions in ``needs`` (priority order) to serve."""
        return pack(self.packing, needs, n_servers)

    def kernel_spec(self) -> KernelSpec | None:
        """The compiled fast path's description of this policy (None: run it in Python)."""
        if self.packing not in ("serverfilling", "firstfit", "greedy"):
            return None
        if self.order != "gittins":
            return KernelSpec(self.order, self.packing)
        values = np.array(sorted(self._ranks), dtype=np.int64)
        return KernelSpec(
            self.order,
            self.packing,
            need_values=values,
            rank_ages=np.stack([self._ranks[v].ages for v in values.tolist()]),
            rank_values=np.stack([self._ranks[v].ranks for v in values.tolist()]),
        )

    def act(self, observation: Any, env: gym.Env) -> Any:
        inner: Any = env.unwrapped
        state = inner.state
        if self._cached[0] is not state:
            serve = self.service_set(state)
            in_window = np.zeros(state.n_jobs, dtype=bool)
            in_window[inner.window] = True
            if not in_window[serve].any():
                serve = self.service_set(state, inner.window)
            self._cached = (state, serve)
        return inner.action_from_service_set(self._cached[1])


class ServerFillingSRPT(MultiserverPolicy):
    """ServerFilling-SRPT (§3.2): the shortest SRPT prefix M needing >= k servers, served by
    decreasing need. Fills all k servers whenever the jobs need >= k (Lemma 3.1); asymptotically
    optimal as rho -> 1 (Theorem 4.2). Power-of-two setting."""

    name = "serverfilling-srpt"
    setting = "power-of-two"


class ServerFilling(MultiserverPolicy):
    """ServerFilling (§6, [14]): the ServerFilling packing over arrival order; throughput-optimal
    in the power-of-two setting but size-blind."""

    name = "serverfilling"
    order = "arrival"
    setting = "power-of-two"


class ServerFillingGittins(MultiserverPolicy):
    """ServerFilling-Gittins (§5.1): the ServerFilling packing over Gittins-rank order, for unknown
    sizes. Ranks come from each need's size law (``schedenv.multiserver.gittins``).

    The paper does not say when ranks are re-evaluated; like every policy here the order is
    recomputed at arrivals and completions (the env's decision epochs), so between two epochs a
    served job keeps its place while its rank rises with its age. Where ranks rise with age
    (decreasing hazard rate, e.g. the hyperexponential) the paper's Gittins would share servers
    among jobs of equal rank (foreground-background on one server); the resulting gap to exact
    Gittins-1 is measured in ``benchmarks/results/multiserver-gittins.md``. With an exponential size
    law every age has the same rank and the policy is ServerFilling (arrival order)."""

    name = "serverfilling-gittins"
    order = "gittins"
    setting = "power-of-two"


class DivisorFillingSRPT(MultiserverPolicy):
    """DivisorFilling-SRPT (Appendix C.1, all three cases): SRPT order, needs dividing k; serves
    exactly k servers whenever >= k jobs are present (Theorem C.1)."""

    name = "divisorfilling-srpt"
    setting = "divisible"
    packing = "divisorfilling"

    def pack(self, needs: np.ndarray, n_servers: int) -> np.ndarray:
        return divisorfilling(needs, n_servers)


class DivisorFillingGittins(DivisorFillingSRPT):
    """DivisorFilling-Gittins (Appendix C, §5.1): DivisorFilling over Gittins-rank order."""

    name = "divisorfilling-gittins"
    order = "gittins"


class MaxWeight(MultiserverPolicy):
    """MaxWeight (§6, [24]): a job weighs the number of jobs present with its server need; serve
    the feasible set of maximum total weight (the oldest jobs within a need class; ties between
    sets favour the one using more servers).

    Exact for small k: jobs of one class weigh the same, so a set is a count vector over the
    need classes; every count vector that fits in k servers is enumerated once per episode
    (``maxweight_table``: at most prod_i (k / n_i + 1) rows, 270 for k = 8 and needs {1, 2, 4, 8})
    and the best one feasible for the current counts is picked by a matrix product.
    """

    name = "maxweight"
    order = "arrival"
    packing = "maxweight"

    def reset(self, env: gym.Env) -> None:
        super().reset(env)
        inner: Any = env.unwrapped
        self.need_values = np.asarray(inner.need_values, dtype=np.int64)
        self.table = maxweight_table(self.need_values, int(inner.n_servers))

    def pack(self, needs: np.ndarray, n_servers: int) -> np.ndarray:
        return maxweight(needs, n_servers, self.need_values, self.table)

    def kernel_spec(self) -> KernelSpec | None:
        return KernelSpec(self.order, self.packing, need_values=self.need_values, table=self.table)


class GreedySRPT(MultiserverPolicy):
    """GreedySRPT (§6): SRPT order; place jobs while they fit, stop at the first that does not."""

    name = "greedy-srpt"
    packing = "greedy"


class FirstFitSRPT(MultiserverPolicy):
    """FirstFitSRPT (§6; "Smallest Area First" [4]): SRPT order; skip jobs that do not fit and keep
    placing later ones until the servers are full or the jobs run out."""

    name = "firstfit-srpt"
    packing = "firstfit"


class FCFS(MultiserverPolicy):
    """FCFS (§1.1, §2.2): arrival order; serve the oldest jobs while they fit, stop at the first
    that does not (head-of-line blocking)."""

    name = "fcfs"
    order = "arrival"
    packing = "greedy"


POLICIES: dict[str, Callable[..., Policy]] = {
    cls.name: cls
    for cls in (
        ServerFillingSRPT,
        ServerFilling,
        DivisorFillingSRPT,
        ServerFillingGittins,
        DivisorFillingGittins,
        MaxWeight,
        GreedySRPT,
        FirstFitSRPT,
        FCFS,
    )
}
