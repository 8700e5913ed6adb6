"""Held-out assessment of a trained agent: the agent, the paper policy and the best baseline, paired by seed.

The agent plays every test seed in one native batched env (``vector_entry_point``; each copy is
reset with its own seed, so copy i's episode is exactly the single env's episode of seed i:
the vector envs are bit-identical to ``SyncVectorEnv``, a test says so). Baselines run through
``schedenv.fastpath.evaluate_fast`` (the compiled path where one exists, else ``evaluate``) on the
same seeds, in the env's default ``action_mode`` (``baseline_kwargs``): an action mode is the agent's
interface, not the workload, and a baseline played through another mode's nearest action (Malleable's
"exponent" mode, say) would no longer be that baseline. The comparison is paired seed by seed
(common random numbers, docs/architecture.md):

- ``ratio``: mean of the agent's metric over the training runs and test seeds divided by the paper
  policy's mean (the ratio of means);
- ``ratio_ci95``: its 95% two-level paired bootstrap interval (``schedenv.stats.ratio_of_means``:
  runs resampled, then seeds resampled together for agent and baseline, 10 000 resamples);
- ``seed_view``: where each (run, test seed) pair lands against the paper policy on that seed: ``below``,
  ``equal`` (within ``schedenv.stats.SEED_TIE``), ``above``, ``median_ratio`` and ``worst_ratio``;
- ``best_baseline``: the baseline of the env with the lowest mean on the same seeds (baselines that
  cannot act in the configuration, e.g. size-aware dispatchers without ``size_known``, are skipped
  and listed), and ``best_baseline_ratio`` the agent's mean over its mean.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import baselines
from schedenv.comparison import evaluate_applicable
from schedenv.evaluation import EvaluationResult, seed_text
from schedenv.stats import RatioOfMeans, SeedView, ratio_of_means, seed_view

BATCH = 512
"""Test seeds played at once (one batched env of this many copies): a step's cost is mostly per call (the
policy's forward pass, the batched env's dispatch), so long episodes are played cheapest in few chunks."""


RANGES = {"load": "load_range", "speedup": "p_range"}
"""Env arguments whose fixed value replaces a range drawn per episode (Malleable-v0)."""


def merge_env_kwargs(training: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` over the training env kwargs; a fixed value (``load``, ``speedup``) given without its
    range replaces the training range (``load_range``, ``p_range``), so an agent trained across loads is
    scored at the load asked for."""
    merged = {**training, **overrides}
    for fixed, drawn in RANGES.items():
        if fixed in overrides and drawn not in overrides and merged.get(drawn) is not None:
            print(f"{fixed}={overrides[fixed]!r} replaces the training {drawn}", file=sys.stderr)
            merged[drawn] = None
    return merged


def make_vector(env_id: str, num_envs: int, autoreset_mode: AutoresetMode, **env_kwargs: Any) -> gym.vector.VectorEnv:
    """The env's native batched env (its ``vector_entry_point``), else a ``SyncVectorEnv``."""
    spec = gym.spec(env_id)
    if spec.vector_entry_point is not None:
        return gym.make_vec(
            env_id,
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=autoreset_mode,
            **env_kwargs,
        )
    vector_kwargs = {"autoreset_mode": autoreset_mode}
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", vector_kwargs=vector_kwargs, **env_kwargs)


def play_batched(
    policy: Any,
    env_id: str,
    seeds: Sequence[int],
    env_kwargs: dict[str, Any],
    *,
    batch: int = BATCH,
) -> list[dict[str, float]]:
    """Each seed's ``episode_metrics`` when ``policy`` plays it; ``policy(obs, masks) -> actions`` acts on a batch.

    ``masks`` is the batched env's ``action_masks()`` (B x n) when it has one, else None. A policy
    with ``wants_info = True`` (``agents.sources.CallableAgent``) is called ``policy(obs, masks, infos)``
    with each copy's own info dict.
    """
    seeds = [int(seed) for seed in seeds]
    if not seeds:
        raise ValueError("seeds is empty; an assessment needs at least one seed")
    metrics: list[dict[str, float]] = []
    for start in range(0, len(seeds), batch):
        chunk = seeds[start : start + batch]
        venv = make_vector(env_id, len(chunk), AutoresetMode.NEXT_STEP, **env_kwargs)
        try:
            metrics.extend(_play_chunk(policy, venv, chunk))
        finally:
            venv.close()
    return metrics


def _play_chunk(policy: Any, venv: gym.vector.VectorEnv, seeds: list[int]) -> list[dict[str, float]]:
    observations, info = venv.reset(seed=seeds)  # type: ignore[arg-type]  # one seed per copy, as SyncVectorEnv takes
    found: list[dict[str, float] | None] = [None] * len(seeds)
    running = np.ones(len(seeds), dtype=bool)
    while running.any():
        masks = batch_masks(venv)
        if getattr(policy, "wants_info", False):
            actions = policy(observations, masks, [copy_info(info, i) for i in range(len(seeds))])
        else:
            actions = policy(observations, masks)
        observations, _, terminated, truncated, info = venv.step(actions)
        if np.any(truncated & running):
            raise RuntimeError("an assessed episode was truncated; assessments need complete episodes")
        ended = np.flatnonzero(terminated & running)
        if ended.size:
            table = info["episode_metrics"]
            for i in ended:
                found[i] = {key: float(values[i]) for key, values in table.items() if not key.startswith("_")}
            running[ended] = False
    return [row for row in found if row is not None]


