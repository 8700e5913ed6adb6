"""Stable-Baselines3 PPO and sb3-contrib MaskablePPO on schedenv envs made by id (docs/interop/sb3.md).

``schedenv train`` (tests/agents) drives the same libraries through its own harness; this is the
plain use a Stable-Baselines3 user starts from.
"""

from __future__ import annotations

import pytest

from tests.interop.examples import run_example


def test_ppo_and_maskable_ppo_learn_by_id() -> None:
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (pip install 'schedenv[rl]')")
    names = run_example("sb3.py")
    ppo, maskable, env = names["ppo"], names["maskable"], names["env"]
    assert ppo.num_timesteps == 256 and maskable.num_timesteps == 256  # two rollouts of n_steps=128 each
    observation, _ = names["ppo"].get_env().envs[0].reset(seed=0)
    action, _ = ppo.predict(observation, deterministic=True)
    assert action.shape == (9,)  # a weight per window slot (max_jobs=8) and one for the jobs outside it
    # the masked head picked only allowed actions over a whole episode with 50 arrivals
    assert names["refused"] == 0 and names["done"]
    assert names["info"]["episode_metrics"]["mean_slowdown"] >= 1.0
    env.close()
