"""``schedenv evaluate --agent PATH`` on every form of agent: an RL Zoo run, an SB3 ``.zip``, ``module:function``.

The ``schedenv train`` folder is covered by tests/agents/test_cli.py. The RL Zoo folder is laid out
as ``rl_zoo3.train`` writes it (``ExperimentManager``: ``<log>/<algo>/<env name>_<n>/<env name>.zip``
and ``<env name>/{args,config}.yml`` dumped by ``yaml.dump`` of an ``OrderedDict``) around a real
tiny SB3 model, so those tests do not need rl_zoo3; one more trains a run with ``rl_zoo3.train`` itself
(skipped when rl_zoo3, of the dev extra, is not installed).
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

from agents.sources import resolve_agent, zip_algorithm, zoo_env_name
from schedenv.cli import main

ENV_ID = "schedenv/Malleable-v0"
ENV_KWARGS = {"jobs": [1, 2, 4], "max_jobs": 3}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PPO model trained for 128 steps on a three-job Malleable env, saved as a lone ``.zip``."""
    from stable_baselines3 import PPO

    path = tmp_path_factory.mktemp("sb3") / "tiny_ppo.zip"
    env = gym.make(ENV_ID, **ENV_KWARGS)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=3, device="cpu")
    model.learn(128)
    model.save(path)
    return path


def _zoo_run(root: Path, model: Path, env_id: str = ENV_ID, env_kwargs: dict | None = None) -> Path:
    """An RL Zoo run folder around ``model``, as ``rl_zoo3.train -f root --algo ppo --env env_id`` leaves it."""
    name = zoo_env_name(env_id)
    run = root / "ppo" / f"{name}_1"
    (run / name).mkdir(parents=True)
    (run / f"{name}.zip").write_bytes(model.read_bytes())
    args = OrderedDict([("algo", "ppo"), ("env", env_id), ("env_kwargs", env_kwargs or ENV_KWARGS), ("seed", 7)])
    (run / name / "args.yml").write_text(yaml.dump(args))
    (run / name / "config.yml").write_text(yaml.dump(OrderedDict([("n_timesteps", 128), ("policy", "MlpPolicy")])))
    return run


