"""The machine-readable RL result ``rl_<setting>.json``, its Markdown page and its learning-curve picture.

``benchmarks/rl_versus_paper.py`` writes an ``RLResults`` as JSON; the ``.md`` beside it is
``render_markdown`` of that JSON and the ``.png`` is ``plot_learning_curves`` of it, so the page and
the picture never say anything the data does not hold. ``load_results`` validates a file on load
(lengths, seed ranges, the commit, the headline against the costs). The fields and the statistic
are described in docs/rl/index.md ("Published results") and the seeds in docs/rl/seed-plan.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.protocol import split_range
from schedenv.reporting import markdown_table
from schedenv.stats import RatioOfMeans, iqm_interval, ratio_of_means, seed_view

SCHEMA = 1
"""Version of the JSON layout below."""
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Run:
    """One training run: its seed, its selected model's cost on each test seed, its training budget."""

    train_seed: int
    costs: list[float]
    """One value per test seed, in ``test_seeds`` order."""
    train_cpu_seconds: float
    steps: list[int] = field(default_factory=list)
    """The learning curve: training steps at each validation evaluation."""
    validation_ratio: list[float] = field(default_factory=list)
    """The learning curve: the agent's mean over the paper policy's on the validation seeds, per evaluation."""


@dataclass(frozen=True)
class Setting:
    """The runs scored at one env setting: their costs and the baselines' on the same test seeds."""

    env_kwargs: dict[str, Any]
    """The env arguments played (the training ones with ``overrides`` merged over them)."""
    overrides: dict[str, Any]
    """What differs from the training setting (empty for the training setting itself)."""
    costs: list[list[float]]
    """One row per run (in ``runs`` order), one value per test seed."""
    baselines: dict[str, list[float]]
    """Every baseline that could act, the paper policy included: one value per test seed."""

    def headline(self, reference: str) -> RatioOfMeans:
        """The runs' ratio of means to ``reference`` with its two-level bootstrap interval."""
        return ratio_of_means(np.array(self.costs), np.array(self.baselines[reference]))

    def best_baseline(self, reference: str) -> str:
        """The baseline with the lowest mean here (ties: the paper policy)."""
        names = [reference, *(name for name in self.baselines if name != reference)]
        return min(names, key=lambda name: float(np.mean(self.baselines[name])))


@dataclass(frozen=True)
class RLResults:
    """Everything ``rl_<setting>.json`` holds (docs/rl/index.md, "Published results")."""

    setting: str
    env_id: str
    env_kwargs: dict[str, Any]
    config: str
    """The shipped config's path (``agents/configs/...``)."""
    config_sha256: str
    algo: str
    timesteps: int
    n_envs: int
    metric: str
    commit: str
    """40 hex digits: the commit the results were produced from."""
    dirty: bool
    """True when the tree had uncommitted changes (refused for sealed seeds)."""
    split: str
    """``sealed`` for published results, ``test`` (development test) otherwise."""
    reference: str
    train_seeds: list[int]
    test_seeds: list[int]
    runs: list[Run]
    baselines: dict[str, list[float]]
    skipped_baselines: dict[str, str]
    headline: dict[str, Any]
    """``{"ratio_of_means": x, "ci95": [low, high]}`` to the paper policy (``schedenv.stats.ratio_of_means``)."""
    generalisation: list[Setting]
    """The same runs at other settings (each with its ``overrides``)."""
    validation: dict[str, Any]
    """``seeds`` [first, last] of the learning curves, and ``baselines``: {name: ratio to the paper policy there}."""
    goal: dict[str, Any]
    """``against`` ("paper" or "best") and ``threshold``: the ratio the setting aims for."""
    command: str
    date: str
    machine: str
    schema: int = SCHEMA

    @property
    def training_setting(self) -> Setting:
        """The runs and baselines at the training setting."""
        return Setting(self.env_kwargs, {}, [run.costs for run in self.runs], self.baselines)

    def to_json(self) -> str:
        """The JSON text of the file (validated first)."""
        validate(self)
        return json.dumps(asdict(self), indent=1) + "\n"


def _fail(field_name: str, message: str) -> ValueError:
    return ValueError(f"rl results: {field_name} {message}")


