"""TorchRL: ``GymEnv(id)`` on every env, and a short collector + PPO loss loop (docs/interop/torchrl.md).

TorchRL passes ``frameskip=1`` to every Gymnasium env and drops it only when the constructor's
TypeError reads as Python's own ("unexpected keyword argument 'frameskip'"): that is what
``schedenv.validation.UnknownArgumentError`` says.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import schedenv
from tests.interop.examples import run_example

pytest.importorskip("torchrl", reason="TorchRL is not installed (pip install torchrl; in the dev extra)")
from torchrl.envs import GymEnv  # after the skip: TorchRL is optional


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_frameskip_is_refused_in_the_words_torchrl_reads(env_id: str) -> None:
    from torchrl.envs.libs.gym import ACCEPTED_TYPE_ERRORS  # what GymEnv looks for before dropping an argument

    with pytest.raises(TypeError) as error:
        gym.make(env_id, frameskip=1)
    assert ACCEPTED_TYPE_ERRORS["frame_skip"] in str(error.value)
    assert "it accepts [" in str(error.value)  # still the accepted names for a person reading it
    env = GymEnv(env_id, frame_skip=3)
    assert env.wrapper_frame_skip == 3  # TorchRL skips the frames itself
    env.close()


def test_gym_env_rollout_by_id_replays_exactly_in_gymnasium() -> None:
    rollouts = run_example("torchrl_rollout.py")["rollouts"]
    assert list(rollouts) == list(schedenv.ENV_IDS)
    for env_id, rollout in rollouts.items():
        env = gym.make(env_id)
        # GymEnv.set_seed(0) resets with seed 0, and rollout() resets once more
        env.reset(seed=0)
        observation, _ = env.reset()
        np.testing.assert_allclose(rollout["observation"][0].numpy(), observation, rtol=1e-6)
        for step in range(rollout.batch_size[0]):
            action = rollout["action"][step].numpy()
            if isinstance(env.action_space, gym.spaces.Discrete):
                assert action.sum() == 1  # one-hot, TorchRL's encoding of a Discrete action
                action = int(action.argmax())
            else:
                assert env.action_space.contains(action)
            observation, reward, terminated, truncated, _ = env.step(action)
            assert math.isclose(float(rollout["next", "reward"][step]), reward, rel_tol=1e-5, abs_tol=1e-9)
            assert bool(rollout["next", "terminated"][step]) == terminated
            assert bool(rollout["next", "truncated"][step]) == truncated
            np.testing.assert_allclose(rollout["next", "observation"][step].numpy(), observation, rtol=1e-6)
        env.close()


def test_collector_and_ppo_loss_loop_runs_its_updates() -> None:
    names = run_example("torchrl_ppo.py")
    losses = names["losses"]
    assert len(losses) == 16  # 512 frames in batches of 128, 4 epochs each
    assert all(math.isfinite(loss) for loss in losses)
    batch = names["batch"]
    assert batch.numel() == 128
    low, high = 0.0, 1.0  # TanhNormal keeps the shares inside the action box
    assert float(batch["action"].min()) >= low and float(batch["action"].max()) <= high
