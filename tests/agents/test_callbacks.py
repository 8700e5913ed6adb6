"""The validation callback: a validation worse than the best by ``restore_above`` puts the best model back."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from agents.callbacks import ReferenceEvalCallback
from agents.runs import EVALUATIONS
from agents.train import TrainConfig
from tests.agents.conftest import TINY_PPO

ENV_ID = "schedenv/Malleable-v0"
KWARGS = {"jobs": [1.0, 2.0, 4.0], "max_jobs": 3}


def _row(ratio: float, timesteps: int) -> dict[str, Any]:
    return {"timesteps": timesteps, "mean": ratio, "reference_mean": 1.0, "ratio": ratio, "process_cpu_seconds": 0.0}


def _state(model: PPO) -> tuple[dict[str, torch.Tensor], dict[str, Any], np.ndarray, float]:
    normalizer = model.get_vec_normalize_env()
    assert normalizer is not None
    return (
        copy.deepcopy(model.policy.state_dict()),
        copy.deepcopy(model.policy.optimizer.state_dict()),
        normalizer.obs_rms.mean.copy() if normalizer.norm_obs else np.zeros(0),
        float(normalizer.ret_rms.var),
    )


@pytest.mark.parametrize("norm_obs", [True, False])  # False: rewards only, the normalizer has no obs_rms
def test_a_validation_worse_than_the_best_by_the_factor_restores_policy_optimizer_and_statistics(
    tmp_path: Path, norm_obs: bool
) -> None:
    venv = VecNormalize(DummyVecEnv([lambda: gym.make(ENV_ID, **KWARGS)]), norm_obs=norm_obs)
    model = PPO("MlpPolicy", venv, seed=0, **TINY_PPO)
    model.set_logger(configure(None, []))
    callback = ReferenceEvalCallback(ENV_ID, KWARGS, [1_000_000], "mean_response_time", 64, tmp_path, False, 1.5)
    callback.init_callback(model)
    model.learn(128)  # an optimizer with state, statistics that moved
    callback._record(_row(1.0, 128))  # the best so far: saved
    best = _state(model)
    model.learn(256, reset_num_timesteps=False)
    moved = _state(model)
    assert not torch.equal(moved[0]["action_net.weight"], best[0]["action_net.weight"])
    assert not np.array_equal(moved[2], best[2]) or not norm_obs
    assert moved[3] != best[3]

    callback._record(_row(1.49, 256))  # worse, but within the factor: training goes on from here
    kept = _state(model)
    assert torch.equal(kept[0]["action_net.weight"], moved[0]["action_net.weight"])

    callback._record(_row(1.51, 384))  # beyond it: the best model is back
    restored = _state(model)
    for name, tensor in best[0].items():
        assert torch.equal(restored[0][name], tensor), name
    assert restored[1]["state"].keys() == best[1]["state"].keys()
    for key, entry in best[1]["state"].items():
        assert torch.equal(restored[1]["state"][key]["exp_avg"], entry["exp_avg"])
    np.testing.assert_array_equal(restored[2], best[2])
    assert restored[3] == best[3]
    assert callback.best_ratio == 1.0
    rows = [json.loads(line) for line in (tmp_path / EVALUATIONS).read_text().splitlines()]
    assert [row.get("restored", False) for row in rows] == [False, False, True]


@pytest.mark.parametrize("factor", [0.5, 0.999, -1.0, True, "1.1"])
def test_a_restore_factor_below_one_is_refused_naming_it(factor: Any) -> None:
    with pytest.raises(ValueError, match=rf"eval_restore={factor!r} is not allowed; it must be 0 \(never restore\)"):
        TrainConfig(env_id=ENV_ID, eval_restore=factor)
