"""TorchRL: a short PPO loop (collector, GAE, clipped loss) on schedenv/Malleable-v0 (docs/interop/torchrl.md)."""

import torch
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import GymEnv
from torchrl.modules import ProbabilisticActor, TanhNormal, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import schedenv  # noqa: F401  (importing schedenv registers its four env ids)

torch.manual_seed(0)
env = GymEnv("schedenv/Malleable-v0", n_jobs=8, max_jobs=8)  # env kwargs go to gymnasium.make
env.set_seed(0)
n_obs, n_act = env.observation_spec["observation"].shape[-1], env.action_spec.shape[-1]

actor = nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, 2 * n_act), NormalParamExtractor())
policy = ProbabilisticActor(
    TensorDictModule(actor, in_keys=["observation"], out_keys=["loc", "scale"]),
    spec=env.action_spec,
    in_keys=["loc", "scale"],
    distribution_class=TanhNormal,  # squashed into the action box [0, 1]^K
    distribution_kwargs={"low": env.action_spec.space.low, "high": env.action_spec.space.high},
    return_log_prob=True,
)
value = ValueOperator(nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, 1)), in_keys=["observation"])

collector = Collector(env, policy, frames_per_batch=128, total_frames=512, auto_register_policy_transforms=True)
advantage = GAE(gamma=0.99, lmbda=0.95, value_network=value)
loss = ClipPPOLoss(policy, value)
optimizer = torch.optim.Adam(loss.parameters(), lr=3e-4)

losses = []
for batch in collector:  # 4 batches of 128 env steps
    advantage(batch)
    for _ in range(4):  # epochs over the batch
        terms = loss(batch)
        total = terms["loss_objective"] + terms["loss_critic"] + terms["loss_entropy"]
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        losses.append(total.item())
    collector.update_policy_weights_()
collector.shutdown()
print(f"{len(losses)} updates, last loss {losses[-1]:.3f}")
