"""Where an agent's choices differ from a baseline's, state by state (docs/rl/index.md, "Dispatch beats
TAGS-slowdown": what the agents learnt).

The agent plays one episode; at each decision the baseline is asked what it would do in the same state
and never acts (as the warm start's explore baselines are asked, ``agents.warmstart``). The result
counts the decisions and, for each (baseline's action, agent's action) pair that differs, how often it
came up, with the env's own names of the actions where it has them (``decode_action``, e.g.
Dispatch's (destination, time-limit index)).

    python benchmarks/agent_choices.py runs/rl_dispatch/dispatch_maskable_ppo-seed0 --baseline tags-slowdown
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import baselines
from schedenv.comparison import objective_metric
from schedenv.evaluation import Contender


@dataclass(frozen=True)
class ChoiceDifferences:
    """One episode of an agent beside a baseline that is asked at every decision (module doc)."""

    decisions: int
    """Decisions of the episode (env steps)."""
    pairs: Counter[tuple[Any, Any]]
    """(the baseline's action, the agent's action) -> decisions at which they differ so."""
    metric: str
    """The env's objective metric (``schedenv.comparison.objective_metric``)."""
    value: float
    """The agent's episode value of ``metric``."""
    observations: np.ndarray
    """The env's observations at the differing decisions, in order (one row each): where to look for why."""

    @property
    def differing(self) -> int:
        """Decisions at which the agent did not do what the baseline would have done."""
        return sum(self.pairs.values())


def choice_differences(
    agent: Contender, baseline: str, env_id: str, env_kwargs: dict[str, Any], seed: int
) -> ChoiceDifferences:
    """Play one episode of ``env_id`` (``seed``) with ``agent`` (a loaded agent, ``agents.load``, or any
    contender) and count where it differs from ``baseline`` (a name of ``baselines.make``), asked in the
    same states; actions of a ``Discrete`` space only (a Box action differs almost everywhere)."""
    env = gym.make(env_id, **env_kwargs)
    try:
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise ValueError(
                f"env_id={env_id!r} has the action space {env.action_space}; choice_differences compares "
                "Discrete actions only"
            )
        teacher = baselines.make(baseline)
        decode = getattr(env.unwrapped, "decode_action", None)
        name = decode if callable(decode) else (lambda action: action)
        observation, info = env.reset(seed=seed)
        agent.reset(env)
        teacher.reset(env)
        pairs: Counter[tuple[Any, Any]] = Counter()
        states: list[np.ndarray] = []
        decisions, done = 0, False
        while not done:
            mine, theirs = int(agent.act(observation, env)), int(teacher.act(observation, env))
            if mine != theirs:
                pairs[(name(theirs), name(mine))] += 1
                states.append(np.array(observation, copy=True))
            decisions += 1
            observation, _, terminated, truncated, info = env.step(mine)
            done = terminated or truncated
        metric = objective_metric(env_id, env_kwargs)
        observations = np.array(states) if states else np.zeros((0, *(env.observation_space.shape or ())))
        return ChoiceDifferences(decisions, pairs, metric, float(info["episode_metrics"][metric]), observations)
    finally:
        env.close()
