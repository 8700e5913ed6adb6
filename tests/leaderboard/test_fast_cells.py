"""Cells of baselines with a compiled path give the numbers of the plain evaluation loop."""

from __future__ import annotations

import numpy as np
import pytest

from schedenv import fastpath
from schedenv.evaluation import evaluate
from schedenv.leaderboard.cells import CellTask, ContenderSpec, run_cell
from schedenv.leaderboard.suites import malleable


def malleable_scenarios() -> list:
    return malleable("quick")


@pytest.mark.parametrize("policy", ["hesrpt", "equi", "srpt"])
def test_fast_cells_equal_evaluate(policy: str) -> None:
    for scenario in malleable_scenarios():
        kwargs = scenario.build_kwargs()
        assert fastpath.supports(scenario.env_id, policy, **kwargs)
        payload = run_cell(CellTask(scenario, ContenderSpec(policy)))
        assert payload["status"] == "ok", payload.get("error")
        reference = evaluate(scenario.env_id, policy, scenario.seeds, keep_records=False, **kwargs)
        cached = [episode["metrics"][scenario.metric] for episode in payload["episodes"]]
        np.testing.assert_allclose(cached, reference.values(scenario.metric), rtol=1e-9)
        np.testing.assert_allclose([e["return"] for e in payload["episodes"]], reference.values("return"), rtol=1e-9)
