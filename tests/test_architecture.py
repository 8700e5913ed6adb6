"""The architecture page (docs/architecture.md): a policy added the documented way, and every module in a layer."""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import baselines
import schedenv
from baselines import malleable
from baselines.malleable import MalleablePolicy
from schedenv.cli import main
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast, supports
from schedenv.malleable.sim import MalleableParams, MalleableState

ENV_ID = "schedenv/Malleable-v0"
# Two jobs at t = 0 of sizes 1 and 4 on N = 4 servers with s(k) = k^0.5: all servers run a job at s(4) = 2.
TWO_JOBS: dict[str, Any] = {"jobs": [1.0, 4.0], "n_servers": 4.0, "speedup": 0.5, "objective": "flow_time"}


class LargestRemainingFirst(MalleablePolicy):
    """LRPT, a toy: every server to the job with the largest remaining size (the worst order for flow time)."""

    name = "lrpt"

    def allocate(self, state: MalleableState, params: MalleableParams) -> np.ndarray:
        theta = np.zeros(state.n_jobs)
        theta[int(np.argmax(state.remaining))] = 1.0
        return theta


@pytest.fixture
def lrpt_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/architecture.md "How to add a policy", step 2: one entry in the family module's ``POLICIES``."""
    monkeypatch.setitem(malleable.POLICIES, "lrpt", LargestRemainingFirst)


@pytest.mark.usefixtures("lrpt_registered")
def test_a_registered_policy_is_found_by_the_registry_and_evaluated_by_name() -> None:
    assert "lrpt" in baselines.available(ENV_ID)
    assert baselines.env_id_of("lrpt") == ENV_ID
    assert isinstance(baselines.make("lrpt"), LargestRemainingFirst)
    # LRPT: the size-4 job first, done at 4 / 2 = 2; then the size-1 job, done at 2 + 1 / 2 = 2.5.
    lrpt = evaluate(ENV_ID, "lrpt", seeds=[0], **TWO_JOBS)
    assert lrpt.summary["mean_response_time"].mean == pytest.approx(2.25, rel=1e-12)
    assert lrpt.episodes[0].episode_return == pytest.approx(-4.5, rel=1e-12)
    # SRPT runs them the other way round: done at 0.5 and 0.5 + 2 = 2.5.
    srpt = evaluate(ENV_ID, "srpt", seeds=[0], **TWO_JOBS)
    assert srpt.summary["mean_response_time"].mean == pytest.approx(1.5, rel=1e-12)


@pytest.mark.usefixtures("lrpt_registered")
def test_a_policy_without_a_compiled_rule_goes_through_evaluate_on_the_fast_path_api() -> None:
    assert not supports(ENV_ID, "lrpt", **TWO_JOBS)
    assert supports(ENV_ID, "srpt", **TWO_JOBS)
    fast = evaluate_fast(ENV_ID, "lrpt", [0, 1], **TWO_JOBS)
    assert fast.values("mean_response_time").tolist() == pytest.approx([2.25, 2.25], rel=1e-12)


@pytest.mark.usefixtures("lrpt_registered")
def test_the_command_line_compares_a_registered_policy_with_the_paper_policy(capsys: pytest.CaptureFixture) -> None:
    arguments = ["--env", ENV_ID, "--env-kwargs", json.dumps(TWO_JOBS), "--contenders", "lrpt", "--episodes", "1"]
    assert main(["evaluate", *arguments, "--json"]) == 0
    rows = {row["contender"]: row for row in json.loads(capsys.readouterr().out.splitlines()[-1])["rows"]}
    assert rows["lrpt"]["mean"] == pytest.approx(2.25, rel=1e-12)
    assert rows["lrpt"]["reference"] == "hesrpt" and rows["lrpt"]["ratio"] > 1.0  # heSRPT is optimal (Theorem 5)


def _import_linter_config() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    config: dict[str, Any] = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    return config


def test_every_module_of_the_packages_sits_in_a_layer_and_no_import_is_exempt() -> None:
    config = _import_linter_config()
    contracts = config["contracts"]
    assert all("ignore_imports" not in contract for contract in contracts)
    (layers,) = [contract["layers"] for contract in contracts if contract["id"] == "layers"]
    placed = [name.strip() for layer in layers for name in layer.replace("|", ":").split(":")]
    assert len(placed) == len(set(placed))
    top_level = {f"schedenv.{module.name}" for module in pkgutil.iter_modules(schedenv.__path__)}
    assert top_level | {"baselines", "agents"} == set(placed)
    assert set(config["root_packages"]) == {"schedenv", "baselines", "agents"}
