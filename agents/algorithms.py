"""Which RL algorithm can act in which env: the table behind ``--algo`` (docs/rl/index.md).

This module imports no torch: the CLI checks ``--algo`` against the env before any model is built,
and ``algorithm_class`` imports stable-baselines3 / sb3-contrib only when a model is needed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from schedenv.validation import suggest


@dataclass(frozen=True)
class Algorithm:
    """One trainable algorithm: where its class lives and what it can act on."""

    name: str
    """The ``--algo`` name."""
    import_path: str
    """``module:Class`` of the implementation."""
    action_spaces: tuple[type[spaces.Space], ...]
    """Action-space types the implementation supports."""
    needs_masks: bool
    """True if the env must expose ``action_masks()`` (MaskablePPO)."""
    off_policy: bool
    """True for replay-buffer algorithms (their buffer is checkpointed too)."""


_DISCRETE = (spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
_ANY = (spaces.Box, *_DISCRETE)

ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm("ppo", "stable_baselines3:PPO", _ANY, needs_masks=False, off_policy=False),
    "a2c": Algorithm("a2c", "stable_baselines3:A2C", _ANY, needs_masks=False, off_policy=False),
    "sac": Algorithm("sac", "stable_baselines3:SAC", (spaces.Box,), needs_masks=False, off_policy=True),
    "dqn": Algorithm("dqn", "stable_baselines3:DQN", (spaces.Discrete,), needs_masks=False, off_policy=True),
    "maskable_ppo": Algorithm("maskable_ppo", "sb3_contrib:MaskablePPO", _DISCRETE, needs_masks=True, off_policy=False),
}
"""Every ``--algo`` name; stable-baselines3 2.x and sb3-contrib's MaskablePPO."""


def get_algorithm(name: str) -> Algorithm:
    """The algorithm named ``name``; unknown names suggest near matches."""
    if name not in ALGORITHMS:
        raise ValueError(f"algo={name!r} is not allowed; choose one of {list(ALGORITHMS)}{suggest(name, ALGORITHMS)}")
    return ALGORITHMS[name]


def has_action_masks(env: gym.Env) -> bool:
    """True if ``env`` has a discrete action space and (itself or the env it wraps) an ``action_masks()`` method.

    Masks only mean something for discrete actions (MaskablePPO's distributions); an env whose
    continuous mode keeps the method (e.g. MultiserverJob-v0 with ``action_mode="priority"``) has none.
    """
    if not isinstance(env.action_space, _DISCRETE):
        return False
    try:
        return callable(env.get_wrapper_attr("action_masks"))
    except AttributeError:
        return False


def compatible_algorithms(env: gym.Env) -> list[str]:
    """The ``--algo`` names that can train on ``env``."""
    masked = has_action_masks(env)
    return [
        name
        for name, algo in ALGORITHMS.items()
        if isinstance(env.action_space, algo.action_spaces) and (masked or not algo.needs_masks)
    ]


def check_compatible(name: str, env: gym.Env, env_id: str) -> Algorithm:
    """The algorithm ``name`` if it can train on ``env``, else ``ValueError`` naming those that can."""
    algo = get_algorithm(name)
    usable = compatible_algorithms(env)
    if not isinstance(env.action_space, algo.action_spaces):
        supported = ", ".join(t.__name__ for t in algo.action_spaces)
        raise ValueError(
            f"algo={name!r} cannot act in the action space {env.action_space} of {env_id} "
            f"(it supports {supported}); algos that can: {usable}"
        )
    if algo.needs_masks and not has_action_masks(env):
        raise ValueError(
            f"algo={name!r} needs action masks, but {env_id} has no action_masks() method; algos that can: {usable}"
        )
    return algo


def algorithm_class(name: str) -> Any:
    """The stable-baselines3 / sb3-contrib class of ``name`` (imports torch)."""
    module, _, attribute = get_algorithm(name).import_path.partition(":")
    return getattr(importlib.import_module(module), attribute)
