"""Where trained agents' choices differ from a baseline's, on one development-test seed (``agents.choices``).

    python benchmarks/agent_choices.py runs/rl_dispatch/dispatch_maskable_ppo-seed0 --baseline tags-slowdown \
        --env-kwargs '{"n_arrivals": 10000}'

Each run folder's kept model (``best_model.zip``) plays the episode of ``--seed`` in the env it was trained
on (``--env-kwargs`` over its config's); at each decision the baseline is asked and never acts. Prints, per
run, the agent's objective, how many decisions differ, and the most common (baseline, agent) pairs of
actions by the env's own names. Prints only: nothing is written.
"""

from __future__ import annotations

import argparse
import sys

import agents
from agents.choices import choice_differences
from agents.protocol import DEVELOPMENT_TEST_SEEDS
from agents.train import env_kwargs_objects, resume_config
from schedenv.comparison import parse_env_kwargs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders of schedenv train")
    parser.add_argument("--baseline", required=True, help="the baseline asked at every decision")
    parser.add_argument("--seed", type=int, default=0, help="a development-test seed (default 0)")
    parser.add_argument("--env-kwargs", default=None, help="JSON env arguments over the run's, e.g. shorter episodes")
    parser.add_argument("--top", type=int, default=6, help="pairs shown per run")
    args = parser.parse_args(argv)
    if args.seed not in DEVELOPMENT_TEST_SEEDS:
        parser.error(
            f"--seed {args.seed} is not a development-test seed "
            f"({DEVELOPMENT_TEST_SEEDS.start}..{DEVELOPMENT_TEST_SEEDS.stop - 1}): sealed seeds are for publishing"
        )
    for run in args.runs:
        config = resume_config(run, {})
        env_kwargs = {**env_kwargs_objects(config), **parse_env_kwargs(args.env_kwargs)}
        agent = agents.load(run, best=True)
        found = choice_differences(agent, args.baseline, config.env_id, env_kwargs, args.seed)
        share = found.differing / found.decisions
        print(
            f"{run}: {found.metric} {found.value:.6g}; {found.differing} of {found.decisions} decisions ({share:.1%}) "
            f"differ from {args.baseline}"
        )
        for (theirs, mine), count in found.pairs.most_common(args.top):
            print(f"  {args.baseline} {theirs} -> agent {mine}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
