"""RL agents against each family's paper policy and best baseline, on held-out seeds (docs/rl/index.md).

    python benchmarks/rl_versus_paper.py malleable-offline --publish  # PPO vs heSRPT, the offline optimum
    python benchmarks/rl_versus_paper.py malleable-online --publish   # PPO vs Adaptive-heSRPT (rho = 0.8)
    python benchmarks/rl_versus_paper.py multiserver --publish        # MaskablePPO vs ServerFilling-SRPT
    python benchmarks/rl_versus_paper.py dispatch --publish           # MaskablePPO vs TAGS and the best dispatcher
    python benchmarks/rl_versus_paper.py moldable --publish           # MaskablePPO vs HRF-EASY
    python benchmarks/rl_versus_paper.py dispatch                     # development: test seeds, into runs/
    python benchmarks/rl_versus_paper.py dispatch --quick             # a smoke run: 2 runs, 20k steps, 10 seeds
    python benchmarks/rl_versus_paper.py malleable-online-range --replicate  # a reviewer's check of a published result

Every preset trains 3 independent runs (training seeds 0, 1, 2, two at a time on the 2-core machine)
with its shipped config in ``agents/configs``, for the config's own ``timesteps`` (the config is the
one source of the budget: ``schedenv train --config X --seed S`` trains the same run). Model
selection uses validation seeds only. Each run's selected model then plays the test seeds beside
every baseline of the env, at the training setting and at the preset's two other settings.

Without ``--publish`` the test seeds are development-test seeds (docs/rl/seed-plan.md) and the files
go to ``runs/rl_<preset>/report`` (never a committed file). With ``--publish`` they are sealed seeds:
the tree must be clean (the results name its commit), the files go to ``benchmarks/results``
(``rl_<preset>.json``, and the ``.md`` and ``.png`` generated from it by ``agents.results``), and one
line is appended to ``benchmarks/results/ledger.jsonl``, so the ledger counts every look at the
sealed seeds (as many as the preset's ``test_episodes``: 100, and 400 of 200,000 arrivals for Dispatch, where
every baseline's mean is then within ±10%, ``schedenv.dispatch.preset``). The headline is the runs' ratio of
means to the paper policy with its two-level bootstrap interval (``schedenv.stats.ratio_of_means``).

``--replicate`` is the reviewer's check of a published result (docs/rl/seed-plan.md): the shipped
config retrained with other training seeds (``REPLICATION_TRAIN_SEEDS``), scored on other sealed seeds
(from ``REPLICATION_SEALED_START``), from a clean tree, with its own ledger line; the files go to
``benchmarks/results/replications`` and the command says whether the ratio lies inside the published
interval (a test reads the committed files and requires it).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import agents
from agents.assess import Assessment, assess, baseline_kwargs, merge_env_kwargs
from agents.protocol import (
    LEDGER,
    SEALED_TEST_SEEDS,
    append_ledger,
    config_hash,
    earlier_config_hashes,
    ledger_entry,
    split_seeds,
)
from agents.results import RLResults, Run, Setting, load_results, plot_learning_curves, render_markdown, within
from agents.runs import read_evaluations, read_provenance
from agents.sweep import run_folder, sweep
from agents.train import CONFIG_DIR, TrainConfig, env_kwargs_objects, resolve_config
from schedenv.comparison import objective_metric
from schedenv.dispatch.preset import BENCHMARK_TEST_SEEDS
from schedenv.fastpath import evaluate_fast
from schedenv.leaderboard.record import git_state

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Preset:
    """One comparison: the shipped config, the goal of the issue and two other settings to score the runs at."""

    config: str
    goal: str
    """"paper" (ratio to the paper policy) or "best" (ratio to the best baseline)."""
    threshold: float
    elsewhere: tuple[dict[str, Any], ...]
    """Env kwargs merged over the training ones: the settings the trained runs are also scored at."""
    test_episodes: int = 100
    """Test seeds per setting (Dispatch: ``schedenv.dispatch.preset``, where every baseline is within ±10%)."""

    @property
    def path(self) -> Path:
        """The shipped config file."""
        return CONFIG_DIR / self.config

    @property
    def timesteps(self) -> int:
        """The training budget, read from the config (its ``timesteps``)."""
        return resolve_config(self.path, {}).timesteps


PRESETS = {
    "malleable-offline": Preset("malleable_ppo.yaml", "paper", 1.01, ({"speedup": 0.3}, {"speedup": 0.7})),
    "malleable-offline-exponent": Preset(
        "malleable_offline_exponent_ppo.yaml", "paper", 1.001, ({"speedup": 0.3}, {"speedup": 0.7})
    ),
    "malleable-online": Preset("malleable_online_ppo.yaml", "paper", 1.00, ({"load": 0.5}, {"load": 0.9})),
    "malleable-online-range": Preset(
        "malleable_online_range_ppo.yaml",
        "paper",
        1.00,
        tuple({"load": load, "speedup": 0.5} for load in (0.5, 0.7, 0.9)),
    ),
    "moldable-ranked": Preset(
        "moldable_ranked_maskable_ppo.yaml",
        "paper",
        1.00,
        ({"arrival_interval": "light"}, {"arrival_interval": "heavy"}),
    ),
    "moldable-ranked-rollout": Preset(
        "moldable_ranked_rollout_maskable_ppo.yaml",
        "paper",
        1.00,
        ({"arrival_interval": "light"}, {"arrival_interval": "heavy"}),
    ),
    "multiserver": Preset("multiserverjob_maskable_ppo.yaml", "paper", 1.05, ({"load": 0.6}, {"load": 0.9})),
    "multiserver-ranked": Preset(
        "multiserverjob_ranked_maskable_ppo.yaml", "paper", 1.00, ({"load": 0.6}, {"load": 0.9})
    ),
    "dispatch": Preset(
        "dispatch_maskable_ppo.yaml", "best", 1.00, ({"load": 0.3}, {"load": 0.7}), BENCHMARK_TEST_SEEDS
    ),
    "moldable": Preset(
        "moldable_maskable_ppo.yaml", "paper", 1.00, ({"arrival_interval": "light"}, {"arrival_interval": "heavy"})
    ),
}
TRAIN_SEEDS = (0, 1, 2)
QUICK_SEEDS = (0, 1)
REPLICATION_TRAIN_SEEDS = (100, 101, 102)
"""Training seeds of ``--replicate``: never those of a published run (``TRAIN_SEEDS``)."""
REPLICATION_SEALED_START = SEALED_TEST_SEEDS.start + 500_000
"""First sealed seed of ``--replicate``: half-way into the sealed range, far from the published seeds."""
REPLICATIONS = "benchmarks/results/replications"
"""Where ``--replicate`` writes (``rl_<preset>.json``, ``.md``, ``.png``)."""


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", choices=sorted(PRESETS))
    parser.add_argument("--quick", action="store_true", help="2 training runs, 20k steps, 10 test seeds (smoke run)")
    parser.add_argument("--publish", action="store_true", help="sealed seeds, clean tree, benchmarks/results, ledger")
    parser.add_argument("--timesteps", type=int, default=None, help="training steps per run (default: the config's)")
    parser.add_argument(
        "--test-episodes", type=int, default=None, help="test seeds (default: the preset's; --quick: 10)"
    )
    parser.add_argument("--workers", type=int, default=2, help="training runs at once")
    parser.add_argument("--out", default=None, help="folder of the results (default: runs/rl_<preset>/report)")
    parser.add_argument("--runs", default="runs", help="parent folder of the training runs")
    parser.add_argument(
        "--replicate",
        action="store_true",
        help=f"retrain with seeds {list(REPLICATION_TRAIN_SEEDS)}, score on other sealed seeds, into {REPLICATIONS}",
    )
    parser.add_argument("--ledger", default=None, help=f"--publish: the ledger to append to (default {LEDGER})")
    args = parser.parse_args(argv)
    if args.replicate and args.publish:
        parser.error("--replicate and --publish are two different looks at the sealed seeds: give one")
    sealed = args.publish or args.replicate
    if sealed and (args.quick or args.timesteps is not None):
        parser.error("--publish and --replicate train the config's own budget, 3 runs: drop --quick and --timesteps")
    if args.ledger and not sealed:
        parser.error("--ledger records looks at the sealed seeds: give --publish or --replicate too")
    committed = ROOT / "benchmarks/results"
    if args.out and not sealed and committed in [Path(args.out).resolve(), *Path(args.out).resolve().parents]:
        parser.error(f"--out {args.out!r} is inside {committed}, where only --publish writes (committed results)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    preset = PRESETS[args.preset]
    commit, dirty = _commit()
    sealed = args.publish or args.replicate
    if sealed and dirty:
        flag = "--publish" if args.publish else "--replicate"
        raise SystemExit(f"{flag} needs a clean tree: commit {commit} has uncommitted changes (git status)")
    published = ROOT / "benchmarks/results" / f"rl_{args.preset}.json"
    if args.replicate and not (published.exists() and load_results(published).split == "sealed"):
        raise SystemExit(f"--replicate checks a published result, and {published} is not one: publish it first")
    seeds = REPLICATION_TRAIN_SEEDS if args.replicate else QUICK_SEEDS if args.quick else TRAIN_SEEDS
    timesteps = args.timesteps or (20_000 if args.quick else preset.timesteps)
    if args.replicate and not replicates(load_results(published), preset_config(preset, timesteps)):
        raise SystemExit(
            f"--replicate retrains the shipped {preset.path}, which is no longer the config of {published} "
            "(its hash matches none of the config's, agents.protocol.earlier_config_hashes): publish it first"
        )
    episodes = args.test_episodes or (10 if args.quick else preset.test_episodes)
    split = "sealed" if sealed else "test"
    test_seeds = split_seeds(split, episodes, REPLICATION_SEALED_START if args.replicate else None)
    default_out = (
        ROOT / REPLICATIONS
        if args.replicate
        else ROOT / "benchmarks/results"
        if args.publish
        else Path(args.runs) / f"rl_{args.preset}/report"
    )
    out = Path(args.out or default_out)
    runs_dir = Path(args.runs) / (f"rl_{args.preset}-replication" if args.replicate else f"rl_{args.preset}")

    config_path = str(preset.path)
    sweep([config_path], seeds, run_overrides(timesteps), runs_dir, workers=args.workers, resume=True)
    folders = [run_folder(runs_dir, config_path, seed) for seed in seeds]
    config = preset_config(preset, timesteps)
    env_kwargs = env_kwargs_objects(config)
    metric = objective_metric(config.env_id, env_kwargs)
    policies = [agents.load(folder, best=True).act_batch for folder in folders]
    trained = assess(policies, config.env_id, env_kwargs, test_seeds, metric)
    elsewhere = [
        (change, assess(policies, config.env_id, merge_env_kwargs(env_kwargs, change), test_seeds, metric))
        for change in preset.elsewhere
    ]
    command = "python benchmarks/rl_versus_paper.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results = collect(args.preset, preset, config, trained, elsewhere, folders, seeds, (commit, dirty), split)
    results = dataclasses.replace(results, command=command.strip())
    write(results, out)
    if sealed:
        ledger = Path(args.ledger) if args.ledger else ROOT / LEDGER
        where = REPLICATIONS if args.replicate else "benchmarks/results"
        entry = ledger_entry(f"{where}/rl_{args.preset}.json", dataclasses.asdict(config), commit, test_seeds)
        append_ledger(ledger, entry)
    print(render_markdown(results))
    if args.replicate:
        print(replication_verdict(load_results(published), results))
    return 0


def run_overrides(timesteps: int) -> dict[str, Any]:
    """What every run of a preset sets over its shipped config: the budget and no progress bar."""
    return {"timesteps": timesteps, "progress_bar": False}


def preset_config(preset: Preset, timesteps: int) -> TrainConfig:
    """The resolved config that ``preset``'s runs train (``run_overrides``)."""
    return resolve_config(str(preset.path), run_overrides(timesteps))


