# Train with the shipped hyperparameters (agents/configs/zoo/ppo.yml), keyed by env id; -n overrides n_timesteps
python -m rl_zoo3.train --algo ppo --env schedenv/Malleable-v0 --gym-packages schedenv -conf agents/configs/zoo/ppo.yml -n 4096 -f logs
# Watch it: render_mode="human" prints the state as text when pygame is not installed
python -m rl_zoo3.enjoy --algo ppo --env schedenv/Malleable-v0 --gym-packages schedenv -f logs --exp-id 1 -n 16
# Score it against the paper's policies on held-out seeds
schedenv evaluate --agent logs/ppo/schedenv-Malleable-v0_1 --episodes 5
