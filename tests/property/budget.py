"""The property suite's example budget and its committed example database (docs/architecture.md, "The property suite").

Every test of ``tests/property`` is decorated with :func:`property_settings`: a bounded number of
examples per test (the whole suite stays well under a minute of CPU) and no deadline (numba compiles
its kernels on first use). Found cases are replayed from ``tests/property/example-db`` (committed):

- in CI (``CI`` set, or ``HYPOTHESIS_PROFILE=ci`` as ``make test`` sets it) the committed database is
  read-only and generation is derandomized, so a run never modifies committed files and the same commit
  gives the same verdict;
- locally, the committed database is read too, but new failures are saved to Hypothesis's usual
  ``.hypothesis/`` folder (git-ignored), never to the committed one;
- ``SCHEDENV_REFRESH_EXAMPLES=1 pytest tests/property`` writes the committed database: the failing
  cases that generation finds are added (nothing is dropped, so fixed bugs stay replayed; the
  ``@example`` regressions are skipped in this mode, as they are in the source already). An entry is
  keyed by its test's source: after editing a test, delete the folder and refresh it.

``SCHEDENV_PROPERTY_SCALE=10`` multiplies every test's example budget (a longer local bug hunt).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

EXAMPLE_DB = Path(__file__).parent / "example-db"
"""The committed example database (not under ``.hypothesis/``, which .gitignore excludes)."""
LOCAL_DB = Path(".hypothesis") / "examples"


def in_ci() -> bool:
    """True in CI: the ``CI`` variable is set or the ``ci`` Hypothesis profile is selected (``make test``)."""
    return bool(os.environ.get("CI")) or os.environ.get("HYPOTHESIS_PROFILE") == "ci"


class KeepingDatabase(ExampleDatabase):
    """A database that only adds: Hypothesis drops a stored case once it passes, but a fixed bug's case
    must stay for CI to replay."""

    def __init__(self, db: ExampleDatabase) -> None:
        super().__init__()
        self._db = db

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._db.fetch(key)

    def save(self, key: bytes, value: bytes) -> None:
        self._db.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        """Nothing: entries are removed by deleting the folder (see the module doc)."""


def refreshing() -> bool:
    """``SCHEDENV_REFRESH_EXAMPLES=1``: the committed database is written."""
    return os.environ.get("SCHEDENV_REFRESH_EXAMPLES") == "1"


def example_database() -> ExampleDatabase:
    """The committed database, written only when refreshing; locally also the ignored ``.hypothesis`` one."""
    committed = DirectoryBasedExampleDatabase(EXAMPLE_DB)
    if refreshing():
        return KeepingDatabase(committed)
    if in_ci():
        return ReadOnlyDatabase(committed)
    return MultiplexedDatabase(ReadOnlyDatabase(committed), DirectoryBasedExampleDatabase(LOCAL_DB))


def property_settings(max_examples: int) -> settings:
    """Settings for one property test: ``max_examples`` draws (times ``SCHEDENV_PROPERTY_SCALE``, 1 by
    default: raise it to hunt for bugs locally), no deadline, the example database above.

    In CI generation is derandomized, inherited from a parent: passed together, ``derandomize=True``
    and a ``database`` are refused (and ``@seed`` turns the database off), yet a derandomized run
    with a database replays its stored cases first, which is what CI needs.
    """
    parent = settings(derandomize=in_ci())
    return settings(
        parent,
        max_examples=max_examples * int(os.environ.get("SCHEDENV_PROPERTY_SCALE", "1")),
        deadline=None,
        database=example_database(),
        phases=[phase for phase in Phase if not (refreshing() and phase == Phase.explicit)],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
