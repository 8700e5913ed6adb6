"""Does TAGS with a central first stage gain from a lower first cutoff while the central queue is crowded?

    python benchmarks/dispatch_crowd_cutoff.py                               # 60 development seeds, loads 0.3, 0.5, 0.7
    python benchmarks/dispatch_crowd_cutoff.py --seeds 8 --n-arrivals 20000 --loads 0.7

``tags-cq-idle-tuned`` gives a new job one first cutoff while the long-job host idles with nothing queued and
another otherwise. ``tags-cq-crowd-tuned`` (``baselines.dispatch.TagsCentralQueueCrowd``) splits "otherwise":
while at least a threshold of jobs wait in the central queue, a new job gets a third cutoff. Both choose their
cutoffs (and the threshold) on ``TUNING_SEEDS`` for each scenario. At each load of ``--loads`` this plays the
preset's env (``schedenv.dispatch.preset``, with ``--n-arrivals`` over it) on development-test seeds 0 ..
``--seeds`` - 1 on the compiled fast path and prints the rungs chosen and the mean slowdowns as ratios of means:
each rule against TAGS-slowdown, and ``tags-cq-crowd-tuned`` against ``tags-cq-idle-tuned`` with the mean
per-seed ratio (95% interval, Student t over seeds) and the seeds it wins (docs/baselines/dispatch.md,
"tags-cq-crowd-tuned"). Prints only: nothing is written.
"""

from __future__ import annotations

import sys
from typing import Any

from dispatch_cutoffs import parse_loads, parse_preset, preset_parser, tuned_at_load

from baselines.dispatch import TagsCentralQueueCrowdTuned
from schedenv.stats import mean_interval

COLUMNS = (
    "load",
    "cutoff",
    "cutoff, long-job host idle",
    "cutoff, crowded central queue",
    "crowd threshold (jobs)",
    "tags-cq-idle-tuned / TAGS-slowdown",
    "tags-cq-crowd-tuned / TAGS-slowdown",
    "tags-cq-crowd-tuned / tags-cq-idle-tuned",
    "per-seed ratio (95%)",
    "seeds won",
)


def crowd_rows(n_arrivals: int, loads: list[float], n_seeds: int) -> list[tuple[Any, ...]]:
    """Per load, the row of ``COLUMNS`` (the per-seed ratio as a ``mean_interval``) on development seeds 0 ..
    ``n_seeds`` - 1, each tuned rule at the rungs it chose on ``TUNING_SEEDS`` for that load's scenario."""
    rows = []
    for load in loads:
        names = ("tags-slowdown", "tags-cq-idle-tuned", "tags-cq-crowd-tuned")
        chosen, (paper, idle, crowd) = tuned_at_load(TagsCentralQueueCrowdTuned, names, n_arrivals, load, n_seeds)
        assert isinstance(chosen, TagsCentralQueueCrowdTuned)
        rows.append(
            (
                load,
                float(chosen.cutoffs[0]),
                chosen.idle_cutoff,
                chosen.crowd_cutoff,
                chosen.crowd_threshold,
                float(idle.mean() / paper.mean()),
                float(crowd.mean() / paper.mean()),
                float(crowd.mean() / idle.mean()),
                mean_interval(crowd / idle),
                int((crowd < idle).sum()),
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = preset_parser(__doc__.split("\n\n")[0], seeds=60)
    parser.add_argument("--loads", default="0.3,0.5,0.7", help="loads of the table (default 0.3,0.5,0.7)")
    args, _ = parse_preset(parser, argv)
    loads = parse_loads(parser, args.loads)
    print(f"The preset's episodes with {args.n_arrivals:,} arrivals, development seeds 0..{args.seeds - 1}; mean")
    print("slowdown as ratios of means, each tuned rule at the rungs it chose on its tuning seeds.\n")
    print(f"| {' | '.join(COLUMNS)} |\n|{'---|' * len(COLUMNS)}")
    for load, cutoff, idle, crowd, threshold, idle_ratio, crowd_ratio, ratio, per_seed, wins in crowd_rows(
        args.n_arrivals, loads, args.seeds
    ):
        cells = f"{load:g} | {cutoff:,.1f} | {idle:,.1f} | {crowd:,.1f} | {threshold}"
        cells += f" | {idle_ratio:.4f} | {crowd_ratio:.4f} | {ratio:.4f} | {per_seed.mean:.4f} ± {per_seed.ci95:.4f}"
        print(f"| {cells} | {wins} / {args.seeds} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
