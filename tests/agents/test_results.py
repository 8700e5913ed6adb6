"""``agents.results``: the rl_<setting>.json schema, its validation, and the Markdown and PNG generated from it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agents.results import from_dict, headline_row, load_results, plot_learning_curves, render_markdown, within

SEALED = [1_000_000_000, 1_000_000_001, 1_000_000_002, 1_000_000_003]


def hand_made() -> dict[str, Any]:
    """Two runs on four sealed seeds. The paper policy costs 1, 2, 3, 4 (sum 10); run 0 costs 1.1x it on every
    seed (sum 11), run 1 costs 1.3x (sum 13): ratio of means (11 + 13) / (2 x 10) = 1.2. EQUI costs 2x the paper
    policy, SRPT 0.9x (the best baseline): to SRPT the ratio is 24 / (2 x 9) = 1.3333."""
    paper = [1.0, 2.0, 3.0, 4.0]
    return {
        "setting": "toy",
        "env_id": "schedenv/Malleable-v0",
        "env_kwargs": {"n_jobs": 4},
        "config": "agents/configs/toy.yaml",
        "config_sha256": "ab" * 32,
        "algo": "ppo",
        "timesteps": 1000,
        "n_envs": 2,
        "metric": "mean_slowdown",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "dirty": False,
        "split": "sealed",
        "reference": "hesrpt",
        "train_seeds": [0, 1],
        "test_seeds": SEALED,
        "runs": [
            {
                "train_seed": 0,
                "costs": [1.1 * v for v in paper],
                "train_cpu_seconds": 60.0,
                "steps": [500, 1000],
                "validation_ratio": [1.5, 1.1],
            },
            {
                "train_seed": 1,
                "costs": [1.3 * v for v in paper],
                "train_cpu_seconds": 120.0,
                "steps": [500, 1000],
                "validation_ratio": [1.7, 1.3],
            },
        ],
        "baselines": {"hesrpt": paper, "equi": [2 * v for v in paper], "srpt": [0.9 * v for v in paper]},
        "skipped_baselines": {},
        "headline": {"ratio_of_means": 1.2, "ci95": [1.1, 1.3]},
        "generalisation": [
            {
                "env_kwargs": {"n_jobs": 4, "speedup": 0.3},
                "overrides": {"speedup": 0.3},
                "costs": [[2.0 * v for v in paper], [2.0 * v for v in paper]],
                "baselines": {"hesrpt": paper, "srpt": paper},
            }
        ],
        "validation": {"seeds": [1_000_000, 1_000_019], "baselines": {"hesrpt": 1.0, "srpt": 0.9}},
        "goal": {"against": "paper", "threshold": 1.0},
        "command": "python benchmarks/rl_versus_paper.py toy --publish",
        "date": "2026-11-25T18:00:00+00:00",
        "machine": "x86_64, 2 cores, Python 3.11",
        "schema": 1,
    }


def test_the_page_is_generated_from_the_json_with_the_hand_worked_numbers(tmp_path: Path) -> None:
    path = tmp_path / "rl_toy.json"
    path.write_text(json.dumps(hand_made()))
    results = load_results(path)
    assert json.loads(results.to_json()) == hand_made()  # the file round-trips field for field
    page = render_markdown(results, picture="rl_toy.png")
    # every resample of runs 1.1x and 1.3x lands in [1.1, 1.3]; both ends occur with probability 1/4 each
    assert "ratio of means to hesrpt, 2 runs x 4 test seeds: **1.2000 [1.1000, 1.3000]**" in page
    assert "ratio of means to the best baseline (srpt): 1.3333 [1.2222, 1.4444]" in page
    assert "**does not hold**: 1.2000 > 1.0 (missed by 20.00%)" in page
    # mean, ratio, CPU-minutes, then the per-seed view: median and worst seed ratio, seeds below / equal / above
    assert "| 0 | 2.75 | 1.1000 | 1.0 | 1.1000 | 1.1000 | 0 / 0 / 4 |" in page
    assert "| 1 | 3.25 | 1.3000 | 2.0 | 1.3000 | 1.3000 | 0 / 0 / 4 |" in page
    per_seed = "per seed against hesrpt: below on 0, equal on 0 and above on 8 of the 8 (run, test seed) pairs"
    assert f"{per_seed}; the median pair's ratio 1.2000" in page
    assert page.index("| srpt |") < page.index("| hesrpt |") < page.index("| equi |")  # baselines by mean
    assert '| `{"speedup": 0.3}` | 2.0000 [2.0000, 2.0000] | hesrpt: 2.0000 [2.0000, 2.0000] |' in page
    assert "| 500 | 1.5000 | 1.7000 |" in page and "![Validation ratio against training steps](rl_toy.png)" in page
    assert "4 sealed test seeds 1000000000..1000000003" in page and "3.0 CPU-minutes for 2 runs" in page
    assert "at commit `0123456789abcdef0123456789abcdef01234567` on" in page
    dirty = from_dict({**hand_made(), "split": "test", "test_seeds": [0, 1, 2, 3], "dirty": True})
    assert "at commit `0123456789abcdef0123456789abcdef01234567` with uncommitted changes" in render_markdown(dirty)


def test_the_page_gives_the_per_seed_view_beside_the_ratio_of_means(tmp_path: Path) -> None:
    """Run 0 at 0.5x, 1x (the same cost: a tie), 1.2x and 2x the paper policy on the four seeds: its ratio of means
    (0.5 + 2 + 3.6 + 8) / 10 = 1.41 hides that it wins one seed and ties one; median seed ratio (1 + 1.2) / 2."""
    data = hand_made()
    data["runs"][0]["costs"] = [0.5, 2.0, 3.6, 8.0]
    data["headline"] = {"ratio_of_means": 1.355, "ci95": [1.3, 1.41]}  # (14.1 + 13) / 20; runs 1.41 and 1.3
    path = tmp_path / "rl_toy.json"
    path.write_text(json.dumps(data))
    results = load_results(path)
    page = render_markdown(results)
    assert "| 0 | 3.525 | 1.4100 | 1.0 | 1.1000 | 2.0000 | 1 / 1 / 2 |" in page
    # pairs in order: 0.5, 1, 1.2, then four of 1.3 (run 1), then 2: the median is 1.3
    per_seed = "per seed against hesrpt: below on 1, equal on 1 and above on 6 of the 8 (run, test seed) pairs"
    assert f"{per_seed}; the median pair's ratio 1.3000" in page
    assert headline_row(results)[4] == "1 / 1 / 6"  # the README's column: pairs below / equal / above the reference


def test_the_learning_curve_picture_is_a_png(tmp_path: Path) -> None:
    picture = tmp_path / "rl_toy.png"
    plot_learning_curves(from_dict(hand_made()), picture)
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["runs"][1]["costs"].pop(), "costs of a run has 3 values for 4 test seeds"),
        (lambda d: d["baselines"]["equi"].pop(), "costs of equi has 3 values for 4 test seeds"),
        (
            lambda d: d["generalisation"][0]["costs"].pop(),
            r'costs has 1 rows for 2 runs \(setting \{"speedup": 0.3\}\)',
        ),
        (lambda d: d.update(commit="0123456"), "commit '0123456' is not 40 hex digits"),
        (lambda d: d.update(dirty=True), "results on sealed seeds come from a clean commit only"),
        (lambda d: d.update(test_seeds=[0, 1, 2, 3]), "must be non-empty seeds of the sealed range"),
        (lambda d: d.update(train_seeds=[0, 2]), r"one per training seed, in train_seeds order \[0, 2\]"),
        (lambda d: d["headline"].update(ratio_of_means=1.1), "ratio_of_means 1.1 != 1.2"),
        (lambda d: d["baselines"].pop("hesrpt"), "must include the reference 'hesrpt'"),
        (lambda d: d["runs"][0]["steps"].pop(), "steps and validation_ratio differ in length"),
        (lambda d: d.pop("runs"), "not the layout of schema 1"),
    ],
)
def test_inconsistent_results_are_refused_naming_the_field(change: Any, message: str) -> None:
    data = copy.deepcopy(hand_made())
    change(data)
    with pytest.raises(ValueError, match=message):
        from_dict(data)


def test_an_agent_that_costs_what_the_paper_policy_costs_on_every_seed_meets_a_goal_of_one() -> None:
    """3 runs equal to the reference seed by seed: the two means are summed in different orders (24 and 8
    terms) and differ in the last bit here (ratio 1 + 2.2e-16); the goal of 1.0 holds all the same."""
    paper = [1.0 + 1.0 / (k + 3) for k in range(8)]
    data = {**hand_made(), "test_seeds": [SEALED[0] + k for k in range(8)], "baselines": {"hesrpt": paper}}
    data["runs"] = [{**data["runs"][0], "train_seed": seed, "costs": list(paper)} for seed in (0, 1, 2)]
    data["train_seeds"] = [0, 1, 2]
    data["generalisation"] = []
    data["headline"] = {"ratio_of_means": 1.0 + 2.220446049250313e-16, "ci95": [1.0, 1.0 + 2.220446049250313e-16]}
    results = from_dict(data)
    assert results.training_setting.headline("hesrpt").ratio > 1.0
    assert "**holds**: 1.0000 <= 1.0" in render_markdown(results)


@pytest.mark.parametrize(
    ("value", "low", "high", "inside"),
    [
        (1.0 + 2.220446049250313e-16, 1.0, 1.0, True),  # the same policy, means summed in another order
        (1.0 - 2.220446049250313e-16, 1.0, 1.0, True),
        (1.0 + 1e-6, 1.0, 1.0, False),  # a real difference stays outside
        (0.98, 0.99, 1.01, False),
        (1.005, 0.99, 1.01, True),
    ],
)
def test_within_allows_the_last_bits_and_nothing_more(value: float, low: float, high: float, inside: bool) -> None:
    assert within(value, low, high) is inside
