"""RL harness on stable-baselines3 / sb3-contrib: train agents on schedenv envs and load them as contenders.

    schedenv train --env schedenv/Malleable-v0 --algo ppo --timesteps 100000 --out runs/malleable
    schedenv evaluate --agent runs/malleable          # 100 held-out test seeds

``agents.load(DIR)`` returns a contender (``name``, ``reset(env)``, ``act(observation, env)``) usable
by ``schedenv.evaluation.evaluate`` and the leaderboard. This package is the only one that imports
torch, and it does so lazily: importing ``agents`` or ``agents.cli`` does not load torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.contender import AgentContender


def load(path: str | Path, *, deterministic: bool = True, best: bool = False) -> AgentContender:
    """The agent trained in the run folder ``path`` as a contender (see ``agents.contender.load``).

    ``best=True`` loads ``best_model.zip``, the model of the run's best validation evaluation.
    """
    from agents.contender import load as load_run

    return load_run(path, deterministic=deterministic, best=best)


__all__ = ["load"]
