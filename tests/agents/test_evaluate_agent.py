"""``schedenv evaluate --agent``: env kwargs merged over the training ones, several runs, sealed seeds, ledger."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.train import TrainConfig, train
from schedenv.cli import main
from schedenv.evaluation import evaluate
from schedenv.stats import ratio_of_means, seed_view

ONLINE_AT_HALF = {"mode": "online", "n_arrivals": 20, "max_jobs": 8, "load": 0.5}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two tiny runs of one config (training seeds 0 and 1) on online Malleable at load 0.5."""
    folders = []
    for seed in (0, 1):
        out = tmp_path_factory.mktemp(f"run{seed}")
        config = TrainConfig(
            env_kwargs=ONLINE_AT_HALF,
            timesteps=128,
            seed=seed,
            n_envs=2,
            algo_kwargs={"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            eval_every=0,
            eval_episodes=1,
            tensorboard=False,
            progress_bar=False,
        )
        train(config, out)
        folders.append(out)
    return folders


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["evaluate", *argv, "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))


def test_env_kwargs_merge_over_the_training_ones_and_are_really_played(
    two_runs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(capsys, "--agent", str(two_runs[0]), "--episodes", "4", "--env-kwargs", '{"load": 0.9}')
    assert report["env_kwargs"] == {**ONLINE_AT_HALF, "load": 0.9}
    seeds = list(range(4))
    played = {**ONLINE_AT_HALF, "load": 0.9}
    reference = evaluate("schedenv/Malleable-v0", "hesrpt", seeds, keep_records=False, **played)
    at_half = evaluate("schedenv/Malleable-v0", "hesrpt", seeds, keep_records=False, **ONLINE_AT_HALF)
    assert report["reference_mean"] == pytest.approx(reference.values("mean_slowdown").mean(), rel=1e-12)
    assert report["reference_mean"] != pytest.approx(at_half.values("mean_slowdown").mean(), rel=1e-3)


def test_several_runs_report_their_ratio_of_means_with_the_run_level_interval(
    two_runs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    single = [_report(capsys, "--agent", str(folder), "--episodes", "6") for folder in two_runs]
    both = _report(capsys, "--agent", *map(str, two_runs), "--episodes", "6")
    costs = np.array([report["per_seed"] for report in single])
    assert both["run_ratios"] == pytest.approx([r["ratio"] for r in single], rel=1e-12)
    assert both["ratio"] == pytest.approx(np.mean([r["ratio"] for r in single]), rel=1e-12)  # one reference: sum/sum
    assert both["per_seed"] == pytest.approx(costs.mean(axis=0).tolist(), rel=1e-12)
    reference = evaluate("schedenv/Malleable-v0", "hesrpt", range(6), keep_records=False, **ONLINE_AT_HALF)
    expected = ratio_of_means(costs, reference.values("mean_slowdown"))
    assert both["ratio_ci95"] == pytest.approx(list(expected.ci95), rel=1e-12)
    view = seed_view(costs, reference.values("mean_slowdown"))  # the (run, seed) pairs, not the run-averaged seeds
    assert both["seed_view"] == pytest.approx(asdict(view), rel=1e-12)
    assert sum(both["seed_view"][key] for key in ("below", "equal", "above")) == 12
    assert both["agents"] == [str(folder) for folder in two_runs] and len(both["train_seeds"]) == 4


def test_sealed_seeds_need_a_ledger_and_each_look_adds_one_line(
    two_runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", "--agent", str(two_runs[0]), "--split", "sealed", "--episodes", "2"]) == 2
    assert "--split sealed needs --ledger PATH" in capsys.readouterr().err
    ledger = tmp_path / "ledger.jsonl"
    for _ in range(2):
        report = _report(
            capsys, "--agent", str(two_runs[0]), "--split", "sealed", "--episodes", "3", "--ledger", str(ledger)
        )
    assert report["test_seeds"] == [1_000_000_000, 1_000_000_001, 1_000_000_002] and report["split"] == "sealed"
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["seeds"] == [1_000_000_000, 1_000_000_002]
    assert lines[0]["results"].startswith("schedenv evaluate --agent")
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", lines[0]["commit"])
    code = main(["evaluate", "--agent", str(two_runs[0]), "--split", "sealed", "--seed", "5", "--ledger", str(ledger)])
    assert code == 2 and "outside the sealed range 1000000000..1000999999; they overlap the test range" in (
        capsys.readouterr().err
    )
    assert len(ledger.read_text().splitlines()) == 2  # a refused evaluation is not a look


def test_a_fixed_load_or_speedup_replaces_the_training_range() -> None:
    from agents.assess import merge_env_kwargs

    training = {"mode": "online", "load_range": [0.3, 0.9], "p_range": [0.2, 0.8], "observe_params": True}
    assert merge_env_kwargs(training, {"load": 0.5}) == {**training, "load": 0.5, "load_range": None}
    assert merge_env_kwargs(training, {"speedup": 0.4})["p_range"] is None
    both = merge_env_kwargs(training, {"load": 0.5, "load_range": [0.4, 0.6]})
    assert both["load_range"] == [0.4, 0.6]  # what the user gives is kept
    assert merge_env_kwargs({"mode": "online", "load": 0.8}, {"load": 0.5}) == {"mode": "online", "load": 0.5}
