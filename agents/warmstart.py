"""Warm start: clone a baseline into an on-policy model before RL (``schedenv train --warm-start``).

The named baseline plays whole episodes of the training env (on training-range seeds that no env
copy of the run is reset with); its observations and actions, in the env's own action space, are
the demonstrations. Behaviour cloning then maximises the policy's log-likelihood of the
baseline's actions (masked for MaskablePPO) with the policy's log-std frozen, so that the
fine-tuning keeps its exploration, and fits the value head to the demonstrations' discounted
returns as the run's ``VecNormalize`` will scale them, so that the first PPO updates start from a
critic that knows the clone's returns instead of tearing the clone down. See docs/rl/index.md.

``imitation`` 1.0 would pin gymnasium 0.29 and stable-baselines3 2.2, below this project's versions,
so the cloning is this plain supervised loop on the SB3 policy (no DAgger).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecNormalize

import baselines
from agents.masking import FusedMaskedDistribution
from agents.protocol import MAX_ENV_COPIES, train_seed
from schedenv.validation import suggest

WARM_START_ALGOS = ("ppo", "a2c", "maskable_ppo")
"""Algorithms whose actor-critic policy can be cloned into (off-policy ones have other heads)."""


@dataclass(frozen=True)
class Demonstrations:
    """Whole episodes of a baseline: one row per decision."""

    observations: np.ndarray
    """(n, obs_dim) float32, as the env returns them (not normalised)."""
    actions: np.ndarray
    """(n, ...) the baseline's actions in the env's action space."""
    masks: np.ndarray | None
    """(n, mask_dim) bool action masks of a masked discrete env, else None."""
    rewards: np.ndarray
    """(n,) the env's rewards."""
    episode_starts: np.ndarray
    """(n,) True at the first decision of each episode."""
    alternatives: np.ndarray | None = None
    """(n, m, ...) the actions m other baselines (``explore``) would take at each decision, else None."""

    @property
    def n_episodes(self) -> int:
        """Whole episodes in the demonstrations."""
        return int(self.episode_starts.sum())


def check_warm_start(baseline: str, env_id: str, algo: str) -> str:
    """``baseline`` if it acts on ``env_id`` and ``algo`` can be cloned into; else ``ValueError``."""
    if algo not in WARM_START_ALGOS:
        raise ValueError(f"--warm-start needs an actor-critic algorithm ({', '.join(WARM_START_ALGOS)}); algo={algo!r}")
    names = baselines.available(env_id)
    if baseline not in names:
        raise ValueError(
            f"warm_start={baseline!r} is not a baseline of {env_id}{suggest(baseline, names)}; choose one of {names}"
        )
    return baseline


def demonstration_seeds(run_seed: int) -> Iterator[int]:
    """Training-range seeds for demonstrations: the run's copies counted down from the last one."""
    for copy in range(MAX_ENV_COPIES - 1, -1, -1):
        yield train_seed(run_seed, copy)


def demonstrate(
    env_id: str,
    env_kwargs: dict[str, Any],
    baseline: str,
    seeds: Iterator[int],
    min_steps: int,
    explore: Sequence[str] = (),
) -> Demonstrations:
    """Whole episodes of ``baseline`` on ``env_id`` until at least ``min_steps`` decisions are recorded.

    Each baseline named in ``explore`` is asked, at every decision of ``baseline``'s episodes, which
    action it would take there (``Demonstrations.alternatives``); it never acts.
    """
    env = gym.make(env_id, disable_env_checker=True, **env_kwargs)
    policy = baselines.make(baseline)
    others = [baselines.make(name) for name in explore]
    action_masks = getattr(env.unwrapped, "action_masks", None)
    masked = callable(action_masks) and isinstance(env.action_space, gym.spaces.Discrete | gym.spaces.MultiDiscrete)
    observations: list[np.ndarray] = []
    actions: list[np.ndarray] = []
    alternatives: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    rewards: list[float] = []
    starts: list[bool] = []
    try:
        while len(rewards) < min_steps:
            observation, _ = env.reset(seed=next(seeds))
            for agent in (policy, *others):
                agent.reset(env)
            terminated = truncated = False
            starts.append(True)
            while not (terminated or truncated):
                action = policy.act(observation, env)
                observations.append(np.asarray(observation, dtype=np.float32))
                actions.append(np.asarray(action))
                if others:
                    alternatives.append(np.stack([np.asarray(other.act(observation, env)) for other in others]))
                if masked:
                    assert callable(action_masks)
                    masks.append(np.asarray(action_masks(), dtype=np.bool_))
                observation, reward, terminated, truncated, _ = env.step(action)
                rewards.append(float(reward))
                starts.append(False)
            starts.pop()
    finally:
        env.close()
    return Demonstrations(
        np.stack(observations),
        np.stack(actions),
        np.stack(masks) if masked else None,
        np.asarray(rewards),
        np.asarray(starts, dtype=np.bool_),
        np.stack(alternatives) if others else None,
    )


def value_targets(demos: Demonstrations, gamma: float, normalizer: VecNormalize | None) -> np.ndarray:
    """Discounted returns-to-go of the demonstrations, with rewards scaled as ``normalizer`` will scale them.

    The normaliser's return statistics are first updated with the demonstrations' running
    discounted returns (what ``VecNormalize`` tracks), so training starts with that scale.
    """
    rewards = demos.rewards
    if normalizer is not None and normalizer.norm_reward:
        running = np.empty_like(rewards)
        accumulated = 0.0
        for t, (reward, start) in enumerate(zip(rewards, demos.episode_starts, strict=True)):
            accumulated = reward + (0.0 if start else gamma * accumulated)
            running[t] = accumulated
        normalizer.ret_rms.update(running)
        rewards = np.asarray(normalizer.normalize_reward(rewards), dtype=np.float64)
    targets = np.empty_like(rewards)
    following = 0.0
    for t in range(rewards.size - 1, -1, -1):
        ends_here = t + 1 == rewards.size or demos.episode_starts[t + 1]
        following = rewards[t] + (0.0 if ends_here else gamma * following)
        targets[t] = following
    return targets


def check_smoothing(smoothing: float, explore: Sequence[str], env_id: str) -> float:
    """``smoothing`` if it is in [0, 1) and ``explore`` names baselines of ``env_id`` (only with smoothing > 0)."""
    if not isinstance(smoothing, int | float) or isinstance(smoothing, bool) or not 0.0 <= smoothing < 1.0:
        raise ValueError(f"warm_start_smoothing={smoothing!r} is not allowed; it must be a number in [0, 1)")
    if explore and smoothing == 0.0:
        raise ValueError(
            f"warm_start_explore={list(explore)!r} needs warm_start_smoothing > 0 (the share of the target it spreads)"
        )
    names = baselines.available(env_id)
    for name in explore:
        if name not in names:
            raise ValueError(
                f"warm_start_explore names {name!r}, not a baseline of {env_id}{suggest(name, names)}; "
                f"choose from {names}"
            )
    return float(smoothing)


def check_smoothing_space(smoothing: float, explore: Sequence[str], action_space: gym.Space) -> None:
    """``ValueError`` unless smoothing applies to ``action_space``: discrete, and ``Discrete`` with ``explore``."""
    allowed = gym.spaces.Discrete if explore else gym.spaces.Discrete | gym.spaces.MultiDiscrete
    if smoothing > 0.0 and not isinstance(action_space, allowed):
        kinds = "a Discrete" if explore else "a Discrete or MultiDiscrete"
        raise ValueError(
            f"warm_start_smoothing={smoothing!r} with warm_start_explore={list(explore)!r} needs {kinds} action "
            f"space, not {action_space}; use warm_start_smoothing=0 for this env"
        )


