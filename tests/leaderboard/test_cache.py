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
    episode = {"seed": 0, "metrics": {"m": float("inf")}, "return": -1.5, "n_steps": 3}
    payload = {"key": "abc", "status": "ok", "seeds": [0], "episodes": [episode]}
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


def _tampered(payload: dict, change: str) -> dict:
    edited = json.loads(json.dumps(payload))
    if change == "no episodes":
        edited["episodes"] = []
    elif change == "seed swapped":
        edited["episodes"][0]["seed"] = 99
    elif change == "metric text":
        edited["episodes"][1]["metrics"]["mean_slowdown"] = "fast"
    elif change == "bool steps":
        edited["episodes"][2]["n_steps"] = True
    elif change == "seeds missing":
        del edited["seeds"]
    return edited


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("no episodes", "episodes holds 0 entries for 3 seeds"),
        ("seed swapped", "episodes[0] is not the episode of seed"),
        ("metric text", "episodes[1]['metrics'] is not a non-empty mapping of numbers"),
        ("bool steps", "episodes[2] lacks a numeric 'return' or an integer 'n_steps'"),
        ("seeds missing", "seeds=None is not a non-empty list of integers"),
    ],
)
def test_a_hand_edited_ok_cell_is_not_trusted(tmp_path: Path, change: str, reason: str) -> None:
    from schedenv.leaderboard.cells import run_cell

    payload = run_cell(CellTask(tiny_scenario(), ContenderSpec("hesrpt")))
    assert payload["status"] == "ok" and cache.cell_problem(payload) is None
    cells = CellCache(tmp_path)
    cells.put(payload)
    assert cells.get(payload["key"]) == payload  # a real cell round-trips
    cells.put(_tampered(payload, change))
    with pytest.warns(UserWarning, match="is not a valid cell") as caught:
        assert cells.get(payload["key"]) is None
    assert reason in str(caught[0].message)
