"""TorchRL: every schedenv env by id in ``torchrl.envs.GymEnv`` (docs/interop/torchrl.md)."""

from torchrl.envs import GymEnv

import schedenv

rollouts = {}
for env_id in schedenv.ENV_IDS:
    env = GymEnv(env_id)  # TorchRL passes frameskip=1, which schedenv refuses in Python's words: TorchRL drops it
    env.set_seed(0)
    rollouts[env_id] = env.rollout(max_steps=20)  # random actions from env.action_spec
    env.close()
    print(env_id, rollouts[env_id]["next", "reward"].sum().item())
