"""``agents.contender.AgentContender.act_batch``: the forward pass called directly acts as SB3's ``predict``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO

from agents.assess import batch_masks, make_vector
from agents.contender import AgentContender


def _batch(env_id: str, n: int, **env_kwargs: Any) -> tuple[gym.vector.VectorEnv, np.ndarray, np.ndarray | None]:
    venv = make_vector(env_id, n, AutoresetMode.NEXT_STEP, **env_kwargs)
    observations, _ = venv.reset(seed=list(range(n)))
    for _ in range(3):  # a few random steps: states away from the start
        masks = batch_masks(venv)
        discrete = masks is not None and isinstance(venv.single_action_space, gym.spaces.Discrete)
        # the last allowed choice; MultiDiscrete samples fall back to an allowed pair (the env's invalid_action)
        actions = np.array([np.flatnonzero(row)[-1] for row in masks]) if discrete else venv.action_space.sample()
        observations, *_ = venv.step(actions)
    return venv, np.asarray(observations, dtype=np.float32), batch_masks(venv)


def _both(model: Any, contender: AgentContender, observations: np.ndarray, masks: np.ndarray | None, seed: int,
          deterministic: bool) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(``model.predict``'s actions, ``contender.act_batch``'s), each drawn after ``torch.manual_seed(seed)``."""
    torch.manual_seed(seed)
    extra = {} if masks is None else {"action_masks": masks}
    expected, _ = model.predict(observations, deterministic=deterministic, **extra)
    torch.manual_seed(seed)
    return expected, contender.act_batch(observations, masks)


@pytest.mark.parametrize("deterministic", [True, False])
def test_box_actions_are_predicts_clipped_to_the_box(deterministic: bool) -> None:
    venv, observations, _ = _batch("schedenv/Malleable-v0", 16, n_jobs=6)
    env = gym.make("schedenv/Malleable-v0", n_jobs=6)
    model = PPO("MlpPolicy", env, seed=3, policy_kwargs={"log_std_init": 1.0})  # wide: samples leave the box
    contender = AgentContender("ppo", model, deterministic=deterministic)
    expected, found = _both(model, contender, observations, None, 7, deterministic)
    assert found.dtype == expected.dtype and np.array_equal(found, expected)
    low, high = env.action_space.low, env.action_space.high
    assert np.all((found >= low) & (found <= high))
    if not deterministic:
        assert np.any((found == low) | (found == high))  # the clip did something
    venv.close()
    env.close()


@pytest.mark.parametrize("deterministic", [True, False])
def test_masked_actions_are_predicts_and_respect_the_masks(deterministic: bool) -> None:
    venv, observations, masks = _batch("schedenv/Dispatch-v0", 16)
    assert masks is not None
    masks = masks & (np.random.default_rng(0).random(masks.shape) < 0.3)  # forbid about 70% of the pairs
    masks[:, -1] = True  # run to completion on the central queue: always allowed
    env = gym.make("schedenv/Dispatch-v0")
    model = MaskablePPO("MlpPolicy", env, seed=3)
    contender = AgentContender("maskable_ppo", model, uses_masks=True, deterministic=deterministic)
    expected, found = _both(model, contender, observations, masks, 7, deterministic)
    assert np.array_equal(found, expected)
    assert masks[np.arange(len(found)), found].all()
    with pytest.raises(ValueError, match="acts with action masks; the batched env gave none"):
        contender.act_batch(observations, None)
    venv.close()
    env.close()


def test_a_model_left_in_training_mode_acts_in_evaluation_mode() -> None:
    env = gym.make("schedenv/Malleable-v0", n_jobs=6)
    model = PPO("MlpPolicy", env, seed=3)
    model.policy.set_training_mode(True)
    AgentContender("ppo", model).act_batch(np.zeros((2, *env.observation_space.shape), dtype=np.float32), None)
    assert not model.policy.training
    env.close()


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize(
    ("env_id", "env_kwargs"),
    [
        ("schedenv/Dispatch-v0", {}),  # Discrete, masked
        ("schedenv/Moldable-v0", {"action_mode": "factored"}),  # MultiDiscrete, masked per component
    ],
)
def test_the_fused_masked_head_acts_as_predict(env_id: str, env_kwargs: dict[str, Any], deterministic: bool) -> None:
    from agents.masking import FusedMaskablePolicy

    venv, observations, masks = _batch(env_id, 16, **env_kwargs)
    assert masks is not None
    env = gym.make(env_id, **env_kwargs)
    model = MaskablePPO(FusedMaskablePolicy, env, seed=3, policy_kwargs={"activation_fn": torch.nn.ReLU})
    contender = AgentContender("maskable_ppo", model, uses_masks=True, deterministic=deterministic)
    expected, found = _both(model, contender, observations, masks, 11, deterministic)
    assert found.shape == expected.shape and np.array_equal(found, expected)
    flat = masks.reshape(len(found), -1)
    if found.ndim == 1:
        assert flat[np.arange(len(found)), found].all()
    else:  # MultiDiscrete: each component's choice is allowed by its own block of the mask
        nvec = env.action_space.nvec
        offsets = np.concatenate([[0], np.cumsum(nvec)[:-1]])
        assert flat[np.arange(len(found))[:, None], offsets + found].all()
    venv.close()
    env.close()


@pytest.mark.parametrize("deterministic", [True, False])
def test_unmasked_discrete_and_the_slot_extractor_act_as_predict(deterministic: bool) -> None:
    """The slot extractor (not a flat MLP) runs as a module; a Discrete policy without masks samples as SB3 does."""
    from agents.extractors import SlotSetExtractor, slot_layout

    kwargs = {"action_mode": "select"}
    venv, observations, _ = _batch("schedenv/MultiserverJob-v0", 16, **kwargs)
    env = gym.make("schedenv/MultiserverJob-v0", **kwargs)
    layout = slot_layout(env)
    assert layout is not None
    extractor = {"start": layout.start, "n_slots": layout.n_slots, "slot_features": layout.slot_features}
    policy_kwargs = {"features_extractor_class": SlotSetExtractor, "features_extractor_kwargs": extractor}
    model = PPO("MlpPolicy", env, seed=3, policy_kwargs=policy_kwargs)
    contender = AgentContender("ppo", model, deterministic=deterministic)
    expected, found = _both(model, contender, observations, None, 5, deterministic)
    assert found.dtype == expected.dtype and np.array_equal(found, expected)
    venv.close()
    env.close()


def test_observations_are_normalised_as_vecnormalize_normalize_obs() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    venv, observations, _ = _batch("schedenv/Malleable-v0", 16, n_jobs=6)
    normalizer = VecNormalize(DummyVecEnv([lambda: gym.make("schedenv/Malleable-v0", n_jobs=6)]), clip_obs=0.5)
    normalizer.obs_rms.update(observations.astype(np.float64) * 3.0 + 1.0)  # statistics away from (0, 1)
    model = PPO("MlpPolicy", normalizer, seed=3)
    contender = AgentContender("ppo", model, normalizer)
    expected, _ = model.predict(normalizer.normalize_obs(observations), deterministic=True)
    assert np.array_equal(contender.act_batch(observations, None), expected)
    assert np.any(np.abs(normalizer.normalize_obs(observations)) == 0.5)  # the clip took part
    venv.close()
