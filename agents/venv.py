"""The training envs of a run, and the state that makes a resumed run equal an uninterrupted one.

``vec_env="native"`` (the default) trains on the env's native batched env (``vector_entry_point``,
one compiled call steps every copy) behind ``agents.vec_adapter.BatchedVecEnv``; ``"dummy"`` steps
``n_envs`` single ``gym.make`` envs in a loop (SB3's ``DummyVecEnv``), the reference the speed
benchmark compares with. Both reset copy i once with ``agents.protocol.train_seed(seed, i)``; every
later episode continues that copy's generator stream.

``TrainingState`` is what a model checkpoint does not hold: the envs mid-episode (the batched env
pickled whole, generators included), SB3's last observation and episode-start flags, the running
returns of ``VecNormalize`` and the global random states (torch samples actions, numpy shuffles
minibatches). Saved at the start of a rollout (after the previous update), it lets ``--resume``
continue the exact trajectory of the interrupted run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from agents.assess import make_vector
from agents.protocol import train_seed
from agents.vec_adapter import BatchedVecEnv

VEC_ENVS = ("native", "dummy")
"""Values of ``TrainConfig.vec_env``."""


def make_training_env(env_id: str, env_kwargs: dict[str, Any], n_envs: int, seed: int, vec_env: str) -> VecEnv:
    """``n_envs`` copies of ``env_id`` as an SB3 ``VecEnv`` (with episode statistics), seeded per the protocol."""
    first = train_seed(seed, 0)
    train_seed(seed, n_envs - 1)  # refuses n_envs beyond the protocol's stride
    if vec_env == "native":
        if gym.spec(env_id).vector_entry_point is None:
            raise ValueError(f"{env_id} has no native batched env (vector_entry_point); use vec_env='dummy'")
        venv: VecEnv = VecMonitor(BatchedVecEnv(make_vector(env_id, n_envs, AutoresetMode.SAME_STEP, **env_kwargs)))
        venv.seed(first)  # SB3 convention: copy i gets first + i
        return venv
    if vec_env == "dummy":
        return make_vec_env(env_id, n_envs=n_envs, seed=first, env_kwargs=env_kwargs)
    raise ValueError(f"vec_env={vec_env!r} is not allowed; choose one of {list(VEC_ENVS)}")


def batched_env(venv: VecEnv) -> BatchedVecEnv | None:
    """The ``BatchedVecEnv`` inside SB3's wrappers, if the run trains on one."""
    inner: Any = venv
    while inner is not None:
        if isinstance(inner, BatchedVecEnv):
            return inner
        inner = getattr(inner, "venv", None)
    return None


@dataclass
class TrainingState:
    """What a resumed run needs besides the model and its ``VecNormalize`` statistics."""

    vector_env: gym.vector.VectorEnv
    last_obs: Any
    last_original_obs: Any
    last_episode_starts: Any
    normalized_returns: np.ndarray | None
    torch_rng: torch.Tensor
    numpy_rng: Any
    python_rng: Any
    action_space_rng: Any

    @classmethod
    def capture(cls, model: BaseAlgorithm) -> TrainingState | None:
        """The state of ``model``'s training envs and random streams, or None if they cannot be saved.

        Only runs on the native batched env are captured (single envs behind ``DummyVecEnv`` are not
        pickled); such runs resume from the model alone, with freshly reset envs.
        """
        venv = model.get_env()
        batched = batched_env(venv) if venv is not None else None
        if batched is None or model._last_obs is None:
            return None
        normalizer = model.get_vec_normalize_env()
        return cls(
            vector_env=batched.vector_env,
            last_obs=model._last_obs,
            last_original_obs=getattr(model, "_last_original_obs", None),
            last_episode_starts=model._last_episode_starts,
            normalized_returns=None if normalizer is None else normalizer.returns.copy(),
            torch_rng=torch.get_rng_state(),
            numpy_rng=np.random.get_state(),  # noqa: NPY002 - SB3 shuffles minibatches with the legacy global generator
            python_rng=random.getstate(),
            action_space_rng=model.action_space.np_random.bit_generator.state,
        )

    def restore(self, model: BaseAlgorithm) -> None:
        """Put the saved envs, rollout cursor and random streams back into ``model`` (built on a fresh env)."""
        venv = model.get_env()
        batched = batched_env(venv) if venv is not None else None
        if batched is None:
            raise ValueError("the saved training state belongs to a run on the native batched env (vec_env='native')")
        batched.vector_env.close()
        batched.vector_env = self.vector_env
        model._last_obs = self.last_obs
        if self.last_original_obs is not None:
            model._last_original_obs = self.last_original_obs
        model._last_episode_starts = self.last_episode_starts
        normalizer = model.get_vec_normalize_env()
        if normalizer is not None and self.normalized_returns is not None:
            normalizer.returns = self.normalized_returns.copy()
        torch.set_rng_state(self.torch_rng)
        np.random.set_state(self.numpy_rng)  # noqa: NPY002
        random.setstate(self.python_rng)
        model.action_space.np_random.bit_generator.state = self.action_space_rng
