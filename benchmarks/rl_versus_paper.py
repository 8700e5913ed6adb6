"""RL agents against each family's paper policy and best baseline, on held-out seeds (docs/rl/index.md).

    python benchmarks/rl_versus_paper.py malleable-offline   # PPO vs heSRPT, the offline optimum
    python benchmarks/rl_versus_paper.py malleable-online    # PPO vs Adaptive-heSRPT (rho = 0.8)
    python benchmarks/rl_versus_paper.py multiserver         # MaskablePPO vs ServerFilling-SRPT (k = 8, rho = 0.8)
    python benchmarks/rl_versus_paper.py dispatch            # MaskablePPO vs TAGS and the best dispatcher
    python benchmarks/rl_versus_paper.py moldable            # MaskablePPO vs HRF-EASY
    python benchmarks/rl_versus_paper.py dispatch --quick    # a smoke run: 1 seed, 20k steps, 10 test seeds

The protocol (``agents.protocol``): every preset trains 3 independent runs (training seeds 0, 1, 2,
two at a time on the 2-core machine) with its shipped config in ``agents/configs`` on the native
batched env; model selection uses validation seeds only; each final model then plays 100 held-out
test seeds (0..99), never seen in training, beside every baseline of the env on the same seeds.
``benchmarks/results/rl_<preset>.md`` reports, per training seed, the ratio of means to the paper
policy and to the best baseline with paired bootstrap 95% intervals, and across the 3 runs the
IQM of the per-episode ratios agent / paper policy with a 95% stratified bootstrap interval
(``schedenv.stats.iqm_interval``, Agarwal et al. 2021). Each preset's goal is checked by code on those numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.assess import Assessment, assess
from agents.runs import read_evaluations, read_provenance
from agents.sweep import run_folder, sweep
from agents.train import CONFIG_DIR, resolve_config
from schedenv.comparison import objective_metric
from schedenv.reporting import add_output_arguments, markdown_table, provenance, resolve_output_args
from schedenv.stats import iqm_interval
from schedenv.workloads import from_spec


@dataclass(frozen=True)
class Preset:
    """One comparison: the shipped config, its training budget and the goal it must reach."""

    config: str
    timesteps: int
    goal: str
    """"paper <= x" (ratio to the paper policy) or "best <= x" (ratio to the best baseline)."""
    threshold: float


PRESETS = {
    "malleable-offline": Preset("malleable_ppo.yaml", 3_000_000, "paper", 1.01),
    "malleable-online": Preset("malleable_online_ppo.yaml", 8_000_000, "paper", 1.00),
    "multiserver": Preset("multiserverjob_maskable_ppo.yaml", 6_000_000, "paper", 1.05),
    "dispatch": Preset("dispatch_maskable_ppo.yaml", 1_500_000, "best", 1.00),
    "moldable": Preset("moldable_maskable_ppo.yaml", 4_200_000, "paper", 1.00),
}
TRAIN_SEEDS = (0, 1, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", choices=sorted(PRESETS))
    parser.add_argument("--quick", action="store_true", help="1 training seed, 20k steps, 10 test seeds (smoke run)")
    parser.add_argument("--timesteps", type=int, default=None, help="training steps per seed (default: the preset's)")
    parser.add_argument("--test-episodes", type=int, default=100, help="held-out test seeds 0 .. n-1")
    parser.add_argument("--workers", type=int, default=2, help="training runs at once")
    add_output_arguments(parser)
    parser.add_argument("--runs", default="runs", help="parent folder of the training runs")
    args = parser.parse_args(argv)
    args.out = resolve_output_args(args)
    preset = PRESETS[args.preset]
    seeds = TRAIN_SEEDS[:1] if args.quick else TRAIN_SEEDS
    timesteps = args.timesteps or (20_000 if args.quick else preset.timesteps)
    episodes = 10 if args.quick else args.test_episodes
    config_path = str(CONFIG_DIR / preset.config)
    runs_dir = Path(args.runs) / f"rl_{args.preset}"

    started = time.perf_counter()
    overrides = {"timesteps": timesteps, "progress_bar": False}
    sweep([config_path], seeds, overrides, runs_dir, workers=args.workers, resume=True)
    summaries = [read_provenance(run_folder(runs_dir, config_path, seed)) for seed in seeds]
    curves = {seed: read_evaluations(run_folder(runs_dir, config_path, seed)) for seed in seeds}
    wall = time.perf_counter() - started
    config = resolve_config(config_path, overrides)
    env_kwargs = {key: from_spec(value) for key, value in config.env_kwargs.items()}
    metric = objective_metric(config.env_id, env_kwargs)
    assessments = {}
    for seed in seeds:
        agent = agents.load(run_folder(runs_dir, config_path, seed), best=True)
        assessments[seed] = assess(agent.act_batch, config.env_id, env_kwargs, range(episodes), metric)
    command = "python benchmarks/rl_versus_paper.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(
        args.preset, preset, config, timesteps, assessments, summaries, wall, command.strip(), learning_curves(curves)
    )
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"rl_{args.preset}.md").write_text(text)
    print(text)
    return 0


PLATEAU = 0.001
"""A median validation ratio that moved by less than this (relative) over the second half of training is flat."""
NEAR_BEST = 0.01
"""A run whose last validation ratio is within this (relative) of its best one has not fallen back."""


def learning_curves(curves: dict[int, list[dict[str, Any]]]) -> str:
    """Markdown: the validation ratio of every run at each evaluation, and whether the budget limits it.

    The verdict compares the median over runs of the validation ratio at the middle evaluation and at
    the last one: still falling by more than ``PLATEAU`` and within ``NEAR_BEST`` of the runs' best
    means more training steps of the same config would likely help (the budget limits the result);
    ending well above the runs' best means training is unstable; otherwise it is flat, and what is
    left is information, capacity or the algorithm.
    """
    rows: dict[int, dict[int, float]] = {}
    for seed, evaluations in curves.items():
        for row in evaluations:
            rows.setdefault(int(row["timesteps"]), {})[seed] = float(row["ratio"])
    if not rows:
        return "## Learning curves\n\nNo validation evaluations were recorded."
    steps = sorted(rows)
    reference = next(row["reference"] for evaluations in curves.values() for row in evaluations)
    table = markdown_table(
        ("training steps", *(f"seed {seed}" for seed in curves)),
        [(f"{step:,}", *(f"{rows[step][s]:.4f}" if s in rows[step] else "" for s in curves)) for step in steps],
    )
    per_run = [[float(r["ratio"]) for r in evaluations] for evaluations in curves.values() if evaluations]
    middle = float(np.median([ratios[(len(ratios) - 1) // 2] for ratios in per_run]))
    last = float(np.median([ratios[-1] for ratios in per_run]))
    best = float(np.median([min(ratios) for ratios in per_run]))
    change = last / middle - 1
    if change < -PLATEAU and last <= best * (1 + NEAR_BEST):
        verdict = (
            f"still improving: the median validation ratio fell by {-100 * change:.1f}% over the second half of "
            f"training ({middle:.4f} -> {last:.4f}), so the training budget limits this result"
        )
    elif last > best * (1 + NEAR_BEST):
        verdict = (
            f"unstable: the runs were at their best earlier (median of each run's best validation ratio {best:.4f}) "
            f"and ended at {last:.4f}, {100 * (last / best - 1):.1f}% worse; more steps of this config do not "
            "reliably help (the algorithm's updates, not the budget, limit the result; the selected model is each "
            "run's best)"
        )
    else:
        verdict = (
            f"flat: the median validation ratio changed by {100 * change:+.1f}% over the second half of training "
            f"({middle:.4f} -> {last:.4f}, within {100 * PLATEAU:.1f}%), so more steps of this config would not "
            "close the gap"
        )
    return "\n".join(
        [
            f"## Learning curves (ratio to {reference} on the validation seeds, at each evaluation)",
            "",
            table,
            "",
            f"- budget: {verdict}.",
        ]
    )


def same_as_baseline(assessments: dict[int, Assessment]) -> list[str]:
    """One line per run whose selected model scores exactly as a baseline on every test seed (it learned that rule)."""
    lines = []
    for seed, result in assessments.items():
        twins = [n for n in result.baselines if np.allclose(result.agent, result.values(n), rtol=1e-9, atol=0.0)]
        if twins:
            lines.append(
                f"- training seed {seed}: the selected model scores exactly as {' = '.join(twins)} on every one of "
                f"the {len(result.agent)} test seeds (it acts as that rule)"
            )
    return lines


def report(
    name: str,
    preset: Preset,
    config: Any,
    timesteps: int,
    assessments: dict[int, Assessment],
    summaries: list[dict[str, Any]],
    wall: float,
    command: str,
    curves: str,
) -> str:
    """The Markdown of ``rl_<name>.md``: per-seed table, across-seed IQM, baselines, and the goal's check."""
    first = next(iter(assessments.values()))
    reference, metric = first.reference, first.metric
    cpu = [s.get("train_cpu_seconds", float("nan")) / 60 for s in summaries]
    rows = []
    for (seed, result), minutes in zip(assessments.items(), cpu, strict=True):
        best = result.best_baseline
        low, high = result.ratio_ci95(reference)
        best_low, best_high = result.ratio_ci95(best)
        rows.append(
            (
                seed,
                f"{result.agent.mean():.6g}",
                f"{result.ratio(reference):.4f} [{low:.4f}, {high:.4f}]",
                f"{best}: {result.ratio(best):.4f} [{best_low:.4f}, {best_high:.4f}]",
                f"{minutes:.1f}",
            )
        )
    per_episode = np.stack([r.agent / r.values(reference) for r in assessments.values()])
    iqm, iqm_low, iqm_high = iqm_interval(per_episode)
    best_overall = min(first.baselines, key=lambda n: float(first.values(n).mean()))
    to_best = np.stack([r.agent / r.values(best_overall) for r in assessments.values()])
    best_iqm, best_low, best_high = iqm_interval(to_best)
    mean_ratio = float(np.mean([r.ratio(reference) for r in assessments.values()]))
    mean_best = float(np.mean([r.ratio(best_overall) for r in assessments.values()]))
    value = mean_ratio if preset.goal == "paper" else mean_best
    target = reference if preset.goal == "paper" else f"the best baseline ({best_overall})"
    holds = value <= preset.threshold
    missed = 100 * (value / preset.threshold - 1)
    verdict = (
        f"**holds**: {value:.4f} <= {preset.threshold}"
        if holds
        else f"**does not hold**: {value:.4f} > {preset.threshold} (missed by {missed:.1f}%)"
    )
    baseline_rows = [
        (
            n,
            f"{first.values(n).mean():.6g}",
            f"{first.values(n).mean() / first.values(reference).mean():.4f}",
        )
        for n in sorted(first.baselines, key=lambda n: float(first.values(n).mean()))
    ]
    seeds = first.seeds
    lines = [
        f"# rl_{name}: {config.algo} against {reference} and the best baseline",
        "",
        f"Env `{config.env_id}` with `{json.dumps(config.env_kwargs)}`; config `agents/configs/{preset.config}`;"
        f" {timesteps:,} training steps per run on the native batched env ({config.n_envs} copies); training seeds "
        f"{', '.join(str(s) for s in assessments)}; model: each run's best on its validation seeds "
        f"(`best_model.zip`); test seeds {seeds[0]}..{seeds[-1]} "
        f"(held out: training envs are reset with seeds >= 2^31, validation uses 1000000..), metric `{metric}`.",
        "",
        "## Per training seed (ratio of means over the test seeds, paired bootstrap 95% interval)",
        "",
        markdown_table(
            ("training seed", f"agent {metric}", f"ratio to {reference}", "ratio to best baseline", "CPU-minutes"),
            rows,
        ),
        "",
        "## Across training seeds",
        "",
        f"- IQM of per-episode ratios agent / {reference} ({len(assessments)} runs x {len(seeds)} test seeds): "
        f"**{iqm:.4f}** [95% stratified bootstrap: {iqm_low:.4f}, {iqm_high:.4f}]",
        f"- IQM of per-episode ratios agent / {best_overall} (best baseline on these seeds): "
        f"**{best_iqm:.4f}** [{best_low:.4f}, {best_high:.4f}]",
        f"- mean over runs of the ratio of means: {mean_ratio:.4f} to {reference}, {mean_best:.4f} to {best_overall}",
        f"- goal: ratio to {target} <= {preset.threshold}: {verdict}",
        *same_as_baseline(assessments),
        f"- training: {sum(cpu):.1f} CPU-minutes for {len(assessments)} runs (runs two at a time on 2 cores; this "
        f"command took {wall / 60:.1f} wall-minutes to train, 0 when the runs existed already)",
        "",
        "## Baselines on the same test seeds",
        "",
        markdown_table(("baseline", f"mean {metric}", f"ratio to {reference}"), baseline_rows),
    ]
    if first.skipped:
        lines += ["", "Baselines that cannot act in this configuration: " + "; ".join(first.skipped) + "."]
    lines += ["", curves, "", provenance(command), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
