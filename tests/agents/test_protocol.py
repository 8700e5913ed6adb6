"""The evaluation protocol: disjoint seed ranges, the held-out JSON report, batched play equal to ``evaluate``."""

from __future__ import annotations

import itertools
import json
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from agents.assess import assess, play_batched
from agents.protocol import (
    SEALED_TEST_SEEDS,
    SPLITS,
    TEST_SEEDS,
    TRAIN_SEEDS,
    VALIDATION_SEEDS,
    append_ledger,
    check_disjoint,
    config_hash,
    held_out_seeds,
    ledger_entry,
    split_seeds,
    train_seeds,
    validation_seeds,
)
from agents.runs import BEST_MODEL, EVALUATIONS, MODEL, PROVENANCE, read_provenance
from agents.train import TrainConfig, apply_hyperparams, train
from schedenv.cli import main
from schedenv.evaluation import evaluate

TINY_MALLEABLE = {"jobs": [1.0, 2.0, 4.0], "max_jobs": 3}
ONLINE = {"mode": "online", "n_arrivals": 30, "max_jobs": 8}


def test_training_seeds_never_meet_test_or_validation_seeds() -> None:
    for run_seed in (0, 1, 1023):
        seeds = train_seeds(run_seed, 4096)
        assert min(seeds) >= VALIDATION_SEEDS.stop > TEST_SEEDS.stop
        assert len(set(seeds)) == 4096 and max(seeds) < 2**32
    # two runs with different seeds never share an env seed, whatever their n_envs (up to the stride)
    assert not set(train_seeds(0, 2**20)) & set(train_seeds(1, 8))
    with pytest.raises(ValueError, match=r"must be in 0\.\.1023"):
        train_seeds(1024, 1)
    with pytest.raises(ValueError, match="outside the validation range"):
        validation_seeds(999_990, 20)
    with pytest.raises(ValueError, match=r"outside the test range 0\.\.999999; they overlap the validation range"):
        held_out_seeds(999_990, 20)
    with pytest.raises(ValueError, match="were also training env seeds"):
        check_disjoint(range(5), [3, 2**31], "training env seeds")
    with pytest.raises(ValueError, match="eval_seed=0"):
        TrainConfig(eval_seed=0)


def test_the_four_splits_are_disjoint_and_keep_the_earlier_bounds() -> None:
    assert (TEST_SEEDS.start, TEST_SEEDS.stop, VALIDATION_SEEDS.stop) == (0, 1_000_000, 2_000_000)
    assert TRAIN_SEEDS.start == 2**31 and TRAIN_SEEDS.stop <= 2**32
    ordered = sorted(SPLITS.values(), key=lambda seeds: seeds.start)
    assert ordered == [TEST_SEEDS, VALIDATION_SEEDS, SEALED_TEST_SEEDS, TRAIN_SEEDS]
    for lower, upper in itertools.pairwise(ordered):
        assert lower.stop <= upper.start  # half-open ranges: no seed in two splits
    assert max(train_seeds(1023, 2**20)) == TRAIN_SEEDS.stop - 1
    assert split_seeds("sealed", 3) == range(1_000_000_000, 1_000_000_003)
    assert split_seeds("test", 5, start=10) == range(10, 15)


def test_a_seed_range_overlapping_another_split_is_refused_naming_both_ranges() -> None:
    with pytest.raises(
        ValueError,
        match=r"outside the sealed range 1000000000\.\.1000999999; they overlap the "
        r"test range 0\.\.999999",
    ):
        split_seeds("sealed", 10, start=999_995)
    with pytest.raises(ValueError, match=r"seeds 999999990\.\.1000000009, outside the sealed range.*\(see docs"):
        held_out_seeds(999_999_990, 20, split="sealed")  # in no other split: no overlap clause
    with pytest.raises(ValueError, match=r"outside the validation range 1000000\.\.1999999; they overlap the test"):
        validation_seeds(999_990, 20)
    with pytest.raises(ValueError, match="split='nope' is not allowed"):
        split_seeds("nope", 1)
    with pytest.raises(ValueError, match="--split='validation' is not allowed"):
        held_out_seeds(1_000_000, 5, split="validation")