def copy_info(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Copy ``i``'s info dict out of a batched env's info (arrays with ``_key`` presence masks, Gymnasium's layout)."""
    row: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_") or not info.get(f"_{key}", np.ones(i + 1, dtype=bool))[i]:
            continue
        row[key] = copy_info(value, i) if isinstance(value, dict) else value[i]
    return row


def batch_masks(venv: gym.vector.VectorEnv) -> np.ndarray | None:
    """The (B x n) action masks of a batched env with a (multi-)discrete masked action space, else None.

    A native batched env has ``action_masks()``; a ``SyncVectorEnv`` is asked copy by copy.
    """
    if not isinstance(venv.single_action_space, gym.spaces.Discrete | gym.spaces.MultiDiscrete):
        return None
    method = getattr(venv, "action_masks", None)
    if callable(method):
        return np.asarray(method(), dtype=bool)
    if isinstance(venv, gym.vector.SyncVectorEnv):
        try:
            return np.stack([np.asarray(mask, dtype=bool) for mask in venv.call("action_masks")])
        except AttributeError:
            return None
    return None


@dataclass
class Assessment:
    """The agent against the paper policy and every applicable baseline on the same test seeds."""

    env_id: str
    env_kwargs: dict[str, Any]
    metric: str
    seeds: list[int]
    run_costs: np.ndarray
    """The agent's metric per training run (rows) and test seed (columns, in ``seeds`` order)."""
    reference: str
    """The family's paper policy (``baselines.reference``)."""
    baselines: dict[str, EvaluationResult]
    """Every baseline that could act here (the paper policy included), by name."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Baselines that cannot act in this configuration, with the reason."""

    @property
    def agent(self) -> np.ndarray:
        """The agent's metric per test seed, averaged over the training runs."""
        return np.asarray(self.run_costs.mean(axis=0))

    def __repr__(self) -> str:
        return (
            f"Assessment(env_id={self.env_id!r}, metric={self.metric!r}, seeds={seed_text(self.seeds)}, "
            f"agent_mean={float(self.agent.mean()):.6g}, ratio_to_{self.reference}={self.ratio(self.reference):.4f}, "
            f"baselines={len(self.baselines)}, skipped={len(self.skipped)})"
        )

    def values(self, name: str) -> np.ndarray:
        """Per-seed metric of a baseline (in ``seeds`` order)."""
        return self.baselines[name].values(self.metric)

    @property
    def best_baseline(self) -> str:
        """The baseline with the lowest mean metric on these seeds (ties: the paper policy first)."""
        names = [self.reference, *(n for n in self.baselines if n != self.reference)]
        return min(names, key=lambda name: float(self.values(name).mean()))

    def ratio(self, name: str) -> float:
        """Mean of the agent (over runs and seeds) over mean of baseline ``name``."""
        return float(self.run_costs.mean() / self.values(name).mean())

    def headline(self, name: str) -> RatioOfMeans:
        """``ratio(name)`` with its two-level paired bootstrap 95% interval (runs, then seeds)."""
        return ratio_of_means(self.run_costs, self.values(name))

    def ratio_ci95(self, name: str) -> tuple[float, float]:
        """The 95% interval of ``ratio(name)`` (``headline``)."""
        return self.headline(name).ci95

    def seed_view(self, name: str) -> SeedView:
        """Where each (training run, test seed) pair lands against baseline ``name`` on that seed
        (``schedenv.stats.seed_view``)."""
        return seed_view(self.run_costs, self.values(name))

    def summary(self) -> dict[str, Any]:
        """The JSON fields of ``schedenv evaluate --agent`` that describe the comparison."""
        best = self.best_baseline
        return {
            "metric": self.metric,
            "mean": float(self.agent.mean()),
            "reference": self.reference,
            "reference_mean": float(self.values(self.reference).mean()),
            "ratio": self.ratio(self.reference),
            "ratio_ci95": list(self.ratio_ci95(self.reference)),
            "per_seed": [float(v) for v in self.agent],
            "run_ratios": [float(run.mean() / self.values(self.reference).mean()) for run in self.run_costs],
            "seed_view": asdict(self.seed_view(self.reference)),
            "test_seeds": list(self.seeds),
            "best_baseline": best,
            "best_baseline_mean": float(self.values(best).mean()),
            "best_baseline_ratio": self.ratio(best),
            "best_baseline_ratio_ci95": list(self.ratio_ci95(best)),
            "baseline_means": {name: float(self.values(name).mean()) for name in self.baselines},
            "skipped_baselines": dict(self.skipped),
        }


def baseline_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The env arguments baselines play under: the agent's, without ``action_mode`` (the same episodes,
    each baseline acting in its own terms through the env's default action space)."""
    return {name: value for name, value in env_kwargs.items() if name != "action_mode"}


def assess(
    policy: Any,
    env_id: str,
    env_kwargs: dict[str, Any],
    seeds: Sequence[int],
    metric: str,
    *,
    contenders: Sequence[str] | None = None,
) -> Assessment:
    """Play ``policy`` (see ``play_batched``) and the baselines on ``seeds``; ``contenders`` limits the baselines.

    ``policy`` is one policy or a sequence of them, one per training run of the same config. The
    paper policy is always included; with ``contenders=None`` every baseline of the env is tried.
    """
    seeds = [int(seed) for seed in seeds]
    policies = [policy] if callable(policy) else list(policy)
    if not policies:
        raise ValueError("policy is an empty sequence; an assessment needs at least one training run")
    runs = np.array(
        [[row[metric] for row in play_batched(one, env_id, seeds, env_kwargs)] for one in policies], dtype=float
    )
    reference = baselines.reference(env_id)
    pool = baselines.available(env_id) if contenders is None else contenders
    results, skipped = evaluate_applicable(env_id, pool, seeds, baseline_kwargs(env_kwargs))
    return Assessment(env_id, dict(env_kwargs), metric, seeds, runs, reference, results, skipped)
