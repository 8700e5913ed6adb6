"""``benchmarks/speed.py``'s masked-sampling draw (``draw_allowed``): allowed actions only, uniformly."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import speed


def test_the_draw_takes_the_floor_of_u_times_count_th_allowed_entry() -> None:
    masks = np.array([[0, 1, 0, 1, 1], [1, 0, 0, 0, 0], [0, 0, 0, 0, 1]], dtype=np.int8)
    out = np.full(3, -1, dtype=np.int64)
    # row 0 allows 1, 3, 4: u = 0.5 -> floor(1.5) = entry 1 of them (action 3); rows 1 and 2 allow one action
    speed.draw_allowed(masks, np.array([0.5, 0.99, 0.0]), out)
    assert out.tolist() == [3, 0, 4]
    speed.draw_allowed(masks, np.array([0.0, 0.0, 0.999]), out)
    assert out.tolist() == [1, 0, 4]
    speed.draw_allowed(masks, np.array([0.999, 0.5, 0.5]), out)
    assert out.tolist() == [4, 0, 4]


def test_the_draw_is_uniform_over_the_allowed_actions_of_boolean_masks() -> None:
    rng = np.random.default_rng(7)
    mask = np.zeros((1, 40), dtype=np.bool_)
    allowed = [2, 5, 11, 12, 30, 39]
    mask[0, allowed] = True
    out = np.zeros(1, dtype=np.int64)
    counts = np.zeros(40, dtype=np.int64)
    draws = 60_000
    for u in rng.random(draws):
        speed.draw_allowed(mask, np.array([u]), out)
        counts[out[0]] += 1
    assert counts[allowed].sum() == draws  # nothing outside the mask
    expected = draws / len(allowed)
    chi2 = float((((counts[allowed] - expected) ** 2) / expected).sum())
    assert chi2 < 20.5  # 5 degrees of freedom: P(chi2 > 20.5) < 0.001


def test_no_compiled_function_of_a_benchmark_script_is_cached() -> None:
    """numba's on-disk cache pickles the module that compiled a function: after the tests import a script as
    ``benchmarks.speed``, running ``python benchmarks/speed.py`` could not load it (the script is ``__main__``
    and ``benchmarks`` is not on its path), so the scripts compile in each run instead."""
    cached = []
    for script in sorted((Path(__file__).resolve().parents[2] / "benchmarks").rglob("*.py")):
        for node in ast.walk(ast.parse(script.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("njit", "jit", "vectorize"):
                cached += [f"{script.name}:{node.lineno}" for keyword in node.keywords if keyword.arg == "cache"]
    assert cached == []
