"""Ends the processes of a local Ray instance once the driver that started it is gone, even after ``kill -9``.

Ray ties the GCS server, the raylet and the workers of an instance that ``ray.init()`` starts to its
driver: they receive SIGKILL when the driver dies. The raylet's two agents (the dashboard agent and
the runtime-env agent) are not tied to it: they notice the raylet's death within two seconds, then
spend 60 s trying to report it to the dead GCS before they exit. ``schedenv.backends`` therefore
starts this file as a script next to every local instance (:func:`start`). The script records the
instance's processes while the driver lives and, once its standard input (a pipe only the driver
holds) reaches end of file, because the driver finished or died, it kills every recorded process
still running, then exits. It uses the standard library only and runs isolated (``python -I``), so
it starts in milliseconds and imports nothing of the package. Linux only: it reads ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

POLL_SECONDS = 0.5
"""How often the reaper records the instance's processes while the driver lives."""


def _stat(pid: int) -> tuple[int, str] | None:
    """``(parent pid, start time)`` of a live process, None if it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else (int(fields[1]), fields[19])


def processes() -> dict[int, tuple[int, str]]:
    """Every live process: pid -> (parent pid, start time); empty off Linux."""
    found: dict[int, tuple[int, str]] = {}
    if not sys.platform.startswith("linux"):
        return found
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            found[int(entry.name)] = stat
    return found


def children(pid: int) -> set[int]:
    """The live child processes of ``pid``."""
    return {child for child, (parent, _) in processes().items() if parent == pid}


def _descendants(roots: list[int]) -> dict[int, str]:
    """The live processes among ``roots`` and below them: pid -> start time."""
    table = processes()
    found = {pid: table[pid][1] for pid in roots if pid in table}
    frontier = list(found)
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, start) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = start
                frontier.append(pid)
    return found


def watch(roots: list[int]) -> None:
    """Record the processes under ``roots`` until stdin closes, then SIGKILL those still running."""
    seen: dict[int, str] = {}
    while True:
        seen.update(_descendants(roots))
        ready, _, _ = select.select([sys.stdin], [], [], POLL_SECONDS)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break
    seen.update(_descendants(roots))
    for pid, start in seen.items():
        stat = _stat(pid)
        if stat is not None and stat[1] == start:  # the same process, not a new one that reuses its pid
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def start(roots: set[int]) -> subprocess.Popen[bytes] | None:
    """Start the reaper of the processes under ``roots`` (None off Linux); close its stdin to release it."""
    if not roots:  # off Linux ``children`` finds none
        return None
    command = [sys.executable, "-I", str(Path(__file__).resolve()), *map(str, sorted(roots))]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def release(reaper: subprocess.Popen[bytes] | None) -> None:
    """Tell the reaper the driver is done: it kills what is left of the instance and exits."""
    if reaper is None:
        return
    assert reaper.stdin is not None
    reaper.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        reaper.wait(timeout=10)


if __name__ == "__main__":
    watch([int(argument) for argument in sys.argv[1:]])