def _evaluate_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["evaluate", *argv, "--episodes", "3", "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # stdout is exactly one JSON document


def test_zoo_run_and_lone_zip_score_the_same_model_identically(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _zoo_run(tmp_path / "logs", tiny_model)
    assert run.name == "schedenv-Malleable-v0_1"
    zoo = _evaluate_json(["--agent", str(run)], capsys)
    lone = _evaluate_json(["--agent", str(tiny_model), "--env", ENV_ID, "--env-kwargs", json.dumps(ENV_KWARGS)], capsys)
    assert zoo["agent"] == {"kind": "zoo", "path": str(run), "algo": "ppo"}
    assert lone["agent"]["kind"] == "zip" and lone["agent"]["algo"] == "ppo"
    assert zoo["env_id"] == ENV_ID and zoo["env_kwargs"] == ENV_KWARGS
    assert zoo["test_seeds"] == [0, 1, 2] == lone["test_seeds"]
    # the same network on the same seeds: the same per-seed slowdowns, whichever way it was found
    assert zoo["per_seed"] == lone["per_seed"]
    assert zoo["ratio"] == pytest.approx(np.mean(zoo["per_seed"]) / zoo["reference_mean"], rel=1e-12)
    # heSRPT is optimal offline (heSRPT paper, Theorem 6): no agent beats it
    assert zoo["ratio"] >= 1 - 1e-9
    # the model file inside the Zoo run is read with the run's env, like the folder
    inside = _evaluate_json(["--agent", str(run / "schedenv-Malleable-v0.zip")], capsys)
    assert inside["agent"]["kind"] == "zoo" and inside["per_seed"] == zoo["per_seed"]


def test_zoo_run_of_another_env_is_refused_naming_both_ids(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _zoo_run(tmp_path / "logs", tiny_model)
    assert main(["evaluate", "--agent", str(run), "--env", "schedenv/Dispatch-v0", "--episodes", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "trained on schedenv/Malleable-v0" in err and "--env schedenv/Dispatch-v0" in err


def test_zoo_run_named_in_gymnasium_import_form_and_its_best_model(tiny_model: Path, tmp_path: Path) -> None:
    # `rl_zoo3.train --env schedenv:schedenv/Malleable-v0`: the Zoo names the folder after the id alone
    run = _zoo_run(tmp_path / "logs", tiny_model, env_id="schedenv:schedenv/Malleable-v0")
    assert run.name == "schedenv-Malleable-v0_1"
    (run / "schedenv-Malleable-v0.zip").rename(run / "best_model.zip")
    (run / "schedenv-Malleable-v0" / "vecnormalize.pkl").write_bytes(b"")
    source = resolve_agent(str(run))
    assert (source.kind, source.env_id, source.algo) == ("zoo", ENV_ID, "ppo")
    assert source.env_kwargs == ENV_KWARGS and source.name == "ppo:schedenv-Malleable-v0_1"
    assert source.model == run / "best_model.zip"
    assert source.vecnormalize == run / "schedenv-Malleable-v0" / "vecnormalize.pkl"


@pytest.mark.parametrize(
    ("layout", "looked_for"),
    [
        ({}, ["config.yaml", "args.yml", "<env name>_<n>"]),
        ({"config.yaml": "env_id: schedenv/Malleable-v0\nalgo: ppo\n"}, ["model.zip", "checkpoints/step_<N>.zip"]),
        (
            {"schedenv-Malleable-v0/args.yml": "algo: ppo\nenv: schedenv/Malleable-v0\nenv_kwargs: null\n"},
            ["schedenv-Malleable-v0.zip", "best_model.zip", "rl_model_<N>_steps.zip"],
        ),
    ],
)
def test_folder_without_a_model_gets_one_line_naming_what_was_looked_for(
    layout: dict[str, str], looked_for: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    for name, text in layout.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    assert main(["evaluate", "--agent", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("schedenv: error: --agent")
    for name in looked_for:
        assert name in err


def test_lone_zip_needs_env_and_unknown_paths_are_named(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", "--agent", str(tiny_model)]) == 2
    assert "does not say which env it acts in; give --env" in capsys.readouterr().err
    assert main(["evaluate", "--agent", str(tmp_path / "nothing")]) == 2
    assert "no such file or folder, and not a Python callable written module:function" in capsys.readouterr().err
    assert main(["evaluate", "--agent", "no_such_module_xyz:act", "--env", ENV_ID]) == 2
    assert "cannot import module 'no_such_module_xyz'" in capsys.readouterr().err


def test_algorithm_is_read_from_the_zip(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import A2C, DQN, PPO

    malleable, dispatch = gym.make(ENV_ID, **ENV_KWARGS), gym.make("schedenv/Dispatch-v0")
    models = {
        "ppo": PPO("MlpPolicy", malleable, device="cpu"),
        "a2c": A2C("MlpPolicy", malleable, device="cpu"),
        "dqn": DQN("MlpPolicy", dispatch, buffer_size=10, device="cpu"),
        "maskable_ppo": MaskablePPO("MlpPolicy", dispatch, device="cpu"),
    }
    for algo, model in models.items():
        model.save(tmp_path / algo)
        assert zip_algorithm(tmp_path / f"{algo}.zip") == algo
        assert resolve_agent(str(tmp_path / f"{algo}.zip")).algo == algo
    (tmp_path / "broken.zip").write_text("not a zip")
    with pytest.raises(ValueError, match="not a stable-baselines3 model file"):
        zip_algorithm(tmp_path / "broken.zip")


POLICY_MODULE = '''
import numpy as np

def first_allowed(obs, info):
    """Dispatch: the lowest-numbered action the env's mask allows (info is the copy's own info dict)."""
    return int(np.flatnonzero(info["action_mask"])[0])
'''


def test_callable_acts_with_each_copys_own_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_policies.py").write_text(POLICY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    kwargs = {"n_arrivals": 30}
    report = _evaluate_json(
        ["--agent", "my_policies:first_allowed", "--env", "schedenv/Dispatch-v0", "--env-kwargs", json.dumps(kwargs)],
        capsys,
    )
    assert report["agent"] == {"kind": "callable", "path": "my_policies:first_allowed", "algo": None}
    assert report["contender"] == "first_allowed"
    # the batched play equals the function stepping each seed's single env with that env's info
    from my_policies import first_allowed  # type: ignore[import-not-found]

    expected = []
    for seed in report["test_seeds"]:
        env = gym.make("schedenv/Dispatch-v0", **kwargs)
        obs, info = env.reset(seed=seed)
        terminated = False
        while not terminated:
            obs, _, terminated, truncated, info = env.step(first_allowed(obs, info))
            assert not truncated and not info["invalid_action"]
        expected.append(info["episode_metrics"][report["metric"]])
    assert report["per_seed"] == pytest.approx(expected, rel=1e-12)
    sys.modules.pop("my_policies", None)


ZOO_HYPERPARAMS = {
    ENV_ID: {
        "n_timesteps": 256,
        "policy": "MlpPolicy",
        "n_envs": 2,
        "n_steps": 64,
        "batch_size": 64,
        "n_epochs": 1,
        "normalize": True,
        "env_kwargs": ENV_KWARGS,
    }
}


def test_a_run_trained_by_rl_zoo3_is_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real layout: ``rl_zoo3.train`` writes the run folder, ``evaluate --agent`` reads it (env kwargs from
    ``config.yml``, since ``args.yml`` has ``env_kwargs: null``; the VecNormalize statistics beside them)."""
    pytest.importorskip("rl_zoo3", reason="rl_zoo3 (dev extra) is not installed")
    import os
    import subprocess

    (tmp_path / "hyperparams.yml").write_text(yaml.safe_dump(ZOO_HYPERPARAMS))
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "rl_zoo3.train", "--algo", "ppo", "--env", ENV_ID, "--gym-packages", "schedenv"]
    command += ["-conf", "hyperparams.yml", "-f", "logs", "--seed", "3", "--eval-freq", "-1"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    run = tmp_path / "logs" / "ppo" / "schedenv-Malleable-v0_1"
    assert (run / "schedenv-Malleable-v0.zip").is_file()
    source = resolve_agent(str(run))
    assert (source.kind, source.env_id, source.algo, source.env_kwargs) == ("zoo", ENV_ID, "ppo", ENV_KWARGS)
    assert source.vecnormalize == run / "schedenv-Malleable-v0" / "vecnormalize.pkl"
    report = _evaluate_json(["--agent", str(run), "--env", ENV_ID], capsys)
    assert report["contender"] == "ppo:schedenv-Malleable-v0_1" and report["env_kwargs"] == ENV_KWARGS
    assert report["ratio"] >= 1 - 1e-9 and len(report["per_seed"]) == 3
