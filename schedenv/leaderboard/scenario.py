"""What a leaderboard scenario is: one env configuration, its seeds, its metric and the papers' claims.

A scenario's ``env_kwargs`` are JSON-friendly (distributions as ``{"type": "Pareto", "alpha": 1.5}``,
the spec of ``schedenv.workloads.from_spec``), so that a scenario has a stable text form: that
form is what the cell cache hashes and what ``leaderboard.json`` records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedenv.workloads import from_spec

ALL = "*"
"""In a claim's ``worse``: every other contender of the scenario."""


@dataclass(frozen=True)
class Claim:
    """An ordering a paper proves or claims: mean(better) <= factor * mean(w) for every w in ``worse``.

    ``factor`` < 1 states "far below" (e.g. 0.5: at most half); ``rtol`` absorbs floating-point
    ties (heSRPT against a policy that coincides with it). ``source`` cites where the paper says it.
    """

    better: str
    worse: tuple[str, ...]
    source: str
    factor: float = 1.0
    rtol: float = 1e-9

    def others(self, contenders: Sequence[str]) -> list[str]:
        """The contenders that ``better`` must beat, among ``contenders``."""
        if ALL in self.worse:
            return [name for name in contenders if name != self.better]
        return [name for name in self.worse if name in contenders]

    def holds(self, means: Mapping[str, float]) -> bool | None:
        """Whether the claim holds for ``means`` (contender -> mean); None when ``better`` is absent."""
        if self.better not in means:
            return None
        bound = means[self.better]
        return all(bound <= self.factor * means[w] * (1.0 + self.rtol) for w in self.others(list(means)))

    def __str__(self) -> str:
        worse = "every other contender" if ALL in self.worse else ", ".join(self.worse)
        scale = "" if self.factor == 1.0 else f"{self.factor:g} × "
        return f"{self.better} ≤ {scale}{worse} ({self.source})"


@dataclass(frozen=True)
class Scenario:
    """One env configuration of one family, evaluated on fixed seeds by every contender.

    ``group`` and ``axis`` place the scenario in the family's plot: scenarios of one group form a
    curve of ``metric`` against ``axis = (name, value)`` (load, speedup exponent p, alpha, ...).
    ``exclude`` names contenders that cannot act here, with the reason (e.g. a policy that needs
    known sizes); every other failure is reported as an error, never hidden. ``contender_kwargs``
    adds env arguments for one contender, by name, on the same seeds (e.g. HELL as the heSRPT paper
    words it idles servers, which needs the Malleable env's ``allocation="fractions"``).
    """

    family: str
    env_id: str
    name: str
    env_kwargs: Mapping[str, Any]
    seeds: tuple[int, ...]
    metric: str
    group: str
    axis: tuple[str, float]
    description: str = ""
    claims: tuple[Claim, ...] = ()
    exclude: Mapping[str, str] = field(default_factory=dict)
    contender_kwargs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``family/name``, unique across a suite."""
        return f"{self.family}/{self.name}"

    def kwargs_for(self, contender: str | None = None) -> dict[str, Any]:
        """The env kwargs (specs) of ``contender``: ``env_kwargs`` plus its ``contender_kwargs``, if any."""
        extra = self.contender_kwargs.get(contender, {}) if contender is not None else {}
        return {**self.env_kwargs, **extra}

    def kwargs_json(self, contender: str | None = None) -> str:
        """The env kwargs (of ``contender``) as canonical JSON (sorted keys): the identity in the cache."""
        return json.dumps(self.kwargs_for(contender), sort_keys=True, allow_nan=True)

    def build_kwargs(self, contender: str | None = None) -> dict[str, Any]:
        """The env kwargs (of ``contender``) with every spec turned into its object (``from_spec``)."""
        return {key: from_spec(value) for key, value in self.kwargs_for(contender).items()}


def seeds(n: int, first: int = 0) -> tuple[int, ...]:
    """The seeds first .. first + n - 1 (every contender of a scenario uses the same ones)."""
    return tuple(range(first, first + n))
