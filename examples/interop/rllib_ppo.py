"""RLlib: PPO with remote env runners, by id (docs/interop/rllib.md).

The env runners are separate processes that have not imported schedenv, so a plain id is unknown
there ("Namespace schedenv not found"). Gymnasium's ``module:id`` form makes ``gymnasium.make``
import the module first, wherever it runs: ``schedenv:schedenv/Malleable-v0``.
"""

import ray
from ray.rllib.algorithms.ppo import PPOConfig

ray.init(num_cpus=2, include_dashboard=False)
config = (
    PPOConfig()
    .environment("schedenv:schedenv/Malleable-v0", env_config={"n_jobs": 8, "max_jobs": 8})  # env_config: env kwargs
    .env_runners(num_env_runners=1, num_envs_per_env_runner=1, rollout_fragment_length=64)
    .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
)
algo = config.build_algo()
result = algo.train()  # one training iteration
print("env steps sampled:", result["env_runners"]["num_env_steps_sampled_lifetime"])
algo.stop()
ray.shutdown()
