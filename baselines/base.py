"""The Baseline protocol (docs/baselines/index.md): ``name``, ``reset(env)``, ``act(observation, env)``.

A baseline reads the full simulator state through ``env.unwrapped`` and returns an action in the
env's own action space, so baselines and RL agents act through the same ``env.step`` on the same
seeds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np


class Policy(ABC):
    """A scheduling policy acting through an env's action space."""

    name: ClassVar[str]
    """The registry name (``baselines.make(name)``)."""

    def reset(self, env: gym.Env) -> None:  # noqa: B027 - stateless policies need no reset
        """Called once at the start of every episode, after ``env.reset``."""

    @abstractmethod
    def act(self, observation: Any, env: gym.Env) -> Any:
        """The action for the current decision epoch."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def best_by_return(actions: np.ndarray, returns: np.ndarray, own: int) -> int:
    """The action of ``actions`` whose return (aligned ``returns``) is highest, ``own`` (one of them) unless another
    returns more by over 1e-9 of its magnitude: a lookahead keeps its base policy's decision on ties
    (docs/baselines/moldable.md, "A planner")."""
    best = int(np.argmax(returns))
    base = float(returns[int(np.flatnonzero(actions == own)[0])])
    return int(actions[best]) if returns[best] > base + 1e-9 * abs(base) else own