def test_the_ledger_appends_one_line_per_look_and_hashes_the_config_without_its_seed(tmp_path: Path) -> None:
    config = {"env_id": "schedenv/Malleable-v0", "timesteps": 10, "seed": 0}
    assert config_hash(config) == config_hash({**config, "seed": 7})  # runs of one config share its hash
    assert config_hash(config) != config_hash({**config, "timesteps": 11})
    ledger = tmp_path / "results" / "ledger.jsonl"
    for name in ("rl_a.json", "rl_b.json"):
        append_ledger(ledger, ledger_entry(name, config, "f" * 40, split_seeds("sealed", 200)))
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [line["results"] for line in lines] == ["rl_a.json", "rl_b.json"]
    assert lines[0]["seeds"] == [1_000_000_000, 1_000_000_199] and lines[0]["commit"] == "f" * 40
    assert lines[0]["config_sha256"] == config_hash(config) and lines[0]["date"].endswith("+00:00")


class Equal:
    """All-equal weights on the Malleable window: EQUI over the window (a contender for ``evaluate``)."""

    name = "equal-weights"

    def reset(self, env: Any) -> None:
        """Stateless."""

    def act(self, observation: Any, env: Any) -> np.ndarray:
        return np.ones(env.action_space.shape, dtype=np.float32)


def test_batched_play_equals_the_single_env_episode_by_episode() -> None:
    seeds = [3, 11, 7, 19]
    batched = play_batched(lambda obs, masks: np.ones((obs.shape[0], 9), dtype=np.float32), *_online(seeds))
    single = evaluate("schedenv/Malleable-v0", Equal(), seeds, keep_records=False, **ONLINE)
    for row, episode in zip(batched, single.episodes, strict=True):
        assert row["mean_slowdown"] == pytest.approx(episode.metrics["mean_slowdown"], rel=1e-12)
        assert row["n_completed"] == episode.metrics["n_completed"] == 30


def _online(seeds: list[int]) -> tuple[str, list[int], dict[str, Any]]:
    return "schedenv/Malleable-v0", seeds, ONLINE


def test_assessment_pairs_the_agent_with_every_baseline_on_the_same_seeds() -> None:
    seeds = list(range(12))
    result = assess(
        lambda obs, masks: np.ones((obs.shape[0], 9), dtype=np.float32),
        "schedenv/Malleable-v0",
        ONLINE,
        seeds,
        "mean_slowdown",
        contenders=["equi", "srpt"],
    )
    equi = evaluate("schedenv/Malleable-v0", "equi", seeds, keep_records=False, **ONLINE).values("mean_slowdown")
    np.testing.assert_allclose(result.values("equi"), equi, rtol=1e-12)
    assert set(result.baselines) == {"hesrpt", "equi", "srpt"} and result.reference == "hesrpt"  # = A-heSRPT online
    best = min(result.baselines, key=lambda n: result.values(n).mean())
    assert result.best_baseline == best
    summary = result.summary()
    assert summary["ratio"] == pytest.approx(result.agent.mean() / result.values("hesrpt").mean(), rel=1e-12)
    low, high = summary["ratio_ci95"]
    assert low <= summary["ratio"] <= high
    assert summary["best_baseline_ratio"] == pytest.approx(result.agent.mean() / result.values(best).mean())


def test_baselines_play_in_their_own_terms_whatever_the_agents_action_mode() -> None:
    """In the "exponent" mode SRPT could only be played as its nearest exponent; the assessment plays it
    in the default mode instead, on the same episodes, while the agent plays its own mode."""
    seeds = list(range(4))
    kwargs = {**ONLINE, "action_mode": "exponent"}
    result = assess(
        lambda obs, masks: np.zeros((obs.shape[0], 1), dtype=np.float32),
        "schedenv/Malleable-v0",
        kwargs,
        seeds,
        "mean_slowdown",
        contenders=["srpt"],
    )
    srpt = evaluate("schedenv/Malleable-v0", "srpt", seeds, keep_records=False, **ONLINE).values("mean_slowdown")
    np.testing.assert_allclose(result.values("srpt"), srpt, rtol=1e-12)  # the fast path, to rounding
    np.testing.assert_allclose(result.agent, result.values("hesrpt"), rtol=1e-7)  # a = 0 is A-heSRPT


