"""One family layout (issue 15): the four family folders have the same files with the same roles.

A reader who knows one family knows where everything is in the other three: the files below exist in
every folder, every numba kernel of a family is in its ``kernel.py``, and each package docstring's
table names exactly the files of its folder. The import direction between these files is the
``family-layout`` contract of ``lint-imports`` (pyproject.toml).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from schedenv import family

FAMILIES = tuple(f.name for f in family.BUILTIN)
COMMON = ("sim", "workload", "kernel", "metrics", "fast", "env", "vector", "render")
"""Files of every family; ``core.py`` (``ReferenceCore``) too, but multiserver's reference is in its tests."""
ROOT = Path(__file__).resolve().parents[1] / "schedenv"


def _modules(family: str) -> set[str]:
    return {path.stem for path in (ROOT / family).glob("*.py")} - {"__init__"}


def _compiled_functions(path: Path) -> list[str]:
    """Names of the functions in ``path`` decorated with numba's ``njit`` or ``jit``."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name in ("njit", "jit"):
                    names.append(node.name)
    return names


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_has_the_common_files(family: str) -> None:
    expected = set(COMMON) | ({"core"} if family != "multiserver" else set())
    assert expected <= _modules(family), sorted(expected - _modules(family))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_numba_kernel_of_a_family_is_in_its_kernel_module(family: str) -> None:
    outside = {
        path.name: names
        for path in sorted((ROOT / family).glob("*.py"))
        if path.name != "kernel.py" and (names := _compiled_functions(path))
    }
    assert outside == {}
    assert _compiled_functions(ROOT / family / "kernel.py")  # the parser sees the kernels where they are


@pytest.mark.parametrize("family", FAMILIES)
def test_the_package_docstring_table_names_exactly_the_folder_files(family: str) -> None:
    doc = importlib.import_module(f"schedenv.{family}").__doc__ or ""
    listed = set(re.findall(r"^``(\w+)\.py``", doc, flags=re.MULTILINE))
    assert listed - {"core"} == _modules(family) - {"core"}
    assert "core" in listed  # multiserver's row says where its reference translation lives instead
