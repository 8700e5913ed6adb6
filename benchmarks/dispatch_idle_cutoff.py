"""Does TAGS with a central first stage gain from a first cutoff that depends on the long-job host?

    python benchmarks/dispatch_idle_cutoff.py                          # 20 development seeds, the preset's episodes
    python benchmarks/dispatch_idle_cutoff.py --seeds 4 --n-arrivals 20000

``tags-cq-tuned`` gives every new job one first cutoff, the rung its search chose. ``IdleHostCutoff``
gives a new job a lower rung while the last (long-job) host idles with nothing queued, and that rung
otherwise: a job killed at the lower cutoff then restarts at once on the idle host, while host 0 turns
to the next short job. For each lower rung of ``--below`` (steps down the env's ladder from the tuned
rung) it plays the preset's env (``schedenv.dispatch.preset``, with ``--n-arrivals`` and ``--load`` over
it) on development-test seeds 0 .. ``--seeds`` - 1 through the evaluation loop, and prints its mean
slowdown against ``tags-cq-tuned``'s on the same seeds (compiled fast path): the ratio of means, the mean
per-seed ratio with its 95% interval (Student t over seeds) and the seeds it wins. Prints only: nothing
is written. An open lead for agents (docs/baselines/dispatch.md, "Cutoffs for cycle stealing"): the rule
is not a registered baseline.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from dispatch_cutoffs import chosen_rung, parse_preset, preset_parser

from baselines.dispatch import TagsCentralQueue, TagsCentralQueueTuned
from schedenv.dispatch.env import DispatchEnv
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast
from schedenv.stats import mean_interval

ENV_ID = "schedenv/Dispatch-v0"


class IdleHostCutoff(TagsCentralQueue):
    """``TagsCentralQueue`` whose new job's limit is the ladder's ``idle_index`` rung while the last host is
    idle with nothing queued there, else its ``busy_index`` rung; killed jobs go on as in TAGS."""

    name: ClassVar[str] = "tags-cq-idle-cutoff"

    def __init__(self, idle_index: int, busy_index: int) -> None:
        super().__init__()
        self.idle_index, self.busy_index = idle_index, busy_index

    def act(self, observation: Any, env: gym.Env) -> np.int64:
        inner: DispatchEnv = env.unwrapped  # type: ignore[assignment]
        if inner.pending_job.hosts:
            return super().act(observation, env)
        state, last = inner.state, inner.n_hosts - 1
        idle = not state.busy[last] and state.queue_length[last] == 0
        return np.int64(inner.encode_action(inner.central, self.idle_index if idle else self.busy_index))


def idle_cutoff_rows(kwargs: dict[str, Any], n_seeds: int, below: list[int]) -> list[tuple[Any, ...]]:
    """Per step down the ladder: (idle cutoff, busy cutoff, ratio of means, per-seed ratio interval, wins) of
    ``IdleHostCutoff`` against ``tags-cq-tuned`` on development seeds 0 .. ``n_seeds`` - 1."""
    seeds = range(n_seeds)
    ladder = DispatchEnv(**kwargs).time_limits
    tuned = int(np.flatnonzero(ladder == chosen_rung(kwargs, TagsCentralQueueTuned))[0])
    reference = evaluate_fast(ENV_ID, "tags-cq-tuned", seeds, **kwargs).values("mean_slowdown")
    rows = []
    for step in below:
        if not 0 <= step <= tuned:
            raise ValueError(f"--below {step} is not allowed here: the tuned rung is ladder index {tuned}")
        policy = IdleHostCutoff(tuned - step, tuned)
        values = evaluate(ENV_ID, policy, seeds=seeds, **kwargs).values("mean_slowdown")
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


def main(argv: list[str] | None = None) -> int:
    parser = preset_parser(__doc__.split("\n\n")[0], seeds=20)
    parser.add_argument(
        "--below", default="1,2,3", help="rungs below the tuned one for an idle long-job host (default 1,2,3)"
    )
    args, kwargs = parse_preset(parser, argv)
    try:
        below = [int(step) for step in args.below.split(",")]
    except ValueError:
        parser.error(f"--below {args.below!r} is not allowed; give comma-separated integers, e.g. 1,2,3")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
