"""Rollout buffers that hand PPO the same minibatches as SB3's with fewer copies (docs/rl/index.md, "Training speed").

SB3's ``RolloutBuffer`` stores a rollout step-major, ``(n_steps, n_envs, ...)``, and before the first
minibatch swaps every array to env-major order and flattens it (``swap_and_flatten``: a copy of the whole
rollout); each minibatch is then gathered (a copy) and turned into a tensor by ``torch.tensor`` (another
copy). For wide observations these copies cost as much as the network: 5.3 kB a sample for Moldable's
ranked mode (1,338 features), about 3 µs of the 30 µs a sample spends learning.

The buffers here keep the observations (and MaskablePPO's masks) in env-major memory seen through a
step-major view, so ``add`` writes the same rows, ``swap_and_flatten`` is a free reshape, and the minibatch
gather is the only copy; the gathered arrays are fresh, so they become tensors without another
(``to_torch`` shares their memory). That memory is allocated once and kept across rollouts: SB3 allocates
a new buffer at every ``reset``, whose pages the next rollout then faults in one by one (and sb3-contrib
fills its masks with ones first), about 5 ms a rollout of 8,192 samples for Moldable's 295 features and
289 mask entries. Every row of a rollout is written before the buffer is read (``get`` needs it full), so
the rows kept from the rollout before are never seen. The minibatches hold the same values in the same
order as SB3's, so training is bit for bit the same (``tests/agents/test_buffers.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from stable_baselines3.common.buffers import RolloutBuffer


def env_major(array: np.ndarray, fill: float) -> np.ndarray:
    """An array shaped like the step-major ``array`` (n_steps, n_envs, ...), filled with ``fill``, whose
    memory is env-major, so that swapping its first two axes gives a C-contiguous array (flattened without a
    copy). A fill of 0 is a calloc: the pages are only touched when the rollout writes them."""
    shape = (array.shape[1], array.shape[0], *array.shape[2:])
    memory = np.zeros(shape, dtype=array.dtype) if fill == 0 else np.full(shape, fill, dtype=array.dtype)
    return memory.swapaxes(0, 1)


class EnvMajorRolloutBuffer(RolloutBuffer):
    """SB3's ``RolloutBuffer`` with env-major observations and copy-free tensors (see the module doc)."""

    wide: ClassVar[dict[str, float]] = {"observations": 0.0}
    """The arrays kept env-major (those with a row of features per sample), each with the value SB3's
    ``reset`` starts it with."""

    def reset(self) -> None:
        """SB3's ``reset``, with the ``wide`` arrays env-major: made at the first reset, the same memory after."""
        super().reset()
        kept = self.__dict__.get("_wide_memory")
        if kept is None:
            kept = self._wide_memory = {name: env_major(getattr(self, name), fill) for name, fill in self.wide.items()}
        for name, array in kept.items():
            setattr(self, name, array)  # get() left a flattened view in its place

    def to_torch(self, array: np.ndarray, copy: bool = True) -> torch.Tensor:
        """``array`` as a tensor; on the CPU it shares ``array``'s memory, which ``_get_samples`` has just
        gathered (a fresh array nothing else holds), so no copy is needed to keep the buffer's data safe."""
        if self.device.type == "cpu":
            return torch.from_numpy(np.ascontiguousarray(array))
        return super().to_torch(array, copy)


class EnvMajorMaskableRolloutBuffer(MaskableRolloutBuffer, EnvMajorRolloutBuffer):
    """sb3-contrib's ``MaskableRolloutBuffer`` with env-major observations and masks (see the module doc)."""

    wide: ClassVar[dict[str, float]] = {"observations": 0.0, "action_masks": 1.0}

    def reset(self) -> None:
        """sb3-contrib's ``reset`` the first time; after it, ``RolloutBuffer``'s and the kept masks (their width,
        ``mask_dims``, is the action space's): no new array of ones to fill."""
        if "_wide_memory" in self.__dict__:
            EnvMajorRolloutBuffer.reset(self)
        else:
            super().reset()

    def add(self, *args: Any, action_masks: np.ndarray | None = None, **kwargs: Any) -> None:
        """sb3-contrib's ``add``; a step without masks gets ones (all allowed), as a new buffer holds there."""
        if action_masks is None:
            self.action_masks[self.pos] = 1.0
        super().add(*args, action_masks=action_masks, **kwargs)


def rollout_buffer_class(algo: str, observation_space: Any) -> type[RolloutBuffer] | None:
    """The buffer ``agents.train`` gives ``algo`` (an ``--algo`` name): an env-major one for the on-policy
    algorithms on a ``Box`` observation, else None (the algorithm's own)."""
    if not isinstance(observation_space, spaces.Box):
        return None
    return ENV_MAJOR_BUFFERS.get(algo)


def buffer_options(algo: str, observation_space: Any) -> dict[str, Any]:
    """The keyword arguments that give a model of ``algo`` its ``rollout_buffer_class`` (none: its own), for
    building it and for loading a saved one (``agents.callbacks.save_model`` leaves the class out)."""
    buffer = rollout_buffer_class(algo, observation_space)
    return {} if buffer is None else {"rollout_buffer_class": buffer}


ENV_MAJOR_BUFFERS: dict[str, type[RolloutBuffer]] = {
    "ppo": EnvMajorRolloutBuffer,
    "a2c": EnvMajorRolloutBuffer,
    "maskable_ppo": EnvMajorMaskableRolloutBuffer,
}
"""The env-major buffer of each on-policy ``--algo`` name."""