def smoothing_loss(distribution: Any, masks: np.ndarray | None) -> torch.Tensor:
    """Mean over the batch of -mean log-probability of the valid actions (label smoothing's uniform target).

    ``distribution`` is the fused masked head (``agents.masking``) or an SB3 (masked) categorical or
    multi-categorical distribution; ``masks`` the rows' action masks (components concatenated, as
    MaskablePPO takes them), None when all are valid.
    """
    if isinstance(distribution, FusedMaskedDistribution):
        log_probs = distribution.log_probs()
    else:
        components = distribution.distribution
        log_probs = [part.logits for part in (components if isinstance(components, list) else [components])]
    if masks is None:
        valid = [torch.ones_like(part) for part in log_probs]
    else:
        mask_t = torch.as_tensor(masks, dtype=torch.float32, device=log_probs[0].device)
        valid = list(torch.split(mask_t, [part.shape[-1] for part in log_probs], dim=-1))
    loss = torch.zeros((), device=log_probs[0].device)
    for part, allowed in zip(log_probs, valid, strict=True):
        loss = loss - ((part * allowed).sum(-1) / allowed.sum(-1)).mean()
    return loss


def clone(
    model: BaseAlgorithm,
    demos: Demonstrations,
    *,
    gamma: float,
    epochs: int,
    smoothing: float = 0.0,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    value_coef: float = 0.5,
) -> dict[str, float]:
    """Behaviour cloning of ``demos`` into ``model``'s policy (and its value head); returns the last epoch's losses.

    With ``smoothing`` ε > 0 (discrete actions) the target puts 1 - ε on the baseline's action and ε
    spread evenly over the valid actions (label smoothing), or, when ``demos`` holds other baselines'
    actions (``demonstrate(explore=...)``), ε/m on each of the m others' choices. The clone's most
    likely action stays the baseline's, so it acts as the baseline when deterministic, while the
    fine-tuning samples the other actions about ε of the time instead of never (docs/rl/index.md,
    "Warm start").
    """
    normalizer = model.get_vec_normalize_env()
    observations = demos.observations
    if normalizer is not None and normalizer.norm_obs:
        normalizer.obs_rms.update(observations)
        observations = np.asarray(normalizer.normalize_obs(observations), dtype=np.float32)
    targets = value_targets(demos, gamma, normalizer)
    policy = model.policy
    device = policy.device
    obs_t = torch.as_tensor(observations, device=device)
    actions_t = torch.as_tensor(demos.actions, device=device)
    alternatives_t = None if demos.alternatives is None else torch.as_tensor(demos.alternatives, device=device)
    targets_t = torch.as_tensor(targets, dtype=torch.float32, device=device)
    frozen = getattr(policy, "log_std", None)
    parameters = [p for p in policy.parameters() if p is not frozen]
    optimizer = torch.optim.Adam(parameters, lr=learning_rate)
    generator = np.random.default_rng(0)
    policy.set_training_mode(True)
    losses = {"policy_nll": float("nan"), "value_mse": float("nan")}
    for _ in range(epochs):
        order = generator.permutation(len(obs_t))
        totals, count = np.zeros(2), 0
        for start in range(0, order.size, batch_size):
            rows = torch.as_tensor(order[start : start + batch_size], device=device)
            masks = None if demos.masks is None else demos.masks[order[start : start + batch_size]]
            mask_kwargs = {} if masks is None else {"action_masks": masks}
            values, log_prob, _ = policy.evaluate_actions(obs_t[rows], actions_t[rows], **mask_kwargs)  # type: ignore[operator]
            nll = -log_prob.mean()
            policy_loss = nll
            if smoothing > 0.0:
                distribution: Any = policy.action_dist  # set (and masked) for these rows by evaluate_actions
                if alternatives_t is None:
                    spread = smoothing_loss(distribution, masks)
                else:  # the others' actions, each weighted 1/m
                    spread = -torch.stack([distribution.log_prob(column) for column in alternatives_t[rows].T]).mean()
                policy_loss = (1.0 - smoothing) * nll + smoothing * spread
            value_mse = torch.nn.functional.mse_loss(values.flatten(), targets_t[rows])
            optimizer.zero_grad()
            (policy_loss + value_coef * value_mse).backward()
            optimizer.step()
            totals += (nll.item(), value_mse.item())
            count += 1
        losses = {"policy_nll": totals[0] / count, "value_mse": totals[1] / count}
    policy.set_training_mode(False)
    return losses
