"""``benchmarks/speed.py``'s training sections: the shortened end-to-end runs keep their config's cadence."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from agents.train import CONFIG_DIR, resolve_config, shipped_configs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import speed


def test_a_shortened_run_keeps_as_many_validations_as_the_full_one() -> None:
    config = resolve_config(CONFIG_DIR / "moldable_maskable_ppo.yaml", {})
    config = dataclasses.replace(config, timesteps=4_200_000, eval_every=500_000, checkpoint_every=1_000_000)
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


def test_learning_flops_are_the_hand_counted_matrix_products() -> None:
    """One rollout of 4 copies x 8 steps and 2 epochs of a Box policy with 8 x 8 networks on 55 features."""
    config = resolve_config(CONFIG_DIR / "malleable_online_range_ppo.yaml", {"n_envs": 4, "tensorboard": False})
    config = dataclasses.replace(
        config,
        policy_kwargs={**config.policy_kwargs, "net_arch": [8, 8]},
        algo_kwargs={**config.algo_kwargs, "n_steps": 8, "batch_size": 16, "n_epochs": 2},
    )
    # Multiply-adds of one forward pass per sample: policy 55x8 + 8x8 + 8x1, value the same: 1,024 (2,048 FLOPs).
    rollout = 2 * 1024 + 2 * 512 * 4 / 32  # the forward passes, and the value of the last observation of each copy
    # 2 epochs x 2 FLOPs per multiply-add x (the forward pass, each layer's weight gradient (as many), and the
    # input gradient of every layer but the first of each network: 8x8 and 8x1, twice).
    update = 2 * 2 * (1024 + 1024 + (64 + 8) * 2)
    assert speed.learning_flops(config) == rollout + update == 10_944


@pytest.mark.parametrize("name", sorted(shipped_configs()))
def test_every_shipped_config_has_a_from_scratch_variant_that_changes_only_the_warm_start(name: str) -> None:
    """What the learning-only timings train (``speed._train_rate``, ``speed.learning_flops``): a config that
    smooths or anchors its clone must still build once the clone is gone."""
    config = resolve_config(CONFIG_DIR / name, {})
    scratch = config.without_warm_start()
    assert scratch.warm_start is None and not scratch.warm_start_kl
    assert (scratch.warm_start_smoothing, scratch.warm_start_explore) == (0.0, [])
    assert (scratch.warm_start_dagger, scratch.warm_start_lookahead, scratch.warm_start_kwargs) == (0, False, {})
    warm = {"warm_start", "warm_start_smoothing", "warm_start_explore", "warm_start_kl"}
    warm |= {"warm_start_dagger", "warm_start_lookahead", "warm_start_kwargs"}
    kept = {f.name for f in dataclasses.fields(config)} - warm
    assert all(getattr(scratch, field) == getattr(config, field) for field in kept)


@pytest.mark.skipif(not speed.can_compile(), reason="torch.compile needs a C++ compiler")
def test_the_compiled_variant_computes_the_policy_it_compiles() -> None:
    """``speed.compiled`` (the settings section's torch.compile row) changes how the policy is computed, not
    what: values, log-probabilities and entropies of a masked policy equal the eager ones to float32 rounding,
    and the sampled actions of the rollout pass are valid ones."""
    import tempfile

    import numpy as np
    import torch
    from sb3_contrib.common.maskable.utils import get_action_masks

    config = resolve_config(CONFIG_DIR / "multiserverjob_maskable_ppo.yaml", {"n_envs": 4, "tensorboard": False})
    config = dataclasses.replace(config, algo_kwargs={**config.algo_kwargs, "n_steps": 8, "batch_size": 32})
    with tempfile.TemporaryDirectory() as folder:
        model = speed.fresh_model(config, folder)
        venv = model.get_env()
        states, allowed = [venv.reset()], [get_action_masks(venv)]
        for _ in range(3):  # more states: step every copy on its first allowed action
            states.append(venv.step(allowed[-1].argmax(axis=1))[0])
            allowed.append(get_action_masks(venv))
        observations, masks = torch.as_tensor(np.concatenate(states)), torch.as_tensor(np.concatenate(allowed))
        actions = masks.int().argmax(dim=1)
        with torch.no_grad():
            eager = model.policy.evaluate_actions(observations, actions, masks)
            speed.compiled(model)
            fused = model.policy.evaluate_actions(observations, actions, masks)
            sampled, _, _ = model.policy(observations, action_masks=masks)
        venv.close()
    for mine, theirs in zip(fused, eager, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-5)
    assert masks.gather(1, sampled.view(-1, 1)).all()
