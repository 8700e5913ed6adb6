"""Running the scripts of examples/interop/, which the docs/interop/ pages include as their snippets."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "interop"


def run_example(name: str) -> dict[str, Any]:
    """Run ``examples/interop/<name>`` in this process; its module globals."""
    return runpy.run_path(str(EXAMPLES / name), run_name="__main__")


def run_command(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in ``cwd`` with this checkout first on the path; fail with its output if it fails."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def python_argv(command: str) -> list[str]:
    """A line of a shell snippet as argv run by this interpreter (``python`` and ``schedenv`` resolved)."""
    words = command.split()
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    if words[0] == "schedenv":
        return [sys.executable, "-c", "import sys; from schedenv.cli import main; sys.exit(main())", *words[1:]]
    raise ValueError(f"{command!r}: a snippet line must start with python or schedenv")