def validate(results: RLResults) -> None:
    """Refuse results whose parts disagree, naming the field: lengths, seeds, commit, headline."""
    n_seeds = len(results.test_seeds)
    if not _COMMIT.match(results.commit):
        raise _fail("commit", f"{results.commit!r} is not 40 hex digits")
    allowed = split_range(results.split)
    if n_seeds < 1 or not all(seed in allowed for seed in results.test_seeds):
        raise _fail("test_seeds", f"must be non-empty seeds of the {results.split} range")
    if results.split == "sealed" and results.dirty:
        raise _fail("dirty", "is true: results on sealed seeds come from a clean commit only")
    if len(results.runs) < 1 or [run.train_seed for run in results.runs] != results.train_seeds:
        raise _fail("runs", f"must be one per training seed, in train_seeds order {results.train_seeds}")
    if results.reference not in results.baselines:
        raise _fail("baselines", f"must include the reference {results.reference!r}")
    for setting in [results.training_setting, *results.generalisation]:
        where = f" (setting {json.dumps(setting.overrides)})" if setting.overrides else ""
        if len(setting.costs) != len(results.runs):
            raise _fail("costs", f"has {len(setting.costs)} rows for {len(results.runs)} runs{where}")
        for name, values in [*(("a run", row) for row in setting.costs), *setting.baselines.items()]:
            if len(values) != n_seeds:
                raise _fail("costs", f"of {name} has {len(values)} values for {n_seeds} test seeds{where}")
        if results.reference not in setting.baselines:
            raise _fail("baselines", f"must include the reference {results.reference!r}{where}")
    for run in results.runs:
        if len(run.steps) != len(run.validation_ratio):
            raise _fail("runs", f"of training seed {run.train_seed}: steps and validation_ratio differ in length")
    expected = results.training_setting.headline(results.reference).ratio
    if not np.isclose(results.headline.get("ratio_of_means", np.nan), expected, rtol=1e-9):
        raise _fail("headline", f"ratio_of_means {results.headline.get('ratio_of_means')} != {expected} from the costs")


def from_dict(data: dict[str, Any]) -> RLResults:
    """``RLResults`` from parsed JSON, validated."""
    try:
        fields = dict(data)
        fields["runs"] = [Run(**run) for run in data["runs"]]
        fields["generalisation"] = [Setting(**entry) for entry in data["generalisation"]]
        results = RLResults(**fields)
    except (KeyError, TypeError) as error:
        raise ValueError(f"rl results: not the layout of schema {SCHEMA}: {error}") from error
    validate(results)
    return results


def load_results(path: str | Path) -> RLResults:
    """Read and validate ``rl_<setting>.json``."""
    return from_dict(json.loads(Path(path).read_text()))


def _interval(value: RatioOfMeans) -> str:
    return f"{value.ratio:.4f} [{value.low:.4f}, {value.high:.4f}]"


GOAL_TOLERANCE = 1e-9
"""Relative slack of the goal check: an agent that costs exactly what a baseline costs on every seed meets a
goal of 1.0 although the two means, summed in different orders, can differ in the last bits."""


def within(value: float, low: float, high: float) -> bool:
    """Whether ``value`` lies in [``low``, ``high``] up to ``GOAL_TOLERANCE`` (relative): a replication whose
    agent acts as the paper policy on every seed, like the published one, lies inside a published interval
    of [1, 1] although its ratio of means, summed in another order, is 1 +- a few 1e-16."""
    return low * (1.0 - GOAL_TOLERANCE) <= value <= high * (1.0 + GOAL_TOLERANCE)


def _per_seed_line(results: RLResults) -> str:
    """The headline's per-seed line: where every (run, test seed) pair lands against the paper policy
    (``schedenv.stats.seed_view``)."""
    view = seed_view([run.costs for run in results.runs], results.baselines[results.reference])
    return f"- per seed against {results.reference}: {view}"


