"""Small scenarios for the leaderboard's tests (malleable offline instances: milliseconds per episode)."""

from __future__ import annotations

import pytest

from schedenv.leaderboard.scenario import ALL, Claim, Scenario, seeds


def tiny_scenario(name: str = "tiny", n_jobs: int = 4, p: float = 0.5, n_seeds: int = 3) -> Scenario:
    """heSRPT's offline setting with a handful of jobs."""
    return Scenario(
        family="malleable",
        env_id="schedenv/Malleable-v0",
        name=name,
        env_kwargs={"mode": "offline", "n_jobs": n_jobs, "size_dist": {"type": "Pareto", "alpha": 1.5}, "speedup": p},
        seeds=seeds(n_seeds),
        metric="mean_slowdown",
        group="tiny",
        axis=("p", p),
        description="a tiny offline instance",
        claims=(Claim("hesrpt", (ALL,), "Theorem 5", rtol=1e-6),),
    )


@pytest.fixture
def tiny() -> list[Scenario]:
    """Two tiny scenarios that differ in p (one curve in the family's plot)."""
    return [tiny_scenario("tiny-p0.3", p=0.3), tiny_scenario("tiny-p0.7", p=0.7)]
