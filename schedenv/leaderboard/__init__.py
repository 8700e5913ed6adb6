"""The leaderboard: every contender on every scenario of a suite, with ranks and claims (docs/results/index.md).

``schedenv leaderboard --suite quick --out runs/quick`` (or ``run_leaderboard``) evaluates the
papers' policies (and trained agents) on the scenarios of ``suites.py`` with common random
numbers, caches each cell, runs on a local process pool or on Ray, and writes Markdown, CSV,
JSON and PNG outputs with a record of what produced them.

Modules: ``scenario`` (what a scenario and a claim are), ``suites`` (the scenarios, one table per
family), ``cells`` (the unit of work), ``cache`` (atomic files), ``table`` (statistics and ranks),
``result`` (what a run produced), ``report`` (writers), ``record`` (command, commit, versions,
machine), ``runner`` (the run), ``cli`` (the subcommand). Cells run on ``schedenv.backends`` (process
pool, Ray), which the RL harness's training sweeps share.
"""

from schedenv.leaderboard.result import LeaderboardResult
from schedenv.leaderboard.runner import plan, run_leaderboard, select_scenarios
from schedenv.leaderboard.scenario import Claim, Scenario
from schedenv.leaderboard.suites import FAMILIES, SUITES, available_families, suite

__all__ = [
    "FAMILIES",
    "SUITES",
    "Claim",
    "LeaderboardResult",
    "Scenario",
    "available_families",
    "plan",
    "run_leaderboard",
    "select_scenarios",
    "suite",
]
