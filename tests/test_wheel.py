"""The wheel is the product: built from this tree and installed alone in a fresh venv, it lists the envs and runs.

The fresh venv must not see this source tree, the project venv's editable install of it, or ``../shared``:

- the wheel is built from a copy of ``pyproject.toml``, ``README.md`` and the three packages, so the
  build writes nothing into the tree;
- the subprocesses run in an empty temporary directory, without ``PYTHONPATH`` or the user site;
- the fresh venv installs the wheel with its own pip, offline (``--no-index --no-deps``). It gets the
  third-party dependencies from the running environment's site-packages, which a ``.pth`` file appends
  to ``sys.path``. Python runs only the ``.pth`` files of its own site directories, so the editable
  finder that ``pip install -e`` left in those site-packages never loads.

The subprocess then reports where ``schedenv`` and ``baselines`` were imported from, and the test
checks that both come from the fresh venv.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from schedenv.evaluation import evaluate

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("schedenv", "baselines", "agents")
ENV_IDS = ("schedenv/Malleable-v0", "schedenv/Dispatch-v0", "schedenv/Moldable-v0", "schedenv/MultiserverJob-v0")
TRACE_RUN = {"seeds": [0], "trace": "alibaba", "n_arrivals": 300}
EVALUATION = f"""
import json, math, sys
from schedenv.evaluation import evaluate
import baselines, schedenv
result = evaluate("schedenv/MultiserverJob-v0", "serverfilling-srpt", **{TRACE_RUN!r})
print(json.dumps({{
    "mean_response_time": result.summary["mean_response_time"].mean,
    "n_completed": result.episodes[0].metrics["n_completed"],
    "files": [schedenv.__file__, baselines.__file__],
    "editable_finders": [name for name in sys.modules if name.startswith("__editable__")],
}}))
"""


def _offline_build_missing() -> str:
    """Why this environment cannot build the wheel offline without build isolation ("" if it can): setuptools
    builds it alone from 70.1 on, older ones need the ``wheel`` package (the dev extra pins setuptools>=70.1)."""
    version = importlib.metadata.version("setuptools")
    major, minor = (int(part) for part in version.split(".")[:2])
    if (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None:
        return ""
    return f"setuptools {version} cannot build a wheel without the wheel package; the dev extra installs 70.1+"


def _call(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _run(command: list[str], cwd: Path) -> str:
    done = _call(command, cwd)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))
    wheels = tmp_path / "wheels"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    _run([*pip_wheel, "-w", str(wheels), str(source)], cwd=tmp_path)
    (wheel,) = wheels.glob("schedenv-*.whl")
    return wheel


@pytest.mark.slow
@pytest.mark.skipif(bool(_offline_build_missing()), reason=_offline_build_missing())
def test_the_installed_wheel_alone_lists_the_envs_and_replays_the_alibaba_trace(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"schedenv/data/alibaba-gpu-2023-default.csv.gz", "schedenv/data/README.md", "schedenv/py.typed"} <= names
    assert "agents/configs/multiserverjob_maskable_ppo.yaml" in names
    assert not any(name.startswith(("tests/", "benchmarks/")) for name in names)

    venv, elsewhere = tmp_path / "venv", tmp_path / "elsewhere"
    elsewhere.mkdir()
    _run([sys.executable, "-m", "venv", str(venv)], cwd=elsewhere)
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], cwd=elsewhere)
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], elsewhere)
    fresh_site = Path(purelib.strip()).resolve()
    dependencies = [path for path in site.getsitepackages() if Path(path).resolve() != fresh_site]
    (fresh_site / "_schedenv_test_dependencies.pth").write_text("\n".join(dependencies) + "\n")

    listing = _run([str(venv / "bin" / "schedenv"), "list"], elsewhere)
    for env_id in ENV_IDS:
        assert f"{env_id}\n  baselines (* = paper policy): " in listing

    assert "reproductions: in a source checkout only" in listing
    # the reproductions are benchmarks, not in the wheel: asking for one says where they run
    asked = _call([str(venv / "bin" / "schedenv"), "reproduce", "tags-fig4", "--quick"], elsewhere)
    assert asked.returncode == 2 and asked.stdout == ""
    assert "reproductions run from a source checkout" in asked.stderr and "make install" in asked.stderr
    assert len(asked.stderr.strip().splitlines()) == 1 and not list(elsewhere.iterdir())

    report = json.loads(_run([python, "-c", EVALUATION], elsewhere).splitlines()[-1])
    for file in report["files"]:
        assert Path(file).resolve().is_relative_to(fresh_site), f"{file} is not the installed wheel's"
    assert report["editable_finders"] == []
    # The trace shipped in the wheel gives the numbers of the trace shipped in this tree.
    here = evaluate("schedenv/MultiserverJob-v0", "serverfilling-srpt", **TRACE_RUN)
    assert report["n_completed"] == 300 and math.isfinite(report["mean_response_time"])
    assert report["mean_response_time"] == here.summary["mean_response_time"].mean > 0
