"""Leaderboard cache cells that cannot be trusted are recomputed, never fatal: a file that is not
UTF-8 (it used to abort the whole run with UnicodeDecodeError) and a NaN number (it used to be
accepted as a result)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedenv.leaderboard.cache import CellCache, cell_problem

EPISODE = {"seed": 0, "metrics": {"mean_slowdown": 1.25}, "return": -1.5, "n_steps": 3}
PAYLOAD = {"key": "abc", "status": "ok", "seeds": [0], "episodes": [EPISODE]}


def test_a_non_utf8_cell_is_a_cache_miss_with_a_warning(tmp_path: Path) -> None:
    cells = CellCache(tmp_path)
    cells.put(PAYLOAD)
    cells.path("abc").write_bytes(b'{"key": "abc", "status": "ok", "x": "\xff\xfe"}')
    with pytest.warns(UserWarning, match=r"abc\.json is not UTF-8 .*; the cell will be recomputed"):
        assert cells.get("abc") is None
    cells.put(PAYLOAD)  # the recomputed cell replaces it
    assert cells.get("abc") == PAYLOAD


@pytest.mark.parametrize("where", ["metric", "return"])
def test_a_nan_in_a_cell_is_rejected_as_invalid(tmp_path: Path, where: str) -> None:
    episode = {**EPISODE, "metrics": {"mean_slowdown": float("nan")}} if where == "metric" else {**EPISODE}
    if where == "return":
        episode["return"] = float("nan")
    payload = {**PAYLOAD, "episodes": [episode]}
    assert cell_problem(payload) is not None
    cells = CellCache(tmp_path)
    cells.path("abc").write_text(json.dumps(payload))  # json writes the NaN token
    with pytest.warns(UserWarning, match="is not a valid cell"):
        assert cells.get("abc") is None
    assert cell_problem({**PAYLOAD, "episodes": [{**EPISODE, "metrics": {"m": float("inf")}}]}) is None
