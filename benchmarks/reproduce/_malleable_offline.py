"""What heSRPT's offline figures (Fig. 5: slowdown, Fig. C.7: flow time) share: the policies and how a point runs.

Both figures evaluate the same competitors (§5.2) on the same instances, KNEE with its alpha brute-forced
per point (``schedenv.tuning.tune_knee_alpha``) and HELL as the paper words it (``allocation="fractions"``,
servers may stay idle), and compare heSRPT with its closed form (Theorem 6).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from malleable_claims import Means

import schedenv  # noqa: F401 - registers the env ids
from baselines.malleable import Knee
from schedenv.fastpath import evaluate_fast
from schedenv.progress import progress_bar
from schedenv.reporting import add_output_arguments
from schedenv.stats import mean_interval
from schedenv.tuning import tune_knee_alpha
from schedenv.workloads import Pareto

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


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags both figures take: ``--quick``, ``--seeds``, ``--out``."""
    parser.add_argument("--quick", action="store_true", help="2 instances of M = 100 at 4 values of p")
    parser.add_argument("--seeds", type=int, default=None, help="instances per p (default 10, quick 2)")
    add_output_arguments(parser)


@dataclass(frozen=True)
class Sweep:
    """The points of a figure: M jobs at t = 0 on N = 10^6 servers, Pareto(0.8) sizes, one point per p."""

    n_jobs: int
    p_values: list[float]
    seeds: range
    alphas_per_decade: int
    """Density of KNEE's alpha grid (12 decades)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Sweep:
        """The full figure, or with ``--quick`` a small one; ``--seeds`` overrides the instances per p."""
        quick = bool(args.quick)
        return cls(
            n_jobs=100 if quick else 500,
            p_values=[0.05, 0.5, 0.9, 0.99] if quick else [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99],
            seeds=range(args.seeds or (2 if quick else 10)),
            alphas_per_decade=2 if quick else 4,
        )

    def run(
        self,
        figure: str,
        run_point: Callable[[dict[str, Any], range, Sequence[float]], tuple[dict[str, np.ndarray], float]],
        theorem6: Callable[[dict[str, Any], range], np.ndarray],
    ) -> tuple[list[list[object]], Means, float]:
        """Table rows, means ((p,) -> policy -> mean) and heSRPT's largest relative deviation from Theorem 6."""
        rows: list[list[object]] = []
        means: Means = {}
        deviation = 0.0
        bar = progress_bar(self.p_values, desc=figure, unit="p")
        for p in bar:
            kwargs = {"n_jobs": self.n_jobs, "max_jobs": self.n_jobs, "n_servers": 1e6, "speedup": p}
            kwargs["size_dist"] = Pareto(0.8)
            alphas = p / np.geomspace(1e9, 1e-3, 12 * self.alphas_per_decade + 1) ** (1 + p)
            values, best_alpha = run_point(kwargs, self.seeds, alphas.tolist())
            deviation = max(deviation, float(np.max(np.abs(values[REFERENCE] / theorem6(kwargs, self.seeds) - 1.0))))
            means[(p,)] = {name: float(v.mean()) for name, v in values.items()}
            reference = values[REFERENCE].mean()
            rows.append(
                [
                    p,
                    *(f"{mean_interval(v)} (×{v.mean() / reference:.3g})" for v in values.values()),
                    f"{best_alpha:.3g}",
                ]
            )
            bar.write(f"p = {p}: " + ", ".join(f"{n} {m:.4g}" for n, m in means[(p,)].items()))
        return rows, means, deviation


def plot(path: Path, p_values: list[float], means: Means, ylabel: str, title: str) -> None:
    """Every policy's mean against p, log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for name in POLICIES:
        axes.plot(p_values, [means[(p,)][name] for p in p_values], marker="o", label=name)
    axes.set_yscale("log")
    axes.set_xlabel("speedup exponent p")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
