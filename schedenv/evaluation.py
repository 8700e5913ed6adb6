"""The one evaluation loop (docs/architecture.md): run any contender on any env id over seeds.

A contender follows the Baseline protocol (``name``, ``reset(env)``, ``act(observation, env)``);
a string is looked up in the ``baselines`` registry. Every contender sees the same workload for
the same seed (common random numbers), because an env's randomness comes only from the seed
given to ``reset``.

>>> from schedenv.evaluation import evaluate
>>> result = evaluate("schedenv/Malleable-v0", "hesrpt", seeds=range(3), n_jobs=5)
>>> round(result.summary["mean_slowdown"].mean, 3) > 1
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from schedenv.records import JobRecord
from schedenv.stats import Interval, PairedComparison, mean_interval, paired_comparison


@runtime_checkable
class Contender(Protocol):
    """Anything that can act in an env: a baseline policy or a loaded RL agent."""

    @property
    def name(self) -> str:
        """The contender's display name (a class attribute of a baseline, or an agent's label)."""
        ...

    def reset(self, env: gym.Env) -> None: ...

    def act(self, observation: Any, env: gym.Env) -> Any: ...


def headline_metrics(metrics: dict[str, Any], limit: int = 3) -> str:
    """Up to ``limit`` ``mean_*`` metrics as ``name=value``, the usual objectives first (for short ``repr``s)."""
    first = [name for name in ("mean_slowdown", "mean_response_time") if name in metrics]
    names = [*first, *(n for n in sorted(metrics) if n.startswith("mean_") and n not in first)][:limit]
    values = {name: metrics[name] for name in names}
    return ", ".join(
        f"{name}={value}" if isinstance(value, Interval) else f"{name}={value:.6g}" for name, value in values.items()
    )


def seed_text(seeds: list[int]) -> str:
    """``0..19`` for consecutive seeds, else the first few (a short ``repr``)."""
    if not seeds:
        return "none"
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}..{seeds[-1]}"
    return ",".join(map(str, seeds[:5])) + (",..." if len(seeds) > 5 else "")


@dataclass
class EpisodeResult:
    """One episode: its seed, finished-job records, the env's metrics and the return."""

    seed: int
    metrics: dict[str, float]
    episode_return: float
    n_steps: int
    records: list[JobRecord] = field(default_factory=list)

    def __repr__(self) -> str:
        return (
            f"EpisodeResult(seed={self.seed}, n_steps={self.n_steps}, return={self.episode_return:.6g}, "
            f"records={len(self.records)}, {headline_metrics(self.metrics)})"
        )


