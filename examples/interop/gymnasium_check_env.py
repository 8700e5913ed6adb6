"""Gymnasium: the environment checker, with its default arguments, on every env by id (docs/interop/gymnasium.md)."""

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

import schedenv

for env_id in schedenv.ENV_IDS:
    env = gym.make(env_id)
    check_env(env.unwrapped)  # also makes the env once per declared render mode: "ansi", "rgb_array", "human"
    env.close()
    print(env_id, "passes check_env")
