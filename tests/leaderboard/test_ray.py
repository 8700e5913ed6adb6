"""The Ray backend gives the local backend's numbers for the same seeds (on a local Ray instance; about 15 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedenv.backends import ray_available, run_tasks
from schedenv.leaderboard import run_leaderboard
from schedenv.leaderboard.scenario import Scenario


@pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install -e '.[dist]')")
def test_ray_and_local_backends_give_identical_tables(tmp_path: Path, tiny: list[Scenario]) -> None:
    common = {"scenario_list": tiny, "contenders": "equi,srpt,knee", "progress": False}
    local = run_leaderboard("test", out=tmp_path / "local", workers=1, **common)  # type: ignore[arg-type]
    distributed = run_leaderboard("test", out=tmp_path / "ray", workers=2, backend="ray", **common)  # type: ignore[arg-type]
    assert distributed.record["backend"] == "ray" and distributed.record["packages"]["ray"]
    assert distributed.record["cells"]["computed"] == 8 and not distributed.failed
    assert distributed.rows == local.rows
    assert (tmp_path / "local" / "leaderboard.csv").read_text() == (tmp_path / "ray" / "leaderboard.csv").read_text()


def test_backend_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="backend"):
        run_tasks(abs, [1], backend="dask")
    with pytest.raises(ValueError, match="address"):
        run_tasks(abs, [1], backend="local", address="auto")
    with pytest.raises(ValueError, match="workers"):
        run_tasks(abs, [1], workers=0)
    assert sorted(run_tasks(abs, [-1, -2, 3], workers=1)) == [(0, 1), (1, 2), (2, 3)]
