"""PPO on offline malleable instances against heSRPT's optimum (issue 6; heSRPT paper Theorem 6).

Each episode is a fresh set of ``n_jobs`` Pareto(1.5) jobs present at t = 0 (p = 0.5, N = 1000,
objective: mean slowdown). heSRPT is optimal offline (Theorem 5), so its mean slowdown on the same
job sets is the optimum and the ratio agent / heSRPT is the gap to optimal. The agent trains with
the shipped ``agents/configs/malleable_ppo.yaml``; the CPU budget is the training process's CPU
time (user + system, all threads), read at every evaluation.

    python benchmarks/rl_malleable_offline.py                 # 2 training seeds x 200k steps
    python benchmarks/rl_malleable_offline.py --quick         # 1 seed x 20k steps, < 1 minute
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import agents
from agents.train import resolve_config, train
from schedenv.evaluation import EvaluationResult, evaluate
from schedenv.stats import mean_interval

FIGURE = "rl_malleable_offline"
DESCRIPTION = "PPO within 5% of heSRPT's offline optimum (8 jobs, p = 0.5, slowdown) in <= 20 CPU-minutes"
ENV_ID = "schedenv/Malleable-v0"
CONTENDERS = ("hesrpt", "equi", "srpt", "knee", "hell", "rs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("--quick", action="store_true", help="1 training seed, 20k steps, 20 test job sets")
    parser.add_argument("--out", default="benchmarks/results", help="folder of the .md and .png")
    parser.add_argument("--runs", default="runs/rl_malleable_offline", help="folder of the training runs")
    parser.add_argument("--seeds", type=int, default=2, help="training seeds (independent PPO runs)")
    parser.add_argument("--timesteps", type=int, default=200_000, help="training steps per seed")
    parser.add_argument("--test-episodes", type=int, default=100, help="test job sets (seeds 0 .. n-1)")
    parser.add_argument("--n-jobs", type=int, default=8, help="jobs per instance")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.timesteps, args.test_episodes = 1, 20_000, 20
    env_kwargs = {"n_jobs": args.n_jobs, "max_jobs": args.n_jobs, "speedup": 0.5, "objective": "slowdown"}
    test_seeds = range(args.test_episodes)

    curves: dict[int, list[dict[str, float]]] = {}
    agents_results: dict[int, EvaluationResult] = {}
    budgets: dict[int, float] = {}
    for seed in range(args.seeds):
        run_dir = Path(args.runs) / f"seed{seed}"
        overrides = {
            "env_id": ENV_ID,
            "algo": "ppo",
            "env_kwargs": env_kwargs,
            "timesteps": args.timesteps,
            "seed": seed,
            "eval_every": max(args.timesteps // 10, 1),
            "progress_bar": False,
        }
        config = resolve_config(None, overrides)
        cpu_start = time.process_time()
        result = train(config, run_dir, resume=True)
        budgets[seed] = time.process_time() - cpu_start
        curves[seed] = [
            {
                "timesteps": row["timesteps"],
                "cpu_minutes": (row["process_cpu_seconds"] - cpu_start) / 60,
                "ratio": row["ratio"],
            }
            for row in result.evaluations
        ]
        agents_results[seed] = evaluate(ENV_ID, agents.load(run_dir), test_seeds, keep_records=False, **env_kwargs)
    baselines_results = {
        name: evaluate(ENV_ID, name, test_seeds, keep_records=False, **env_kwargs) for name in CONTENDERS
    }
    command = "python benchmarks/rl_malleable_offline.py " + " ".join(argv if argv is not None else sys.argv[1:])
    write_report(Path(args.out), args, env_kwargs, curves, agents_results, baselines_results, budgets, command)
    return 0


def write_report(
    out: Path,
    args: argparse.Namespace,
    env_kwargs: dict,
    curves: dict,
    agents_results: dict,
    baselines_results: dict,
    budgets: dict,
    command: str,
) -> None:
    """Markdown table (test job sets) + learning curve, and a PNG of the ratio against CPU time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    optimum = baselines_results["hesrpt"]
    metric = "mean_slowdown"
    rows = [
        (f"PPO (training seed {seed})", result, f"{budgets[seed] / 60:.1f}") for seed, result in agents_results.items()
    ]
    rows += [(name, result, "") for name, result in baselines_results.items()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"# {FIGURE}: {DESCRIPTION}",
        "",
        f"Env `{ENV_ID}` with `{json.dumps(env_kwargs)}` (Pareto(1.5) sizes, N = 1000, offline).",
        f"Test: {args.test_episodes} job sets (seeds 0..{args.test_episodes - 1}), the same for every contender; "
        "heSRPT is the offline optimum (Theorem 5/6), so its ratio is 1 and every ratio is >= 1.",
        f"Training: `agents/configs/malleable_ppo.yaml`, {args.timesteps} steps per seed, seeds 0..{args.seeds - 1}; "
        "evaluation during training on seeds 1000000..1000019.",
        "",
        "| contender | mean slowdown (± 95%) | ratio to heSRPT | paired gap (± 95%) | training CPU-minutes |",
        "|---|---|---|---|---|",
    ]
    for label, result, budget in rows:
        interval = result.summary[metric]
        paired = result.compare(optimum, metric)
        lines.append(
            f"| {label} | {interval.mean:.4f} ± {interval.ci95:.4f} | {paired.ratio:.4f} | "
            f"{paired.difference.mean:+.4f} ± {paired.difference.ci95:.4f} | {budget} |"
        )
    final = mean_interval([r.compare(optimum, metric).ratio for r in agents_results.values()])
    lines += [
        "",
        f"PPO ratio over training seeds: {final} (gap {100 * (final.mean - 1):.2f}%).",
        "",
        "## Learning curve (ratio to heSRPT on the 20 evaluation job sets)",
        "",
        "| seed | timesteps | CPU-minutes | ratio |",
        "|---|---|---|---|",
    ]
    figure, axis = plt.subplots(figsize=(6, 4))
    for seed, curve in curves.items():
        for point in curve:
            lines.append(f"| {seed} | {point['timesteps']} | {point['cpu_minutes']:.2f} | {point['ratio']:.4f} |")
        axis.plot([p["cpu_minutes"] for p in curve], [p["ratio"] for p in curve], marker="o", label=f"PPO seed {seed}")
    for name in ("equi", "srpt"):
        axis.axhline(baselines_results[name].compare(optimum, metric).ratio, linestyle=":", color="grey")
        axis.annotate(name.upper(), (0, baselines_results[name].compare(optimum, metric).ratio), fontsize=8)
    axis.axhline(1.05, linestyle="--", color="red", label="goal: 5% gap")
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_xlabel("training CPU-minutes")
    axis.set_ylabel("mean slowdown / heSRPT optimum")
    axis.legend()
    figure.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    figure.savefig(out / f"{FIGURE}.png", dpi=120)
    lines += [
        "",
        f"![learning curve]({FIGURE}.png)",
        "",
        f"Command: `{command.strip()}` (commit {commit}).",
        "CPU time is the training process's user + system time (torch uses 1 thread), on a shared 2-core machine.",
    ]
    (out / f"{FIGURE}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
