"""Parameter searches that run evaluations: KNEE's alpha (heSRPT paper) and HRF's (alpha, threshold).

A tuner evaluates a baseline over a grid on given seeds and keeps the best point, so it sits above
the baselines and the evaluation loop (``schedenv.evaluation``, ``schedenv.fastpath``), not inside
a baseline module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from baselines import malleable, moldable
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast
from schedenv.validation import check_choice
from schedenv.workloads import Power


def tune_knee_alpha(
    seeds: Iterable[int],
    alphas: Sequence[float] | None = None,
    *,
    metric: str | None = None,
    env_id: str = malleable.ENV_ID,
    **env_kwargs: Any,
) -> tuple[float, list[tuple[float, float]]]:
    """Brute-force KNEE's alpha on the given seeds, as the heSRPT paper does for its Fig. 5 and 6.

    Evaluates KNEE for each alpha (default: 41 values log-spaced so that a job of the workload's
    typical size has a knee from 1e-3 N to 10^3 N... clipped by N) and returns the alpha with the
    lowest mean of ``metric`` (default: the env's objective, mean_slowdown or mean_response_time;
    run on the compiled fast path, which gives ``evaluate``'s numbers)
    together with the whole (alpha, mean) table. KNEE's figures are thus optimistic: tuned on the
    very seeds they report, which is what the paper did.
    """
    seeds = list(seeds)
    if alphas is None:
        env = gym.make(env_id, **env_kwargs)
        inner: Any = env.unwrapped
        p = inner.speedup.p if isinstance(inner.speedup, Power) else 0.5
        n, scale = inner.n_servers, inner.scale
        env.close()
        # knee = (p R / alpha)^(1/(1+p)) spans 1e-3 N .. 1e3 N for R = scale at these alphas.
        alphas = list(p * scale / np.geomspace(1e3 * n, 1e-3 * n, 41) ** (1.0 + p))
    objective = env_kwargs.get("objective", "slowdown")
    metric = metric or ("mean_slowdown" if objective == "slowdown" else "mean_response_time")
    table = []
    for alpha in alphas:
        result = evaluate_fast(env_id, malleable.Knee(alpha=float(alpha)), seeds, **env_kwargs)
        table.append((float(alpha), float(result.values(metric).mean())))
    best = min(table, key=lambda row: row[1] if math.isfinite(row[1]) else math.inf)
    return best[0], table


@dataclass(frozen=True)
class TuningResult:
    """A grid search of HRF's (alpha, threshold) on mean ATT over common seeds."""

    policy: str
    best_alpha: float
    best_threshold: float
    best_att: float
    table: dict[tuple[float, float], float]
    """Mean ATT per (alpha, threshold)."""
    seeds: tuple[int, ...]
    env_kwargs: dict[str, Any]


def tune_hrf(
    selection: str = "easy",
    alphas: Sequence[float] = moldable.ALPHA_GRID,
    thresholds: Sequence[float] = (moldable.DEFAULT_THRESHOLD,),
    seeds: Iterable[int] = range(5),
    **env_kwargs: Any,
) -> TuningResult:
    """Tune HRF's alpha and threshold (HRF paper §6.2): the grid point of least mean ATT.

    It minimises the mean over ``seeds`` of the episode's mean turnaround time (ATT) of
    ``hrf-<selection>`` on ``schedenv/Moldable-v0`` built with ``env_kwargs`` (e.g. a load's
    ``arrival_interval``), over every (alpha, threshold) in ``alphas`` x ``thresholds``; all
    points see the same seeds (common random numbers). The paper finds the best alpha depends on
    load (its Fig. 5) and recommends threshold > 0.3 (its Fig. 6).
    """
    check_choice("selection", selection, ("fcfs", "easy"))
    seed_list = tuple(int(seed) for seed in seeds)
    if not seed_list or not alphas or not thresholds:
        raise ValueError("seeds, alphas and thresholds must be non-empty")
    cls = moldable.POLICIES[f"hrf-{selection}"]
    table: dict[tuple[float, float], float] = {}
    for alpha in alphas:
        for threshold in thresholds:
            result = evaluate(
                moldable.ENV_ID, cls(alpha=alpha, threshold=threshold), seed_list, keep_records=False, **env_kwargs
            )
            table[(float(alpha), float(threshold))] = float(result.values("ATT").mean())
    (best_alpha, best_threshold), best = min(table.items(), key=lambda item: item[1])
    return TuningResult(f"hrf-{selection}", best_alpha, best_threshold, best, table, seed_list, dict(env_kwargs))
