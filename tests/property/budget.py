"""The property suite's example budget and its committed example database (docs/envs/index.md, "Property suite").

Every test of ``tests/property`` is decorated with :func:`property_settings`: a bounded number of
examples per test (the whole suite stays well under a minute of CPU) and no deadline (numba compiles
its kernels on first use). Found cases are replayed from ``tests/property/example-db`` (committed):

- in CI (``CI`` set, or ``HYPOTHESIS_PROFILE=ci`` as ``make test`` sets it) the committed database is
  read-only and generation is seeded, so a run never modifies committed files and the same commit
  gives the same verdict;
- locally, the committed database is read too, but new failures are saved to Hypothesis's usual
  ``.hypothesis/`` folder (git-ignored), never to the committed one;
- ``SCHEDENV_REFRESH_EXAMPLES=1 pytest tests/property`` writes the committed database: the cases it
  finds failing are saved there (and cases that now pass are dropped) for CI to replay.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, seed, settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

EXAMPLE_DB = Path(__file__).parent / "example-db"
"""The committed example database (not under ``.hypothesis/``, which .gitignore excludes)."""
LOCAL_DB = Path(".hypothesis") / "examples"
CI_SEED = 20231
"""Generation seed in CI, so that a commit's verdict does not depend on the run."""

F = TypeVar("F", bound=Callable[..., Any])


def in_ci() -> bool:
    """True in CI: the ``CI`` variable is set or the ``ci`` Hypothesis profile is selected (``make test``)."""
    return bool(os.environ.get("CI")) or os.environ.get("HYPOTHESIS_PROFILE") == "ci"


def example_database() -> ExampleDatabase:
    """The committed database, writable only when refreshing; locally also the ignored ``.hypothesis`` one."""
    committed = DirectoryBasedExampleDatabase(EXAMPLE_DB)
    if os.environ.get("SCHEDENV_REFRESH_EXAMPLES") == "1":
        return committed
    if in_ci():
        return ReadOnlyDatabase(committed)
    return MultiplexedDatabase(ReadOnlyDatabase(committed), DirectoryBasedExampleDatabase(LOCAL_DB))


def property_settings(max_examples: int) -> Callable[[F], F]:
    """Settings for one property test: ``max_examples`` draws, no deadline, the example database above."""
    chosen = settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=False,  # the ci profile's derandomize would disable the database; CI seeds instead
        database=example_database(),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )

    def decorate(test: F) -> F:
        decorated = chosen(test)
        return seed(CI_SEED)(decorated) if in_ci() else decorated

    return decorate