@dataclass
class EvaluationResult:
    """All episodes of one contender on one env configuration, with per-metric intervals."""

    env_id: str
    contender: str
    env_kwargs: dict[str, Any]
    episodes: list[EpisodeResult]

    def __repr__(self) -> str:
        seeds = seed_text([episode.seed for episode in self.episodes])
        return (
            f"EvaluationResult(env_id={self.env_id!r}, contender={self.contender!r}, episodes={len(self.episodes)}, "
            f"seeds={seeds}, {headline_metrics(self.summary)})"
        )

    def values(self, metric: str) -> np.ndarray:
        """The per-seed values of ``metric`` (``"return"`` gives the episode returns)."""
        if metric == "return":
            return np.array([e.episode_return for e in self.episodes])
        missing = [e.seed for e in self.episodes if metric not in e.metrics]
        if missing:
            known = sorted(self.episodes[0].metrics) if self.episodes else []
            raise KeyError(f"metric {metric!r} missing for seeds {missing}; known: {known}")
        return np.array([e.metrics[metric] for e in self.episodes])

    @property
    def summary(self) -> dict[str, Interval]:
        """Mean and 95% interval over seeds of every metric the episodes report."""
        names = sorted(set().union(*(e.metrics for e in self.episodes))) if self.episodes else []
        table = {name: mean_interval(self.values(name)) for name in names}
        table["return"] = mean_interval(self.values("return"))
        return table

    def paired_values(self, reference: EvaluationResult, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """``metric`` of this evaluation and of ``reference`` on their common seeds, in seed order."""
        mine = dict(zip((e.seed for e in self.episodes), self.values(metric), strict=True))
        theirs = dict(zip((e.seed for e in reference.episodes), reference.values(metric), strict=True))
        seeds = sorted(set(mine) & set(theirs))
        if not seeds:
            raise ValueError("the two evaluations share no seeds; a paired comparison needs common seeds")
        return np.array([mine[s] for s in seeds]), np.array([theirs[s] for s in seeds])

    def compare(self, reference: EvaluationResult, metric: str) -> PairedComparison:
        """Paired comparison of ``metric`` against ``reference`` on the common seeds."""
        return paired_comparison(*self.paired_values(reference, metric))


def as_contender(contender: Contender | str, env_id: str | None = None) -> Contender:
    """A contender object, building a named baseline through the registry.

    With ``env_id``, a named baseline must be one of that env's (a dispatch policy cannot act on the
    malleable env); the error names the env's baselines.
    """
    if isinstance(contender, str):
        import baselines

        if env_id is not None and baselines.env_id_of(contender) != env_id:
            known = baselines.available(env_id)
            raise ValueError(f"{contender!r} is not a baseline of {env_id}; its baselines are {known}")
        return baselines.make(contender)
    if not isinstance(contender, Contender):
        raise TypeError(f"contender={contender!r} is not allowed; it needs name, reset(env) and act(observation, env)")
    return contender


def run_episode(env: gym.Env, contender: Contender, seed: int, *, keep_records: bool = True) -> EpisodeResult:
    """Play one episode of ``contender`` in ``env`` from ``reset(seed=seed)`` to its end.

    The episode must end by termination; truncation (a ``TimeLimit``) is reported as an error,
    because the metrics of a cut episode are not those of the workload.
    """
    observation, _ = env.reset(seed=int(seed))
    return play_episode(env, contender, observation, int(seed), keep_records=keep_records)


def play_episode(
    env: gym.Env, contender: Contender, observation: Any, seed: int, *, keep_records: bool = True
) -> EpisodeResult:
    """Play ``contender`` from ``observation``, that of ``env``'s reset just done, to the episode's end.

    ``seed`` labels the result and the error of a truncated episode; ``run_episode`` documents the rest.
    """
    contender.reset(env)
    records: list[JobRecord] = []
    episode_return, n_steps = 0.0, 0
    while True:
        observation, reward, terminated, truncated, info = env.step(contender.act(observation, env))
        episode_return += float(reward)
        n_steps += 1
        if keep_records:
            records.extend(info.get("completed", ()))
        if terminated:
            return EpisodeResult(int(seed), dict(info["episode_metrics"]), episode_return, n_steps, records)
        if truncated:
            raise RuntimeError(
                f"episode with seed {seed} was truncated after {n_steps} steps; "
                "evaluate needs complete episodes (drop the TimeLimit or raise max_episode_steps)"
            )


def evaluate(
    env_id: str,
    contender: Contender | str,
    seeds: Iterable[int],
    *,
    keep_records: bool = True,
    **env_kwargs: Any,
) -> EvaluationResult:
    """Run ``contender`` on ``gym.make(env_id, **env_kwargs)`` once per seed.

    Returns per-episode metrics and records, and ``summary`` with 95% intervals over seeds.
    """
    agent = as_contender(contender, env_id)
    env = gym.make(env_id, **env_kwargs)
    try:
        episodes = [run_episode(env, agent, seed, keep_records=keep_records) for seed in seeds]
    finally:
        env.close()
    if not episodes:
        raise ValueError("seeds is empty; evaluate needs at least one seed")
    return EvaluationResult(env_id, agent.name, dict(env_kwargs), episodes)
