"""Stable-Baselines3 and sb3-contrib: PPO and MaskablePPO by env id (docs/interop/sb3.md)."""

import gymnasium as gym
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO

import schedenv  # noqa: F401  (importing schedenv registers its four env ids)

# PPO on the malleable env: a Box action (the share of the servers each window slot gets)
ppo = PPO("MlpPolicy", gym.make("schedenv/Malleable-v0", n_jobs=8, max_jobs=8), n_steps=128, batch_size=64, seed=0)
ppo.learn(total_timesteps=256)

# MaskablePPO on the dispatcher: the env's action_masks() forbids the (host, time limit) pairs that do not apply
env = gym.make("schedenv/Dispatch-v0", n_arrivals=50)
maskable = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0)
maskable.learn(total_timesteps=256)

# one episode with the masked head: it never picks an action the env would refuse
observation, info = env.reset(seed=1)
refused, done = 0, False
while not done:
    action, _ = maskable.predict(observation, action_masks=env.unwrapped.action_masks(), deterministic=True)
    observation, reward, terminated, truncated, info = env.step(action)
    refused += info["invalid_action"]
    done = terminated or truncated
print("mean slowdown", info["episode_metrics"]["mean_slowdown"], "refused actions", refused)
