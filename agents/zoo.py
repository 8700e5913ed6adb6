"""RL Zoo hyperparameter files generated from the shipped configs (docs/interop/rl-zoo.md).

The RL Zoo (``rl_zoo3.train``) reads one YAML file per algorithm, keyed by env id
(``-conf agents/configs/zoo/ppo.yml``). Each entry here is the config ``schedenv train`` uses by
default for that env id and algorithm (``agents/configs/<family>_<algo>.yaml``, see
``agents.train.family_config``), translated field by field, so that the two cannot drift:
``tests/agents/test_zoo.py`` checks the committed files against ``zoo_files()``.

    python -m agents.zoo --out agents/configs/zoo      # rewrite the committed files after editing a config

What does not carry over: the RL Zoo steps ``n_envs`` single envs in a ``DummyVecEnv`` (or
``--vec-env subproc``) rather than the batched env, and uses SB3's ``MlpPolicy`` head. It has no
MaskablePPO, so the ``maskable_ppo`` configs (Dispatch, Moldable, MultiserverJob ``select``) have no
Zoo file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml

from agents.train import (
    TrainConfig,
    build_policy_kwargs,
    env_kwargs_objects,
    family_config,
    resolve_config,
    resolved_algo_kwargs,
)
from schedenv import family

ZOO_ALGOS: dict[str, str] = {"ppo": "ppo", "a2c": "a2c", "sac": "sac", "dqn": "dqn"}
"""``schedenv train --algo`` name -> the RL Zoo's ``--algo`` name, for the algorithms the Zoo has."""

_HEADER = (
    "# RL Zoo hyperparameters (rl_zoo3.train --algo {algo} -conf agents/configs/zoo/{algo}.yml), keyed by env id.\n"
    "# Generated from agents/configs/*.yaml by `python -m agents.zoo --out agents/configs/zoo`: do not edit.\n"
)


def zoo_hyperparams(config: TrainConfig) -> dict[str, Any]:
    """The RL Zoo entry of ``config``: its algorithm's arguments, ``n_envs``, ``n_timesteps``, ``policy``,
    ``normalize`` and ``env_kwargs`` as plain values, and ``policy_kwargs`` as the Python expression the Zoo
    evaluates (in ``rl_zoo3.exp_manager``, where ``nn`` is ``torch.nn`` and ``importlib`` is imported)."""
    for key, value in config.env_kwargs.items():
        if isinstance(value, dict):
            raise ValueError(
                f"{config.env_id} env_kwargs.{key}={value!r} is not allowed in an RL Zoo file: the Zoo passes "
                "env_kwargs to gym.make as they are, and workload specs need schedenv.workloads.from_spec"
            )
    probe = gym.make(config.env_id, **env_kwargs_objects(config))
    try:
        policy_kwargs = build_policy_kwargs(config, probe)
    finally:
        probe.close()
    entry: dict[str, Any] = {
        **resolved_algo_kwargs(config),
        "n_envs": config.n_envs,
        "n_timesteps": config.timesteps,
        "policy": "MlpPolicy",
        "env_kwargs": dict(config.env_kwargs),
    }
    if config.normalize_observation or config.normalize_reward:
        entry["normalize"] = _python(
            {
                "norm_obs": config.normalize_observation,
                "norm_reward": config.normalize_reward,
                "clip_obs": config.clip_observation,
            }
        )
    if policy_kwargs:
        entry["policy_kwargs"] = _python(policy_kwargs)
    return dict(sorted(entry.items()))


def zoo_files() -> dict[str, str]:
    """File name (``<zoo algo>.yml``) -> its text, one entry per env id whose default config uses that algorithm."""
    files = {}
    for algo, zoo_algo in ZOO_ALGOS.items():
        entries = {}
        for entry in family.families():
            path = family_config(entry.env_id, algo)
            if path is not None:
                config = resolve_config(path, {})
                entries[config.env_id] = zoo_hyperparams(config)
        if entries:
            body = yaml.safe_dump(entries, sort_keys=False, default_flow_style=None, width=1000)
            files[f"{zoo_algo}.yml"] = _HEADER.format(algo=zoo_algo) + body
    return files


def _python(value: Any) -> str:
    """``value`` as a Python expression: dicts as ``dict(...)``, torch.nn classes as ``nn.X``, other classes
    imported by module."""
    if isinstance(value, dict):
        return "dict(" + ", ".join(f"{key}={_python(item)}" for key, item in value.items()) + ")"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_python(item) for item in value) + "]"
    if isinstance(value, type):
        if value.__module__.startswith("torch.nn"):
            return f"nn.{value.__qualname__}"
        return f"importlib.import_module({value.__module__!r}).{value.__qualname__}"
    return repr(value)


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.zoo --out DIR``: write ``zoo_files()`` into ``DIR``."""
    parser = argparse.ArgumentParser(prog="python -m agents.zoo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder to write <algo>.yml into")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in zoo_files().items():
        (args.out / name).write_text(text)
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
