"""The layout of a training run's folder, and atomic writes into it.

    DIR/config.yaml                      the resolved training config (every field, with its value)
    DIR/model.zip, DIR/vecnormalize.pkl  the final model and its observation/reward statistics
    DIR/best_model.zip                   the model of the best validation evaluation (+ best_vecnormalize.pkl)
    DIR/checkpoints/step_<N>.zip         periodic checkpoints (+ step_<N>.vecnormalize.pkl, .replay.pkl,
                                         .state.pkl: the envs and random streams, for an exact resume)
    DIR/evaluations.jsonl                one line per evaluation (validation seeds) against the paper policy
    DIR/run.json                         provenance: every command that trained the run, commit, package
                                         versions, the training and validation seeds
    DIR/tb/                              TensorBoard logs

Files are created readable by others (0644 under the usual umask 022), like any file the user writes.

Every file is written to a temporary name and renamed into place, and a checkpoint's model is
written last: a checkpoint whose ``.zip`` exists is complete, so a run killed at any moment loses
at most one checkpoint interval. No torch here: ``agents.load`` and the CLI read runs cheaply.
"""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CONFIG = "config.yaml"
MODEL = "model.zip"
VECNORMALIZE = "vecnormalize.pkl"
CHECKPOINTS = "checkpoints"
EVALUATIONS = "evaluations.jsonl"
TENSORBOARD = "tb"
BEST_MODEL = "best_model.zip"
BEST_VECNORMALIZE = "best_vecnormalize.pkl"
PROVENANCE = "run.json"
WARM_START = "warm_start.json"
ANCHOR = "warm_start_policy.pt"
"""The clone's policy parameters (``torch.save`` of its state dict), kept for ``warm_start_kl`` across a resume."""

_STEP_FILE = re.compile(r"^step_(\d+)\.zip$")


@dataclass(frozen=True)
class Checkpoint:
    """A saved model with the files that belong to it."""

    steps: int
    """Env steps the model had trained for (``model.num_timesteps``)."""
    model: Path
    """The model ``.zip``."""
    vecnormalize: Path
    """Its ``VecNormalize`` statistics (may not exist if the run does not normalise)."""
    replay_buffer: Path
    """Its replay buffer (off-policy algorithms only; may not exist)."""
    state: Path
    """Its ``agents.venv.TrainingState`` (runs on the native batched env only; may not exist)."""


def checkpoint_paths(run_dir: Path, steps: int) -> Checkpoint:
    """The file names of the checkpoint at ``steps`` in ``run_dir``."""
    folder = Path(run_dir) / CHECKPOINTS
    stem = f"step_{steps}"
    return Checkpoint(
        steps,
        folder / f"{stem}.zip",
        folder / f"{stem}.vecnormalize.pkl",
        folder / f"{stem}.replay.pkl",
        folder / f"{stem}.state.pkl",
    )


def checkpoints(run_dir: Path) -> list[Checkpoint]:
    """The complete checkpoints of ``run_dir``, oldest first."""
    folder = Path(run_dir) / CHECKPOINTS
    found = [int(m.group(1)) for p in folder.glob("step_*.zip") if (m := _STEP_FILE.match(p.name))]
    return [checkpoint_paths(run_dir, steps) for steps in sorted(found)]


def final_model(run_dir: Path) -> Checkpoint | None:
    """The run's model to evaluate: ``model.zip`` if training finished, else the newest checkpoint."""
    run_dir = Path(run_dir)
    if (run_dir / MODEL).is_file():
        return Checkpoint(-1, run_dir / MODEL, run_dir / VECNORMALIZE, run_dir / "replay.pkl", run_dir / "state.pkl")
    saved = checkpoints(run_dir)
    return saved[-1] if saved else None


def resume_candidates(run_dir: Path) -> list[Checkpoint]:
    """What ``train --resume`` may continue from, in order of preference reversed (newest last): the
    final ``model.zip`` (its envs start fresh episodes), then the checkpoints oldest to newest."""
    run_dir = Path(run_dir)
    final = [final_model(run_dir)] if (run_dir / MODEL).is_file() else []
    return [c for c in final if c is not None] + checkpoints(run_dir)


RUN_FILES = (
    MODEL,
    VECNORMALIZE,
    BEST_MODEL,
    BEST_VECNORMALIZE,
    EVALUATIONS,
    PROVENANCE,
    WARM_START,
    ANCHOR,
    CHECKPOINTS,
    TENSORBOARD,
)
"""The files and folders of a run that ``train --overwrite`` deletes (nothing else in the folder)."""


def clear_run(run_dir: Path) -> None:
    """Delete the run's own files (``RUN_FILES``) from ``run_dir`` before it is trained anew."""
    import shutil

    for name in RUN_FILES:
        path = Path(run_dir) / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def best_model(run_dir: Path) -> Checkpoint | None:
    """The model of the run's best validation evaluation (``best_model.zip``), if it was saved."""
    run_dir = Path(run_dir)
    if not (run_dir / BEST_MODEL).is_file():
        return None
    return Checkpoint(
        -1, run_dir / BEST_MODEL, run_dir / BEST_VECNORMALIZE, run_dir / "replay.pkl", run_dir / "state.pkl"
    )


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (never a torn file).

    The file gets the permissions of an ordinary new file (0666 minus the umask), not the 0600 of
    the temporary file, so that a run folder can be shared.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold Ctrl-C until the block ends, then raise it: a checkpoint or model save is never cut in the middle.

    A ``KeyboardInterrupt`` that lands inside ``zipfile``'s close (SB3's ``model.save``) leaves the archive
    with an open writing handle, and its ``ZipFile.close`` then raises a ``ValueError`` instead: the run
    would end with a traceback and exit status 1, not "interrupted; resume with ..." and 130
    (docs/rl/index.md, "Runs are never overwritten"). Acts only in the main thread while SIGINT has
    Python's default handler (a process started in the background ignores SIGINT: left as it is).
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, _frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if received:
        raise KeyboardInterrupt


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_config(run_dir: Path) -> dict[str, Any]:
    """The resolved config of the run in ``run_dir``."""
    path = Path(run_dir) / CONFIG
    if not path.is_file():
        raise ValueError(f"{run_dir} is not a training run: {CONFIG} is missing (train one with `schedenv train`)")
    loaded = yaml.safe_load(path.read_text())
    if not isinstance(loaded, dict):
        raise ValueError(f"{path} does not hold a mapping")
    return loaded


def write_config(run_dir: Path, config: dict[str, Any], comments: dict[str, str]) -> None:
    """Write the resolved config with each field's docstring as a comment above it (every line of it)."""
    lines = ["# Resolved training config (schedenv train); every field is documented in agents.train.TrainConfig."]
    for key, value in config.items():
        if key in comments:
            lines.extend(f"# {line.strip()}" for line in comments[key].splitlines())
        lines.append(yaml.safe_dump({key: value}, sort_keys=False, default_flow_style=False).rstrip())
    write_atomic(Path(run_dir) / CONFIG, ("\n".join(lines) + "\n").encode())


PACKAGES = ("schedenv", "gymnasium", "numpy", "numba", "torch", "stable_baselines3", "sb3_contrib")
"""Packages whose versions a run folder records."""


def package_versions() -> dict[str, str]:
    """Installed versions of ``PACKAGES`` and of Python (``not installed`` where missing)."""
    import platform
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def record_provenance(run_dir: Path, command: str, extra: dict[str, Any]) -> dict[str, Any]:
    """Append ``command`` to ``run_dir/run.json`` (creating it with the commit, versions and ``extra``)."""
    from schedenv.reporting import git_commit

    path = Path(run_dir) / PROVENANCE
    record: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    entry = {"command": command, "commit": git_commit(), "versions": package_versions()}
    record.setdefault("commands", []).append(entry)
    record.update(extra)
    write_atomic(path, (json.dumps(record, indent=1) + "\n").encode())
    return record


def add_training_cpu(run_dir: Path, seconds: float) -> float:
    """Add ``seconds`` of this process's CPU time (the warm start, learning and its evaluations) to ``run.json``'s
    ``train_cpu_seconds``, the run's training budget summed over every call (resumes included)."""
    path = Path(run_dir) / PROVENANCE
    record: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    record["train_cpu_seconds"] = float(record.get("train_cpu_seconds", 0.0)) + seconds
    write_atomic(path, (json.dumps(record, indent=1) + "\n").encode())
    return float(record["train_cpu_seconds"])


def read_provenance(run_dir: Path) -> dict[str, Any]:
    """The run's ``run.json`` (empty for runs trained before it existed)."""
    path = Path(run_dir) / PROVENANCE
    return json.loads(path.read_text()) if path.is_file() else {}


def read_evaluations(run_dir: Path) -> list[dict[str, Any]]:
    """The validation evaluations of a run (``evaluations.jsonl``, one row per evaluation), in order."""
    path = Path(run_dir) / EVALUATIONS
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
