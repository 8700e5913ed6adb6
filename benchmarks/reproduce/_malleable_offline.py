"""What heSRPT's offline figures (Fig. 5: slowdown, Fig. C.7: flow time) share: the policies and how a point runs.

Both figures evaluate the same competitors (§5.2) on the same instances, KNEE with its alpha brute-forced
per point (``schedenv.tuning.tune_knee_alpha``) and HELL as the paper words it (``allocation="fractions"``,
servers may stay idle), and compare heSRPT with its closed form (Theorem 6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import schedenv  # noqa: F401 - registers the env ids
from baselines.malleable import Knee
from schedenv.fastpath import evaluate_fast
from schedenv.tuning import tune_knee_alpha

ENV_ID = "schedenv/Malleable-v0"
POLICY_KWARGS = {"hell": {"allocation": "fractions"}}
"""Env settings a policy needs: HELL as worded leaves servers idle, which only ``allocation="fractions"`` allows."""
POLICIES = ("hesrpt", "srpt", "equi", "hell", "hell-waterfill", "knee")
REFERENCE = "hesrpt"


def policy_values(
    env_kwargs: dict[str, Any], seeds: range, alphas: Sequence[float], metric: str
) -> tuple[dict[str, np.ndarray], float]:
    """Per-instance ``metric`` of every policy on ``env_kwargs``, and KNEE's brute-forced alpha."""
    best_alpha, _ = tune_knee_alpha(seeds, alphas, env_id=ENV_ID, **env_kwargs)
    values = {}
    for name in POLICIES:
        contender = Knee(alpha=best_alpha) if name == "knee" else name
        result = evaluate_fast(ENV_ID, contender, seeds, **env_kwargs, **POLICY_KWARGS.get(name, {}))
        values[name] = result.values(metric)
    return values, best_alpha


def closed_form(
    env_kwargs: dict[str, Any], seeds: range, formula: Callable[[np.ndarray, float, float], float]
) -> np.ndarray:
    """``formula(sizes, p, n_servers)`` (Theorem 6) on each seed's instance of ``env_kwargs``."""
    import gymnasium as gym

    env = gym.make(ENV_ID, **env_kwargs)
    optimal = []
    for seed in seeds:
        env.reset(seed=seed)
        inner: Any = env.unwrapped
        optimal.append(formula(inner.params.sizes, inner.speedup.p, inner.n_servers))
    env.close()
    return np.asarray(optimal)
