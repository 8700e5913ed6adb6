"""TAGS's cutoff with and without cycle stealing: every rung of the Dispatch preset's time-limit ladder.

    python benchmarks/dispatch_cutoffs.py                        # 100 development seeds, the preset's episodes
    python benchmarks/dispatch_cutoffs.py --seeds 10 --n-arrivals 20000 --load 0.7

For each finite limit c of the env's ladder, TAGS with the cutoff c (``baselines.dispatch.Tags``) and TAGS
with cycle stealing at the same cutoff (``TagsSlowdownCycleStealing``) play the preset's env
(``schedenv.dispatch.preset``, with ``--n-arrivals`` and ``--load`` over it) on development-test seeds
0 .. ``--seeds`` - 1, through the compiled fast path. Prints the mean slowdown of each as a ratio to
TAGS-slowdown (its cutoff from the appendix's analysis, ``tags_optimal_cutoffs``), and marks that
analysis's rung, the best rung of each and the rung that ``tags-cs-tuned`` chooses on its own tuning
seeds (``baselines.dispatch.TUNING_SEEDS``). Prints only: nothing is written. docs/rl/index.md, "TAGS with
cycle stealing", says why the question matters.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import schedenv  # noqa: F401 - registers the env ids
from agents.protocol import DEVELOPMENT_TEST_SEEDS
from baselines.dispatch import Tags, TagsCycleStealingTuned, TagsSlowdown, TagsSlowdownCycleStealing
from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.preset import BENCHMARK_HORIZON, BENCHMARK_KWARGS
from schedenv.fastpath import evaluate_fast
from schedenv.workloads import from_spec

ENV_ID = "schedenv/Dispatch-v0"


def preset_kwargs(n_arrivals: int, load: float) -> dict[str, Any]:
    """The preset's env arguments (sizes as an object) with ``n_arrivals`` and ``load`` over them."""
    kwargs = {key: from_spec(value) for key, value in BENCHMARK_KWARGS.items()}
    return {**kwargs, "n_arrivals": n_arrivals, "load": load}


def cutoff_table(kwargs: dict[str, Any], n_seeds: int) -> list[tuple[float, float, float]]:
    """(cutoff, TAGS / TAGS-slowdown, TAGS with cycle stealing / TAGS-slowdown) at every finite rung, on
    development seeds 0 .. ``n_seeds`` - 1 of ``Dispatch-v0(**kwargs)``."""
    seeds = range(n_seeds)

    def mean_slowdown(policy: Tags | str) -> float:
        return float(evaluate_fast(ENV_ID, policy, seeds, **kwargs).values("mean_slowdown").mean())

    reference = mean_slowdown("tags-slowdown")
    ladder = DispatchEnv(**kwargs).time_limits
    return [
        (
            float(c),
            mean_slowdown(TagsSlowdown(cutoffs=[c])) / reference,
            mean_slowdown(TagsSlowdownCycleStealing(cutoffs=[c])) / reference,
        )
        for c in ladder[np.isfinite(ladder)]
    ]


def analysis_rung(kwargs: dict[str, Any]) -> float:
    """TAGS-slowdown's cutoff (the appendix's analysis) as placed on ``Dispatch-v0(**kwargs)``'s ladder."""
    policy = TagsSlowdown()
    policy.reset(DispatchEnv(**kwargs))
    return float(policy.cutoffs[0])


def tuned_rung(kwargs: dict[str, Any]) -> float:
    """The cutoff ``tags-cs-tuned`` chooses for ``Dispatch-v0(**kwargs)`` (on its tuning seeds)."""
    policy = TagsCycleStealingTuned()
    policy.reset(DispatchEnv(**kwargs))
    return float(policy.cutoffs[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100, help="development-test seeds 0 .. N-1 (default 100)")
    horizon = f"arrivals per episode (default {BENCHMARK_HORIZON:,}, the preset's)"
    parser.add_argument("--n-arrivals", type=int, default=BENCHMARK_HORIZON, help=horizon)
    parser.add_argument("--load", type=float, default=float(BENCHMARK_KWARGS["load"]), help="system load")
    args = parser.parse_args(argv)
    if not 1 <= args.seeds <= len(DEVELOPMENT_TEST_SEEDS):
        parser.error(f"--seeds {args.seeds} is not allowed; give 1 .. {len(DEVELOPMENT_TEST_SEEDS)} development seeds")
    kwargs = preset_kwargs(args.n_arrivals, args.load)
    rows = cutoff_table(kwargs, args.seeds)
    analysis, tuned = analysis_rung(kwargs), tuned_rung(kwargs)
    best_tags = min(rows, key=lambda row: row[1])[0]
    best_stealing = min(rows, key=lambda row: row[2])[0]
    print(f"Load {args.load:g}, {args.n_arrivals:,} arrivals, development seeds 0..{args.seeds - 1}; mean slowdown")
    print("as a ratio to TAGS-slowdown (its cutoff from the analysis).\n")
    print("| cutoff | TAGS | TAGS with cycle stealing | |")
    print("|---|---|---|---|")
    for cutoff, tags, stealing in rows:
        marks = [
            label
            for label, rung in (
                ("analysis", analysis),
                ("best TAGS", best_tags),
                ("best stealing", best_stealing),
                ("tags-cs-tuned", tuned),
            )
            if rung == cutoff
        ]
        print(f"| {cutoff:,.1f} | {tags:.4f} | {stealing:.4f} | {', '.join(marks)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