def render_markdown(results: RLResults, picture: str | None = None) -> str:
    """The Markdown page of a result (``picture``: the learning-curve PNG's file name, if drawn)."""
    reference = results.reference
    trained = results.training_setting
    headline = trained.headline(reference)
    best = trained.best_baseline(reference)
    to_best = trained.headline(best)
    base = np.array(results.baselines[reference])
    run_ratios = np.array([[float(np.mean(run.costs) / base.mean())] for run in results.runs])
    iqm, iqm_low, iqm_high = iqm_interval(run_ratios)
    value = headline.ratio if results.goal["against"] == "paper" else to_best.ratio
    target = reference if results.goal["against"] == "paper" else f"the best baseline ({best})"
    threshold = float(results.goal["threshold"])
    verdict = (
        f"**holds**: {value:.4f} <= {threshold}"
        if value <= threshold * (1.0 + GOAL_TOLERANCE)
        else f"**does not hold**: {value:.4f} > {threshold} (missed by {100 * (value / threshold - 1):.2f}%)"
    )
    seeds = results.test_seeds
    split = "sealed test seeds" if results.split == "sealed" else "development-test seeds (not a published result)"
    lines = [
        f"# rl_{results.setting}: {results.algo} against {reference} and the best baseline",
        "",
        f"Env `{results.env_id}` with `{json.dumps(results.env_kwargs)}`; config `{results.config}` "
        f"(sha256 `{results.config_sha256[:12]}`); {results.timesteps:,} training steps per run ({results.n_envs} "
        f"copies); training seeds {', '.join(map(str, results.train_seeds))}; model: each run's best on its "
        f"validation seeds; {len(seeds)} {split} {seeds[0]}..{seeds[-1]} (docs/rl/seed-plan.md); metric "
        f"`{results.metric}`. Data: `rl_{results.setting}.json`, from which this page is generated.",
        "",
        "## Headline",
        "",
        f"- ratio of means to {reference}, {len(results.runs)} runs x {len(seeds)} test seeds: "
        f"**{_interval(headline)}** (95% two-level paired bootstrap: runs, then seeds)",
        f"- ratio of means to the best baseline ({best}): {_interval(to_best)}",
        f"- secondary: IQM over runs of each run's ratio of means: {iqm:.4f} [{iqm_low:.4f}, {iqm_high:.4f}]",
        _per_seed_line(results),
        f"- goal: ratio to {target} <= {threshold}: {verdict}",
        *_same_as_baseline(results),
        f"- training: {sum(run.train_cpu_seconds for run in results.runs) / 60:.1f} CPU-minutes for "
        f"{len(results.runs)} runs",
        "",
        "## Per training run",
        "",
        markdown_table(
            (
                "training seed",
                f"agent {results.metric}",
                f"ratio to {reference}",
                "CPU-minutes",
                "median seed ratio",
                "worst seed ratio",
                "seeds below / equal / above",
            ),
            [
                (
                    run.train_seed,
                    f"{np.mean(run.costs):.6g}",
                    f"{np.mean(run.costs) / base.mean():.4f}",
                    f"{run.train_cpu_seconds / 60:.1f}",
                    f"{view.median_ratio:.4f}",
                    f"{view.worst_ratio:.4f}",
                    view.counts,
                )
                for run, view in ((run, seed_view(run.costs, base)) for run in results.runs)
            ],
        ),
        "",
        "## Baselines on the same test seeds",
        "",
        markdown_table(
            ("baseline", f"mean {results.metric}", f"ratio to {reference}"),
            [
                (name, f"{np.mean(values):.6g}", f"{np.mean(values) / base.mean():.4f}")
                for name, values in sorted(results.baselines.items(), key=lambda item: float(np.mean(item[1])))
            ],
        ),
    ]
    if results.skipped_baselines:
        skipped = "; ".join(f"{name}: {reason}" for name, reason in results.skipped_baselines.items())
        lines += ["", f"Baselines that cannot act in this configuration: {skipped}."]
    lines += ["", "## Generalisation: the same runs at other settings", ""]
    rows: list[tuple[str, ...]] = []
    for setting in [trained, *results.generalisation]:
        best_here = setting.best_baseline(reference)
        rows.append(
            (
                f"`{json.dumps(setting.overrides)}`" if setting.overrides else "training setting",
                _interval(setting.headline(reference)),
                f"{best_here}: {_interval(setting.headline(best_here))}",
            )
        )
    lines.append(markdown_table(("env kwargs changed", f"ratio to {reference}", "ratio to best baseline"), rows))
    lines += ["", "## Learning curves", ""]
    if picture:
        lines += [f"![Validation ratio against training steps]({picture})", ""]
    lines += [_curve_table(results), "", f"- budget: {budget_verdict(results.runs)}."]
    changes = " with uncommitted changes" if results.dirty else ""
    lines += ["", f"Produced by `{results.command}` at commit `{results.commit}`{changes} on {results.machine}."]
    lines += [f"Date: {results.date}.", ""]
    return "\n".join(lines)


PLATEAU = 0.001
"""A median validation ratio that moved by less than this (relative) over the second half of training is flat."""
NEAR_BEST = 0.01
"""A run whose last validation ratio is within this (relative) of its best one has not fallen back."""