def replicates(published: RLResults, config: TrainConfig) -> bool:
    """True when ``config`` is the config ``published`` was trained from: its hash, or its hash before fields
    added later at their defaults (``agents.protocol.earlier_config_hashes``)."""
    return published.config_sha256 in earlier_config_hashes(dataclasses.asdict(config))


def replication_verdict(published: RLResults, replicated: RLResults) -> str:
    """Whether the replication's ratio of means lies inside the published 95% interval, in one sentence."""
    low, high = published.headline["ci95"]
    ratio = replicated.headline["ratio_of_means"]
    inside = "inside" if within(ratio, low, high) else "OUTSIDE"
    return (
        f"{replicated.setting}: retrained with seeds {replicated.train_seeds} on sealed seeds from "
        f"{replicated.test_seeds[0]}: {ratio:.4f}, {inside} the published interval [{low:.4f}, {high:.4f}] "
        f"(published {published.headline['ratio_of_means']:.4f} with seeds {published.train_seeds})"
    )


def _commit() -> tuple[str, bool]:
    """The checkout's full commit and whether the tree has uncommitted changes (a non-git tree counts as dirty)."""
    state = git_state()
    if not state["commit"]:
        return "0" * 40, True
    return str(state["commit"]), bool(state["dirty"])


def collect(
    name: str,
    preset: Preset,
    config: TrainConfig,
    trained: Assessment,
    elsewhere: list[tuple[dict[str, Any], Assessment]],
    folders: list[Path],
    seeds: tuple[int, ...],
    commit: tuple[str, bool],
    split: str,
) -> RLResults:
    """The ``RLResults`` of the assessed runs (``command`` is filled in by the caller)."""
    runs = []
    for seed, folder, costs in zip(seeds, folders, trained.run_costs, strict=True):
        curve = read_evaluations(folder)
        runs.append(
            Run(
                train_seed=seed,
                costs=[float(v) for v in costs],
                train_cpu_seconds=float(read_provenance(folder).get("train_cpu_seconds", 0.0)),
                steps=[int(row["timesteps"]) for row in curve],
                validation_ratio=[float(row["ratio"]) for row in curve],
            )
        )
    headline = trained.headline(trained.reference)
    return RLResults(
        setting=name,
        env_id=config.env_id,
        env_kwargs=dict(config.env_kwargs),
        config=f"agents/configs/{preset.config}",
        config_sha256=config_hash(dataclasses.asdict(config)),
        algo=config.algo,
        timesteps=config.timesteps,
        n_envs=config.n_envs,
        metric=trained.metric,
        commit=commit[0],
        dirty=commit[1],
        split=split,
        reference=trained.reference,
        train_seeds=list(seeds),
        test_seeds=list(trained.seeds),
        runs=runs,
        baselines=_costs(trained),
        skipped_baselines=dict(trained.skipped),
        headline={"ratio_of_means": headline.ratio, "ci95": list(headline.ci95)},
        generalisation=[
            Setting(
                env_kwargs={**config.env_kwargs, **change},
                overrides=change,
                costs=[[float(v) for v in row] for row in result.run_costs],
                baselines=_costs(result),
            )
            for change, result in elsewhere
        ],
        validation=_validation(config, trained, folders[0]),
        goal={"against": preset.goal, "threshold": preset.threshold},
        command="",
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        machine=f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    )


