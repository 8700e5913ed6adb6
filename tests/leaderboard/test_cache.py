"""Atomic writes and the cell cache: a killed writer never leaves a corrupt file; keys name the question."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from schedenv.leaderboard import cache
from schedenv.leaderboard.cache import CellCache, remove_stale_temporaries, write_atomic
from schedenv.leaderboard.cells import CellTask, ContenderSpec, folder_digest
from tests.leaderboard.conftest import tiny_scenario

# The writer loads cache.py by path: importing the schedenv package would take longer than the test.
WRITER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("cache", sys.argv[2])
cache = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cache)
write_atomic, path = cache.write_atomic, sys.argv[1]
i = 0
print("ready", flush=True)
while True:
    i += 1
    write_atomic(path, json.dumps({"i": i, "payload": "x" * 2_000_000, "end": i}))
"""


def test_kill_9_during_writes_never_leaves_a_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "cell.json"
    for delay in (0.05, 0.13, 0.29):
        process = subprocess.Popen([sys.executable, "-c", WRITER, str(target), cache.__file__], stdout=subprocess.PIPE)
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        if target.exists():
            document = json.loads(target.read_text())
            assert document["i"] == document["end"] and len(document["payload"]) == 2_000_000
    # Whatever temporary files the killed writers left are removed, the finished file is kept.
    remove_stale_temporaries(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] in ([], ["cell.json"])


def test_stale_temporary_of_a_live_process_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / f".cell.json.{os.getpid()}.abc.tmp"
    dead = tmp_path / ".cell.json.999999999.abc.tmp"
    mine.write_text("half")
    dead.write_text("half")
    assert remove_stale_temporaries(tmp_path) == 1
    assert mine.exists() and not dead.exists()


def test_write_atomic_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.txt"
    write_atomic(target, "one")
    write_atomic(target, b"two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]


def test_cache_round_trip_and_unreadable_files_are_recomputed(tmp_path: Path) -> None:
    cells = CellCache(tmp_path)
    payload = {"key": "abc", "status": "ok", "episodes": [{"seed": 0, "metrics": {"m": float("inf")}}]}
    cells.put(payload)
    assert cells.get("abc") == payload
    assert cells.get("missing") is None
    cells.path("abc").write_text('{"key": "abc", "status": ')
    with pytest.warns(UserWarning, match="unreadable"):
        assert cells.get("abc") is None
    cells.path("abc").write_text(json.dumps({"key": "other"}))
    with pytest.warns(UserWarning, match="does not hold cell abc"):
        assert cells.get("abc") is None


def test_cell_key_changes_with_everything_the_numbers_depend_on() -> None:
    base = CellTask(tiny_scenario(), ContenderSpec("hesrpt"))
    variants = [
        CellTask(replace(tiny_scenario(), seeds=(0, 1, 3)), ContenderSpec("hesrpt")),
        CellTask(tiny_scenario(p=0.6), ContenderSpec("hesrpt")),
        CellTask(tiny_scenario(), ContenderSpec("equi")),
        CellTask(tiny_scenario(), ContenderSpec("hesrpt", kind="agent", path="/a", digest="1")),
        CellTask(tiny_scenario(), ContenderSpec("hesrpt", kind="agent", path="/a", digest="2")),
    ]
    keys = {base.key, *(task.key for task in variants)}
    assert len(keys) == 1 + len(variants)
    # The description and claims do not change the numbers, so they keep the key.
    assert CellTask(replace(tiny_scenario(), description="other", claims=()), ContenderSpec("hesrpt")).key == base.key
    assert base.key.startswith("malleable__tiny__hesrpt__")


def test_folder_digest_follows_file_contents(tmp_path: Path) -> None:
    (tmp_path / "model.zip").write_bytes(b"weights")
    first = folder_digest(tmp_path)
    assert folder_digest(tmp_path) == first
    (tmp_path / "model.zip").write_bytes(b"retrained")
    assert folder_digest(tmp_path) != first
