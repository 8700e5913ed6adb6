"""A trained model as a contender of ``schedenv.evaluation.evaluate`` (the Baseline protocol, docs/baselines/index.md).

The agent sees what the env shows (the observation, normalised with the run's ``VecNormalize``
statistics) and, for masked discrete envs, the env's ``action_masks()``; it acts deterministically
(the policy's mode), so an evaluation on fixed seeds is reproducible.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.distributions import DiagGaussianDistribution
from stable_baselines3.common.policies import ActorCriticPolicy, BaseModel, BasePolicy
from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor
from stable_baselines3.common.vec_env import VecNormalize
from torch import nn

from agents.algorithms import algorithm_class, get_algorithm
from agents.normalize import normalized
from agents.runs import Checkpoint, best_model, final_model, read_config


class AgentContender:
    """An RL model acting through ``act(observation, env)`` like a baseline policy."""

    def __init__(
        self,
        name: str,
        model: BaseAlgorithm,
        normalizer: VecNormalize | None = None,
        uses_masks: bool = False,
        deterministic: bool = True,
    ) -> None:
        self.name = name
        """The contender's name in evaluation tables."""
        self.model = model
        """The stable-baselines3 model."""
        self.device = model.policy.device
        """Where the policy's parameters live (looked up once: SB3 finds it by walking the parameters)."""
        self.normalizer = normalizer
        """Observation statistics of training (None: observations are used as they are)."""
        self.uses_masks = uses_masks
        """True for MaskablePPO: the env's ``action_masks()`` is passed to ``predict``."""
        self.deterministic = deterministic
        """Act with the policy's mode (True) or sample from it (False)."""

    def reset(self, env: gym.Env) -> None:
        """Nothing to reset: the policies trained here are feed-forward."""

    def act(self, observation: Any, env: gym.Env) -> Any:
        """The model's action for ``observation``, in ``env``'s action space."""
        obs = np.asarray(observation, dtype=np.float32)
        if self.normalizer is not None:
            obs = np.asarray(self.normalizer.normalize_obs(obs), dtype=np.float32)
        if self.uses_masks:
            masks = np.asarray(env.get_wrapper_attr("action_masks")(), dtype=bool)
            action, _ = self.model.predict(obs, deterministic=self.deterministic, action_masks=masks)  # type: ignore[call-arg]
        else:
            action, _ = self.model.predict(obs, deterministic=self.deterministic)
        if isinstance(env.action_space, spaces.Discrete):
            return int(action)
        return np.asarray(action, dtype=env.action_space.dtype)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
        """Actions for a batch of observations (one row per env copy), for ``agents.assess.play_batched``.

        ``masks`` (B x n) is used by MaskablePPO; the actions are the policy's (deterministic) choices,
        the same as ``act`` gives row by row. The forward pass is ``policy_actions`` (SB3's ``predict`` minus
        its per-call checks, train/eval switch and module-call overhead, which cost more than the network on
        the small batches of a validation), then Box actions are clipped or unscaled as ``predict`` does.
        """
        if self.uses_masks and masks is None:
            raise ValueError(f"{self.name} acts with action masks; the batched env gave none")
        obs = np.asarray(observations, dtype=np.float32)
        normalizer = self.normalizer
        if normalizer is not None and normalizer.norm_obs:
            obs = normalized(normalizer, obs)
        policy = self.model.policy
        if policy.training:  # a model still being trained is switched to evaluation, once
            policy.set_training_mode(False)
        obs_shape, action_shape = tuple(policy.observation_space.shape or ()), tuple(policy.action_space.shape or ())
        with torch.no_grad():
            tensor = torch.as_tensor(obs.reshape((-1, *obs_shape)), device=self.device)
            found = policy_actions(policy, tensor, masks if self.uses_masks else None, self.deterministic)
        actions = found.cpu().numpy().reshape((-1, *action_shape))
        if isinstance(policy.action_space, spaces.Box):
            if policy.squash_output:
                return np.asarray(policy.unscale_action(actions))
            return np.clip(actions, policy.action_space.low, policy.action_space.high)
        return actions

    def __repr__(self) -> str:
        return f"AgentContender(name={self.name!r}, model={type(self.model).__name__})"


