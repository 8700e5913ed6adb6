"""The toy family's two baselines: first come first served, and the shorter of the two slots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from baselines.base import Policy

ENV_ID = "toy/Queue-v0"
REFERENCE = "toy-shorter"


class Fcfs(Policy):
    """Always the job at the head of the queue."""

    name = "toy-fcfs"

    def act(self, observation: Any, env: gym.Env) -> int:
        return 0


class Shorter(Policy):
    """The shorter of the two jobs in the window (slot 0 on ties or when one job is left)."""

    name = "toy-shorter"

    def act(self, observation: Any, env: gym.Env) -> int:
        head, second = np.asarray(observation).tolist()
        return 1 if 0.0 < second < head else 0


POLICIES: dict[str, Callable[..., Policy]] = {"toy-fcfs": Fcfs, "toy-shorter": Shorter}
