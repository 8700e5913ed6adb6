"""The toy family's leaderboard scenarios: one per suite."""

from __future__ import annotations

from schedenv.leaderboard.scenario import Claim, Scenario


def scenarios(suite: str) -> list[Scenario]:
    """Six exponential jobs on seeds 0..3, ranked by mean response time."""
    return [
        Scenario(
            family="toy",
            env_id="toy/Queue-v0",
            name="six-jobs",
            env_kwargs={"n_jobs": 6},
            seeds=(0, 1, 2, 3),
            metric="mean_response_time",
            group="toy",
            axis=("jobs", 6.0),
            description=f"six exponential jobs ({suite} suite)",
            claims=(Claim("toy-shorter", ("toy-fcfs",), "running the shorter job first never raises the mean"),),
        )
    ]
