"""Stable-Baselines3 ``VecEnv`` over a native batched Gymnasium vector env (docs/rl/index.md).

SB3 resets a finished copy in the same step and hands back its last observation in
``infos[i]["terminal_observation"]``; Gymnasium 1.x vector envs default to resetting on the next step.
The adapter therefore drives the batched env in ``"SameStep"`` autoreset mode and translates its
``final_obs`` / ``final_info`` into SB3's per-copy info dicts (with the episode's ``episode_metrics``).
Wrap the adapter in ``VecMonitor`` for episode returns in SB3's logs.

>>> from agents.vec_adapter import BatchedVecEnv
>>> from stable_baselines3.common.vec_env import VecMonitor
>>> venv = VecMonitor(BatchedVecEnv.make("schedenv/Malleable-v0", num_envs=256, mode="online"))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn


class BatchedVecEnv(VecEnv):
    """SB3 view of a Gymnasium ``VectorEnv`` whose autoreset mode is ``"SameStep"``."""

    def __init__(self, vector_env: VectorEnv) -> None:
        if vector_env.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"vector_env has autoreset_mode={vector_env.metadata.get('autoreset_mode')!r}; SB3 needs "
                "'SameStep' (build it with autoreset_mode='SameStep', or use BatchedVecEnv.make)"
            )
        self.vector_env = vector_env
        self._actions: np.ndarray | None = None
        super().__init__(vector_env.num_envs, vector_env.single_observation_space, vector_env.single_action_space)

    @classmethod
    def make(cls, env_id: str, num_envs: int, **env_kwargs: Any) -> BatchedVecEnv:
        """The adapter over ``gym.make_vec(env_id, num_envs, autoreset_mode="SameStep", **env_kwargs)``."""
        return cls(gym.make_vec(env_id, num_envs=num_envs, autoreset_mode="SameStep", **env_kwargs))

    def reset(self) -> VecEnvObs:
        seeds = None if all(seed is None for seed in self._seeds) else list(self._seeds)
        options = self._options[0] if self._options and self._options[0] else None
        vector_env: Any = self.vector_env  # batched envs take one seed per copy, as SyncVectorEnv does
        observations, _ = vector_env.reset(seed=seeds, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        observations, rewards, terminated, truncated, info = self.vector_env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:  # each metric of the ended copies as Python floats, one conversion per metric
            metrics = info["final_info"].get("episode_metrics", {})
            columns = {k: v[ended].astype(np.float64).tolist() for k, v in metrics.items() if not k.startswith("_")}
            cut = (truncated & ~terminated)[ended].tolist()
            for j, i in enumerate(ended.tolist()):
                infos[i]["terminal_observation"] = info["final_obs"][i]
                infos[i]["TimeLimit.truncated"] = cut[j]
                infos[i]["episode_metrics"] = {k: column[j] for k, column in columns.items()}
        return observations, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.vector_env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.vector_env, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"the batched env shares one configuration; cannot set {attr_name!r} per copy")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kwargs: Any) -> list:
        """Call ``method_name`` of the batched env; ``action_masks`` gives each copy its own row.

        sb3-contrib's MaskablePPO calls ``env_method("action_masks")`` and stacks one mask per copy,
        so the batched (B, n) array is split by copy rather than repeated.
        """
        result = getattr(self.vector_env, method_name)(*method_args, **kwargs)
        if method_name == "action_masks":
            return [result[i] for i in self._indices(indices)]
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def _indices(self, indices: VecEnvIndices) -> Sequence[int] | Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices
