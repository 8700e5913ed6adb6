"""Driving an env of any family: valid actions from its masks, actions outside its space, and what the
return of an episode must equal (each env's "Rewards" section, docs/envs/index.md)."""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np

from .strategies import DISPATCH, MALLEABLE, MOLDABLE, MULTISERVER

DISPATCH_OBJECTIVE_METRIC = {
    "response_time": "mean_response_time",
    "slowdown": "mean_slowdown",
    "waiting_time": "mean_waiting_time",
    "waiting_slowdown": "mean_waiting_slowdown",
}


NAN_ALLOWED = ("mean_slowdown_size_class_", "mean_slowdown_final_host_")
"""Dispatch's per-class metrics are NaN when the class is empty (its "Information" section)."""
EXAMPLE_SECONDS = 30
"""Wall-clock limit of one example (each takes milliseconds): beyond it, the example fails as a hang."""


@contextmanager
def no_hang(seconds: int = EXAMPLE_SECONDS) -> Iterator[None]:
    """Fail with TimeoutError if the block runs longer than ``seconds`` (where SIGALRM exists)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def hang(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the example ran longer than {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def episode_jobs(env: Any) -> int:
    """How many jobs an episode of the (unwrapped) env has."""
    explicit = getattr(env, "fixed_jobs", None) or getattr(env, "jobs", None)
    if explicit is not None:
        return len(explicit.submit) if hasattr(explicit, "submit") else int(np.asarray(explicit[0]).size)
    if getattr(env, "mode", "online") == "offline" or not hasattr(env, "n_arrivals"):
        return int(env.n_jobs)
    return int(env.n_arrivals)


def masked_choices(env: Any) -> np.ndarray | None:
    """The flat mask of a masked discrete env (None when every element of the space is valid)."""
    if isinstance(env.action_space, gym.spaces.Discrete) and hasattr(env, "action_masks"):
        return np.asarray(env.action_masks())
    return None


def valid_candidates(env: Any, rng: np.random.Generator) -> list[Any]:
    """Actions to try in order, the first of which is accepted even with ``invalid_action="raise"``
    (Moldable's factored mask is per component, so some of its pairs are masked: the caller tries on)."""
    space = env.action_space
    mask = masked_choices(env)
    if mask is not None:
        return [np.int64(rng.choice(np.flatnonzero(mask)))]
    if isinstance(space, gym.spaces.MultiDiscrete):  # Moldable factored: (slot, procs - 1)
        mask = np.asarray(env.action_masks())
        slots, counts = np.flatnonzero(mask[: env.max_jobs + 1]), np.flatnonzero(mask[env.max_jobs + 1 :])
        pairs = [np.array([s, c], dtype=np.int64) for s in rng.permutation(slots) for c in rng.permutation(counts)]
        return [*pairs, np.array([env.max_jobs, 0], dtype=np.int64)]
    if isinstance(space, gym.spaces.Box):
        return [rng.uniform(space.low, space.high).astype(space.dtype)]
    return [rng.integers(0, space.n)]


def any_element(env: Any, rng: np.random.Generator) -> Any:
    """A uniformly drawn element of the action space, masked or not."""
    space = env.action_space
    if isinstance(space, gym.spaces.Box):
        return rng.uniform(space.low, space.high).astype(space.dtype)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return rng.integers(0, space.nvec).astype(np.int64)
    return np.int64(rng.integers(0, space.n))


def outside_the_space(env: Any) -> list[Any]:
    """Values that are not elements of the env's action space (each must be refused, changing nothing)."""
    space = env.action_space
    common: list[Any] = [None, "x", 1 + 1j, {"a": 1}, math.nan]
    if isinstance(space, gym.spaces.Box):
        shape = space.shape
        return [
            *common,
            np.full(shape, math.nan),
            np.full(shape, math.inf),
            np.full(shape, 2.0),
            np.full(shape, -2.0),
            np.zeros((shape[0] + 1,)),
            np.zeros((1, *shape)),
        ]
    if isinstance(space, gym.spaces.MultiDiscrete):
        nvec = space.nvec
        return [*common, nvec.copy(), np.array([0, -1]), np.array([0]), np.zeros((2, 2), dtype=np.int64), [0.5, 0.0]]
    return [*common, -1, int(space.n), 10**30, 0.5, np.array([0, 0])]  # a (1,) integer array is accepted


def objective_total(env_id: str, env: Any, metrics: dict[str, Any]) -> float:
    """The episode's total objective, whose negative the (unscaled, penalty-free) return equals."""
    n = float(metrics["n_completed"])
    if env_id == MALLEABLE:
        return float(metrics["total_slowdown" if env.objective == "slowdown" else "total_flow_time"])
    if env_id == DISPATCH:
        return n * float(metrics[DISPATCH_OBJECTIVE_METRIC[env.objective]])
    if env_id == MULTISERVER:
        return float(metrics["total_flow_time"])
    assert env_id == MOLDABLE
    return n * float(metrics["ATT"])


def penalty(env: Any) -> float:
    """What one masked (replaced) action costs in the reward, before ``reward_scale``."""
    return float(env.invalid_action_penalty) if getattr(env, "invalid_action", None) == "penalty" else 0.0
