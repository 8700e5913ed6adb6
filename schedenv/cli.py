"""The ``schedenv`` command: list what exists, evaluate contenders, reproduce the papers' figures.

schedenv list
schedenv evaluate --env schedenv/Malleable-v0 --env-kwargs '{"n_jobs": 8}' --episodes 20
schedenv reproduce --list
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

import baselines
import schedenv
from schedenv.evaluation import EvaluationResult
from schedenv.fastpath import evaluate_fast
from schedenv.leaderboard.cli import add_leaderboard_parser
from schedenv.reproduce import available_figures, run_figure
from schedenv.validation import suggest
from schedenv.workloads import from_spec


def parse_env_kwargs(text: str | None) -> dict[str, Any]:
    """Env kwargs from JSON; a value like ``{"type": "Pareto", "alpha": 1.5}`` becomes the object."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"--env-kwargs is not valid JSON: {error}") from error
    if not isinstance(raw, dict):
        raise SystemExit(f"--env-kwargs must be a JSON object, got {type(raw).__name__}")
    return {key: from_spec(value) for key, value in raw.items()}


def check_env_id(env_id: str) -> str:
    """``env_id`` if registered, else exit naming the near matches."""
    if env_id not in gym.registry:
        raise SystemExit(
            f"unknown env id {env_id!r}{suggest(env_id, schedenv.ENV_IDS)}; known: {list(schedenv.ENV_IDS)}"
        )
    return env_id


def objective_metric(env_id: str, env_kwargs: dict[str, Any]) -> str:
    """The metric that the env's reward accrues (what a table should rank by)."""
    env = gym.make(env_id, **env_kwargs)
    objective = str(getattr(env.unwrapped, "objective", "response_time"))
    env.close()
    return {"flow_time": "mean_response_time", "response_time": "mean_response_time"}.get(
        objective, f"mean_{objective}"
    )


def _list(_: argparse.Namespace) -> int:
    for env_id in schedenv.ENV_IDS:
        reference = baselines.reference(env_id)
        names = ", ".join(f"{n}*" if n == reference else n for n in baselines.available(env_id))
        print(f"{env_id}\n  baselines (* = paper policy): {names}")
    from schedenv.leaderboard.suites import SUITES, suite

    print("leaderboard suites:", ", ".join(f"{name} ({len(suite(name))} scenarios)" for name in SUITES))
    print("reproductions:", ", ".join(available_figures()) or "none")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    if args.agent:
        from agents.cli import evaluate_agent

        return evaluate_agent(args)
    if args.env is None:
        raise SystemExit("schedenv evaluate: --env is required (or --agent DIR)")
    env_id = check_env_id(args.env)
    env_kwargs = parse_env_kwargs(args.env_kwargs)
    reference = baselines.reference(env_id)
    names = args.contenders.split(",") if args.contenders else baselines.available(env_id)
    names = [reference] + [n for n in names if n != reference]
    seeds = range(args.seed, args.seed + (10 if args.episodes is None else args.episodes))
    metric = args.metric or objective_metric(env_id, env_kwargs)
    results = {name: evaluate_fast(env_id, name, seeds, **env_kwargs) for name in names}
    rows = comparison_rows(results, reference, metric)
    print(f"{env_id}  {args.env_kwargs or '{}'}  seeds {seeds.start}..{seeds.stop - 1}")
    print_comparison(rows, metric, reference)
    if args.json:
        print(json.dumps(strict_json({"env_id": env_id, "metric": metric, "reference": reference, "rows": rows})))
    return 0


def strict_json(value: Any) -> Any:
    """``value`` with NaN and inf floats replaced by None, so that the output is strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [strict_json(item) for item in value]
    return value


def comparison_rows(results: dict[str, EvaluationResult], reference: str, metric: str) -> list[dict[str, Any]]:
    """One row per contender: mean, 95% interval and the paired ratio to ``reference`` on common seeds."""
    base = results[reference]
    return [
        {
            "contender": name,
            "env_id": result.env_id,
            "mean": result.summary[metric].mean,
            "ci95": result.summary[metric].ci95,
            "reference": reference,
            "reference_mean": base.summary[metric].mean,
            "ratio": result.compare(base, metric).ratio,
        }
        for name, result in results.items()
    ]


def print_comparison(rows: list[dict[str, Any]], metric: str, reference: str) -> None:
    """The rows of ``comparison_rows`` as an aligned text table."""
    width = max(16, *(len(row["contender"]) + 2 for row in rows))
    print(f"{'contender':<{width}} {metric + ' (mean ± 95%)':>34} {'ratio to ' + reference:>20}")
    for row in rows:
        print(f"{row['contender']:<{width}} {row['mean']:>20.6g} ± {row['ci95']:<11.3g} {row['ratio']:>20.4f}")


def _reproduce(args: argparse.Namespace) -> int:
    if args.list or not args.figure:
        for name, description in available_figures().items():
            print(f"{name:<24} {description}")
        return 0
    extra = ["--quick"] if args.quick else []
    return run_figure(args.figure, [*extra, "--out", args.out])


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``schedenv`` command."""
    parser = argparse.ArgumentParser(
        prog="schedenv", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="env ids, baselines per env, reproductions").set_defaults(run=_list)

    ev = commands.add_parser("evaluate", help="evaluate contenders on fixed seeds against the paper policy")
    ev.add_argument("--env", default=None, help="env id, e.g. schedenv/Malleable-v0 (with --agent: its training env)")
    ev.add_argument(
        "--agent", default=None, help="a `schedenv train` run folder: evaluate that agent vs the paper policy"
    )
    ev.add_argument("--env-kwargs", default=None, help='JSON, e.g. \'{"n_jobs": 8, "speedup": 0.5}\'')
    ev.add_argument("--contenders", default=None, help="comma-separated baseline names (default: all for the env)")
    ev.add_argument(
        "--episodes", type=int, default=None, help="number of seeds (episodes) per contender (default 10; --agent: 100)"
    )
    ev.add_argument("--seed", type=int, default=0, help="first seed; seeds are seed .. seed + episodes - 1")
    ev.add_argument("--metric", default=None, help="metric to report (default: the env's objective)")
    ev.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    ev.set_defaults(run=_evaluate)

    from agents.cli import add_train_parser  # no torch until `train` runs

    add_train_parser(commands)

    rep = commands.add_parser("reproduce", help="run a paper-figure reproduction script")
    rep.add_argument("figure", nargs="?", help="figure name (see --list)")
    rep.add_argument("--list", action="store_true", help="list the reproductions")
    rep.add_argument("--quick", action="store_true", help="a small version that runs in about a minute")
    rep.add_argument("--out", default="benchmarks/results", help="output folder")
    rep.set_defaults(run=_reproduce)

    add_leaderboard_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``schedenv`` command."""
    args = build_parser().parse_args(argv)
    args.command_line = " ".join(["schedenv", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.run(args))
    except ValueError as error:
        print(f"schedenv: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
