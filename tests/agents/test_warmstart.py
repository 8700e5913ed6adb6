"""Warm start (``schedenv train --warm-start``): behaviour cloning of a baseline before RL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.runs import WARM_START, read_evaluations
from agents.train import TrainConfig, train
from agents.warmstart import Demonstrations, check_warm_start, demonstrate, demonstration_seeds, value_targets

MALLEABLE = {"n_jobs": 8, "max_jobs": 8}


def test_value_targets_are_discounted_returns_to_go_within_each_episode() -> None:
    """Hand-worked: gamma 0.5, episodes [-1, -1, -2] and [-3]; no normaliser."""
    demos = Demonstrations(
        np.zeros((4, 1), dtype=np.float32),
        np.zeros(4),
        None,
        np.array([-1.0, -1.0, -2.0, -3.0]),
        np.array([True, False, False, True]),
    )
    np.testing.assert_allclose(value_targets(demos, 0.5, None), [-2.0, -2.0, -2.0, -3.0])
    assert demos.n_episodes == 2


def test_demonstrations_are_whole_episodes_on_training_seeds_the_run_never_resets_with() -> None:
    seeds = demonstration_seeds(run_seed=3)
    first = next(seeds)
    assert first == 2**31 + 3 * 2**20 + 2**20 - 1  # the run's last copy index, counted down
    demos = demonstrate("schedenv/Malleable-v0", MALLEABLE, "hesrpt", demonstration_seeds(0), min_steps=20)
    # 8 jobs offline: one decision per completion, so whole episodes are 8 decisions long.
    assert demos.rewards.size == 24 and demos.n_episodes == 3
    assert demos.actions.shape == (24, 9) and demos.masks is None
    assert (demos.rewards < 0).all()


def test_cloning_heSRPT_gives_a_policy_within_one_percent_of_it(tiny: dict[str, Any], tmp_path: Path) -> None:
    """The clone's validation score is in warm_start.json and is the run's step-0 evaluation."""
    settings = tiny | {"eval_episodes": 20}
    config = TrainConfig(env_kwargs=MALLEABLE, timesteps=128, warm_start="hesrpt", warm_start_steps=4000, **settings)
    train(config, tmp_path)
    report = json.loads((tmp_path / WARM_START).read_text())
    assert report["baseline"] == "hesrpt" and report["decisions"] >= 4000
    assert report["validation"]["ratio"] < 1.01
    rows = read_evaluations(tmp_path)
    assert rows[0]["timesteps"] == 0 and rows[0]["ratio"] == pytest.approx(report["validation"]["ratio"], rel=1e-3)

    scratch = tmp_path / "scratch"
    train(TrainConfig(env_kwargs=MALLEABLE, timesteps=128, **settings), scratch)
    assert read_evaluations(scratch)[0]["ratio"] > report["validation"]["ratio"] + 0.02


def test_the_paper_policy_demonstrates_option_zero_in_ranked_mode() -> None:
    """Ranked mode lists the options in ServerFilling-SRPT's order: its every action is 0, always allowed."""
    kwargs = {"action_mode": "ranked", "n_servers": 8, "load": 0.8, "n_arrivals": 60}
    demos = demonstrate("schedenv/MultiserverJob-v0", kwargs, "serverfilling-srpt", demonstration_seeds(0), 300)
    assert demos.rewards.size >= 300 and demos.masks is not None and demos.masks.shape[1] == 16
    assert (demos.actions == 0).all() and demos.masks[:, 0].all()
    assert not demos.masks.all(axis=1).all()  # the masks do forbid options past the last one


@pytest.mark.parametrize("action_mode", ["select", "ranked"])
def test_cloning_a_masked_baseline_with_maskable_ppo(tiny: dict[str, Any], tmp_path: Path, action_mode: str) -> None:
    kwargs = {"action_mode": action_mode, "n_servers": 8, "load": 0.8, "n_arrivals": 100}
    config = TrainConfig(
        env_id="schedenv/MultiserverJob-v0",
        env_kwargs=kwargs,
        algo="maskable_ppo",
        timesteps=128,
        warm_start="serverfilling-srpt",
        warm_start_steps=3000,
        **tiny | {"eval_episodes": 10},
    )
    train(config, tmp_path)
    report = json.loads((tmp_path / WARM_START).read_text())
    assert report["validation"]["ratio"] < 1.05
    if action_mode == "ranked":  # "always option 0" is nearly learnt from 3000 decisions (20 000: exactly)
        assert report["validation"]["ratio"] < 1.01


@pytest.mark.parametrize(
    ("baseline", "algo", "message"),
    [
        ("hesrp", "ppo", "not a baseline of schedenv/Malleable-v0.*hesrpt"),
        ("serverfilling-srpt", "ppo", "not a baseline of schedenv/Malleable-v0"),
        ("hesrpt", "sac", "actor-critic algorithm"),
    ],
)
def test_a_bad_warm_start_is_refused_before_training(baseline: str, algo: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_warm_start(baseline, "schedenv/Malleable-v0", algo)
    with pytest.raises(ValueError, match=message):
        TrainConfig(env_kwargs=MALLEABLE, algo=algo, warm_start=baseline)
