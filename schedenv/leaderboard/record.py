"""The run record: what produced a leaderboard (command, commit, package versions, machine).

A table without the command and the commit that produced it cannot be reproduced: every result
names the exact command and the commit (docs/results/index.md). The commit is read with
``git rev-parse HEAD``; ``dirty`` says whether the working tree had uncommitted changes.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES: tuple[str, ...] = ("schedenv", "gymnasium", "numpy", "scipy", "matplotlib", "tqdm")
"""Packages whose versions every record lists (plus ray / torch / sb3 when they were used)."""

SOURCE_ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str | None:
    try:
        result = subprocess.run(["git", *args], cwd=SOURCE_ROOT, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip()


def git_state() -> dict[str, Any]:
    """The commit of the source checkout and whether it has uncommitted changes (None outside git)."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str | None]:
    """Installed versions of ``PACKAGES`` and ``extra`` (None when not installed), and Python's."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES + extra:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _cpu_model() -> str | None:
    """The CPU's model name (``platform.processor()`` is empty on Linux, so read /proc/cpuinfo)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or None


def machine() -> dict[str, Any]:
    """Host, OS, CPU and memory of this machine."""
    memory = None
    if hasattr(os, "sysconf") and "SC_PAGE_SIZE" in os.sysconf_names and "SC_PHYS_PAGES" in os.sysconf_names:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 2)
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_gib": memory,
        "python_executable": sys.executable,
    }


def run_record(command: str, extra_packages: tuple[str, ...] = ()) -> dict[str, Any]:
    """Everything needed to say what produced a result."""
    return {"command": command, "git": git_state(), "packages": package_versions(extra_packages), "machine": machine()}