def budget_verdict(runs: list[Run]) -> str:
    """Whether more steps of the config would likely help, from the runs' learning curves.

    The median over runs of the validation ratio at the middle evaluation and at the last one: still
    falling by more than ``PLATEAU`` and within ``NEAR_BEST`` of the runs' best means the budget
    limits the result; ending well above the runs' best means training is unstable; otherwise it is
    flat, and what is left is information, capacity or the algorithm.
    """
    curves = [run.validation_ratio for run in runs if run.validation_ratio]
    if not curves:
        return "no validation evaluations were recorded"
    middle = float(np.median([ratios[(len(ratios) - 1) // 2] for ratios in curves]))
    last = float(np.median([ratios[-1] for ratios in curves]))
    best = float(np.median([min(ratios) for ratios in curves]))
    change = last / middle - 1
    if change < -PLATEAU and last <= best * (1 + NEAR_BEST):
        return (
            f"still improving: the median validation ratio fell by {-100 * change:.1f}% over the second half of "
            f"training ({middle:.4f} -> {last:.4f}), so the training budget limits this result"
        )
    if last > best * (1 + NEAR_BEST):
        return (
            f"unstable: the runs were at their best earlier (median of each run's best validation ratio {best:.4f}) "
            f"and ended at {last:.4f}, {100 * (last / best - 1):.1f}% worse; the selected model is each run's best"
        )
    return (
        f"flat: the median validation ratio changed by {100 * change:+.1f}% over the second half of training "
        f"({middle:.4f} -> {last:.4f}), so more steps of this config would not close the gap"
    )


def _same_as_baseline(results: RLResults) -> list[str]:
    """One line per run that scores exactly as a baseline on every test seed (it learned that rule)."""
    lines = []
    for run in results.runs:
        twins = [
            name for name, values in results.baselines.items() if np.allclose(run.costs, values, rtol=1e-9, atol=0.0)
        ]
        if twins:
            lines.append(
                f"- training seed {run.train_seed}: scores exactly as {' = '.join(twins)} on every one of the "
                f"{len(run.costs)} test seeds (it acts as that rule)"
            )
    return lines


def _curve_table(results: RLResults) -> str:
    steps = sorted({step for run in results.runs for step in run.steps})
    if not steps:
        return "No validation evaluations were recorded."
    by_run = [dict(zip(run.steps, run.validation_ratio, strict=True)) for run in results.runs]
    return markdown_table(
        ("training steps", *(f"seed {run.train_seed}" for run in results.runs)),
        [(f"{step:,}", *(f"{curve[step]:.4f}" if step in curve else "" for curve in by_run)) for step in steps],
    )


def plot_learning_curves(results: RLResults, path: str | Path) -> None:
    """PNG: median and range over runs of the validation ratio against training steps, with the paper
    policy (1) and the best baseline on the validation seeds as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = sorted(set.intersection(*(set(run.steps) for run in results.runs))) if results.runs else []
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    if steps:
        table = np.array(
            [[dict(zip(r.steps, r.validation_ratio, strict=True))[s] for s in steps] for r in results.runs]
        )
        axes.fill_between(steps, table.min(axis=0), table.max(axis=0), alpha=0.25, label="range over runs")
        axes.plot(steps, np.median(table, axis=0), marker="o", label=f"median of {len(results.runs)} runs")
    axes.axhline(1.0, color="black", linestyle="--", label=results.reference)
    for name, ratio in results.validation.get("baselines", {}).items():
        if name != results.reference:
            axes.axhline(float(ratio), color="tab:red", linestyle=":", label=f"{name} (best baseline)")
    seeds = results.validation.get("seeds")
    where = f"validation seeds {seeds[0]}..{seeds[1]}" if seeds else "validation seeds"
    axes.set(
        xlabel="training steps",
        ylabel=f"{results.metric}: agent / {results.reference}",
    )
    axes.set_title(f"rl_{results.setting}: {results.algo} on the {where}", fontsize=9)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def headline_row(results: RLResults) -> tuple[str, ...]:
    """The row of one result in the README's headline table: the ratio of means with its interval at the
    training setting, the best baseline there when it is not the paper policy, and the ratios at the
    other settings (their intervals are on the result's page), and where its (run, test seed) pairs land against
    the paper policy on their seed (``schedenv.stats.seed_view``)."""
    reference = results.reference
    trained = results.training_setting
    best = trained.best_baseline(reference)
    others = "; ".join(
        f"{', '.join(f'{name} {value}' for name, value in setting.overrides.items())}: "
        f"{setting.headline(reference).ratio:.4f}"
        for setting in results.generalisation
    )
    return (
        f"[{results.setting}](docs/results/rl-{results.setting}.md)",
        f"{_interval(trained.headline(reference))} x {reference}",
        "the paper policy" if best == reference else f"{best}: {trained.headline(best).ratio:.4f}",
        others,
        seed_view(trained.costs, results.baselines[reference]).counts,
        f"{len(results.runs)} x {len(results.test_seeds)}",
    )


def headline_table(results: list[RLResults]) -> str:
    """The README's table of published results (sealed seeds), one row per setting."""
    header = (
        "setting",
        "agent / paper policy (ratio of means, 95%)",
        "best baseline: agent / it",
        "agent / paper policy at other settings",
        "pairs below / equal / above it",
        "runs x seeds",
    )
    return markdown_table(header, [headline_row(result) for result in results])
