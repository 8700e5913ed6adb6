"""Discovery of the paper-figure scripts in ``benchmarks/reproduce/`` (one script per figure).

Each script defines ``FIGURE``, ``DESCRIPTION`` and ``main(argv) -> int``; this module finds them
from a source checkout (they are benchmarks, not part of the installed package: an installed wheel
says how to get a checkout).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

REPRODUCE_DIR = Path(__file__).resolve().parent.parent / "benchmarks" / "reproduce"


def _scripts() -> dict[str, tuple[Path, str]]:
    found: dict[str, tuple[Path, str]] = {}
    for path in sorted(REPRODUCE_DIR.glob("*.py")) if REPRODUCE_DIR.is_dir() else []:
        values = {}
        for node in ast.parse(path.read_text()).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("FIGURE", "DESCRIPTION")
                and isinstance(node.value, ast.Constant)
            ):
                values[node.targets[0].id] = str(node.value.value)
        if "FIGURE" in values:
            found[values["FIGURE"]] = (path, values.get("DESCRIPTION", ""))
    return found


def available_figures() -> dict[str, str]:
    """Figure name -> the paper claim its script checks."""
    return {name: description for name, (_, description) in _scripts().items()}


NOT_IN_CHECKOUT = (
    "reproductions run from a source checkout: benchmarks/reproduce/ is not part of the installed package. "
    "Get the project's source (its repository or source archive), run `make install` there (or "
    "`pip install -e '.[rl,dev]'`), then run `schedenv reproduce NAME` from that folder"
)
"""What ``schedenv reproduce NAME`` says when the package is installed without its benchmarks."""


def figure_script(figure: str) -> Path:
    """The script of ``figure``; unknown names suggest near matches, an install without a checkout says so."""
    from schedenv.validation import suggest

    if not REPRODUCE_DIR.is_dir():
        raise ValueError(NOT_IN_CHECKOUT)
    scripts = _scripts()
    if figure not in scripts:
        raise ValueError(f"unknown figure {figure!r}{suggest(figure, scripts)}; known: {sorted(scripts)}")
    return scripts[figure][0]


def run_figure(figure: str, argv: list[str]) -> int:
    """Run the script of ``figure`` with ``argv`` (see ``figure_script``).

    While it runs, ``sys.argv`` is the script's own command line (``benchmarks/reproduce/<script>.py`` and
    ``argv``), so that the command its result file records is one that reruns it, not the ``schedenv``
    entry point with the script's flags."""
    path = figure_script(figure)
    spec = importlib.util.spec_from_file_location(f"reproduce_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import does: a dataclass in the script looks its module up there
    spec.loader.exec_module(module)
    saved = sys.argv
    sys.argv = [str(path.relative_to(REPRODUCE_DIR.parent.parent)), *argv]
    try:
        return int(module.main(argv))
    finally:
        sys.argv = saved
