"""A CleanRL-style single-file PPO on Gymnasium's public API (docs/interop/cleanrl.md)."""

from __future__ import annotations

import math

import pytest

from tests.interop.examples import run_example

pytest.importorskip("torch", reason="the CleanRL-style example trains a torch policy: pip install torch")


def test_single_file_ppo_runs_its_updates_on_whole_episodes() -> None:
    names = run_example("cleanrl_ppo.py")
    # every offline malleable episode with 8 jobs lasts 8 decisions (one per departure), and the vector env
    # resets a finished copy in the same step: 4 copies x 64 steps x 3 updates = 768 steps = 96 episodes
    returns = names["episode_returns"]
    assert len(returns) == names["N_ENVS"] * names["N_STEPS"] * names["UPDATES"] // 8 == 96
    assert all(math.isfinite(r) and r < 0 for r in returns)  # rewards are minus slowdowns
    assert names["log_std"].grad is not None  # the loss reached every parameter
