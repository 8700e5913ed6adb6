"""Speed of every registered env through ``gym.make``, as ratios to a reference measured in the same run.

The reference is Gymnasium's CartPole-v1 (a few float operations per step, so it measures the wrapper
floor of ``gym.make``). Each env is stepped with trivial valid actions: the first unmasked action for
masked discrete spaces, otherwise one fixed sample of the action space; episodes are reset as they end
and resets are included in the time. DESIGN §7's target for Malleable-v0 with M = 64 jobs is
>= 50 k steps/s.

    python benchmarks/speed.py            # prints a Markdown table
    python benchmarks/speed.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import gymnasium as gym
import numpy as np

import schedenv
from schedenv.reporting import markdown_table, provenance

CASES: dict[str, dict[str, Any]] = {
    "schedenv/Malleable-v0 (M = 64, offline)": {"id": "schedenv/Malleable-v0", "n_jobs": 64, "max_jobs": 64},
    "schedenv/Malleable-v0 (online, load 0.9)": {"id": "schedenv/Malleable-v0", "mode": "online", "load": 0.9},
}


def trivial_action(env: gym.Env, fixed: Any) -> Any:
    """The first valid action under the env's mask, or the fixed sample when there is no mask."""
    masks = getattr(env.unwrapped, "action_masks", None)
    if masks is None or not isinstance(env.action_space, gym.spaces.Discrete):
        return fixed
    return int(np.flatnonzero(masks())[0])


def steps_per_second(env_id: str, seconds: float, **kwargs: Any) -> float:
    """Steps per second of ``gym.make(env_id, **kwargs)`` over about ``seconds`` of stepping."""
    env = gym.make(env_id, **kwargs)
    env.action_space.seed(0)
    fixed = env.action_space.sample()
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(256):
            _, _, terminated, truncated, _ = env.step(trivial_action(env, fixed))
            if terminated or truncated:
                env.reset()
        steps += 256
        if time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reference = steps_per_second("CartPole-v1", args.seconds)
    cases = dict(CASES)
    for env_id in schedenv.ENV_IDS:
        cases.setdefault(f"{env_id} (defaults)", {"id": env_id})
    results = {"CartPole-v1 (reference)": reference}
    for label, kwargs in cases.items():
        kwargs = dict(kwargs)
        results[label] = steps_per_second(kwargs.pop("id"), args.seconds, **kwargs)
    if args.json:
        print(json.dumps({"steps_per_second": results, "reference": "CartPole-v1"}))
        return 0
    rows = [(label, f"{rate:,.0f}", f"{rate / reference:.3f}") for label, rate in results.items()]
    print(markdown_table(["env", "steps/s", "ratio to CartPole-v1"], rows))
    print(f"\n{provenance()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
