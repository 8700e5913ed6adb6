"""The leaderboard run: plan the cells, reuse cached ones, compute the rest on a backend, write the outputs.

>>> from schedenv.leaderboard import run_leaderboard
>>> result = run_leaderboard("quick", out="runs/quick", workers=2)  # doctest: +SKIP

A cell is one contender on one scenario over the scenario's seeds. Each finished cell is cached
at once (``<out>/cells/``), so a run killed at any moment (even ``kill -9``) resumes where it
stopped and recomputes nothing it finished. Cells that fail are reported in the outputs and not
cached, so the next run retries them.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gymnasium as gym

import baselines
from schedenv.backends import run_tasks
from schedenv.leaderboard.cache import CellCache
from schedenv.leaderboard.cells import CellTask, ContenderSpec, folder_digest, load_agent, run_cell
from schedenv.leaderboard.record import run_record
from schedenv.leaderboard.report import write_all
from schedenv.leaderboard.result import LeaderboardResult
from schedenv.leaderboard.scenario import Scenario
from schedenv.leaderboard.suites import FAMILIES, available_families, suite
from schedenv.leaderboard.table import ScenarioPlan, claim_checks, family_summary, scenario_rows
from schedenv.progress import progress_bar
from schedenv.validation import suggest


def _split(patterns: str | Sequence[str] | None) -> list[str]:
    if patterns is None:
        return []
    items = patterns.split(",") if isinstance(patterns, str) else list(patterns)
    return [item.strip() for item in items if item.strip()]


def select_scenarios(scenarios: Sequence[Scenario], patterns: str | Sequence[str] | None) -> list[Scenario]:
    """Scenarios whose ``family/name``, name or family matches one of the glob ``patterns`` (all when None)."""
    wanted = _split(patterns)
    if not wanted:
        return list(scenarios)
    names = [s.label for s in scenarios] + [s.name for s in scenarios] + [s.family for s in scenarios]
    for pattern in wanted:
        if not fnmatch.filter(names, pattern):
            raise ValueError(
                f"--scenarios {pattern!r} matches no scenario{suggest(pattern, names)}; known: {sorted(set(names))}"
            )
    return [s for s in scenarios if any(fnmatch.fnmatch(n, p) for p in wanted for n in (s.label, s.name, s.family))]


def baseline_names(env_id: str) -> list[str]:
    """The family's baselines, aliases dropped (an alias builds a policy whose ``name`` is another)."""
    return [name for name in baselines.available(env_id) if baselines.make(name).name == name]


@dataclass(frozen=True)
class _Agent:
    spec: ContenderSpec
    env_id: str
    observation_shape: tuple[int, ...] | None


def _agent_env_id(agent: Any, path: Path) -> str:
    """The env id an agent acts on: its ``env_id``, else the ``env_id`` of its run's config."""
    env_id = getattr(agent, "env_id", None)
    if env_id is None:
        from agents.runs import read_config

        env_id = read_config(path).get("env_id")
    if not isinstance(env_id, str):
        raise ValueError(f"--agent {str(path)!r}: neither the agent nor its run config says which env id it acts on")
    return env_id


def _observation_shape(agent: Any) -> tuple[int, ...] | None:
    space = getattr(agent, "observation_space", None) or getattr(
        getattr(agent, "model", None), "observation_space", None
    )
    shape = getattr(space, "shape", None)
    return tuple(shape) if shape is not None else None


def _load_agents(directories: Sequence[str], taken: set[str]) -> list[_Agent]:
    """Trained agents (``agents.load``), named uniquely against the baselines."""
    loaded = []
    for directory in directories:
        path = Path(directory).resolve()
        if not path.is_dir():
            raise ValueError(f"--agent {directory!r} is not a folder (give the folder a training run wrote)")
        agent = load_agent(str(path))
        name = str(agent.name)
        while name in taken:
            name = f"agent:{name}" if not name.startswith("agent:") else f"{name}'"
        taken.add(name)
        spec = ContenderSpec(name, kind="agent", path=str(path), digest=folder_digest(path))
        loaded.append(_Agent(spec, _agent_env_id(agent, path), _observation_shape(agent)))
    return loaded


def _misfit(agent: _Agent, scenario: Scenario) -> str | None:
    """Why ``agent`` cannot act in ``scenario`` (its observations have another shape), or None."""
    if agent.observation_shape is None:
        return None
    env = gym.make(scenario.env_id, **scenario.build_kwargs())
    shape = env.observation_space.shape
    env.close()
    if shape is not None and tuple(shape) != agent.observation_shape:
        return f"trained on observations of shape {agent.observation_shape}; this scenario's have shape {tuple(shape)}"
    return None


