"""SB3's ``VecNormalize`` with each step's terminal observations normalised in one batch, and every
normalisation in one compiled pass (docs/rl/index.md, "Training speed").

SB3's ``VecNormalize.step_wait`` normalises the terminal observation of every copy whose episode ended,
one copy at a time, each through ``normalize_obs`` (a deepcopy, then the normalisation): about 11 µs a
copy. Where episodes are short (Malleable offline: 8 decisions) that was a tenth of a rollout.
``BatchedVecNormalize`` normalises them together. Each normalisation, ``clip((x - mean) / sqrt(var + eps))``
in float64 then rounded to float32, is numpy's four passes over the batch (three float64 temporaries) in
SB3 and one compiled pass here (``normalized``), with the same IEEE operations on each element in the same
order on the same statistics, so the values are bit for bit SB3's (``tests/agents/test_normalize.py``).
It pickles as a plain ``VecNormalize``: a run's ``vecnormalize.pkl`` loads without this package.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecNormalize
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn


def normalized(normalizer: VecNormalize, observations: np.ndarray) -> np.ndarray:
    """``normalizer.normalize_obs(observations)`` for Box observations (one, or rows of them) without its
    deepcopy: the same float32 values, in one compiled pass (``_clipped_scores``)."""
    statistics = normalizer.obs_rms
    assert not isinstance(statistics, dict)  # Box observations
    features = statistics.mean.size
    scale = np.sqrt(statistics.var + normalizer.epsilon)  # SB3's divisor, computed as SB3 does
    rows = np.ascontiguousarray(observations).reshape(-1, features)
    out = np.empty(rows.shape, dtype=np.float32)
    _clipped_scores(rows, statistics.mean.reshape(features), scale.reshape(features), float(normalizer.clip_obs), out)
    return out.reshape(np.shape(observations))


@numba.njit(cache=True)
def _clipped_scores(rows: np.ndarray, mean: np.ndarray, scale: np.ndarray, clip: float, out: np.ndarray) -> None:
    """``out = float32(clip((rows - mean) / scale, -clip, clip))`` element by element, in float64 as numpy's
    ``np.clip((rows - mean) / scale, -clip, clip).astype(np.float32)`` (a NaN stays NaN, as in ``np.clip``)."""
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            score = (np.float64(rows[i, j]) - mean[j]) / scale[j]
            if score < -clip:
                score = -clip
            elif score > clip:
                score = clip
            out[i, j] = score


class BatchedVecNormalize(VecNormalize):
    """``VecNormalize`` whose ``step_wait`` normalises the step's terminal observations in one batch (see the
    module doc); Box observations only (``make_normalizer`` chooses)."""

    def step_wait(self) -> VecEnvStepReturn:
        """SB3's ``VecNormalize.step_wait``, in its order: statistics updated with the step's observations,
        observations and rewards normalised, then the terminal observations, all at once."""
        obs, rewards, dones, infos = self.venv.step_wait()
        assert isinstance(obs, np.ndarray)
        self.old_obs = obs
        self.old_reward = rewards
        if self.training and self.norm_obs:
            self.obs_rms.update(obs)
        obs = self.normalize_obs(obs)
        if self.training:
            self._update_reward(rewards)
        rewards = self.normalize_reward(rewards)
        ended = [i for i in np.flatnonzero(dones) if "terminal_observation" in infos[i]]
        if ended and self.norm_obs:
            terminal = normalized(self, np.stack([infos[i]["terminal_observation"] for i in ended]))
            for i, row in zip(ended, terminal, strict=True):
                infos[i]["terminal_observation"] = row
        self.returns[dones] = 0
        return obs, rewards, dones, infos

    def normalize_obs(self, obs: np.ndarray | dict[str, np.ndarray]) -> np.ndarray | dict[str, np.ndarray]:
        """SB3's ``normalize_obs`` (a new array; the statistics unchanged), in one pass (``normalized``)."""
        if self.norm_obs and isinstance(obs, np.ndarray):
            return normalized(self, obs)
        return super().normalize_obs(obs)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickle as SB3's ``VecNormalize`` (the same state; ``set_venv`` after loading, as for any)."""
        return object.__new__, (VecNormalize,), self.__getstate__()

    @classmethod
    def of(cls, normalizer: VecNormalize) -> BatchedVecNormalize:
        """A ``BatchedVecNormalize`` with the state of the unpickled ``normalizer`` (no venv yet)."""
        batched = cls.__new__(cls)
        batched.__dict__.update(normalizer.__dict__)
        return batched


def _batches(venv: VecEnv) -> bool:
    """Whether ``venv``'s normalizer is a ``BatchedVecNormalize``: its observations are a Box."""
    return isinstance(venv.observation_space, spaces.Box)


def make_normalizer(venv: VecEnv, **kwargs: Any) -> VecNormalize:
    """``VecNormalize(venv, **kwargs)``, batched over terminal observations where they are a Box."""
    return (BatchedVecNormalize if _batches(venv) else VecNormalize)(venv, **kwargs)


def resumed_normalizer(normalizer: VecNormalize, venv: VecEnv) -> VecNormalize:
    """The unpickled ``normalizer`` (saved as SB3's class) over ``venv``, of the class ``make_normalizer`` builds."""
    if _batches(venv):
        normalizer = BatchedVecNormalize.of(normalizer)
    normalizer.set_venv(venv)
    return normalizer
