"""The ``schedenv leaderboard`` subcommand (``benchmarks/leaderboard.py`` calls the same code).

schedenv leaderboard --suite quick --out runs/quick
schedenv leaderboard --suite standard --scenarios 'malleable/online-*' --contenders 'hesrpt,equi'
schedenv leaderboard --suite paper --backend ray --address auto
schedenv leaderboard --suite quick --agent runs/ppo-malleable
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedenv.backends import BACKENDS
from schedenv.leaderboard.suites import SUITES

EPILOG = """outputs in --out: leaderboard.md, leaderboard.csv, leaderboard.json, leaderboard_<family>.png,
and cells/ (one cached result per contender x scenario; a rerun, or a run resumed after being
killed, computes only the missing cells; delete cells/ to recompute everything).
The family's paper policy always runs, since ratios are taken to it."""


def add_leaderboard_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``leaderboard`` subcommand to ``commands`` (the result of ``add_subparsers``)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "leaderboard",
        help="every contender on every scenario of a suite; tables, plots, cached cells",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure_parser(parser)
    return parser


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """The leaderboard's flags on ``parser`` (shared by the subcommand and the benchmark script)."""
    parser.add_argument("--suite", choices=SUITES, default="quick", help="scenario suite (default: quick)")
    parser.add_argument(
        "--agent", action="append", default=[], metavar="DIR", help="a trained agent's folder (agents.load); repeatable"
    )
    parser.add_argument("--contenders", default=None, help="comma-separated baseline names or globs (default: all)")
    parser.add_argument(
        "--scenarios", default=None, help="comma-separated globs on family/scenario, scenario or family (default: all)"
    )
    parser.add_argument("--out", default=None, help="output folder (default: runs/leaderboard-<suite>)")
    parser.add_argument("--workers", type=int, default=None, help="parallel workers (default: the CPU count)")
    parser.add_argument(
        "--backend", choices=BACKENDS, default="local", help="local process pool or Ray (default: local)"
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join, e.g. auto or ray://host:10001 (default: start a local one)",
    )
    parser.add_argument("--no-progress", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run_command)


def run_command(args: argparse.Namespace, command: str | None = None) -> int:
    """Run the leaderboard for parsed ``args``; 0 when every cell succeeded, 1 otherwise."""
    from schedenv.comparison import check_out_dir
    from schedenv.leaderboard.runner import run_leaderboard
    from schedenv.validation import check_int

    if args.address is not None and args.backend != "ray":
        raise ValueError(f"--address {args.address!r} needs --backend ray")
    out = args.out or f"runs/leaderboard-{args.suite}"
    check_out_dir("--out", out)
    if args.workers is not None:
        check_int("--workers", args.workers)
    result = run_leaderboard(
        args.suite,
        out=out,
        scenarios=args.scenarios,
        contenders=args.contenders,
        agents=args.agent,
        workers=args.workers,
        backend=args.backend,
        address=args.address,
        command=command or shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        progress=not args.no_progress,
    )
    cells = result.record["cells"]
    print(
        f"{len(result.plans)} scenarios, {cells['total']} cells ({cells['computed']} computed, "
        f"{cells['cached']} cached, "
        f"{cells['failed']} failed) in {result.record['wall_seconds']:.1f} s; wrote {out}/leaderboard.md"
    )
    for check in result.claims:
        if check["holds"] is False:
            print(f"claim does not hold in {check['family']}/{check['scenario']}: {check['claim']}")
    for row in result.failed:
        print(f"failed: {row['family']}/{row['scenario']} {row['contender']}: {row['note']}")
    return 1 if result.failed else 0


def main(argv: Sequence[str] | None = None, prog: str = "leaderboard") -> int:
    """Parse ``argv`` as leaderboard flags and run it (the benchmark script's entry point)."""
    parser = argparse.ArgumentParser(
        prog=prog, description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    configure_parser(parser)
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(arguments)
    from schedenv.comparison import run_reporting_errors

    return run_reporting_errors(prog, lambda: run_command(args, command=shlex.join([prog, *arguments])))
