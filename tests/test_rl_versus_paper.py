"""``benchmarks/rl_versus_paper.py``: budgets read from the shipped configs, quick development runs, publishing."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")

from agents.protocol import LATER_FIELDS, SEALED_TEST_SEEDS, config_hash, earlier_config_hashes
from agents.results import RLResults, load_results, within
from agents.train import CONFIG_DIR, resolve_config
from schedenv.cli import main as schedenv_main
from schedenv.stats import ratio_of_means, seed_view

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import rl_versus_paper

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def published_budget(name: str) -> int | None:
    """The training steps per run of the committed result of preset ``name`` (its JSON, else its page; None
    when the preset has no result yet)."""
    data = RESULTS / f"rl_{name}.json"
    if data.is_file():
        return load_results(data).timesteps
    if not (RESULTS / f"rl_{name}.md").is_file():
        return None
    found = re.search(r"([0-9,]+) training steps per run", (RESULTS / f"rl_{name}.md").read_text())
    assert found, f"rl_{name}.md does not state its training steps"
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize("name", sorted(rl_versus_paper.PRESETS))
def test_each_preset_trains_its_configs_own_timesteps_those_of_its_published_result(name: str) -> None:
    preset = rl_versus_paper.PRESETS[name]
    written = yaml.safe_load(preset.path.read_text())["timesteps"]  # in the file, not the TrainConfig default
    assert written == preset.timesteps
    assert published_budget(name) in (None, written)
    assert resolve_config(preset.path, {"timesteps": 5}).timesteps == 5
    assert len(preset.elsewhere) >= 2 and all(change for change in preset.elsewhere)


def test_schedenv_train_uses_the_configs_timesteps_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents.train

    trained: list[Any] = []
    monkeypatch.setattr(agents.train, "train", lambda config, out, **_: trained.append(config))
    config = str(CONFIG_DIR / "moldable_maskable_ppo.yaml")
    assert schedenv_main(["train", "--config", config, "--seed", "3", "--out", str(tmp_path)]) == 0
    assert schedenv_main(["train", "--config", config, "--timesteps", "77", "--out", str(tmp_path)]) == 0
    assert [(c.timesteps, c.seed) for c in trained] == [(published_budget("moldable"), 3), (77, 0)]


TINY = {
    "env_id": "schedenv/Malleable-v0",
    "algo": "ppo",
    "timesteps": 128,
    "env_kwargs": {"n_jobs": 4, "max_jobs": 4, "speedup": 0.5},
    "n_envs": 2,
    "algo_kwargs": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
    "eval_every": 64,
    "eval_episodes": 3,
    "checkpoint_every": 1000,
    "tensorboard": False,
}


def _check(results: Any, runs: int, split: str) -> None:
    assert len(results.runs) == runs and results.split == split
    costs = np.array([run.costs for run in results.runs])
    expected = ratio_of_means(costs, np.array(results.baselines[results.reference]))
    assert results.headline == {"ratio_of_means": expected.ratio, "ci95": list(expected.ci95)}
    assert [entry.overrides for entry in results.generalisation] == [{"speedup": 0.3}, {"speedup": 0.7}]
    assert all(entry.env_kwargs["speedup"] == entry.overrides["speedup"] for entry in results.generalisation)
    # the same models at other speedups score differently (the env really played the other setting)
    assert all(entry.costs != [run.costs for run in results.runs] for entry in results.generalisation)
    assert all(run.steps and len(run.steps) == len(run.validation_ratio) for run in results.runs)


def test_quick_mode_writes_json_md_png_on_development_seeds_and_no_ledger(tmp_path: Path) -> None:
    ledger = rl_versus_paper.ROOT / "benchmarks/results/ledger.jsonl"
    before = ledger.read_text() if ledger.is_file() else None
    argv = ["malleable-offline", "--quick", "--timesteps", "256", "--test-episodes", "4", "--workers", "1"]
    assert rl_versus_paper.main([*argv, "--runs", str(tmp_path / "runs")]) == 0
    out = tmp_path / "runs" / "rl_malleable-offline" / "report"
    results = load_results(out / "rl_malleable-offline.json")
    _check(results, runs=2, split="test")
    assert results.test_seeds == [0, 1, 2, 3] and results.train_seeds == [0, 1]
    assert (out / "rl_malleable-offline.png").read_bytes()[:4] == b"\x89PNG"
    assert "rl_malleable-offline.png" in (out / "rl_malleable-offline.md").read_text()
    assert (ledger.read_text() if ledger.is_file() else None) == before


def test_development_runs_never_write_the_committed_results(capsys: pytest.CaptureFixture[str]) -> None:
    inside = str(rl_versus_paper.ROOT / "benchmarks" / "results" / "mine")
    for argv in (["dispatch", "--out", inside], ["dispatch", "--ledger", "x.jsonl"]):
        with pytest.raises(SystemExit):
            rl_versus_paper.parse([*argv, "--quick"])
    err = capsys.readouterr().err
    assert "where only --publish writes" in err and "--ledger records looks at the sealed seeds" in err
    with pytest.raises(SystemExit):
        rl_versus_paper.parse(["dispatch", "--publish", "--quick"])
    assert "--publish and --replicate train the config's own budget" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        rl_versus_paper.parse(["dispatch", "--publish", "--replicate"])
    assert "two different looks at the sealed seeds" in capsys.readouterr().err


def test_publishing_needs_a_clean_tree_and_appends_one_ledger_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    preset = rl_versus_paper.Preset(str(config), "paper", 1.0, ({"speedup": 0.3}, {"speedup": 0.7}))
    monkeypatch.setitem(rl_versus_paper.PRESETS, "moldable", preset)
    argv = ["moldable", "--publish", "--test-episodes", "3", "--workers", "1", "--runs", str(tmp_path / "runs")]
    argv += ["--out", str(tmp_path / "results"), "--ledger", str(tmp_path / "ledger.jsonl")]
    monkeypatch.setattr(rl_versus_paper, "_commit", lambda: ("c" * 40, True))
    with pytest.raises(SystemExit, match="--publish needs a clean tree"):
        rl_versus_paper.main(argv)
    assert not (tmp_path / "runs").exists()  # refused before training
    monkeypatch.setattr(rl_versus_paper, "_commit", lambda: ("c" * 40, False))
    assert rl_versus_paper.main(argv) == 0
    results = load_results(tmp_path / "results" / "rl_moldable.json")
    _check(results, runs=3, split="sealed")
    assert results.test_seeds == list(SEALED_TEST_SEEDS[:3]) and results.commit == "c" * 40
    (line,) = [json.loads(text) for text in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    assert line["results"] == "benchmarks/results/rl_moldable.json" and line["commit"] == "c" * 40
    assert line["seeds"] == [SEALED_TEST_SEEDS.start, SEALED_TEST_SEEDS.start + 2]
    assert line["config_sha256"] == results.config_sha256 == config_hash(resolve_config(config, {}).__dict__)


def test_every_committed_results_page_is_generated_from_its_json() -> None:
    import render_results

    paths = render_results.committed_results()
    assert len(paths) > len(list(RESULTS.glob("rl_*.json")))  # the replications' pages too
    for path in paths:
        assert path.with_suffix(".md").read_text() == render_results.rendered(path), (
            f"{path.name}: run python benchmarks/render_results.py --update-results"
        )


def test_no_committed_offline_malleable_result_beats_hesrpt_on_any_seed() -> None:
    """heSRPT is the optimal offline policy for mean slowdown with speedup k^p, 0 < p < 1 (heSRPT paper, Theorem 5),
    so on every seed of every committed offline Malleable result, at each of its settings, neither the agent's runs
    nor any baseline may cost less than heSRPT beyond rounding (``schedenv.stats.SEED_TIE``): a seed where one did
    would be a bug in the env, a baseline or the assessment."""
    import render_results

    offline = [
        load_results(path)
        for path in render_results.committed_results()
        if path.stem.startswith("rl_malleable-offline")
    ]
    assert len(offline) >= 4  # two published, two replicated
    for results in offline:
        assert results.reference == "hesrpt" and results.env_kwargs.get("mode", "offline") == "offline"
        assert results.env_kwargs["objective"] == "slowdown"
        for setting in [results.training_setting, *results.generalisation]:
            optimal = setting.baselines["hesrpt"]
            others = [*setting.costs, *setting.baselines.values()]
            assert seed_view(others, optimal).below == 0, (results.setting, setting.overrides)


def test_a_replication_retrains_with_other_seeds_on_other_sealed_seeds_and_says_where_it_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    preset = rl_versus_paper.Preset(str(config), "paper", 1.0, ({"speedup": 0.3}, {"speedup": 0.7}))
    monkeypatch.setitem(rl_versus_paper.PRESETS, "malleable-offline", preset)  # checked against its published file
    monkeypatch.setattr(rl_versus_paper, "_commit", lambda: ("d" * 40, False))
    argv = ["malleable-offline", "--replicate", "--test-episodes", "3", "--workers", "1"]
    argv += ["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--ledger", str(tmp_path / "l.jsonl")]
    with pytest.raises(SystemExit, match="no longer the config of"):  # the tiny config is not the published one
        rl_versus_paper.main(argv)
    assert not (tmp_path / "runs").exists()  # refused before training
    monkeypatch.setattr(rl_versus_paper, "replicates", lambda published, config: True)
    assert rl_versus_paper.main(argv) == 0
    results = load_results(tmp_path / "out" / "rl_malleable-offline.json")
    _check(results, runs=3, split="sealed")
    assert results.train_seeds == list(rl_versus_paper.REPLICATION_TRAIN_SEEDS)
    start = rl_versus_paper.REPLICATION_SEALED_START
    assert results.test_seeds == [start, start + 1, start + 2]
    (line,) = [json.loads(text) for text in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert line["results"] == "benchmarks/results/replications/rl_malleable-offline.json"
    published = load_results(RESULTS / "rl_malleable-offline.json")
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith(rl_versus_paper.replication_verdict(published, results).split("(published")[1])
    )
    monkeypatch.setattr(rl_versus_paper, "_commit", lambda: ("d" * 40, True))
    with pytest.raises(SystemExit, match="--replicate needs a clean tree"):
        rl_versus_paper.main(argv)


def test_a_config_keeps_its_hashes_from_before_fields_added_at_their_defaults() -> None:
    config = dataclasses.asdict(resolve_config(CONFIG_DIR / "malleable_ppo.yaml", {}))
    assert {name: config[name] for name in LATER_FIELDS} == LATER_FIELDS  # TrainConfig's own defaults
    before = {key: value for key, value in config.items() if key not in ("eval_restore", "warm_start_kl")}
    hashes = earlier_config_hashes(config)
    assert config_hash(config) in hashes and config_hash(before) in hashes and len(hashes) == 2 ** len(LATER_FIELDS)
    changed = {**config, "timesteps": config["timesteps"] + 1}  # a real change is never one of them
    assert not hashes & earlier_config_hashes(changed)
    assert len(earlier_config_hashes({**config, "warm_start_kl": True})) == 2 ** (len(LATER_FIELDS) - 1)


REPLICATIONS = sorted((RESULTS / "replications").glob("rl_*.json")) + sorted(
    (RESULTS / "replications" / "superseded").glob("*/rl_*.json")
)
"""Replications that landed inside: of the current publications, and (``superseded/<commit>/``) of
publications a later config replaced."""
OUTSIDE = sorted((RESULTS / "replications" / "outside").glob("rl_*.json"))
"""Replications that missed their published interval: kept, since every look at sealed seeds is published."""


def _publication_of(replicated: RLResults, name: str) -> RLResults:
    """The committed publication that ``replicated`` retrains: ``RESULTS/name``, or, once a later config
    was published in its place, the copy kept in ``RESULTS/superseded/<commit>/name`` (same config hash)."""
    candidates = [RESULTS / name, *sorted((RESULTS / "superseded").glob(f"*/{name}"))]
    found = [load_results(c) for c in candidates if c.exists()]
    matches = [result for result in found if result.config_sha256 == replicated.config_sha256]
    if not matches:  # published before fields were added to TrainConfig (at their defaults): the same config
        preset = rl_versus_paper.PRESETS[name.removeprefix("rl_").removesuffix(".json")]
        shipped = rl_versus_paper.preset_config(preset, preset.timesteps)
        if replicated.config_sha256 in earlier_config_hashes(dataclasses.asdict(shipped)):
            matches = [result for result in found if rl_versus_paper.replicates(result, shipped)]
    assert len(matches) == 1, f"{len(matches)} committed publications of {name} have the replicated config"
    return matches[0]


def _replication_against_publication(path: Path) -> tuple[float, float, float]:
    """(replicated ratio, published low, high) after checking that ``path`` is a replication of a
    committed publication (same config, other training and test seeds, both sealed) with its ledger line."""
    replicated = load_results(path)
    published = _publication_of(replicated, path.name)
    assert replicated.split == published.split == "sealed"
    assert not set(replicated.train_seeds) & set(published.train_seeds)
    assert not set(replicated.test_seeds) & set(published.test_seeds)
    ledger = [json.loads(line) for line in (RESULTS / "ledger.jsonl").read_text().splitlines()]
    assert any(entry["results"] == f"benchmarks/results/replications/{path.name}" for entry in ledger)
    low, high = published.headline["ci95"]
    return replicated.headline["ratio_of_means"], low, high


@pytest.mark.parametrize("path", REPLICATIONS, ids=[str(p.relative_to(RESULTS)) for p in REPLICATIONS])
def test_each_committed_replication_lands_inside_the_published_interval(path: Path) -> None:
    """docs/rl/seed-plan.md: a reviewer who retrains a shipped config with other training seeds and
    scores it on other sealed seeds gets a ratio inside the published interval."""
    ratio, low, high = _replication_against_publication(path)
    assert within(ratio, low, high), rl_versus_paper.replication_verdict(
        _publication_of(load_results(path), path.name), load_results(path)
    )


@pytest.mark.parametrize("path", OUTSIDE, ids=[p.stem for p in OUTSIDE])
def test_a_replication_that_missed_is_kept_in_outside_and_did_miss(path: Path) -> None:
    """A replication outside its published interval is not hidden: it stays in ``replications/outside/``
    (moved from where ``--replicate`` wrote it, which its ledger line names), and only a real miss may."""
    ratio, low, high = _replication_against_publication(path)
    assert not within(ratio, low, high)
