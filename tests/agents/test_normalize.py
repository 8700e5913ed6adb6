"""BatchedVecNormalize steps, trains and pickles as SB3's VecNormalize (agents.normalize)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

import schedenv  # noqa: F401 - registers the env ids
from agents.normalize import BatchedVecNormalize, make_normalizer, normalized
from agents.vec_adapter import BatchedVecEnv

ENV_ID, KWARGS = "schedenv/Malleable-v0", {"n_jobs": 4, "max_jobs": 4}
"""Offline episodes of 4 decisions: in most steps some copies end and hand back terminal observations."""


def normalizer(kind: type[VecNormalize]) -> VecNormalize:
    venv = VecMonitor(BatchedVecEnv.make(ENV_ID, num_envs=6, **KWARGS))
    venv.seed(3)
    return kind(venv, norm_obs=True, norm_reward=True, clip_obs=10.0, gamma=0.99)


def test_every_step_is_bit_for_bit_sb3s_terminal_observations_included() -> None:
    ours, theirs = normalizer(BatchedVecNormalize), normalizer(VecNormalize)
    assert np.array_equal(ours.reset(), theirs.reset())
    rng, ended = np.random.default_rng(0), 0
    for _ in range(40):
        actions = rng.uniform(0.0, 1.0, (6, *ours.action_space.shape)).astype(np.float32)
        got, want = ours.step(actions), theirs.step(actions)
        for a, b in zip(got[:3], want[:3], strict=True):
            assert np.array_equal(a, b)
        for info_ours, info_theirs in zip(got[3], want[3], strict=True):
            assert info_ours.keys() == info_theirs.keys()
            if "terminal_observation" in info_theirs:
                ended += 1
                assert info_ours["terminal_observation"].dtype == np.float32
                assert np.array_equal(info_ours["terminal_observation"], info_theirs["terminal_observation"])
    assert ended > 40  # many episodes ended: the batched normalisation was exercised
    assert np.array_equal(ours.obs_rms.mean, theirs.obs_rms.mean) and np.array_equal(
        ours.ret_rms.var, theirs.ret_rms.var
    )


def test_the_compiled_normalisation_is_numpys_on_edge_values() -> None:
    theirs = normalizer(VecNormalize)
    size = theirs.observation_space.shape[0]
    rng = np.random.default_rng(1)
    theirs.obs_rms.mean = rng.normal(0.0, 3.0, size)
    theirs.obs_rms.var = rng.uniform(1e-9, 50.0, size)
    rows = rng.normal(0.0, 40.0, (7, size)).astype(np.float32)  # many beyond clip_obs = 10 either side
    rows[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    rows[1] = theirs.obs_rms.mean  # scores of +-0 and ties at rounding
    want = theirs._normalize_obs(rows, theirs.obs_rms).astype(np.float32)
    got = normalized(theirs, rows)
    assert got.dtype == np.float32 and got.shape == rows.shape
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))  # bit for bit, signs of zero and NaN included
    assert (np.abs(got[2:]) == 10.0).any()  # the clip was exercised
    doubles = rows.astype(np.float64) / 3.0  # a float64 Box: the same float64 arithmetic
    want = theirs._normalize_obs(doubles, theirs.obs_rms).astype(np.float32)
    assert np.array_equal(normalized(theirs, doubles).view(np.uint32), want.view(np.uint32))


def trained(kind: type[VecNormalize]) -> list[torch.Tensor]:
    model = PPO("MlpPolicy", normalizer(kind), n_steps=8, batch_size=16, n_epochs=2, seed=0, device="cpu")
    model.learn(96)
    return [parameter.detach().clone() for parameter in model.policy.parameters()]


def test_training_is_bit_for_bit_sb3s() -> None:
    assert all(torch.equal(a, b) for a, b in zip(trained(BatchedVecNormalize), trained(VecNormalize), strict=True))


def test_it_pickles_as_sb3s_class_with_its_statistics() -> None:
    ours = normalizer(BatchedVecNormalize)
    ours.reset()
    ours.step(np.full((6, *ours.action_space.shape), 0.5, dtype=np.float32))
    loaded: Any = pickle.loads(pickle.dumps(ours))
    assert type(loaded) is VecNormalize  # plain SB3 loads a run's vecnormalize.pkl
    assert np.array_equal(loaded.obs_rms.mean, ours.obs_rms.mean) and loaded.clip_obs == ours.clip_obs
    again = BatchedVecNormalize.of(loaded)
    assert type(again) is BatchedVecNormalize and np.array_equal(again.obs_rms.var, ours.obs_rms.var)
    observation = np.linspace(0.0, 2.0, ours.observation_space.shape[0], dtype=np.float32)
    assert np.array_equal(normalized(again, observation), ours.normalize_obs(observation))


def test_the_batched_class_is_chosen_for_box_observations() -> None:
    venv = VecMonitor(BatchedVecEnv.make(ENV_ID, num_envs=2, **KWARGS))
    assert type(make_normalizer(venv, gamma=0.9)) is BatchedVecNormalize
