"""Training sweeps over seeds and configs on the local pool and on Ray (issue 7's training sweeps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from agents import load
from agents.sweep import run_folder, sweep
from schedenv.backends import ray_available
from schedenv.cli import main

ENV = {"env_id": "schedenv/Malleable-v0", "env_kwargs": {"n_jobs": 4, "max_jobs": 4}, "timesteps": 128}


def parameters(folder: Path) -> np.ndarray:
    policy = load(folder).model.policy  # type: ignore[attr-defined]
    return np.concatenate([p.detach().numpy().ravel() for p in policy.parameters()])


def test_sweep_trains_one_run_per_seed_with_that_seed(tmp_path: Path, tiny: dict[str, Any]) -> None:
    results = sweep([None], [3, 4], {**ENV, **tiny}, tmp_path, workers=2)
    assert [r["out"] for r in results] == [str(run_folder(tmp_path, None, s)) for s in (3, 4)]
    for seed in (3, 4):
        folder = run_folder(tmp_path, None, seed)
        assert yaml.safe_load((folder / "config.yaml").read_text())["seed"] == seed
    assert not np.array_equal(parameters(run_folder(tmp_path, None, 3)), parameters(run_folder(tmp_path, None, 4)))


def test_a_run_gives_the_same_model_in_a_sweep_and_alone(tmp_path: Path, tiny: dict[str, Any]) -> None:
    sweep([None], [5], {**ENV, **tiny}, tmp_path / "sweep", workers=1)
    sweep([None], [5, 6], {**ENV, **tiny}, tmp_path / "pool", workers=2)
    np.testing.assert_array_equal(
        parameters(run_folder(tmp_path / "sweep", None, 5)), parameters(run_folder(tmp_path / "pool", None, 5))
    )


@pytest.mark.slow
@pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install -e '.[dist]')")
def test_ray_sweep_trains_the_same_models_as_the_local_pool(tmp_path: Path, tiny: dict[str, Any]) -> None:
    sweep([None], [7, 8], {**ENV, **tiny}, tmp_path / "local", workers=1)
    sweep([None], [7, 8], {**ENV, **tiny}, tmp_path / "ray", backend="ray", workers=2)
    for seed in (7, 8):
        np.testing.assert_array_equal(
            parameters(run_folder(tmp_path / "local", None, seed)), parameters(run_folder(tmp_path / "ray", None, seed))
        )


def test_cli_sweep_refuses_seed_and_seeds_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = ["train", "--env", "schedenv/Malleable-v0"]
    for argv, message in [
        ([*env, "--seed", "1", "--seeds", "1,2", "--out", str(tmp_path)], "either --seed"),
        ([*env, "--seeds", "a,b", "--out", str(tmp_path)], "comma-separated integers"),
        ([*env, "--config", "a.yaml", "--config", "b.yaml", "--out", "x"], "sweep: give --seeds"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("schedenv: error: ") and message in err and len(err.splitlines()) == 1


def test_resuming_a_folder_of_another_config_is_refused_before_training(tmp_path: Path, tiny: dict[str, Any]) -> None:
    """An edited config file must not be resumed into the old run (and the old models reported under it)."""
    first = tmp_path / "a.yaml"
    first.write_text(yaml.safe_dump({**ENV, **tiny}))
    sweep([str(first)], [1], {}, tmp_path / "runs", resume=True)
    folder = run_folder(tmp_path / "runs", str(first), 1)
    model = (folder / "model.zip").read_bytes()
    edited = {**ENV, **tiny, "algo_kwargs": {**tiny["algo_kwargs"], "learning_rate": 1e-4}}
    first.write_text(yaml.safe_dump(edited))
    with pytest.raises(ValueError, match=r"another config \(algo_kwargs: .*'learning_rate': 0\.0001"):
        sweep([str(first)], [1], {}, tmp_path / "runs", resume=True)
    assert (folder / "model.zip").read_bytes() == model
    first.write_text(yaml.safe_dump({**ENV, **tiny, "timesteps": 256}))  # a longer budget resumes
    sweep([str(first)], [1], {}, tmp_path / "runs", resume=True)
    assert yaml.safe_load((folder / "config.yaml").read_text())["timesteps"] == 256
