"""The committed example database is read-only in CI, never written by a local run, and only added to
when refreshing (``tests/property/budget.py``; docs/architecture.md, "The property suite")."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase

from . import budget


@pytest.mark.parametrize(
    "environment",
    [{"CI": "1"}, {"HYPOTHESIS_PROFILE": "ci"}, {}],
    ids=["CI", "ci-profile", "local"],
)
def test_runs_never_write_the_committed_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, environment: dict[str, str]
) -> None:
    for name in ("CI", "HYPOTHESIS_PROFILE", "SCHEDENV_REFRESH_EXAMPLES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    committed = tmp_path / "committed"
    monkeypatch.setattr(budget, "EXAMPLE_DB", committed)
    monkeypatch.setattr(budget, "LOCAL_DB", tmp_path / "local")
    DirectoryBasedExampleDatabase(committed).save(b"key", b"stored")
    database = budget.example_database()
    database.save(b"key", b"new")
    database.delete(b"key", b"stored")
    assert set(database.fetch(b"key")) >= {b"stored"}  # the committed case is replayed
    assert set(DirectoryBasedExampleDatabase(committed).fetch(b"key")) == {b"stored"}  # and nothing else changed
    assert budget.property_settings(1).derandomize == bool(environment)  # CI: the same examples every run


def test_refreshing_adds_and_never_drops(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SCHEDENV_REFRESH_EXAMPLES", "1")
    committed = tmp_path / "committed"
    monkeypatch.setattr(budget, "EXAMPLE_DB", committed)
    DirectoryBasedExampleDatabase(committed).save(b"key", b"fixed bug")
    database = budget.example_database()
    database.save(b"key", b"new bug")
    database.delete(b"key", b"fixed bug")  # Hypothesis drops a case that passes: kept here
    assert set(DirectoryBasedExampleDatabase(committed).fetch(b"key")) == {b"fixed bug", b"new bug"}
