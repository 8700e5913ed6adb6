"""Pool workers die with their parent, even on ``kill -9`` (issue 13; ``schedenv.backends``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import sys, threading, time
from schedenv.backends import run_tasks
threading.Thread(target=lambda: list(run_tasks(time.sleep, [120.0, 120.0], workers=2)), daemon=True).start()
time.sleep(600)
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is pending


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_the_parent_ends_its_pool_workers_and_resource_tracker() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], env=env)
    try:
        deadline = time.monotonic() + 120
        children: list[int] = []
        while time.monotonic() < deadline:  # two workers plus the resource tracker
            children = [pid for pid in _children(parent.pid) if _alive(pid)]
            if len(children) >= 3:
                break
            time.sleep(0.2)
        assert len(children) >= 3, children
        time.sleep(2.0)  # let the workers run their initializer
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.2)
    survivors = [pid for pid in children if _alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []
