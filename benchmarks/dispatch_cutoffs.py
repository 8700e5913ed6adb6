"""TAGS's cutoff with and without cycle stealing: every rung of the Dispatch preset's time-limit ladder.

    python benchmarks/dispatch_cutoffs.py                        # 100 development seeds, the preset's episodes
    python benchmarks/dispatch_cutoffs.py --seeds 10 --n-arrivals 20000 --load 0.7

For each finite limit c of the env's ladder, TAGS with the cutoff c (``baselines.dispatch.Tags``), TAGS
with cycle stealing at dispatch (``TagsSlowdownCycleStealing``) and TAGS with a central first stage
(``TagsCentralQueue``: cycle stealing with a central queue) at the same cutoff play the preset's env
(``schedenv.dispatch.preset``, with ``--n-arrivals`` and ``--load`` over it) on development-test seeds
0 .. ``--seeds`` - 1, through the compiled fast path. Prints the mean slowdown of each as a ratio to
TAGS-slowdown (its cutoff from the appendix's analysis, ``tags_optimal_cutoffs``), and marks that
analysis's rung, the best rung of each and the rungs that ``tags-cs-tuned`` and ``tags-cq-tuned`` choose
on their own tuning seeds (``baselines.dispatch.TUNING_SEEDS``). Prints only: nothing is written.
docs/baselines/dispatch.md, "Cutoffs for cycle stealing", says why the question matters.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import schedenv  # noqa: F401 - registers the env ids
from agents.protocol import DEVELOPMENT_TEST_SEEDS
from baselines.dispatch import (
    Tags,
    TagsCentralQueue,
    TagsCentralQueueTuned,
    TagsCycleStealingTuned,
    TagsSlowdown,
    TagsSlowdownCycleStealing,
)
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.preset import BENCHMARK_HORIZON, BENCHMARK_KWARGS
from schedenv.fastpath import evaluate_fast
from schedenv.workloads import from_spec

ENV_ID = "schedenv/Dispatch-v0"


def preset_kwargs(n_arrivals: int, load: float) -> dict[str, Any]:
    """The preset's env arguments (sizes as an object) with ``n_arrivals`` and ``load`` over them."""
    kwargs = {key: from_spec(value) for key, value in BENCHMARK_KWARGS.items()}
    return {**kwargs, "n_arrivals": n_arrivals, "load": load}


RULES: dict[str, type[Tags]] = {
    "TAGS": TagsSlowdown,
    "stealing at dispatch": TagsSlowdownCycleStealing,
    "central first stage": TagsCentralQueue,
}
"""The rules of the table's columns, played at every rung."""


def cutoff_table(kwargs: dict[str, Any], n_seeds: int) -> list[tuple[float, ...]]:
    """(cutoff, then each of ``RULES`` / TAGS-slowdown) at every finite rung, on development seeds
    0 .. ``n_seeds`` - 1 of ``Dispatch-v0(**kwargs)``."""
    seeds = range(n_seeds)

    def mean_slowdown(policy: Tags | str) -> float:
        return float(evaluate_fast(ENV_ID, policy, seeds, **kwargs).values("mean_slowdown").mean())

    reference = mean_slowdown("tags-slowdown")
    ladder = DispatchEnv(**kwargs).time_limits
    return [
        (float(c), *(mean_slowdown(rule(cutoffs=[c])) / reference for rule in RULES.values()))
        for c in ladder[np.isfinite(ladder)]
    ]


def chosen_rung(kwargs: dict[str, Any], rule: type[Tags]) -> float:
    """The first cutoff that ``rule`` chooses for ``Dispatch-v0(**kwargs)`` at its reset (a tuned rule: on its
    tuning seeds)."""
    policy = rule()
    policy.reset(DispatchEnv(**kwargs))
    return float(policy.cutoffs[0])


def analysis_rung(kwargs: dict[str, Any]) -> float:
    """TAGS-slowdown's cutoff (the appendix's analysis) as placed on ``Dispatch-v0(**kwargs)``'s ladder."""
    return chosen_rung(kwargs, TagsSlowdown)


