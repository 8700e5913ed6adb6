"""Run an env's ``reference`` baseline on the agent's own episode (the runner of ``schedenv.reference``).

The envs reach this module by name (``schedenv.reference.RUNNER``): it sits above the baselines and
the fast path, which the envs may not import. A seeded episode of a baseline with a compiled path
runs there (``run_fast``, with the env's exact job stream); any other runs through a private copy of
the env whose generator is the agent's episode's, copied before the workload was drawn, so it draws
the same jobs even after a reset without a seed. Both give ``evaluate``'s numbers on the same seed
(tests/test_reference.py).
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np

import baselines
from baselines.base import Policy
from schedenv.evaluation import play_episode
from schedenv.fastpath import evaluate_fast, run_fast, supports
from schedenv.reference import AUTO_SCALE_SEEDS
from schedenv.validation import MAX_JOBS, suggest


def check_reference(env_id: str, name: Any) -> str:
    """``name`` if it is a baseline of ``env_id``; else an error naming the allowed names and near matches."""
    allowed = baselines.available(env_id)
    if isinstance(name, str) and name in allowed:
        return name
    where = ""
    if isinstance(name, str) and name in baselines.available():
        where = f" ({name!r} is a baseline of {baselines.env_id_of(name)}, not of {env_id})"
    hint = suggest(name, allowed) if isinstance(name, str) else ""
    raise ValueError(f"reference={name!r} is not allowed{where}; choose one of {allowed}{hint}")


def make_reference(env_id: str, name: Any) -> Policy:
    """The baseline ``name`` of ``env_id`` (checked by ``check_reference``), built once per env.

    The env keeps it across episodes, so that what a baseline derives from the scenario alone (the
    TAGS cutoffs, an optimisation) is computed once.
    """
    return baselines.make(check_reference(env_id, name))


def reference_metrics(
    env_id: str, policy: Policy, seed: int | None, generator: np.random.Generator, env_kwargs: dict[str, Any]
) -> dict[str, float]:
    """The ``episode_metrics`` of ``policy`` on the episode ``gym.make(env_id, **env_kwargs)`` draws.

    ``seed``: the episode's reset seed (None after a reset without one); ``generator``: the env's
    generator right after that reset, before the workload was drawn from it.
    """
    if seed is not None and supports(env_id, policy, **env_kwargs):
        return dict(run_fast(env_id, policy, seed, chunk=MAX_JOBS, **env_kwargs).metrics)
    env = gym.make(env_id, **env_kwargs)
    try:
        env.unwrapped.np_random = copy.deepcopy(generator)
        observation, _ = env.reset()
        label = -1 if seed is None else seed
        return play_episode(env, policy, observation, label, keep_records=False).metrics
    finally:
        env.close()


def auto_reward_scale(env_id: str, env_kwargs: dict[str, Any]) -> float:
    """``reward_scale="auto"``: one over the paper policy's mean total objective on ``AUTO_SCALE_SEEDS``.

    The total objective of an episode is minus its return (the envs' Rewards section), so the paper
    policy's scaled return averages -1 on those seeds.
    """
    paper = baselines.reference(env_id)
    result = evaluate_fast(env_id, paper, AUTO_SCALE_SEEDS, **env_kwargs)
    total = -float(np.mean(result.values("return")))
    if not (np.isfinite(total) and total > 0):
        raise ValueError(
            f"reward_scale='auto' needs a positive finite total objective, but {paper} scores {total!r} per episode "
            f"on {env_id} with {env_kwargs!r}; give reward_scale as a number"
        )
    return 1.0 / total


__all__ = ["auto_reward_scale", "check_reference", "make_reference", "reference_metrics"]
