"""Does TAGS with a central first stage gain from a first cutoff that depends on the long-job host?

    python benchmarks/dispatch_idle_cutoff.py                          # 20 development seeds, the preset's episodes
    python benchmarks/dispatch_idle_cutoff.py --seeds 4 --n-arrivals 20000
    python benchmarks/dispatch_idle_cutoff.py --seeds 60 --below 1 --loads 0.3,0.5,0.7   # the registered rule

``tags-cq-tuned`` gives every new job one first cutoff, the rung its search chose. ``TagsCentralQueueIdle``
(``baselines.dispatch``) gives a new job a lower rung while the last (long-job) host idles with nothing
queued, and that rung otherwise: a job killed at the lower cutoff then restarts at once on the idle host,
while host 0 turns to the next short job. For each lower rung of ``--below`` (steps down the env's ladder
from the tuned rung) it plays the preset's env (``schedenv.dispatch.preset``, with ``--n-arrivals`` and
``--load`` over it) on development-test seeds 0 .. ``--seeds`` - 1 on the compiled fast path, and prints
its mean slowdown against ``tags-cq-tuned``'s on the same seeds: the ratio of means, the mean
per-seed ratio with its 95% interval (Student t over seeds) and the seeds it wins. Prints only: nothing
is written. The registered ``tags-cq-idle-tuned`` chooses both rungs on ``TUNING_SEEDS`` instead
(docs/baselines/dispatch.md, "tags-cq-idle-tuned"); a second table plays it at each load of ``--loads``
(the same seeds and arrivals) beside ``tags-cq-tuned``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from dispatch_cutoffs import chosen_rung, parse_loads, parse_preset, preset_parser, tuned_at_load

from baselines.dispatch import TagsCentralQueueIdle, TagsCentralQueueIdleTuned, TagsCentralQueueTuned
from schedenv.dispatch.env import DispatchEnv
from schedenv.fastpath import evaluate_fast
from schedenv.stats import mean_interval

ENV_ID = "schedenv/Dispatch-v0"


def idle_cutoff_rows(kwargs: dict[str, Any], n_seeds: int, below: list[int]) -> list[tuple[Any, ...]]:
    """Per step down the ladder: (idle cutoff, busy cutoff, ratio of means, per-seed ratio interval, wins) of
    ``TagsCentralQueueIdle`` against ``tags-cq-tuned`` on development seeds 0 .. ``n_seeds`` - 1."""
    seeds = range(n_seeds)
    ladder = DispatchEnv(**kwargs).time_limits
    tuned = int(np.flatnonzero(ladder == chosen_rung(kwargs, TagsCentralQueueTuned))[0])
    reference = evaluate_fast(ENV_ID, "tags-cq-tuned", seeds, **kwargs).values("mean_slowdown")
    rows = []
    for step in below:
        if not 0 <= step <= tuned:
            raise ValueError(f"--below {step} is not allowed here: the tuned rung is ladder index {tuned}")
        policy = TagsCentralQueueIdle(cutoffs=ladder[[tuned]], idle_cutoff=float(ladder[tuned - step]))
        values = evaluate_fast(ENV_ID, policy, seeds, **kwargs).values("mean_slowdown")
        ratios = values / reference
        rows.append(
            (
                float(ladder[tuned - step]),
                float(ladder[tuned]),
                float(values.mean() / reference.mean()),
                mean_interval(ratios),
                int((values < reference).sum()),
            )
        )
    return rows


def registered_rows(n_arrivals: int, loads: list[float], n_seeds: int) -> list[tuple[Any, ...]]:
    """Per load: (load, cutoff, idle-host cutoff, tags-cq-tuned / TAGS-slowdown, tags-cq-idle-tuned / TAGS-slowdown,
    tags-cq-idle-tuned / tags-cq-tuned, seeds won) on development seeds 0 .. ``n_seeds`` - 1, the registered rule
    at the rungs it chose on ``TUNING_SEEDS`` for that load's scenario."""
    rows = []
    for load in loads:
        names = ("tags-slowdown", "tags-cq-tuned", "tags-cq-idle-tuned")
        chosen, (paper, tuned, idle) = tuned_at_load(TagsCentralQueueIdleTuned, names, n_arrivals, load, n_seeds)
        assert isinstance(chosen, TagsCentralQueueIdleTuned)
        cutoff, idle_cutoff = float(chosen.cutoffs[0]), chosen.idle_cutoff
        ratios = (tuned.mean() / paper.mean(), idle.mean() / paper.mean(), idle.mean() / tuned.mean())
        rows.append((load, cutoff, idle_cutoff, *(float(r) for r in ratios), int((idle < tuned).sum())))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = preset_parser(__doc__.split("\n\n")[0], seeds=20)
    parser.add_argument(
        "--below", default="1,2,3", help="rungs below the tuned one for an idle long-job host (default 1,2,3)"
    )
    parser.add_argument(
        "--loads", default="0.3,0.5,0.7", help="loads of the registered rule's table (default 0.3,0.5,0.7)"
    )
    args, kwargs = parse_preset(parser, argv)
    try:
        below = [int(step) for step in args.below.split(",")]
    except ValueError:
        parser.error(f"--below {args.below!r} is not allowed; give comma-separated integers, e.g. 1,2,3")
    loads = parse_loads(parser, args.loads)
    try:
        rows = idle_cutoff_rows(kwargs, args.seeds, below)
    except ValueError as error:
        parser.error(str(error))
    print(f"Load {args.load:g}, {args.n_arrivals:,} arrivals, development seeds 0..{args.seeds - 1}; mean slowdown")
    print("against tags-cq-tuned's on the same seeds.\n")
    print("| cutoff, long-job host idle | cutoff, otherwise | ratio of means | per-seed ratio (95%) | seeds won |")
    print("|---|---|---|---|---|")
    for idle, busy, ratio, per_seed, wins in rows:
        interval = f"{per_seed.mean:.4f} ± {per_seed.ci95:.4f}"
        print(f"| {idle:,.1f} | {busy:,.1f} | {ratio:.4f} | {interval} | {wins} / {args.seeds} |")
    print(
        f"\nThe registered tags-cq-idle-tuned at the rungs it chose on its tuning seeds; {args.n_arrivals:,} arrivals,"
    )
    print(f"development seeds 0..{args.seeds - 1}; mean slowdown as ratios of means.\n")
    columns = ["load", "cutoff", "cutoff, long-job host idle", "tags-cq-tuned / TAGS-slowdown"]
    columns += ["tags-cq-idle-tuned / TAGS-slowdown", "tags-cq-idle-tuned / tags-cq-tuned", "seeds won"]
    print(f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}")
    for load, cutoff, idle, tuned, registered, ratio, wins in registered_rows(args.n_arrivals, loads, args.seeds):
        cells = f"{load:g} | {cutoff:,.1f} | {idle:,.1f} | {tuned:.4f} | {registered:.4f} | {ratio:.4f}"
        print(f"| {cells} | {wins} / {args.seeds} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
