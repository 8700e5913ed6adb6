"""Pool workers and a local Ray instance die with their parent, even on ``kill -9`` (issue 13; ``backends``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedenv.backends import ray_available

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


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        children = _children(frontier.pop())
        found += children
        frontier += children
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is pending


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_the_parent_ends_its_pool_workers_and_resource_tracker() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], env=_environment())
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


RAY_DRIVER = """
import time
from schedenv.backends import run_tasks

def nap(seconds):
    time.sleep(seconds)

for _ in run_tasks(nap, [300.0, 300.0], backend="ray", workers=2):
    pass
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install -e '.[dist]')")
def test_kill_9_of_a_ray_driver_ends_its_local_instance() -> None:
    """GCS, raylet, the two task workers and the raylet's agents: all gone within seconds (about 15 s in all)."""
    driver = subprocess.Popen(
        [sys.executable, "-c", RAY_DRIVER], env=_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 90
        instance: list[int] = []
        while time.monotonic() < deadline:  # both tasks running on their workers
            instance = [pid for pid in _descendants(driver.pid) if _alive(pid)]
            if sum("ray::nap" in _command(pid) for pid in instance) >= 2:
                break
            time.sleep(0.2)
        commands = " ".join(_command(pid) for pid in instance)
        assert commands.count("ray::nap") == 2 and "raylet" in commands and "gcs_server" in commands
        assert "ray::DashboardAgent" in commands and "ray::RuntimeEnvAgent" in commands
        time.sleep(1.0)  # the reaper records every process twice a second
    finally:
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    deadline = time.monotonic() + 10  # the agents alone would take over 60 s
    while time.monotonic() < deadline and any(_alive(pid) for pid in instance):
        time.sleep(0.2)
    survivors = [pid for pid in instance if _alive(pid)]
    names = [_command(pid)[:60] for pid in survivors]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], names
