"""The layout of a training run's folder, and atomic writes into it.

    DIR/config.yaml                      the resolved training config (every field, with its value)
    DIR/model.zip, DIR/vecnormalize.pkl  the final model and its observation/reward statistics
    DIR/checkpoints/step_<N>.zip         periodic checkpoints (+ step_<N>.vecnormalize.pkl, .replay.pkl)
    DIR/evaluations.jsonl                one line per evaluation against the paper policy
    DIR/tb/                              TensorBoard logs

Every file is written to a temporary name and renamed into place, and a checkpoint's model is
written last: a checkpoint whose ``.zip`` exists is complete, so a run killed at any moment loses
at most one checkpoint interval. No torch here: ``agents.load`` and the CLI read runs cheaply.
"""

from __future__ import annotations

import os
import re
import tempfile
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


def checkpoint_paths(run_dir: Path, steps: int) -> Checkpoint:
    """The file names of the checkpoint at ``steps`` in ``run_dir``."""
    folder = Path(run_dir) / CHECKPOINTS
    stem = f"step_{steps}"
    return Checkpoint(steps, folder / f"{stem}.zip", folder / f"{stem}.vecnormalize.pkl", folder / f"{stem}.replay.pkl")


def checkpoints(run_dir: Path) -> list[Checkpoint]:
    """The complete checkpoints of ``run_dir``, oldest first."""
    folder = Path(run_dir) / CHECKPOINTS
    found = [int(m.group(1)) for p in folder.glob("step_*.zip") if (m := _STEP_FILE.match(p.name))]
    return [checkpoint_paths(run_dir, steps) for steps in sorted(found)]


def final_model(run_dir: Path) -> Checkpoint | None:
    """The run's model to evaluate: ``model.zip`` if training finished, else the newest checkpoint."""
    run_dir = Path(run_dir)
    if (run_dir / MODEL).is_file():
        return Checkpoint(-1, run_dir / MODEL, run_dir / VECNORMALIZE, run_dir / "replay.pkl")
    saved = checkpoints(run_dir)
    return saved[-1] if saved else None


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (never a torn file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
    """Write the resolved config with each field's docstring as a comment above it."""
    lines = ["# Resolved training config (schedenv train); every field is documented in agents.train.TrainConfig."]
    for key, value in config.items():
        if key in comments:
            lines.append(f"# {comments[key]}")
        lines.append(yaml.safe_dump({key: value}, sort_keys=False, default_flow_style=False).rstrip())
    write_atomic(Path(run_dir) / CONFIG, ("\n".join(lines) + "\n").encode())