def _costs(result: Assessment) -> dict[str, list[float]]:
    return {name: [float(v) for v in result.values(name)] for name in result.baselines}


def _validation(config: TrainConfig, trained: Assessment, folder: Path) -> dict[str, Any]:
    """The validation seeds of the learning curves and the best test baseline's ratio to the paper policy there."""
    curve = read_evaluations(folder)
    if not curve:
        return {}
    first, last = curve[0]["validation_seeds"]
    best = trained.best_baseline
    ratios = {trained.reference: 1.0}
    if best != trained.reference:
        kwargs = baseline_kwargs(env_kwargs_objects(config))
        played = evaluate_fast(config.env_id, best, range(first, last + 1), **kwargs)
        ratios[best] = float(played.values(trained.metric).mean() / curve[0]["reference_mean"])
    return {"seeds": [first, last], "baselines": ratios}


def write(results: RLResults, out: Path) -> None:
    """``rl_<setting>.json``, then the ``.png`` and the ``.md`` generated from it, into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"rl_{results.setting}"
    (out / f"{stem}.json").write_text(results.to_json())
    saved = load_results(out / f"{stem}.json")  # the page and the picture show what the file holds
    plot_learning_curves(saved, out / f"{stem}.png")
    (out / f"{stem}.md").write_text(render_markdown(saved, picture=f"{stem}.png"))


if __name__ == "__main__":
    raise SystemExit(main())
