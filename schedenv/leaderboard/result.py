"""What a leaderboard run produced, the one value the runner builds and the writers turn into files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedenv.leaderboard.table import ScenarioPlan


@dataclass
class LeaderboardResult:
    """Everything a leaderboard run produced (what the writers turn into files)."""

    suite: str
    plans: list[ScenarioPlan]
    rows: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    summary: dict[str, list[dict[str, Any]]]
    families: list[str]
    families_missing: list[str]
    record: dict[str, Any]

    def __repr__(self) -> str:
        return (
            f"LeaderboardResult(suite={self.suite!r}, scenarios={len(self.plans)}, cells={len(self.rows)}, "
            f"failed={len(self.failed)}, claims={len(self.claims)}, families={self.families})"
        )

    @property
    def failed(self) -> list[dict[str, Any]]:
        """Rows whose cell raised an error."""
        return [row for row in self.rows if row["status"] == "error"]