def tuned_at_load(
    rule: type[Tags], names: tuple[str, ...], n_arrivals: int, load: float, n_seeds: int
) -> tuple[Tags, list[np.ndarray]]:
    """The tuned ``rule`` at the rungs it chose for the preset's scenario at ``load`` (``n_arrivals`` per episode),
    and the mean slowdowns of the baselines ``names`` there on development seeds 0 .. ``n_seeds`` - 1."""
    kwargs = preset_kwargs(n_arrivals, load)
    chosen = rule()
    chosen.reset(DispatchEnv(**kwargs))
    values = [evaluate_fast(ENV_ID, name, range(n_seeds), **kwargs).values("mean_slowdown") for name in names]
    return chosen, values


def preset_parser(description: str, seeds: int) -> argparse.ArgumentParser:
    """A parser with the preset's options: ``--seeds`` (development-test seeds 0 .. N-1, ``seeds`` by
    default), ``--n-arrivals`` and ``--load`` (``parse_preset`` reads them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seeds", type=int, default=seeds, help=f"development-test seeds 0 .. N-1 (default {seeds})")
    horizon = f"arrivals per episode (default {BENCHMARK_HORIZON:,}, the preset's)"
    parser.add_argument("--n-arrivals", type=int, default=BENCHMARK_HORIZON, help=horizon)
    parser.add_argument("--load", type=float, default=float(BENCHMARK_KWARGS["load"]), help="system load")
    return parser


def parse_preset(parser: argparse.ArgumentParser, argv: list[str] | None) -> tuple[argparse.Namespace, dict[str, Any]]:
    """The arguments of ``preset_parser``'s ``parser`` (``--seeds`` checked) and the env arguments they give."""
    args = parser.parse_args(argv)
    if not 1 <= args.seeds <= len(DEVELOPMENT_TEST_SEEDS):
        parser.error(f"--seeds {args.seeds} is not allowed; give 1 .. {len(DEVELOPMENT_TEST_SEEDS)} development seeds")
    return args, preset_kwargs(args.n_arrivals, args.load)


def parse_loads(parser: argparse.ArgumentParser, text: str) -> list[float]:
    """The comma-separated loads of ``--loads`` ``text``, each in (0, 1) (else ``parser.error``)."""
    try:
        loads = [float(load) for load in text.split(",")]
    except ValueError:
        parser.error(f"--loads {text!r} is not allowed; give comma-separated loads in (0, 1), e.g. 0.3,0.5")
    if not all(0 < load < 1 for load in loads):
        parser.error(f"--loads {text!r} is not allowed; every load must lie in (0, 1)")
    return loads


def main(argv: list[str] | None = None) -> int:
    args, kwargs = parse_preset(preset_parser(__doc__.split("\n\n")[0], seeds=100), argv)
    rows = cutoff_table(kwargs, args.seeds)
    rungs = {"analysis": analysis_rung(kwargs)}
    for position, label in enumerate(RULES, start=1):
        rungs[f"best {label}"] = min(rows, key=lambda row: row[position])[0]
    for tuned in (TagsCycleStealingTuned, TagsCentralQueueTuned):
        rungs[tuned.name] = chosen_rung(kwargs, tuned)
    print(f"Load {args.load:g}, {args.n_arrivals:,} arrivals, development seeds 0..{args.seeds - 1}; mean slowdown")
    print("as a ratio to TAGS-slowdown (its cutoff from the analysis).\n")
    print(f"| cutoff | {' | '.join(RULES)} | |")
    print("|---|" + "---|" * (len(RULES) + 1))
    for cutoff, *ratios in rows:
        marks = ", ".join(label for label, rung in rungs.items() if rung == cutoff)
        print(f"| {cutoff:,.1f} | {' | '.join(f'{ratio:.4f}' for ratio in ratios)} | {marks} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
