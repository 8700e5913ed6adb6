"""A CleanRL-style single-file PPO: only Gymnasium's public API and torch (docs/interop/cleanrl.md).

Four copies of schedenv/Malleable-v0 made by id in a ``SyncVectorEnv``; a Gaussian policy over the
action box (the servers' shares per window slot), generalised advantage estimates, the clipped loss.
"""

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import schedenv  # noqa: F401  (importing schedenv registers its four env ids)

ENV_ID, N_ENVS, N_STEPS, UPDATES, EPOCHS = "schedenv/Malleable-v0", 4, 64, 3, 4
GAMMA, LAMBDA, CLIP, LR, SEED = 0.99, 0.95, 0.2, 3e-4, 0

torch.manual_seed(SEED)
envs = gym.vector.SyncVectorEnv(
    [lambda: gym.make(ENV_ID, n_jobs=8, max_jobs=8) for _ in range(N_ENVS)],
    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,  # a finished copy returns its next episode's first obs
)
n_obs, n_act = envs.single_observation_space.shape[0], envs.single_action_space.shape[0]
low, high = envs.single_action_space.low, envs.single_action_space.high


def mlp(n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, n_out))


actor, critic, log_std = mlp(n_act), mlp(1), nn.Parameter(torch.full((n_act,), -0.5))
optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters(), log_std], lr=LR)


def policy(obs: torch.Tensor) -> torch.distributions.Normal:
    return torch.distributions.Normal(actor(obs), log_std.exp())


obs_buf = torch.zeros(N_STEPS, N_ENVS, n_obs)
act_buf = torch.zeros(N_STEPS, N_ENVS, n_act)
logp_buf, rew_buf, done_buf, val_buf = (torch.zeros(N_STEPS, N_ENVS) for _ in range(4))
episode_returns, running = [], np.zeros(N_ENVS)

obs, _ = envs.reset(seed=SEED)
obs, done = torch.as_tensor(obs, dtype=torch.float32), torch.zeros(N_ENVS)
for update in range(UPDATES):
    for t in range(N_STEPS):
        with torch.no_grad():
            dist = policy(obs)
            action = dist.sample()
            logp_buf[t], val_buf[t] = dist.log_prob(action).sum(-1), critic(obs).squeeze(-1)
        obs_buf[t], act_buf[t], done_buf[t] = obs, action, done
        next_obs, reward, terminated, truncated, _ = envs.step(np.clip(action.numpy(), low, high))
        rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32)
        running += reward
        finished = terminated | truncated
        episode_returns += running[finished].tolist()
        running[finished] = 0.0
        obs, done = torch.as_tensor(next_obs, dtype=torch.float32), torch.as_tensor(finished, dtype=torch.float32)

    # generalised advantage estimates, backwards over the rollout; no bootstrapping across an episode's end
    with torch.no_grad():
        advantages, last = torch.zeros(N_STEPS, N_ENVS), torch.zeros(N_ENVS)
        next_value, next_done = critic(obs).squeeze(-1), done
        for t in reversed(range(N_STEPS)):
            delta = rew_buf[t] + GAMMA * next_value * (1 - next_done) - val_buf[t]
            last = delta + GAMMA * LAMBDA * (1 - next_done) * last
            advantages[t], next_value, next_done = last, val_buf[t], done_buf[t]
        returns = advantages + val_buf

    b_obs, b_act, b_logp = obs_buf.reshape(-1, n_obs), act_buf.reshape(-1, n_act), logp_buf.reshape(-1)
    b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)
    for _ in range(EPOCHS):
        ratio = (policy(b_obs).log_prob(b_act).sum(-1) - b_logp).exp()
        adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
        policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv).mean()
        value_loss = 0.5 * (critic(b_obs).squeeze(-1) - b_ret).pow(2).mean()
        optimizer.zero_grad()
        (policy_loss + value_loss).backward()
        optimizer.step()
    print(f"update {update + 1}: {len(episode_returns)} episodes, mean return {np.mean(episode_returns[-20:]):.2f}")
envs.close()
