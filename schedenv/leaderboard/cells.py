"""Cells: one contender on one scenario over the scenario's seeds, run by any backend.

A cell is the unit of work, of caching and of the progress bar. Its key hashes everything that
determines its numbers (env id, env kwargs, seeds, contender, schedenv version), so a cached
cell is reused only for the same question. ``run_cell`` is a top-level function of picklable
arguments, so process pools and Ray can ship it; it never raises: a failure comes back as an
``"error"`` payload with the traceback, which the runner reports and does not cache.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import schedenv
from schedenv import fastpath
from schedenv.evaluation import Contender, EpisodeResult, evaluate
from schedenv.leaderboard.scenario import Scenario

CACHE_FORMAT = 1
"""Bumped when the payload layout changes, so that old cache files are not misread."""


@dataclass(frozen=True)
class ContenderSpec:
    """How to build a contender in any process: a baseline name, or a trained agent's folder.

    ``digest`` (agents only) hashes the folder's files, so that a retrained agent is a new
    contender for the cache.
    """

    name: str
    kind: str = "baseline"
    path: str | None = None
    digest: str | None = None

    def build(self) -> Contender:
        """The contender object (``baselines.make`` or ``agents.load``)."""
        if self.kind == "agent":
            assert self.path is not None
            return load_agent(self.path)
        import baselines

        return baselines.make(self.name)

    def identity(self) -> dict[str, Any]:
        """What identifies the contender in a cell key."""
        return {"kind": self.kind, "name": self.name, "digest": self.digest}


def load_agent(path: str) -> Contender:
    """``agents.load(path)``, imported lazily; a clear error when the RL harness is missing."""
    try:
        import agents
    except ImportError as error:
        raise ValueError(
            f"--agent {path}: the RL harness (the 'agents' package) cannot be imported ({error}); "
            "install the rl extra: pip install -e '.[rl]'"
        ) from error
    load = getattr(agents, "load", None)
    if load is None:
        raise ValueError(f"--agent {path}: the 'agents' package has no load(); the RL harness is not installed")
    return load(path)


def folder_digest(path: str | Path) -> str:
    """SHA-256 over the relative names and contents of every file under ``path``."""
    digest = hashlib.sha256()
    root = Path(path)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(root)).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class CellTask:
    """One cell to compute: ``contender`` on ``scenario`` over the scenario's seeds."""

    scenario: Scenario
    contender: ContenderSpec

    @property
    def key(self) -> str:
        """A readable, filesystem-safe name plus a hash of everything the numbers depend on."""
        identity = {
            "format": CACHE_FORMAT,
            "schedenv": schedenv.__version__,
            "env_id": self.scenario.env_id,
            "env_kwargs": self.scenario.kwargs_json(self.contender.name),
            "seeds": list(self.scenario.seeds),
            "contender": self.contender.identity(),
        }
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
        readable = re.sub(
            r"[^A-Za-z0-9_.-]+", "_", f"{self.scenario.family}__{self.scenario.name}__{self.contender.name}"
        )
        return f"{readable}__{digest}"


def run_cell(task: CellTask) -> dict[str, Any]:
    """Evaluate the cell's contender on every seed of its scenario; never raises."""
    scenario = task.scenario
    payload: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "key": task.key,
        "family": scenario.family,
        "scenario": scenario.name,
        "contender": task.contender.name,
        "env_id": scenario.env_id,
        "env_kwargs": scenario.kwargs_json(task.contender.name),
        "seeds": list(scenario.seeds),
    }
    start = time.perf_counter()
    try:
        episodes = _episodes(task)
    except Exception as error:
        payload.update(status="error", error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc())
        payload["seconds"] = time.perf_counter() - start
        return payload
    payload.update(
        status="ok",
        episodes=[
            {
                "seed": e.seed,
                "metrics": {name: float(value) for name, value in e.metrics.items()},
                "return": float(e.episode_return),
                "n_steps": e.n_steps,
            }
            for e in episodes
        ],
        seconds=time.perf_counter() - start,
    )
    return payload


def _episodes(task: CellTask) -> list[EpisodeResult]:
    """The cell's episodes, through the compiled fast path when the baseline has one (same numbers)."""
    scenario, kwargs = task.scenario, task.scenario.build_kwargs(task.contender.name)
    if task.contender.kind == "baseline":
        return fastpath.evaluate_fast(scenario.env_id, task.contender.name, scenario.seeds, **kwargs).episodes
    return evaluate(scenario.env_id, task.contender.build(), scenario.seeds, keep_records=False, **kwargs).episodes
