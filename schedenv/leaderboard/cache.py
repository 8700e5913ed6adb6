"""Atomic files and the per-cell result cache (docs/results/index.md: written atomically, resumed after a kill).

Every file is written to a temporary file in the same folder, flushed to disk, then moved over
the destination with ``os.replace`` (atomic on POSIX): a reader sees the old file or the new
one, never half of one, even when the writer is killed with ``kill -9``. A cell's result lives in
``cells/<key>.json`` under the output folder; a run finds the cells it already has and computes
only the others. A temporary file a killed writer left behind is ignored and removed by the next
run (only when the process that wrote it is gone).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` so that the file is never seen incomplete."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> int:
    """Delete temporary files whose writer process no longer exists; returns how many."""
    removed = 0
    root = Path(folder)
    if not root.is_dir():
        return 0
    for path in root.iterdir():
        match = _TEMP.match(path.name)
        if match and not _process_alive(int(match["pid"])):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    return removed


def _is_number(value: Any) -> bool:
    """A JSON number that is not NaN (``json`` reads the non-standard ``NaN`` token as a float)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def cell_problem(payload: dict[str, Any]) -> str | None:
    """What is wrong with a finished cell's payload (``status`` "ok"), or None when it is well formed.

    The schema (``leaderboard.cells.run_cell``): ``seeds`` a non-empty list of integers; ``episodes``
    one per seed, in the same order, each ``{"seed": int, "metrics": {name: number}, "return": number,
    "n_steps": int >= 0}`` (numbers are never NaN). A hand-edited or truncated cell (e.g. ``"episodes": []``)
    is not trusted.
    """
    seeds, episodes = payload.get("seeds"), payload.get("episodes")
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)
    ):
        return f"seeds={seeds!r} is not a non-empty list of integers"
    if not isinstance(episodes, list) or len(episodes) != len(seeds):
        count = len(episodes) if isinstance(episodes, list) else type(episodes).__name__
        return f"episodes holds {count} entries for {len(seeds)} seeds"
    for index, (seed, episode) in enumerate(zip(seeds, episodes, strict=True)):
        if not isinstance(episode, dict) or episode.get("seed") != seed:
            return f"episodes[{index}] is not the episode of seed {seed}"
        metrics = episode.get("metrics")
        if not isinstance(metrics, dict) or not metrics or not all(_is_number(v) for v in metrics.values()):
            return f"episodes[{index}]['metrics'] is not a non-empty mapping of numbers"
        steps = episode.get("n_steps")
        if not _is_number(episode.get("return")) or not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            return f"episodes[{index}] lacks a numeric 'return' or an integer 'n_steps' >= 0"
    return None


class CellCache:
    """Finished cells as JSON files named by their key, in ``root``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(self.root)

    def path(self, key: str) -> Path:
        """Where the cell ``key`` is stored."""
        return self.root / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored result of cell ``key``, or None when absent or unreadable (then recomputed)."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as error:
            warnings.warn(f"cache file {path} is not UTF-8 ({error}); the cell will be recomputed", stacklevel=2)
            return None
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as error:
            warnings.warn(f"cache file {path} is unreadable ({error}); the cell will be recomputed", stacklevel=2)
            return None
        if not isinstance(payload, dict) or payload.get("key") != key:
            warnings.warn(f"cache file {path} does not hold cell {key}; the cell will be recomputed", stacklevel=2)
            return None
        problem = cell_problem(payload) if payload.get("status") == "ok" else None
        if problem is not None:
            warnings.warn(
                f"cache file {path} is not a valid cell ({problem}); the cell will be recomputed", stacklevel=2
            )
            return None
        return payload

    def put(self, payload: dict[str, Any]) -> None:
        """Store a finished cell (``payload["key"]`` names it) atomically."""
        write_atomic(self.path(str(payload["key"])), json.dumps(payload, sort_keys=True, indent=1))