def lean_forward(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``module(x)`` with ``Linear``, ``ReLU``, ``Tanh`` and ``Flatten`` layers (alone or in an ``nn.Sequential``)
    applied as the functions their ``forward`` calls (same kernels, same values) without ``nn.Module.__call__``'s
    per-layer hook dispatch; any other layer is called as a module."""
    layers = module if isinstance(module, nn.Sequential) else (module,)
    for layer in layers:
        kind = type(layer)
        if kind is nn.Linear:
            linear = cast(nn.Linear, layer)
            x = F.linear(x, linear.weight, linear.bias)
        elif kind is nn.ReLU and not layer.inplace:
            x = torch.relu(x)
        elif kind is nn.Tanh:
            x = torch.tanh(x)
        elif kind is nn.Flatten:
            flatten = cast(nn.Flatten, layer)
            x = x.flatten(flatten.start_dim, flatten.end_dim)
        else:
            x = layer(x)
    return x


def policy_actions(
    policy: BasePolicy, observations: torch.Tensor, masks: np.ndarray | None, deterministic: bool
) -> torch.Tensor:
    """The actions SB3's ``policy._predict(observations, deterministic[, action_masks=masks])`` gives, bit for bit.

    The actor's layers run through ``lean_forward`` (SB3's ``extract_features``, ``forward_actor`` and
    ``action_net`` call the same functions); the deterministic Gaussian action is the mean itself (what
    ``DiagGaussianDistribution.mode`` returns); any other action comes from the policy's own distribution
    object, masked as ``MaskableActorCriticPolicy.get_distribution`` masks it. ``tests/agents/test_contender.py``
    checks equality with ``predict`` for Box, Discrete and MultiDiscrete, masked, deterministic and sampled.
    """
    if not isinstance(policy, ActorCriticPolicy | MaskableActorCriticPolicy):
        return policy._predict(observations, deterministic=deterministic)  # e.g. DQN, SAC
    extractor = policy.pi_features_extractor
    if type(extractor) is FlattenExtractor and isinstance(policy.observation_space, spaces.Box):
        features = lean_forward(extractor.flatten, observations.float())  # preprocess_obs of a Box: .float()
    else:
        features = BaseModel.extract_features(policy, observations, extractor)
    mlp = policy.mlp_extractor
    latent = lean_forward(mlp.policy_net, features) if type(mlp) is MlpExtractor else mlp.forward_actor(features)
    dist = policy.action_dist
    if isinstance(dist, MaskableDistribution):
        distribution = dist.proba_distribution(action_logits=lean_forward(policy.action_net, latent))
        if masks is not None:
            distribution.apply_masking(masks)
        return distribution.get_actions(deterministic=deterministic)
    if deterministic and type(dist) is DiagGaussianDistribution:
        return lean_forward(policy.action_net, latent)
    return policy._get_action_dist_from_latent(latent).get_actions(deterministic=deterministic)


def load_normalizer(path: Path) -> VecNormalize | None:
    """Saved ``VecNormalize`` statistics, frozen for evaluation, or None if ``path`` does not exist."""
    if not Path(path).is_file():
        return None
    with open(path, "rb") as file:
        normalizer = pickle.load(file)
    if not isinstance(normalizer, VecNormalize):
        raise ValueError(f"{path} does not hold VecNormalize statistics")
    normalizer.training = False
    normalizer.norm_reward = False
    return normalizer


def load(path: str | Path, *, deterministic: bool = True, best: bool = False) -> AgentContender:
    """The agent trained in the run folder ``path`` (``model.zip``, else its newest checkpoint).

    With ``best``, the model of the run's best validation evaluation (``best_model.zip``: selected
    on validation seeds only, so test seeds stay held out).

    >>> agent = load("runs/malleable")  # doctest: +SKIP
    >>> evaluate("schedenv/Malleable-v0", agent, seeds=range(10))  # doctest: +SKIP
    """
    run_dir = Path(path)
    config = read_config(run_dir)
    checkpoint = best_model(run_dir) if best else final_model(run_dir)
    if checkpoint is None:
        wanted = "best_model.zip" if best else "model.zip and no checkpoint"
        raise ValueError(f"{run_dir} holds no model yet (no {wanted})")
    return load_checkpoint(
        checkpoint, config, name=f"{config['algo']}:{run_dir.resolve().name}", deterministic=deterministic
    )


def load_checkpoint(
    checkpoint: Checkpoint, config: dict[str, Any], name: str, deterministic: bool = True
) -> AgentContender:
    """A contender from one saved model and its statistics (``config`` is the run's resolved config)."""
    return load_model(checkpoint.model, str(config["algo"]), checkpoint.vecnormalize, name, deterministic)


def load_model(
    model: Path, algo_name: str, vecnormalize: Path | None, name: str, deterministic: bool = True
) -> AgentContender:
    """A contender from an SB3 model file of algorithm ``algo_name`` (``agents.algorithms``) on the CPU,
    with the ``VecNormalize`` statistics ``vecnormalize`` if that file exists."""
    torch.set_num_threads(1)
    algo = get_algorithm(algo_name)
    loaded = algorithm_class(algo.name).load(model, device="cpu")
    statistics = None if vecnormalize is None else load_normalizer(vecnormalize)
    return AgentContender(name, loaded, statistics, algo.needs_masks, deterministic)
