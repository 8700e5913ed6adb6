"""Value loss of plain PPO with ``reward_scale=1.0`` and ``"auto"`` on every shipped config's scenario.

``reward_scale`` (docs/envs/index.md) multiplies every reward; ``"auto"`` is one over the paper
policy's mean total objective on fixed seeds of the scenario. This measures what it is for: SB3's
``PPO("MlpPolicy", env)`` on one ``gym.make`` env, without reward normalisation (``VecNormalize``),
``n_steps=512``, ``batch_size=128``, ``n_epochs=4``, seed 0, 2048 steps; the table gives the value
loss SB3 logs at each of the first updates. Needs the ``rl`` extra; prints Markdown, writes nothing.

    python benchmarks/reward_scale.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
import yaml
from stable_baselines3 import PPO
from stable_baselines3.common.logger import KVWriter, Logger

import schedenv  # noqa: F401  (registers the env ids)

CONFIGS = Path(__file__).resolve().parents[1] / "agents" / "configs"
STEPS = 2048


class _Rows(KVWriter):
    """Keeps every logged row (SB3 writes one per update)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
        self.rows.append(dict(key_values))


def value_losses(env_id: str, env_kwargs: dict[str, Any], reward_scale: float | str) -> tuple[float, list[float]]:
    """The resolved scale and the value loss of each PPO update of a short run."""
    env = gym.make(env_id, reward_scale=reward_scale, **env_kwargs)
    model = PPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=4, seed=0, device="cpu")
    rows = _Rows()
    model.set_logger(Logger(None, [rows]))
    model.learn(STEPS)
    return float(env.get_wrapper_attr("reward_scale")), [
        r["train/value_loss"] for r in rows.rows if "train/value_loss" in r
    ]


def main() -> None:
    torch.set_num_threads(1)
    print("| config | auto scale | value loss, scale 1.0 | value loss, scale auto |")
    print("|---|---|---|---|")
    for path in sorted(CONFIGS.glob("*.yaml")):
        config = yaml.safe_load(path.read_text())
        env_id, env_kwargs = config["env_id"], config.get("env_kwargs") or {}
        _, plain = value_losses(env_id, env_kwargs, 1.0)
        scale, auto = value_losses(env_id, env_kwargs, "auto")
        shown = [", ".join(f"{loss:.3g}" for loss in losses) for losses in (plain, auto)]
        print(f"| `{path.name}` | {scale:.3g} | {shown[0]} | {shown[1]} |", flush=True)


if __name__ == "__main__":
    main()
