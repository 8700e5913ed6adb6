"""Allocation policies for malleable jobs (heSRPT paper, Berg, Vesilo, Harchol-Balter 2020).

Each policy computes fractions theta over *all* jobs present (``allocate``), then acts through
the env's action space with ``env.unwrapped.action_from_allocation``. Online, every policy is
re-evaluated at each arrival and departure, as in the paper's §5.3.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from baselines.base import Policy
from schedenv.analysis.hesrpt import hesrpt_allocation
from schedenv.malleable.sim import MalleableParams, MalleableState
from schedenv.validation import check_positive
from schedenv.workloads import Power, Speedup

ENV_ID = "schedenv/Malleable-v0"
REFERENCE = "hesrpt"


class MalleablePolicy(Policy):
    """A policy defined by its allocation rule theta(state)."""

    @abstractmethod
    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        """Fractions of the N servers for the jobs of ``state`` (in its order), summing to 1."""

    def act(self, observation: Any, env: gym.Env) -> np.ndarray:
        inner = env.unwrapped
        return inner.action_from_allocation(self.allocate(inner.state, inner.params))  # type: ignore[attr-defined]


def _power_exponent(speedup: Speedup, policy: str) -> float:
    if not isinstance(speedup, Power):
        raise ValueError(
            f"{policy} uses the closed form for s(k) = k^p (heSRPT Theorem 5); the env's speedup is {speedup!r}"
        )
    return speedup.p


class HeSRPT(MalleablePolicy):
    """heSRPT (Theorem 5): the optimal offline allocation, recomputed at every epoch.

    Jobs are ranked by remaining size (which heSRPT keeps in the order of original size) and
    weighted by the env's objective: w_i = s(N)/x_i (original size) for slowdown, 1 for flow time
    (Corollary 1). Offline this is optimal; online it is Adaptive-heSRPT (§5.3).
    """

    name = "hesrpt"

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        p = _power_exponent(params.speedup, self.name)
        return hesrpt_allocation(state.remaining, p, weights=np.asarray(state.weight))


class AdaptiveHeSRPT(HeSRPT):
    """Adaptive-heSRPT (§5.3): heSRPT recomputed at every arrival and departure (same rule)."""

    name = "a-hesrpt"


class Equi(MalleablePolicy):
    """EQUI (§5.2): an equal fraction 1/m of the servers to each of the m jobs present."""

    name = "equi"

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        return np.full(state.n_jobs, 1.0 / state.n_jobs)


class SRPT(MalleablePolicy):
    """SRPT (§5.2): every server to the job with the shortest remaining size (earliest on ties)."""

    name = "srpt"

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        theta = np.zeros(state.n_jobs)
        theta[int(np.argmin(state.remaining))] = 1.0
        return theta


class RS(MalleablePolicy):
    """RS (§5.3): every server to the job with the least remaining size x initial size."""

    name = "rs"

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        theta = np.zeros(state.n_jobs)
        theta[int(np.argmin(state.remaining * state.size))] = 1.0
        return theta


class Hell(MalleablePolicy):
    """HELL (Lin et al. 2018, as described in heSRPT §5.2), in the continuous-server limit.

    A job's efficiency on k servers is s(k)/k and HELL's ratio is efficiency over remaining
    run time, (s(k)/k) / (R / s(k)) = s(k)^2 / (k R). HELL repeatedly gives servers to the job
    whose ratio is highest until every server is allocated. For s(k) = k^p the ratio is
    k^(2p-1) / R: for p >= 1/2 it grows with k, so the job with the least R takes every server
    (SRPT); for p < 1/2 it falls with k, and repeated allocation water-fills the ratio, giving
    k_i proportional to R_i^(-1/(1-2p)). For other speedups the servers are handed out in 256
    equal increments, each to the job with the highest ratio after the increment.
    Our reading of "repeat until all servers are allocated"; the paper gives no formula.
    """

    name = "hell"
    increments: ClassVar[int] = 256

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        remaining = np.asarray(state.remaining)
        if isinstance(params.speedup, Power):
            p = params.speedup.p
            if p >= 0.5:
                return SRPT().allocate(state, params)
            # In log space so that tiny remaining sizes and exponents near -1/(1-2p) stay finite.
            log_share = -np.log(remaining) / (1.0 - 2.0 * p)
            share = np.exp(log_share - log_share.max())
            return share / share.sum()
        servers = np.zeros(remaining.size)
        step = params.n_servers / self.increments
        for _ in range(self.increments):
            k = servers + step
            ratio = np.asarray(params.speedup(k)) ** 2 / (k * remaining)
            servers[int(np.argmax(ratio))] += step
        return servers / servers.sum()


@dataclass
class Knee(MalleablePolicy):
    """KNEE (Lin et al. 2018, as described in heSRPT §5.2) with threshold ``alpha``.

    A job's knee is the server count k at which the marginal reduction of its run time R / s(k),
    namely R s'(k) / s(k)^2, falls to ``alpha``; for s(k) = k^p, k = (p R / alpha)^(1/(1+p)).
    KNEE repeatedly gives the job with the lowest knee its knee (capped by the servers left)
    until the servers run out. If every job has its knee and servers remain, they are shared in
    proportion to the knees, so that the policy is work-conserving (our choice; the paper does not
    say). ``alpha`` has no principled value: ``schedenv.tuning.tune_knee_alpha`` brute-forces it, as the
    paper does.
    """

    alpha: float = 1.0
    name: ClassVar[str] = "knee"

    def __post_init__(self) -> None:
        self.alpha = check_positive("alpha", self.alpha)

    def knees(self, remaining: np.ndarray, params: MalleableParams) -> np.ndarray:
        """Each job's knee allocation in servers (at least a 1e-9 fraction of N)."""
        low = 1e-9 * params.n_servers
        if isinstance(params.speedup, Power):
            p = params.speedup.p
            return np.maximum((p * remaining / self.alpha) ** (1.0 / (1.0 + p)), low)
        lo, hi = np.full(remaining.size, low), np.full(remaining.size, params.n_servers)
        for _ in range(60):  # bisection: R s'(k) / s(k)^2 decreases in k for concave s
            mid = np.sqrt(lo * hi)
            falls = remaining * params.speedup.derivative(mid) / np.asarray(params.speedup(mid)) ** 2 <= self.alpha
            hi, lo = np.where(falls, mid, hi), np.where(falls, lo, mid)
        return hi

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        knees = self.knees(np.asarray(state.remaining), params)
        order = np.argsort(knees, kind="stable")
        before = np.concatenate([[0.0], np.cumsum(knees[order])[:-1]])
        servers = np.empty_like(knees)
        servers[order] = np.clip(params.n_servers - before, 0.0, knees[order])
        return servers / servers.sum()


POLICIES: dict[str, Callable[..., Policy]] = {
    "hesrpt": HeSRPT,
    "a-hesrpt": AdaptiveHeSRPT,
    "equi": Equi,
    "srpt": SRPT,
    "rs": RS,
    "hell": Hell,
    "knee": Knee,
}
