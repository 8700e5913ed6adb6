"""Cells of baselines with a compiled path give the numbers of the plain evaluation loop."""

from __future__ import annotations

import json
from dataclasses import replace

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


def test_hell_cells_run_as_worded_with_idle_servers() -> None:
    """The malleable scenarios give HELL ``allocation="fractions"``; the other contenders' cells are unchanged."""
    scenario = replace(malleable_scenarios()[0], env_kwargs={**malleable_scenarios()[0].env_kwargs, "speedup": 0.25})
    assert scenario.contender_kwargs == {"hell": {"allocation": "fractions"}}
    kwargs = scenario.build_kwargs("hell")
    assert kwargs["allocation"] == "fractions" and "allocation" not in scenario.build_kwargs("equi")
    assert fastpath.supports(scenario.env_id, "hell", **kwargs)
    payload = run_cell(CellTask(scenario, ContenderSpec("hell")))
    assert payload["status"] == "ok", payload.get("error")
    assert json.loads(payload["env_kwargs"])["allocation"] == "fractions"
    cached = [episode["metrics"][scenario.metric] for episode in payload["episodes"]]
    worded = evaluate(scenario.env_id, "hell", scenario.seeds, keep_records=False, **kwargs)
    np.testing.assert_allclose(cached, worded.values(scenario.metric), rtol=1e-9)
    # p = 0.25 < 1/2 and M = 20 < N: one server per job, so every slowdown is s(N) = N^p.
    np.testing.assert_allclose(cached, scenario.env_kwargs["n_servers"] ** 0.25, rtol=1e-6)
    plain = replace(scenario, contender_kwargs={})
    assert CellTask(plain, ContenderSpec("equi")).key == CellTask(scenario, ContenderSpec("equi")).key
    assert CellTask(plain, ContenderSpec("hell")).key != CellTask(scenario, ContenderSpec("hell")).key
