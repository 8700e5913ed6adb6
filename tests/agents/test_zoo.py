"""The RL Zoo hyperparameter files (agents/configs/zoo/) are generated from the shipped configs (agents.zoo)."""

from __future__ import annotations

import dataclasses
import importlib

import yaml
from torch import nn

from agents.train import CONFIG_DIR, resolve_config
from agents.zoo import ZOO_ALGOS, zoo_files, zoo_hyperparams


def test_committed_files_are_what_the_generator_writes() -> None:
    generated = zoo_files()
    committed = {path.name: path.read_text() for path in (CONFIG_DIR / "zoo").glob("*.yml")}
    assert committed == generated, "run `python -m agents.zoo --out agents/configs/zoo` and commit the result"


def test_entries_translate_the_default_configs_field_by_field() -> None:
    files = {name: yaml.safe_load(text) for name, text in zoo_files().items()}
    # the Zoo has no MaskablePPO: only ppo.yml, with the two ids whose default config is PPO
    assert list(files) == ["ppo.yml"] and "maskable_ppo" not in ZOO_ALGOS
    ppo = files["ppo.yml"]
    assert list(ppo) == ["schedenv/Malleable-v0", "schedenv/MultiserverJob-v0"]
    malleable = ppo["schedenv/Malleable-v0"]  # agents/configs/malleable_ppo.yaml
    assert (malleable["n_envs"], malleable["n_steps"], malleable["batch_size"], malleable["n_epochs"]) == (
        256,
        16,
        1024,
        1,
    )
    assert malleable["learning_rate"] == 0.001 and malleable["n_timesteps"] == 9_000_000
    assert malleable["gamma"] == malleable["gae_lambda"] == 1.0 and malleable["policy"] == "MlpPolicy"
    assert malleable["env_kwargs"] == {"n_jobs": 8, "max_jobs": 8, "speedup": 0.5, "objective": "slowdown"}
    # the strings the Zoo evaluates (rl_zoo3.exp_manager has nn and importlib in scope)
    scope = {"nn": nn, "importlib": importlib}
    assert eval(malleable["normalize"], scope) == {"norm_obs": True, "norm_reward": True, "clip_obs": 10.0}
    assert eval(malleable["policy_kwargs"], scope) == {
        "net_arch": [128, 128],
        "activation_fn": nn.ReLU,
        "log_std_init": -1.0,
    }
    multiserver = ppo["schedenv/MultiserverJob-v0"]  # agents/configs/multiserverjob_ppo.yaml: a flat MLP
    assert multiserver["n_timesteps"] == 10_000_000 and multiserver["env_kwargs"]["action_mode"] == "priority"
    assert eval(multiserver["policy_kwargs"], scope) == {
        "net_arch": [64, 64],
        "activation_fn": nn.ReLU,
        "log_std_init": -0.5,
    }


def test_the_slots_extractor_carries_the_envs_slot_layout() -> None:
    config = resolve_config(CONFIG_DIR / "multiserverjob_ppo.yaml", {})
    config = dataclasses.replace(config, extractor="slots", extractor_kwargs={"embed_dim": 16, "hidden": 32})
    policy_kwargs = eval(zoo_hyperparams(config)["policy_kwargs"], {"nn": nn, "importlib": importlib})
    assert policy_kwargs["features_extractor_class"].__name__ == "SlotSetExtractor"
    layout = {"start": 0, "n_slots": 16, "slot_features": 7}
    assert policy_kwargs["features_extractor_kwargs"] == layout | {"embed_dim": 16, "hidden": 32}  # and the config's
