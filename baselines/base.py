"""The Baseline protocol (docs/baselines/index.md): ``name``, ``reset(env)``, ``act(observation, env)``.

A baseline reads the full simulator state through ``env.unwrapped`` and returns an action in the
env's own action space, so baselines and RL agents act through the same ``env.step`` on the same
seeds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import gymnasium as gym


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
