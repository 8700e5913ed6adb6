"""``schedenv train`` and ``schedenv evaluate --agent``: the commands a researcher runs, and their errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

from agents.algorithms import check_compatible
from agents.runs import checkpoints, read_config
from schedenv.cli import main

TINY_ENV = '{"jobs": [1, 2, 4], "max_jobs": 3}'


@pytest.fixture
def tiny_config(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "n_envs": 2,
                "algo_kwargs": {"n_steps": 64, "batch_size": 64, "n_epochs": 2},
                "checkpoint_every": 64,
                "eval_every": 0,
                "eval_episodes": 2,
                "tensorboard": False,
            }
        )
    )
    return path


def _train(out: Path, config: Path, *extra: str) -> int:
    head = ["train", "--env", "schedenv/Malleable-v0", "--env-kwargs", TINY_ENV, "--algo", "ppo"]
    return main([*head, "--config", str(config), "--seed", "1", "--out", str(out), *extra])


def test_train_then_evaluate_agent_prints_the_ratio_to_hesrpt(
    tiny_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _train(out, tiny_config, "--timesteps", "128") == 0
    saved = read_config(out)
    assert saved["env_kwargs"] == {"jobs": [1, 2, 4], "max_jobs": 3}
    assert saved["seed"] == 1 and saved["timesteps"] == 128 and saved["n_envs"] == 2
    capsys.readouterr()

    assert main(["evaluate", "--agent", str(out), "--episodes", "3", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)  # --json: stdout is one JSON document, the table goes to stderr
    for key in ("contender", "env_id", "mean", "ci95", "reference", "reference_mean", "ratio"):
        assert key in row
    assert row["contender"] == "ppo:run" and row["env_id"] == "schedenv/Malleable-v0"
    assert row["reference"] == "hesrpt" and row["metric"] == "mean_slowdown"
    assert row["ratio"] == pytest.approx(row["mean"] / row["reference_mean"], rel=1e-12)
    # the offline optimum of heSRPT (Theorem 6) bounds every allocation from below
    assert row["ratio"] >= 1 - 1e-9


def test_resume_flag_continues_the_step_count(tiny_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _train(out, tiny_config, "--timesteps", "128") == 0
    assert main(["train", "--out", str(out), "--timesteps", "256", "--resume"]) == 0
    # checkpoints are taken between rollouts (2 envs x 64 steps) and at the end of each call
    assert [c.steps for c in checkpoints(out)] == [128, 256]
    assert read_config(out)["timesteps"] == 256


def test_evaluate_agent_refuses_a_different_window(
    tiny_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _train(out, tiny_config, "--timesteps", "64") == 0
    assert main(["evaluate", "--agent", str(out), "--env-kwargs", '{"max_jobs": 4}', "--episodes", "1"]) == 2
    assert "keep the window size" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env", "schedenv/Maleable-v0", "--algo", "ppo"], "did you mean 'schedenv/Malleable-v0'"),
        (["--env", "schedenv/Malleable-v0", "--algo", "ppo2"], "did you mean 'ppo'"),
        (["--env", "schedenv/Malleable-v0", "--algo", "dqn"], "cannot act in the action space"),
        (["--env", "schedenv/Malleable-v0", "--algo", "maskable_ppo"], "it supports Discrete, MultiDiscrete"),
        (["--env", "schedenv/Malleable-v0", "--env-kwargs", '{"n_jobs": 8'], "--env-kwargs is not valid JSON"),
        (["--env", "schedenv/Malleable-v0", "--env-kwargs", "[8]"], "--env-kwargs must be a JSON object"),
        (["--algo", "ppo"], "give --env or --config FILE"),
        (["--env", "schedenv/Malleable-v0", "--hyperparams", "learning_rat=1e-4"], "did you mean 'learning_rate'"),
        (["--env", "schedenv/Malleable-v0", "--hyperparams", "n_epochs"], "write key=value"),
        (["--env", "schedenv/Malleable-v0", "--seed", "5000"], "must be in 0..1023"),
        (["--env", "schedenv/Malleable-v0", "--device", "tpu"], "device='tpu' is not allowed"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["train", *argv, "--timesteps", "64", "--out", str(tmp_path / "run")])
    except SystemExit as exit_:
        code, text = 2, str(exit_.code)
    else:
        text = capsys.readouterr().err
    assert code == 2
    assert message in text
    assert not checkpoints(tmp_path / "run")


def test_refusal_names_the_algorithms_that_would_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main(["train", "--env", "schedenv/Malleable-v0", "--algo", "dqn", "--timesteps", "64", "--out", str(tmp_path)])
    assert "algos that can: ['ppo', 'a2c', 'sac']" in capsys.readouterr().err


def test_maskable_ppo_needs_an_env_with_action_masks() -> None:
    env = gym.make("CartPole-v1")
    with pytest.raises(ValueError, match=r"needs action masks, but CartPole-v1 has no action_masks\(\) method"):
        check_compatible("maskable_ppo", env, "CartPole-v1")
    assert check_compatible("ppo", env, "CartPole-v1").name == "ppo"


def test_the_cli_without_train_does_not_import_torch() -> None:
    code = (
        "import sys; from schedenv.cli import main; import baselines, schedenv.evaluation; "
        "main(['list']); assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "schedenv/Malleable-v0" in done.stdout
