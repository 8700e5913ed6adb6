"""``benchmarks/speed.py``'s training sections: the shortened end-to-end runs keep their config's cadence."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agents.train import CONFIG_DIR, resolve_config, shipped_configs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import speed


def test_a_shortened_run_keeps_as_many_validations_as_the_full_one() -> None:
    config = resolve_config(CONFIG_DIR / "moldable_maskable_ppo.yaml", {})
    assert (config.timesteps, config.eval_every, config.checkpoint_every) == (4_200_000, 500_000, 1_000_000)
    short = speed.scaled_config(config, 200_000)
    # hand-worked: 500,000 x 200,000 / 4,200,000 = 23,809.5 -> 23,810; 1,000,000 x (1/21) = 47,619.0 -> 47,619
    assert (short.timesteps, short.eval_every, short.checkpoint_every) == (200_000, 23_810, 47_619)
    assert config.timesteps // config.eval_every == short.timesteps // short.eval_every == 8
    assert (short.progress_bar, short.tensorboard, short.warm_start) == (False, False, config.warm_start)


@pytest.mark.parametrize("name", sorted(shipped_configs()))
def test_every_shipped_config_shortens_to_whole_validations(name: str) -> None:
    config = resolve_config(CONFIG_DIR / name, {})
    short = speed.scaled_config(config, 200_000)
    rollout = config.n_envs * int(config.algo_kwargs["n_steps"])
    assert short.timesteps == min(200_000, config.timesteps)
    assert short.eval_every >= rollout and short.checkpoint_every >= rollout  # at most one per rollout
    if config.timesteps <= 200_000:  # not shortened: the config's own cadence
        assert (short.eval_every, short.checkpoint_every) == (config.eval_every, config.checkpoint_every)
    assert speed.scaled_config(short, 10**9) == short  # never longer than asked