def plan(
    scenarios: Sequence[Scenario], contenders: str | Sequence[str] | None = None, agents: Sequence[str] = ()
) -> list[ScenarioPlan]:
    """Each scenario with its contenders: the paper policy first, the other baselines (filtered), agents."""
    wanted = _split(contenders)
    env_ids = list(dict.fromkeys(s.env_id for s in scenarios))
    names = {env_id: baseline_names(env_id) for env_id in env_ids}
    every = [name for group in names.values() for name in group]
    for pattern in wanted:
        if not fnmatch.filter(every, pattern):
            raise ValueError(
                f"--contenders {pattern!r} matches no baseline{suggest(pattern, every)}; known: {sorted(every)}"
            )
    trained = _load_agents(agents, set(every))
    for env_id in {agent.env_id for agent in trained}:
        if env_id not in env_ids:
            raise ValueError(
                f"an --agent acts on {env_id!r}, but the selected scenarios have no scenario of it; chosen: {env_ids}"
            )
    plans = []
    for scenario in scenarios:
        reference = baselines.reference(scenario.env_id)
        chosen = [
            n
            for n in names[scenario.env_id]
            if n != reference and (not wanted or any(fnmatch.fnmatch(n, p) for p in wanted))
        ]
        mine = [agent for agent in trained if agent.env_id == scenario.env_id]
        specs = [ContenderSpec(reference), *(ContenderSpec(n) for n in chosen), *(agent.spec for agent in mine)]
        misfits = {agent.spec.name: _misfit(agent, scenario) for agent in mine}
        excluded = {name: reason for name, reason in misfits.items() if reason is not None}
        plans.append(ScenarioPlan(scenario, reference, tuple(specs), excluded))
    return plans


def run_leaderboard(
    suite_name: str = "quick",
    *,
    out: str | os.PathLike[str] = "runs/leaderboard",
    scenarios: str | Sequence[str] | None = None,
    contenders: str | Sequence[str] | None = None,
    agents: Sequence[str] = (),
    workers: int | None = None,
    backend: str = "local",
    address: str | None = None,
    command: str | None = None,
    progress: bool = True,
    scenario_list: Sequence[Scenario] | None = None,
) -> LeaderboardResult:
    """Run (or resume) a suite and write ``leaderboard.{md,csv,json}`` and PNGs into ``out``.

    ``scenario_list`` replaces the suite's scenarios (``suite_name`` then only labels the run).
    ``workers`` defaults to the machine's CPU count; with ``address`` the Ray cluster decides.
    """
    started, clock = datetime.now(timezone.utc), time.perf_counter()
    folder = Path(out)
    chosen = select_scenarios(scenario_list if scenario_list is not None else suite(suite_name), scenarios)
    plans = plan(chosen, contenders, agents)
    workers = workers if workers is not None else (os.cpu_count() or 1)

    tasks = [CellTask(p.scenario, spec) for p in plans for spec in p.contenders if p.runs(spec.name)]
    cache = CellCache(folder / "cells")
    payloads: dict[str, dict[str, Any]] = {}
    for task in tasks:
        cached = cache.get(task.key)
        if cached is not None and cached.get("status") == "ok":
            payloads[task.key] = cached
    todo = [task for task in tasks if task.key not in payloads]
    failed = 0
    with progress_bar(
        total=len(tasks),
        initial=len(tasks) - len(todo),
        desc=f"leaderboard {suite_name}",
        unit="cell",
        disable=not progress,
    ) as bar:
        for index, payload in run_tasks(run_cell, todo, backend=backend, workers=workers, address=address):
            if payload["status"] == "ok":
                cache.put(payload)
            else:
                failed += 1
                bar.write(f"cell {todo[index].key} failed: {payload['error']}")
            payloads[todo[index].key] = payload
            bar.set_postfix_str(f"{todo[index].scenario.label} {todo[index].contender.name}", refresh=False)
            bar.update(1)

    rows, claims = [], []
    for p in plans:
        by_name = {task.contender.name: payloads[task.key] for task in tasks if task.scenario is p.scenario}
        mine = scenario_rows(p, by_name)
        rows += mine
        claims += claim_checks(p, mine)
    families = list(dict.fromkeys(p.scenario.family for p in plans))
    extra = (("ray",) if backend == "ray" else ()) + (("torch", "stable-baselines3", "sb3-contrib") if agents else ())
    record = run_record(command or " ".join(sys.argv), extra)
    excluded = sum(1 for p in plans for spec in p.contenders if not p.runs(spec.name))
    record.update(
        suite=suite_name,
        backend=backend,
        workers=workers,
        address=address,
        filters={"scenarios": _split(scenarios), "contenders": _split(contenders), "agents": list(agents)},
        started=started.isoformat(timespec="seconds"),
        finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        wall_seconds=round(time.perf_counter() - clock, 3),
        cells={
            "total": len(tasks) + excluded,
            "computed": len(todo) - failed,
            "cached": len(tasks) - len(todo),
            "failed": failed,
            "excluded": excluded,
        },
    )
    result = LeaderboardResult(
        suite=suite_name,
        plans=plans,
        rows=rows,
        claims=claims,
        summary={family: family_summary(rows, family) for family in families},
        families=families,
        families_missing=[f for f in FAMILIES if f not in available_families()],
        record=record,
    )
    write_all(folder, result)
    return result
