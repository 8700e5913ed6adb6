"""The Dispatch benchmark preset: one source of truth, and the convergence study that chose it.

benchmarks/reproduce/dispatch_convergence.py measures mean-slowdown half-widths and ranking stability
against horizon and size law; ``schedenv.dispatch.preset`` holds the regime it chose, which the shipped
RL config, the RL comparison and the leaderboard must all use.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from schedenv.dispatch.preset import BENCHMARK_KWARGS, BENCHMARK_TEST_SEEDS
from schedenv.leaderboard import suites
from schedenv.reproduce import available_figures

# benchmarks/ is not a package: the scripts are modules of their folders.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import dispatch_convergence
from _claims import STATUSES, parse_claims


def test_the_shipped_config_and_the_rl_comparison_use_the_preset() -> None:
    pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")
    import rl_versus_paper

    from agents.train import CONFIG_DIR, resolve_config

    config = resolve_config(str(CONFIG_DIR / "dispatch_maskable_ppo.yaml"), {})
    assert config.env_id == suites.DISPATCH
    assert config.env_kwargs == BENCHMARK_KWARGS
    preset = rl_versus_paper.PRESETS["dispatch"]
    assert preset.config == "dispatch_maskable_ppo.yaml"
    assert preset.test_episodes == BENCHMARK_TEST_SEEDS


def test_every_leaderboard_suite_has_the_preset_scenario() -> None:
    for name, n_seeds in (("quick", suites.QUICK_PRESET_SEEDS), ("standard", BENCHMARK_TEST_SEEDS)):
        found = [s for s in suites.dispatch(name) if dict(s.env_kwargs) == BENCHMARK_KWARGS]
        assert len(found) == 1, name
        assert found[0].seeds == tuple(range(n_seeds)) and found[0].metric == "mean_slowdown"
    assert any(s.seeds == tuple(range(BENCHMARK_TEST_SEEDS)) for s in suites.dispatch("paper"))


def test_the_study_perturbs_only_size_law_and_horizon_of_the_preset() -> None:
    kwargs = dispatch_convergence.dispatch_kwargs(1e10, 700)
    assert kwargs["n_arrivals"] == 700 and kwargs["size_dist"].upper == 1e10
    assert kwargs["size_dist"].mean == pytest.approx(3000.0)
    assert {k: v for k, v in kwargs.items() if k not in ("n_arrivals", "size_dist")} == {
        k: v for k, v in BENCHMARK_KWARGS.items() if k not in ("n_arrivals", "size_dist")
    }


def test_seeds_needed_scales_the_half_width_as_one_over_root_n() -> None:
    values = np.array([1.0, 3.0] * 50)  # mean 2, sample std 100 / 99 ** 0.5 ... ≈ 1.005
    width = dispatch_convergence.relative_half_width(values)
    assert width == pytest.approx(1.98422 * np.std(values, ddof=1) / 10 / 2, rel=1e-4)
    needed = dispatch_convergence.seeds_needed(values, 0.05)
    assert needed == math.ceil(100 * (width / 0.05) ** 2)
    assert dispatch_convergence.seeds_needed(values, width) == 100


def test_a_flip_is_an_order_change_that_is_not_a_tie_on_both_sets() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(1.0, 2.0, 50)
    first = {"a": base, "b": 2.0 * base, "c": 2.05 * base}
    # a < b on the first set, a > b on the second: a flip; b and c are within 10% on both sets: a tie.
    second = {"a": 3.0 * base, "b": 2.0 * base, "c": 1.98 * base}
    assert dispatch_convergence.flips(first, second) == [("a", "b"), ("a", "c")]
    assert dispatch_convergence.flips(first, first) == []
    assert dispatch_convergence.tied(first["b"], first["c"]) and not dispatch_convergence.tied(base, 2 * base)


def test_the_quick_reproduction_writes_its_claims_and_half_widths_shrink_with_the_horizon(tmp_path: Path) -> None:
    # the study also reports the seeds each RL setting needs (read from the shipped configs)
    pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")
    assert "dispatch-convergence" in available_figures()
    assert dispatch_convergence.main(["--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "dispatch-convergence.md").read_text()
    claims = parse_claims(text)
    expected = {
        "chosen-regime",
        "chosen-regime-ratio",
        "preset-is-chosen",
        "two-hundred-seeds",
        "p1e7-narrower",
        "p1e7-ranking-horizon-free",
        "warmup-no-gain",
        *(f"{name}-10-seeds" for name in dispatch_convergence.OTHER_SETTINGS),
    }
    assert set(claims) == expected and all(c.status in STATUSES for c in claims.values())
    assert (tmp_path / "dispatch-convergence.png").stat().st_size > 10_000
    results = json.loads((tmp_path / "dispatch-convergence.json").read_text())
    plain = {(r["upper"], r["horizon"]): r for r in results["regimes"] if not r["warmup"]}
    # TAGS-waiting's mean slowdown converges: its half-width at 2,000 arrivals is well below that at 500.
    for set_index in (0, 1):
        short, long = (plain[(1e7, h)]["half_widths"][set_index]["tags-waiting"] for h in (500, 2000))
        assert long < 0.6 * short
    # p = 10^10 is the harder law: its widest half-width is the larger at every horizon of the grid.
    assert claims["p1e7-narrower"].status == "holds"
    for horizon in dispatch_convergence.QUICK_HORIZONS:
        widest = {u: max(max(w.values()) for w in plain[(u, horizon)]["half_widths"]) for u in (1e7, 1e10)}
        assert widest[1e7] < widest[1e10]
    # Unscored warm-up does not narrow the intervals (the tail, not the empty start, drives them).
    assert claims["warmup-no-gain"].status == "holds"
    assert results["chosen"]["horizon"] in dispatch_convergence.QUICK_HORIZONS
