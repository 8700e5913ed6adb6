"""The ``schedenv`` command: list what exists, evaluate contenders, reproduce the papers' figures.

schedenv list
schedenv evaluate --env schedenv/Malleable-v0 --env-kwargs '{"n_jobs": 8}' --episodes 20
schedenv evaluate --agent logs/ppo/schedenv-Malleable-v0_1 --json    # also a train run, an SB3 .zip, module:function
schedenv reproduce --list
schedenv reproduce tags-fig4 --quick                                  # into a fresh runs/reproduce-tags-fig4-<time>
schedenv reproduce tags-fig4 --check     # a full run compared with benchmarks/results/ (exit 1 if a number differs)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib import metadata

import baselines
from agents.cli import add_train_parser, evaluate_agent
from schedenv import family
from schedenv.comparison import (
    check_env_id,
    check_metric,
    check_seeds,
    comparison_rows,
    evaluate_applicable,
    objective_metric,
    parse_env_kwargs,
    print_comparison,
    run_reporting_errors,
    strict_json,
)
from schedenv.leaderboard.cli import add_leaderboard_parser
from schedenv.leaderboard.suites import SUITES, suite
from schedenv.reporting import compare_with_committed, output_folder
from schedenv.reproduce import NOT_IN_CHECKOUT, REPRODUCE_DIR, available_figures, figure_script, run_figure


def package_version() -> str:
    """The installed distribution's version (package metadata), or ``unknown`` when running from an uninstalled tree."""
    try:
        return metadata.version("schedenv")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _list(_: argparse.Namespace) -> int:
    for entry in family.families():
        reference = entry.paper_policy
        listed = baselines.available(entry.env_id)
        names = ", ".join(f"{n}*" if n == reference else n for n in listed)
        print(f"{entry.env_id}\n  baselines (* = paper policy): {names}")
        planners = [n for n in baselines.available(entry.env_id, planners=True) if n not in listed]
        if planners:
            print(f"  planners (slow; name them with --contenders): {', '.join(planners)}")
        print(f"  family {entry.name}: {entry.paper}; objective {entry.objective_metric}")
    print("leaderboard suites:", ", ".join(f"{name} ({len(suite(name))} scenarios)" for name in SUITES))
    print("reproductions:", ", ".join(available_figures()) if REPRODUCE_DIR.is_dir() else "in a source checkout only")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    if args.agent:
        return evaluate_agent(args)
    if args.env is None:
        raise SystemExit("schedenv evaluate: --env is required (or --agent PATH)")
    env_id = check_env_id(args.env)
    env_kwargs = parse_env_kwargs(args.env_kwargs)
    reference = baselines.reference(env_id)
    names = args.contenders.split(",") if args.contenders else baselines.available(env_id)
    names = [reference] + [n for n in names if n != reference]
    seeds = check_seeds("--seed", 0 if args.seed is None else args.seed, 10 if args.episodes is None else args.episodes)
    metric = args.metric or objective_metric(env_id, env_kwargs)
    results, not_applicable = evaluate_applicable(env_id, names, seeds, env_kwargs)
    check_metric(metric, list(results[reference].summary))
    rows = comparison_rows(results, reference, metric)
    report = sys.stderr if args.json else sys.stdout
    print(f"{env_id}  {args.env_kwargs or '{}'}  seeds {seeds.start}..{seeds.stop - 1}", file=report)
    print_comparison(rows, metric, reference, file=report, not_applicable=not_applicable)
    if args.json:
        document = {"env_id": env_id, "metric": metric, "reference": reference, "rows": rows}
        print(json.dumps(strict_json({**document, "skipped_baselines": not_applicable})))
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    if args.list or not args.figure:
        if not REPRODUCE_DIR.is_dir():
            raise ValueError(NOT_IN_CHECKOUT)
        for name, description in available_figures().items():
            print(f"{name:<24} {description}")
        return 0
    figure_script(args.figure)  # an unknown name fails before any folder is made
    extra = [flag for flag, given in (("--quick", args.quick), ("--quiet", args.quiet)) if given]
    if args.update_results:
        if args.check:
            raise ValueError("--check with --update-results is refused: it would compare the results with themselves")
        output_folder(args.out, True, args.quick)  # the refusals (--quick, another --out)
        return run_figure(args.figure, [*extra, "--update-results"])
    if args.check and args.quick:
        raise ValueError("--check with --quick is refused: the committed results are full runs (drop --quick)")
    out = output_folder(args.out, False, args.quick, name=f"reproduce-{args.figure}")
    status = run_figure(args.figure, [*extra, "--out", str(out)])
    if not args.check or status != 0:
        return status
    comparison = compare_with_committed(out)
    print(comparison.report())
    return 0 if comparison.same else 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``schedenv`` command."""
    parser = argparse.ArgumentParser(
        prog="schedenv", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"schedenv {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="env ids, baselines per env, reproductions").set_defaults(run=_list)

    ev = commands.add_parser("evaluate", help="evaluate contenders on fixed seeds against the paper policy")
    ev.add_argument("--env", default=None, help="env id, e.g. schedenv/Malleable-v0 (with --agent: its training env)")
    ev.add_argument(
        "--agent",
        nargs="+",
        action="extend",
        default=None,
        help="the agent to score vs the paper policy: `schedenv train` or RL Zoo run folder(s) of one config "
        "(several runs: their ratio of means with a run-level interval), an SB3 .zip (with --env) or "
        "module:function (obs, info) -> action",
    )
    ev.add_argument("--env-kwargs", default=None, help='JSON, e.g. \'{"n_jobs": 8, "speedup": 0.5}\'')
    ev.add_argument("--contenders", default=None, help="comma-separated baseline names (default: all for the env)")
    ev.add_argument(
        "--episodes", type=int, default=None, help="number of seeds (episodes) per contender (default 10; --agent: 100)"
    )
    ev.add_argument("--seed", type=int, default=None, help="first seed (default 0; --agent: the split's first seed)")
    ev.add_argument(
        "--split",
        choices=("test", "sealed"),
        default="test",
        help="--agent: the seed range, development test (default) or sealed (needs --ledger; docs/rl/seed-plan.md)",
    )
    ev.add_argument(
        "--ledger", default=None, help="--agent --split sealed: JSON-lines file each sealed look is added to"
    )
    ev.add_argument("--metric", default=None, help="metric to report (default: the env's objective)")
    ev.add_argument("--json", action="store_true", help="stdout: exactly one JSON object (the table goes to stderr)")
    ev.set_defaults(run=_evaluate)

    add_train_parser(commands)  # agents.cli imports no torch until `train` runs

    rep = commands.add_parser("reproduce", help="run a paper-figure reproduction script")
    rep.add_argument("figure", nargs="?", help="figure name (see --list)")
    rep.add_argument("--list", action="store_true", help="list the reproductions")
    rep.add_argument("--quick", action="store_true", help="a small version that runs in about a minute")
    rep.add_argument(
        "--out", default=None, help="output folder (default: a fresh runs/reproduce-NAME-<time> here, printed)"
    )
    rep.add_argument("--quiet", action="store_true", help="no progress bars")
    rep.add_argument(
        "--update-results",
        action="store_true",
        help="rewrite the committed result in benchmarks/results/ (a source checkout; never with --quick)",
    )
    rep.add_argument(
        "--check",
        action="store_true",
        help="then compare the fresh results with the committed ones (provenance aside); exit 1 if any differs",
    )
    rep.set_defaults(run=_reproduce)

    add_leaderboard_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``schedenv`` command: 0 on success, 2 on a user error (one line on stderr)."""
    args = build_parser().parse_args(argv)
    args.command_line = " ".join(["schedenv", *(sys.argv[1:] if argv is None else argv)])
    return run_reporting_errors("schedenv", lambda: args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
