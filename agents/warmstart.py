"""Warm start: clone a baseline into an on-policy model before RL (``schedenv train --warm-start``).

The named baseline plays whole episodes of the training env (on training-range seeds that no env
copy of the run is reset with); its observations and actions, in the env's own action space, are
the demonstrations. Behaviour cloning then maximises the policy's log-likelihood of the
baseline's actions (masked for MaskablePPO) with the policy's log-std frozen, so that the
fine-tuning keeps its exploration, and fits the value head to the demonstrations' discounted
returns as the run's ``VecNormalize`` will scale them, so that the first PPO updates start from a
critic that knows the clone's returns instead of tearing the clone down. See docs/rl/index.md.

Two options change what is cloned (docs/rl/index.md, "Warm start"): DAgger rounds (``demonstrate`` with a
``driver``: the clone plays, the teacher labels the states it reaches, the clone learns the aggregate) and a
``Lookahead`` teacher, the baseline improved by a one-step lookahead that tries every allowed action on a
copy of the episode.

``imitation`` 1.0 would pin gymnasium 0.29 and stable-baselines3 2.2, below this project's versions,
so the cloning is this plain supervised loop on the SB3 policy.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
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
from baselines.base import Policy, best_by_return
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


def aggregate(first: Demonstrations, second: Demonstrations) -> Demonstrations:
    """The decisions of ``first``, then those of ``second`` (DAgger's aggregate data set)."""

    def joined(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
        return None if a is None or b is None else np.concatenate([a, b])

    return Demonstrations(
        np.concatenate([first.observations, second.observations]),
        np.concatenate([first.actions, second.actions]),
        joined(first.masks, second.masks),
        np.concatenate([first.rewards, second.rewards]),
        np.concatenate([first.episode_starts, second.episode_starts]),
        joined(first.alternatives, second.alternatives),
    )


def check_warm_start(baseline: str, env_id: str, algo: str) -> str:
    """``baseline`` if it acts on ``env_id`` and ``algo`` can be cloned into; else ``ValueError``."""
    if algo not in WARM_START_ALGOS:
        raise ValueError(f"--warm-start needs an actor-critic algorithm ({', '.join(WARM_START_ALGOS)}); algo={algo!r}")
    names = baselines.available(env_id, planners=True)
    if baseline not in names:
        raise ValueError(
            f"warm_start={baseline!r} is not a baseline of {env_id}{suggest(baseline, names)}; choose one of {names}"
        )
    return baseline


def demonstration_seeds(run_seed: int) -> Iterator[int]:
    """Training-range seeds for demonstrations: the run's copies counted down from the last one."""
    for index in range(MAX_ENV_COPIES - 1, -1, -1):
        yield train_seed(run_seed, index)


Driver = Callable[[Any, gym.Env], Any]
"""What plays a demonstration episode in DAgger: the action at (observation, env), e.g. ``model_driver``."""


class Lookahead:
    """A baseline improved by a one-step lookahead (rollout policy improvement; docs/rl/index.md, "Warm start").

    At each decision every action the env allows is tried on a deep copy of the env and of the baseline,
    and the copied baseline plays the copy to the episode's end; the action whose trial returns the most
    is taken, the baseline's own action unless another returns more by over 1e-9 of the magnitude. The
    baseline's own trial replays exactly what the baseline would do, so in these deterministic episodes
    the lookahead never returns less than the baseline. Where the env's ``option_zero_baseline`` names the
    baseline (its every decision is action 0), the trials play on with action 0 instead of asking it. The
    copies replay the episode's drawn future (its arrivals and sizes): a clairvoyant teacher for training
    seeds, never a contender. A decision costs one episode's remainder per allowed action. Envs with a
    masked ``Discrete`` action space only.
    """

    def __init__(self, baseline: str, **kwargs: Any) -> None:
        self.baseline = baselines.make(baseline, **kwargs)
        self._zero = False
        """The env's action 0 is the baseline's decision (``option_zero_baseline``): trials play on with it."""

    def reset(self, env: gym.Env) -> None:
        """Start an episode (``Policy.reset``)."""
        self.baseline.reset(env)
        self._zero = getattr(env.unwrapped, "option_zero_baseline", None) == self.baseline.name

    def act(self, observation: Any, env: gym.Env) -> int:
        """The action whose trial returns the most (``Policy.act``)."""
        own = int(self.baseline.act(observation, env))  # the baseline decides here, as in its own episode
        allowed = np.flatnonzero(env.unwrapped.action_masks())  # type: ignore[attr-defined]
        if self._zero and callable(getattr(env.unwrapped, "paper_policy_returns", None)):
            # compiled trials: equal to stepping copies to rounding, and about 10x faster
            returns = env.unwrapped.paper_policy_returns(allowed.tolist())  # type: ignore[attr-defined]
        else:
            returns = np.array([self._trial(env, action) for action in allowed.tolist()])
        return best_by_return(allowed, returns, own)

    def _trial(self, env: gym.Env, action: int) -> float:
        """The return from here of ``action`` followed by the baseline, on copies of ``env`` and the baseline
        (or with action 0 where the env says that it is the baseline's decision: the same actions, faster)."""
        trial_env, baseline = copy.deepcopy((env, None if self._zero else self.baseline))
        observation, reward, terminated, truncated, _ = trial_env.step(action)
        total = float(reward)
        while not (terminated or truncated):
            follow = 0 if baseline is None else baseline.act(observation, trial_env)
            observation, reward, terminated, truncated, _ = trial_env.step(follow)
            total += float(reward)
        return total


def check_lookahead_space(env: gym.Env) -> None:
    """``ValueError`` unless ``Lookahead`` can enumerate the actions of ``env``: masked ``Discrete`` ones."""
    space = env.action_space
    if not isinstance(space, gym.spaces.Discrete) or not callable(getattr(env.unwrapped, "action_masks", None)):
        raise ValueError(
            f"warm_start_lookahead=True tries every allowed action, so it needs a Discrete action space with "
            f"action_masks(), not {space}; leave it false for this env"
        )


def teacher(baseline: str, lookahead: bool, kwargs: Mapping[str, Any] | None = None) -> Policy | Lookahead:
    """The policy whose actions are cloned: ``baseline`` made with ``kwargs``, or its ``Lookahead``."""
    arguments = dict(kwargs or {})
    return Lookahead(baseline, **arguments) if lookahead else baselines.make(baseline, **arguments)


def check_baseline_kwargs(baseline: str, kwargs: Any) -> None:
    """``ValueError`` naming ``warm_start_kwargs`` unless ``baselines.make(baseline, **kwargs)`` builds the
    baseline (a mapping of its constructor's arguments, with values it accepts)."""
    if not isinstance(kwargs, Mapping) or not all(isinstance(key, str) for key in kwargs):
        raise ValueError(f"warm_start_kwargs={kwargs!r} is not allowed; it is a mapping of argument names to values")
    try:
        baselines.make(baseline, **kwargs)
    except (TypeError, ValueError) as error:
        given = dict(kwargs)
        raise ValueError(f"warm_start_kwargs={given!r} is not allowed for warm_start={baseline!r}: {error}") from None


def model_driver(model: BaseAlgorithm) -> Driver:
    """``model``'s deterministic action at (observation, env), its observation normalised as in training and
    masked by the env's ``action_masks()`` for MaskablePPO (a DAgger round's ``driver``)."""
    normalizer = model.get_vec_normalize_env()
    masked = "action_masks" in inspect.signature(model.predict).parameters

    def act(observation: Any, env: gym.Env) -> Any:
        batch = np.asarray(observation, dtype=np.float32)[None]
        if normalizer is not None and normalizer.norm_obs:
            batch = np.asarray(normalizer.normalize_obs(batch), dtype=np.float32)
        kwargs = {"action_masks": env.unwrapped.action_masks()[None]} if masked else {}  # type: ignore[attr-defined]
        action, _ = model.predict(batch, deterministic=True, **kwargs)
        return action[0]

    return act


def demonstrate(
    env_id: str,
    env_kwargs: dict[str, Any],
    baseline: str | Policy | Lookahead,
    seeds: Iterator[int],
    min_steps: int,
    explore: Sequence[str] = (),
    driver: Driver | None = None,
) -> Demonstrations:
    """Whole episodes of ``baseline`` (a name, or a policy such as ``Lookahead``) on ``env_id`` until at least
    ``min_steps`` decisions are recorded.

    Each baseline named in ``explore`` is asked, at every decision of ``baseline``'s episodes, which
    action it would take there (``Demonstrations.alternatives``); it never acts. With a ``driver`` the
    driver plays the episodes and ``baseline`` only labels them, still asked at every decision (DAgger's
    data: the teacher's actions on the states the learner reaches); the rewards are the driver's.
    """
    env = gym.make(env_id, disable_env_checker=True, **env_kwargs)
    policy = baselines.make(baseline) if isinstance(baseline, str) else baseline
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
                played = action if driver is None else driver(observation, env)
                observation, reward, terminated, truncated, _ = env.step(played)
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


def update_statistics(normalizer: VecNormalize | None, demos: Demonstrations, gamma: float) -> None:
    """Update ``normalizer``'s observation statistics with the demonstrations' observations and its return
    statistics with their running discounted returns (what ``VecNormalize`` tracks), so that training starts
    with their scales."""
    if normalizer is None:
        return
    if normalizer.norm_obs:
        normalizer.obs_rms.update(demos.observations)
    if normalizer.norm_reward:
        running = np.empty_like(demos.rewards)
        accumulated = 0.0
        for t, (reward, start) in enumerate(zip(demos.rewards, demos.episode_starts, strict=True)):
            accumulated = reward + (0.0 if start else gamma * accumulated)
            running[t] = accumulated
        normalizer.ret_rms.update(running)


def value_targets(demos: Demonstrations, gamma: float, normalizer: VecNormalize | None) -> np.ndarray:
    """Discounted returns-to-go of the demonstrations, with rewards scaled as ``normalizer`` scales them."""
    rewards = demos.rewards
    if normalizer is not None and normalizer.norm_reward:
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
    names = baselines.available(env_id, planners=True)
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
    statistics: Demonstrations | None = None,
) -> dict[str, float]:
    """Behaviour cloning of ``demos`` into ``model``'s policy (and its value head); returns the last epoch's losses.

    The normaliser's statistics are first updated with ``statistics`` (default: ``demos``): a DAgger
    round clones the aggregate of every round's demonstrations but counts only its new ones there, so
    each observation enters the statistics once (``update_statistics``).

    With ``smoothing`` ε > 0 (discrete actions) the target puts 1 - ε on the baseline's action and ε
    spread evenly over the valid actions (label smoothing), or, when ``demos`` holds other baselines'
    actions (``demonstrate(explore=...)``), ε/m on each of the m others' choices. The clone's most
    likely action stays the baseline's, so it acts as the baseline when deterministic, while the
    fine-tuning samples the other actions about ε of the time instead of never (docs/rl/index.md,
    "Warm start").
    """
    normalizer = model.get_vec_normalize_env()
    update_statistics(normalizer, demos if statistics is None else statistics, gamma)
    observations = demos.observations
    if normalizer is not None and normalizer.norm_obs:
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