def test_evaluate_agent_json_reports_held_out_seeds_and_the_best_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    config = tmp_path / "tiny.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "env_id": "schedenv/Malleable-v0",
                "env_kwargs": TINY_MALLEABLE,
                "n_envs": 4,
                "algo_kwargs": {"n_steps": 32, "batch_size": 64, "n_epochs": 2},
                "eval_every": 128,
                "tensorboard": False,
            }
        )
    )
    # --config alone names the env; --hyperparams overrides fields and algorithm arguments
    argv = ["train", "--config", str(config), "--timesteps", "256", "--out", str(out), "--hyperparams", "gamma=1.0"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    evaluations = [line for line in err.splitlines() if line.startswith("eval ")]
    assert len(evaluations) == 2 and "20 validation seeds" in evaluations[0]  # one plain line per evaluation
    for name in (MODEL, BEST_MODEL, EVALUATIONS, PROVENANCE):
        assert (out / name).is_file()
        assert stat.S_IMODE((out / name).stat().st_mode) & 0o044 == 0o044, f"{name} is not readable by others"
    provenance = read_provenance(out)
    assert provenance["train_seeds"] == train_seeds(0, 4)
    assert provenance["commands"][0]["command"].startswith("schedenv train --config")
    assert provenance["commands"][0]["versions"]["stable_baselines3"]
    assert provenance["train_cpu_seconds"] > 0

    assert main(["evaluate", "--agent", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["test_seeds"] == list(range(100)) and report["episodes"] == 100
    assert report["train_seeds"] == train_seeds(0, 4)
    assert not set(report["test_seeds"]) & set(report["train_seeds"])
    assert len(report["per_seed"]) == 100
    assert report["mean"] == pytest.approx(np.mean(report["per_seed"]), rel=1e-12)
    assert report["ratio"] == pytest.approx(report["mean"] / report["reference_mean"], rel=1e-12)
    low, high = report["ratio_ci95"]
    assert low <= report["ratio"] <= high
    # heSRPT is optimal offline (Theorem 5): no agent and no baseline beats it on any job set
    assert report["reference"] == "hesrpt" and report["best_baseline"] == "hesrpt"
    assert report["ratio"] >= 1 - 1e-9 and report["best_baseline_ratio"] == pytest.approx(report["ratio"])
    assert min(report["baseline_means"].values()) == pytest.approx(report["reference_mean"])


def test_hyperparams_set_fields_entries_and_algorithm_arguments() -> None:
    config = apply_hyperparams(
        TrainConfig(), ["n_envs=64", "learning_rate=1e-4", "policy_kwargs.net_arch=[64, 64]", "device=auto"]
    )
    assert config.n_envs == 64 and config.device == "auto"
    assert config.algo_kwargs == {"learning_rate": 1e-4}
    assert config.policy_kwargs == {"net_arch": [64, 64]}
    with pytest.raises(ValueError, match="'n_envs' is not a mapping field"):
        apply_hyperparams(TrainConfig(), ["n_envs.x=1"])


def test_training_reports_evaluations_on_validation_seeds_only(tmp_path: Path) -> None:
    config = TrainConfig(
        env_kwargs=TINY_MALLEABLE,
        timesteps=128,
        n_envs=2,
        algo_kwargs={"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        eval_every=0,
        tensorboard=False,
        progress_bar=False,
    )
    result = train(config, tmp_path)
    row = result.evaluations[-1]
    assert row["validation_seeds"] == [1_000_000, 1_000_019]
    reference = evaluate("schedenv/Malleable-v0", "hesrpt", range(1_000_000, 1_000_020), **TINY_MALLEABLE)
    assert row["reference_mean"] == pytest.approx(reference.summary["mean_slowdown"].mean, rel=1e-12)


def test_the_seed_plan_page_quotes_the_refusal_and_the_ranges_as_they_are() -> None:
    page = " ".join((Path(__file__).resolve().parents[2] / "docs" / "rl" / "seed-plan.md").read_text().split())
    with pytest.raises(ValueError) as refused:
        held_out_seeds(999_995, 10)
    assert str(refused.value) in page
    for name in ("test", "validation", "sealed"):
        seeds = SPLITS[name]
        assert f"`{name}`" in page and f"`{seeds.start:_} .. {seeds.stop - 1:_}`" in page
    assert range(2**31, 2**31 + 2**30) == SPLITS["train"] and "| `train` | `2**31 .. 2**31 + 2**30 - 1` |" in page
