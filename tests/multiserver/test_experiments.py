"""The figure sweeps behind benchmarks/reproduce/multiserver_fig*.py, on a tiny workload."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import baselines

# benchmarks/ is not a package: the sweeps are a module beside the figure scripts that use them.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce"))
from _claims import claim, parse_claims
from multiserver_sweeps import SRPT1, markdown_report, plot, sweep


def test_sweep_pairs_policies_with_srpt1_on_the_same_streams(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policies = {name: baselines.make(name) for name in ("serverfilling-srpt", "greedy-srpt")}
    result = sweep(policies, [0.5, 0.9], 3000, [0, 1], caps={"greedy-srpt": 200})
    # Progress off a terminal: one line per (load, seed) run of every policy.
    assert [line.split(",")[0] for line in capsys.readouterr().err.splitlines()] == [
        f"multiserver sweep: {i}/4 run ({25 * i}%)" for i in range(1, 5)
    ]
    for load in result.loads:
        # SRPT-1 is a sample-path lower bound, so every per-seed ratio is at least 1.
        assert (result.response[("serverfilling-srpt", load)] >= result.response[(SRPT1, load)]).all()
        assert result.ratio("serverfilling-srpt", load).mean >= 1.0
        assert result.schrage_miller[load] > 1.0 and result.gap_bound[load] > 0.0
    # GreedySRPT is unstable at 0.9 and the run is cut: reported as inf, shown as "unstable".
    assert np.isinf(result.interval("greedy-srpt", 0.9).mean)
    verdicts = [claim("fig-best", True, "the verdict"), claim("fig-bound", False, "another")]
    report = markdown_report(result, "fig", "claim", "python x.py", "response", verdicts)
    assert "| 0.9 |" in report and "unstable" in report and "3,000 arrivals" in report
    assert "## Checked claims" in report and "- **does not hold** [`fig-bound`] another" in report
    assert {c.claim_id: c.status for c in parse_claims(report).values()} == {
        "fig-best": "holds",
        "fig-bound": "does not hold",
    }
    assert "Runs of greedy-srpt stop as unstable once more than 200 jobs" in report
    ratio_report = markdown_report(result, "fig", "claim", "python x.py", "ratio", [])
    assert "Thm 4.1 bound / SRPT-1" in ratio_report
    plot(result, "fig", "ratio", str(tmp_path / "fig.png"))
    assert (tmp_path / "fig.png").stat().st_size > 0


def test_sweep_rejects_bad_loads() -> None:
    with pytest.raises(ValueError, match="load"):
        sweep({"fcfs": baselines.make("fcfs")}, [-0.5], 100, [0])
