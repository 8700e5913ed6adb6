"""Training sweeps: ``schedenv train`` over several seeds and configs, on a process pool or Ray.

Each (config, seed) pair is one independent run in its own folder ``OUT/<config>-seed<S>``, trained by
the same ``agents.train.train`` as a single run, and dispatched through the backends the leaderboard
uses too (``schedenv.backends.run_tasks``: ``local`` process pool or ``ray``). Training is
deterministic for a given seed on CPU with one torch thread, so a run gives the same model whichever
backend trained it. A killed sweep resumes with ``resume=True``: every run continues from its newest
checkpoint (a finished run has nothing left to do).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.runs import CONFIG
from schedenv.backends import run_tasks


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: the config file (None: the family's shipped one), overrides and folder."""

    config: str | None
    overrides: dict[str, Any]
    out: str
    resume: bool


def run_folder(out: str | Path, config: str | None, seed: int) -> Path:
    """``OUT/<config stem>-seed<S>`` (``default`` when the family's shipped config is used)."""
    stem = Path(config).stem if config else "default"
    return Path(out) / f"{stem}-seed{seed}"


RESUMABLE_CHANGES = ("timesteps", "progress_bar")
"""Config fields a resumed run may change (it takes the new values): a longer budget continues the same run."""


def check_resumable(run: SweepRun) -> None:
    """``ValueError`` if ``run`` would resume a folder whose saved config is not the sweep's config.

    Resuming continues with the saved config; a sweep (or ``benchmarks/rl_versus_paper.py``) over an
    edited config file would otherwise report old models under the new config.
    """
    from agents.train import config_changes, resolve_config, resume_config

    folder = Path(run.out)
    if not (run.resume and (folder / CONFIG).is_file()):
        return
    changes = config_changes(resume_config(folder, run.overrides), resolve_config(run.config, run.overrides))
    for name in RESUMABLE_CHANGES:
        changes.pop(name, None)
    if changes:
        listed = "; ".join(f"{name}: {saved!r} there, {wanted!r} now" for name, (saved, wanted) in changes.items())
        raise ValueError(
            f"{folder} holds a run of another config ({listed}); resuming would continue the old one. "
            "Use another output folder, or delete that one to train the new config"
        )


def _train_run(run: SweepRun) -> dict[str, Any]:
    """Train one run (a top-level function, so process pools and Ray can ship it)."""
    from agents.train import resolve_config, train

    folder = Path(run.out)
    resuming = run.resume and (folder / CONFIG).is_file()  # its config is this one (``check_resumable``)
    result = train(resolve_config(run.config, run.overrides), folder, resume=resuming)
    last = result.evaluations[-1] if result.evaluations else {}
    return {
        "out": run.out,
        "start_timesteps": result.start_timesteps,
        "seconds": result.seconds,
        "last_evaluation": last,
    }


def sweep(
    configs: Sequence[str | None],
    seeds: Sequence[int],
    overrides: dict[str, Any],
    out: str | Path,
    *,
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    resume: bool = False,
) -> list[dict[str, Any]]:
    """Train every (config, seed) pair; returns one summary per run, in (config, seed) order."""
    if not seeds:
        raise ValueError("seeds is empty; a sweep needs at least one seed")
    runs = [
        SweepRun(config, {**overrides, "seed": int(seed)}, str(run_folder(out, config, seed)), resume)
        for config in configs
        for seed in seeds
    ]
    for run in runs:
        check_resumable(run)
    results: list[dict[str, Any]] = [{} for _ in runs]
    for index, summary in run_tasks(_train_run, runs, backend=backend, workers=workers, address=address):
        results[index] = summary
    return results
