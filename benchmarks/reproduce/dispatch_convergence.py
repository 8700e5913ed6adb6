"""Dispatch preset convergence: which horizon, size law and seed count let Dispatch-v0 rank policies.

The objective of the dispatch preset is the mean slowdown of an episode (``mean_slowdown``), averaged
over test seeds. With Bounded Pareto sizes (TAGS paper, Harchol-Balter, J. ACM 2002, §3) that mean is
driven by rare huge jobs, so a preset ranks policies only if its test seeds sample them often enough.
For each candidate regime (upper bound p = 10^10 of §3 or p = 10^7 of §7's Figs. 14-15, alpha 1.1,
load 0.5, 2 hosts, horizons of 500 to 200,000 arrivals; with and without an unscored warm-up of the
first ``WARMUP_FRACTION`` of arrivals, scored from per-job records) this
script runs every dispatch baseline with a compiled path (``schedenv.fastpath``) on two disjoint sets
of study seeds and reports:

- each baseline's mean and its 95% half-width (Student t over seeds) relative to the mean;
- the seeds that would bring every half-width to ``TARGET`` (10%): n (h / 10%)^2, the worst baseline's;
- whether the ranking is the same on both sets. Two baselines whose means are within ±10% of each
  other, or whose paired 95% ratio interval (``schedenv.stats.ratio_interval``) contains 1, on both
  sets are a tie, not a flip (Random and Round-Robin have about the same mean slowdown; TAGS-waiting
  and TAGS-fair often set the same limits): a preset whose means are known to ±10% does not rank them.

The regime chosen is the shortest horizon without warm-up (the env scores every job) whose ranking is
stable and at which ``FRESH_SEEDS`` (200) seeds put every baseline within ±10% on both study sets, so
that a user's own ``schedenv evaluate`` on 200 fresh seeds ranks the baselines (docs/envs/dispatch.md).
Its test-seed count also brings the paper policy's ratio to the best other baseline within ±2%: the
larger estimate with a margin, rounded up, then checked on two fresh seed sets of that size, each
also split into 200-seed halves (four fresh sets of 200).
The shipped preset lives in ``schedenv.dispatch.preset``; a claim line says whether it is this choice.

The other RL settings (the shipped configs of ``agents/configs``) get the same check on
``OTHER_SEEDS`` seeds: each baseline's half-width, and the paper policy's paired ratio interval to the
best other baseline (target ±``RATIO_TARGET``), with the seed count each needs.

Seeds: study seeds start at ``STUDY_SEEDS`` (>= 2,000,000 and < 2^31: outside the test range 0..999,999
and validation range 1,000,000..1,999,999 of ``agents.protocol``, below the training seeds >= 2^31).

    python benchmarks/reproduce/dispatch_convergence.py            # full: about 6 CPU-minutes
    python benchmarks/reproduce/dispatch_convergence.py --quick    # under a minute (tests)
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import baselines
from schedenv.dispatch.preset import BENCHMARK_HORIZON, BENCHMARK_KWARGS, BENCHMARK_TEST_SEEDS, BENCHMARK_UPPER
from schedenv.fastpath import dispatch as dispatch_fastpath
from schedenv.fastpath import evaluate_fast, supports
from schedenv.fastpath.multiserver import run_fast as multiserver_run_fast
from schedenv.reporting import markdown_table, provenance, write_atomic
from schedenv.stats import mean_interval, ratio_interval
from schedenv.workloads import from_spec

# benchmarks/ is not a package: the claim lines are a module beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _claims import CheckedClaim, claim, claims_section

FIGURE = "dispatch-convergence"
DESCRIPTION = (
    "Dispatch preset convergence: mean slowdown half-widths and ranking stability against horizon, size law "
    "(p = 10^10 or 10^7), warm-up and seed count; the regime in which every baseline is within ±10% and the "
    "ranking holds on disjoint seeds, and the seeds each other RL setting needs."
)
ENV_ID = "schedenv/Dispatch-v0"
METRIC = "mean_slowdown"
STUDY_SEEDS = 1_900_000_000
"""First study seed; set s (0, 1, ...) is STUDY_SEEDS + s * SET_STRIDE + i."""
SET_STRIDE = 10_000_000
TARGET = 0.10
"""Largest 95% half-width of a baseline's mean, relative to the mean."""
RATIO_TARGET = 0.02
"""Largest 95% half-width of the paper policy's ratio to the best other baseline, relative to the ratio."""
FRESH_SEEDS = 200
"""Seeds of a user's own check of the preset: with this many fresh seeds every baseline is within ±10%."""
WARMUP_FRACTION = 0.2
"""Arrivals left unscored at the start of an episode in the warm-up variant."""
MARGIN = 1.25
"""The chosen seed count is the estimate times this, rounded up to ``ROUND`` (then checked on fresh seeds)."""
ROUND = 100
UPPERS = {"p = 10^10": 1e10, "p = 10^7": 1e7}
FULL_HORIZONS = (500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000)
QUICK_HORIZONS = (500, 2000)
OTHER_SETTINGS = {
    "malleable-offline": "malleable_ppo.yaml",
    "malleable-online": "malleable_online_ppo.yaml",
    "multiserver": "multiserverjob_maskable_ppo.yaml",
    "moldable": "moldable_maskable_ppo.yaml",
}
"""The other RL settings of ``benchmarks/rl_versus_paper.py`` and their shipped configs."""
OTHER_SEEDS = 200


@dataclass(frozen=True)
class Regime:
    """One candidate preset: size law upper bound, horizon and warm-up."""

    upper: float
    horizon: int
    warmup: bool

    @property
    def label(self) -> str:
        return f"p = 10^{math.log10(self.upper):.0f}, {self.horizon:,} arrivals" + (
            f", warm-up {WARMUP_FRACTION:.0%}" if self.warmup else ""
        )


def study_seeds(set_index: int, n: int) -> range:
    """Seed set ``set_index`` of the study (disjoint sets, all >= 2,000,000 and < 2^31)."""
    return range(STUDY_SEEDS + set_index * SET_STRIDE, STUDY_SEEDS + set_index * SET_STRIDE + n)


def dispatch_kwargs(upper: float, horizon: int) -> dict[str, Any]:
    """The preset's env arguments with another upper bound and horizon (sizes built)."""
    kwargs = {key: from_spec(value) for key, value in BENCHMARK_KWARGS.items()}
    spec = dict(BENCHMARK_KWARGS["size_dist"], upper=upper)
    return kwargs | {"size_dist": from_spec(spec), "n_arrivals": horizon}


def dispatch_baselines(env_kwargs: dict[str, Any]) -> list[str]:
    """The dispatch baselines the preset lists (every one that can act here; all have a compiled path)."""
    return [name for name in baselines.available(ENV_ID) if supports(ENV_ID, name, **env_kwargs)]


def slowdowns(upper: float, horizon: int, seeds: Sequence[int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per baseline, per seed: the episode's mean slowdown, and that of the jobs after the warm-up."""
    kwargs = dispatch_kwargs(upper, horizon)
    env = gym.make(ENV_ID, **kwargs)
    first = int(WARMUP_FRACTION * horizon)
    found = {}
    try:
        for name in dispatch_baselines(kwargs):
            policy = baselines.make(name)
            scored, warm = [], []
            for seed in seeds:
                run = dispatch_fastpath.run(env.unwrapped, policy, seed, keep_completions=True)
                assert run.completion is not None and run.arrival_times is not None and run.sizes is not None
                scored.append(run.metrics[METRIC])
                warm.append(float(((run.completion - run.arrival_times) / run.sizes)[first:].mean()))
            found[name] = (np.array(scored), np.array(warm))
    finally:
        env.close()
    return found


def relative_half_width(values: np.ndarray) -> float:
    """The 95% half-width of the mean of ``values`` over the mean."""
    interval = mean_interval(values)
    return interval.ci95 / interval.mean


def seeds_needed(values: np.ndarray, target: float) -> int:
    """Seeds for a relative half-width of ``target``: n (h / target)^2 (the half-width falls as 1 / sqrt(n))."""
    return math.ceil(values.size * (relative_half_width(values) / target) ** 2)


def tied(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether these seeds do not tell two baselines apart at the preset's precision.

    True when the ratio of means is within ±``TARGET`` of 1 (closer than the ±10% a preset promises
    for each mean) or its paired 95% interval (``ratio_interval``) contains 1.
    """
    if abs(a.mean() / b.mean() - 1.0) <= TARGET:
        return True
    low, high = ratio_interval(a, b, resamples=2000)
    return bool(low <= 1.0 <= high)


def ranking(values: dict[str, np.ndarray]) -> list[str]:
    """Baselines from the lowest mean to the highest."""
    return sorted(values, key=lambda name: float(values[name].mean()))


def flips(first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> list[tuple[str, str]]:
    """Pairs ordered one way on ``first`` and the other on ``second``, unless tied on both sets.

    Ties: ``tied``.
    """
    names = list(first)
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            one = first[a].mean() < first[b].mean()
            two = second[a].mean() < second[b].mean()
            if one != two and not (tied(first[a], first[b]) and tied(second[a], second[b])):
                found.append((a, b))
    return found


@dataclass
class Cell:
    """A regime measured on two disjoint seed sets."""

    regime: Regime
    sets: tuple[dict[str, np.ndarray], dict[str, np.ndarray]]
    steps: float
    """Mean decisions (arrivals and kills) of a TAGS-slowdown episode: the training cost per episode."""

    @property
    def n_seeds(self) -> int:
        return int(next(iter(self.sets[0].values())).size)

    def worst_half_width(self) -> float:
        return max(relative_half_width(v) for values in self.sets for v in values.values())

    def needed(self) -> int:
        return max(seeds_needed(v, TARGET) for values in self.sets for v in values.values())

    def flips(self) -> list[tuple[str, str]]:
        return flips(*self.sets)


def measure(horizons: Sequence[int], n_seeds: int) -> list[Cell]:
    """Every regime of the grid on study seed sets 0 and 1."""
    cells = []
    for label, upper in UPPERS.items():
        for horizon in horizons:
            started = time.perf_counter()
            a, b = (slowdowns(upper, horizon, study_seeds(s, n_seeds)) for s in (0, 1))
            steps = _tags_steps(upper, horizon, study_seeds(0, min(n_seeds, 20)))
            for warmup in (False, True):
                sets = tuple({name: pair[int(warmup)] for name, pair in found.items()} for found in (a, b))
                cells.append(Cell(Regime(upper, horizon, warmup), sets, steps))  # type: ignore[arg-type]
            print(f"{label}, {horizon} arrivals: {time.perf_counter() - started:.1f} s", flush=True)
    return cells


def _tags_steps(upper: float, horizon: int, seeds: Sequence[int]) -> float:
    kwargs = dispatch_kwargs(upper, horizon)
    env = gym.make(ENV_ID, **kwargs)
    try:
        policy = baselines.make(baselines.reference(ENV_ID))
        return float(np.mean([dispatch_fastpath.run(env.unwrapped, policy, s).n_steps for s in seeds]))
    finally:
        env.close()


def choose(cells: Sequence[Cell]) -> Cell:
    """The shortest stable regime without warm-up in which ``FRESH_SEEDS`` seeds put every baseline within
    ±``TARGET`` (on both study sets); when no horizon of the grid does (the quick run), the one needing fewest."""
    candidates = [c for c in cells if not c.regime.warmup and not c.flips()]
    if not candidates:
        raise RuntimeError("no regime of the grid ranks the baselines the same on both seed sets")
    enough = [c for c in candidates if c.needed() <= FRESH_SEEDS]
    if enough:
        return min(enough, key=lambda c: (c.regime.horizon, c.regime.upper))
    return min(candidates, key=lambda c: (c.needed(), c.regime.horizon))


def chosen_seed_count(cell: Cell) -> int:
    """Test seeds for every mean within ±``TARGET`` and the paper policy's ratio to the best other baseline
    within ±``RATIO_TARGET`` on both study sets: the larger estimate with ``MARGIN``, rounded up to ``ROUND``."""
    reference = baselines.reference(ENV_ID)
    ratio_needed = max(Setting("dispatch", ENV_ID, {}, METRIC, reference, values, []).needed() for values in cell.sets)
    return ROUND * math.ceil(MARGIN * max(cell.needed(), ratio_needed) / ROUND)


# --------------------------------------------------------------------------- other RL settings
@dataclass
class Setting:
    """One RL setting's baselines on ``OTHER_SEEDS`` seeds."""

    name: str
    env_id: str
    env_kwargs: dict[str, Any]
    metric: str
    reference: str
    values: dict[str, np.ndarray]
    skipped: list[str]

    @property
    def best_other(self) -> str:
        """The best baseline that does not act as the paper policy (same value on every seed)."""
        ref = self.values[self.reference]
        others = {n: v for n, v in self.values.items() if n != self.reference and not np.allclose(v, ref, rtol=1e-9)}
        return min(others, key=lambda n: float(others[n].mean()))

    def ratio(self) -> tuple[float, float, float]:
        ref, best = self.values[self.reference], self.values[self.best_other]
        low, high = ratio_interval(ref, best)
        return float(ref.mean() / best.mean()), low, high

    def ratio_half_width(self) -> float:
        value, low, high = self.ratio()
        return (high - low) / 2 / value

    def needed(self) -> int:
        n = len(next(iter(self.values.values())))
        means = max(seeds_needed(v, TARGET) for v in self.values.values())
        return max(means, math.ceil(n * (self.ratio_half_width() / RATIO_TARGET) ** 2))


def measure_setting(name: str, config: str, n_seeds: int) -> Setting:
    """The shipped config's baselines on study seed set 4 (multiserver: its own compiled path)."""
    from agents.train import CONFIG_DIR, resolve_config
    from schedenv.comparison import objective_metric

    resolved = resolve_config(str(CONFIG_DIR / config), {})
    kwargs = {key: from_spec(value) for key, value in resolved.env_kwargs.items()}
    env_id, seeds = resolved.env_id, study_seeds(4, n_seeds)
    metric = objective_metric(env_id, kwargs)
    values, skipped = {}, []
    for baseline in baselines.available(env_id):
        if env_id == "schedenv/MultiserverJob-v0":
            env = gym.make(env_id, **kwargs)
            try:
                policy = baselines.make(baseline)
                values[baseline] = np.array([multiserver_run_fast(env, policy, s).metrics[metric] for s in seeds])
            finally:
                env.close()
        elif supports(env_id, baseline, **kwargs):
            values[baseline] = evaluate_fast(env_id, baseline, seeds, **kwargs).values(metric)
        else:
            skipped.append(baseline)
    return Setting(name, env_id, dict(resolved.env_kwargs), metric, baselines.reference(env_id), values, skipped)


# --------------------------------------------------------------------------- report
def grid_table(cells: Sequence[Cell]) -> list[str]:
    names = list(cells[0].sets[0])
    header = ("regime", "TAGS steps / episode", *names, "seeds for ±10%", "ranking flips")
    rows = []
    for cell in cells:
        widths = ["/".join(f"{100 * relative_half_width(values[n]):.0f}" for values in cell.sets) for n in names]
        flipped = ", ".join(f"{a}/{b}" for a, b in cell.flips()) or "none"
        rows.append((cell.regime.label, f"{cell.steps:,.0f}", *widths, f"{cell.needed():,}", flipped))
    return [markdown_table(header, rows)]


def means_table(cell: Cell) -> list[str]:
    a, b = cell.sets
    rows = [
        (
            n,
            f"{a[n].mean():.4g} ± {100 * relative_half_width(a[n]):.1f}%",
            f"{b[n].mean():.4g} ± {100 * relative_half_width(b[n]):.1f}%",
        )
        for n in ranking(a)
    ]
    return [markdown_table(("baseline (set 0 order)", "set 0", "set 1"), rows)]


def settings_table(settings: Sequence[Setting]) -> list[str]:
    rows = []
    for s in settings:
        value, low, high = s.ratio()
        worst = max(s.values, key=lambda n: relative_half_width(s.values[n]))
        rows.append(
            (
                s.name,
                s.metric,
                f"{worst}: ±{100 * relative_half_width(s.values[worst]):.1f}%",
                f"{s.reference} / {s.best_other}: {value:.4f} [{low:.4f}, {high:.4f}]"
                f" (±{100 * s.ratio_half_width():.2f}%)",
                f"{s.needed():,}",
                ", ".join(s.skipped) or "none",
            )
        )
    header = (
        "setting",
        "metric",
        "widest baseline half-width",
        "paper policy / best other",
        "seeds needed",
        "no compiled path",
    )
    return [markdown_table(header, rows)]


def claims(
    cells: Sequence[Cell],
    chosen: Cell,
    n_chosen: int,
    check: tuple[dict[str, np.ndarray], dict[str, np.ndarray]],
    settings: Sequence[Setting],
    n_other: int,
) -> list[CheckedClaim]:
    """The verdicts of the study from the numbers above; ``settings``: the chosen regime first, then the rest."""
    plain = [c for c in cells if not c.regime.warmup]
    by_upper = {u: [c for c in plain if c.regime.upper == u] for u in UPPERS.values()}
    widths_c = [relative_half_width(v) for values in check for v in values.values()]
    check_flips = flips(*check)
    found = [
        claim(
            "chosen-regime",
            max(widths_c) <= TARGET and not check_flips,
            f"The chosen regime ({chosen.regime.label}, load 0.5, 2 hosts, {n_chosen:,} test seeds, no warm-up; "
            f"{chosen.steps:,.0f} decisions per TAGS-slowdown episode) has every baseline's 95% half-width within "
            f"±{TARGET:.0%} on two fresh disjoint sets of {n_chosen:,} seeds (widest ±{100 * max(widths_c):.1f}%) "
            f"and {'the same ranking on both' if not check_flips else 'ranking flips ' + str(check_flips)}.",
        ),
        claim(
            "preset-is-chosen",
            chosen.regime.upper == BENCHMARK_UPPER
            and chosen.regime.horizon == BENCHMARK_HORIZON
            and n_chosen == BENCHMARK_TEST_SEEDS,
            f"The shipped preset (schedenv.dispatch.preset: p = {BENCHMARK_UPPER:g}, {BENCHMARK_HORIZON:,} arrivals, "
            f"{BENCHMARK_TEST_SEEDS:,} test seeds) is this study's choice (p = {chosen.regime.upper:g}, "
            f"{chosen.regime.horizon:,} arrivals, {n_chosen:,} seeds).",
        ),
    ]
    halves = [
        {name: values[part * FRESH_SEEDS : (part + 1) * FRESH_SEEDS] for name, values in one.items()}
        for one in check
        for part in range(min(2, len(next(iter(one.values()))) // FRESH_SEEDS))
    ]
    fresh = [max(relative_half_width(v) for v in half.values()) for half in halves]
    found.append(
        claim(
            "two-hundred-seeds",
            bool(fresh) and max(fresh) <= TARGET,
            f"On {len(fresh)} fresh disjoint sets of {FRESH_SEEDS} seeds (the check sets' halves), every baseline's "
            f"mean is within ±{TARGET:.0%} in the chosen regime: widest "
            + (", ".join(f"±{100 * w:.1f}%" for w in fresh) or "none (the check sets have fewer seeds)")
            + ".",
        )
    )
    pairs = [(a, b) for a in by_upper[1e10] for b in by_upper[1e7] if a.regime.horizon == b.regime.horizon]
    found.append(
        claim(
            "p1e7-narrower",
            all(b.worst_half_width() < a.worst_half_width() for a, b in pairs),
            "At every horizon the widest half-width is smaller with p = 10^7 than with p = 10^10: "
            + ", ".join(
                f"{a.regime.horizon:,}: {100 * b.worst_half_width():.0f}% vs {100 * a.worst_half_width():.0f}%"
                for a, b in pairs
            )
            + ".",
        )
    )
    stable = {u: not any(flips(c.sets[0], row[0].sets[0]) for c in row[1:]) for u, row in by_upper.items()}
    found.append(
        claim(
            "p1e7-ranking-horizon-free",
            stable[1e7] and not stable[1e10],
            "With p = 10^7 the ranking (ties allowed) is the same at every horizon "
            f"({'yes' if stable[1e7] else 'no'}); "
            f"with p = 10^10 it {'does not change' if stable[1e10] else 'changes'} with the horizon.",
        )
    )
    warm = {(c.regime.upper, c.regime.horizon): c for c in cells if c.regime.warmup}
    gains = {
        c.regime.label: 1 - warm[(c.regime.upper, c.regime.horizon)].worst_half_width() / c.worst_half_width()
        for c in plain
    }
    most = max(gains, key=lambda label: gains[label])
    found.append(
        claim(
            "warmup-no-gain",
            gains[most] < 0.10,
            f"Leaving the first {WARMUP_FRACTION:.0%} of arrivals unscored narrows the widest half-width by less than "
            f"10% in every regime (largest gain {100 * gains[most]:+.1f}%, at {most}; the chosen regime is within "
            f"±{TARGET:.0%} without it), so the env has no warm-up argument.",
        )
    )
    preset, *others = settings
    value, low, high = preset.ratio()
    found.append(
        claim(
            "chosen-regime-ratio",
            preset.ratio_half_width() <= RATIO_TARGET,
            f"In the chosen regime, {preset.reference} / {preset.best_other} (the paper policy against the best other "
            f"baseline) is {value:.4f} [{low:.4f}, {high:.4f}] on the first check set: within "
            f"±{100 * preset.ratio_half_width():.2f}% (target ±{RATIO_TARGET:.0%}).",
        )
    )
    for s in others:
        widest = max(relative_half_width(v) for v in s.values.values())
        found.append(
            claim(
                f"{s.name}-{n_other}-seeds",
                widest <= TARGET and s.ratio_half_width() <= RATIO_TARGET,
                f"{s.name} (`{s.env_id}` with the shipped config): on {n_other} seeds every baseline is within "
                f"±{100 * widest:.1f}% and {s.reference} / {s.best_other} within ±{100 * s.ratio_half_width():.2f}% "
                f"(targets ±{TARGET:.0%} and ±{RATIO_TARGET:.0%}); seeds needed: {s.needed():,}.",
            )
        )
    return found


# --------------------------------------------------------------------------- main
def as_json(cells: Sequence[Cell], chosen: Cell, n_chosen: int, settings: Sequence[Setting]) -> dict[str, Any]:
    """The numbers behind the tables: per regime and per setting, means and relative half-widths."""

    def widths(values: dict[str, np.ndarray]) -> dict[str, float]:
        return {n: relative_half_width(v) for n, v in values.items()}

    return {
        "env_id": ENV_ID,
        "metric": METRIC,
        "target": TARGET,
        "regimes": [
            {
                "upper": c.regime.upper,
                "horizon": c.regime.horizon,
                "warmup": c.regime.warmup,
                "seeds_per_set": c.n_seeds,
                "tags_steps": c.steps,
                "means": [{n: float(v.mean()) for n, v in values.items()} for values in c.sets],
                "half_widths": [widths(values) for values in c.sets],
                "seeds_needed": c.needed(),
                "flips": [list(pair) for pair in c.flips()],
            }
            for c in cells
        ],
        "chosen": {"upper": chosen.regime.upper, "horizon": chosen.regime.horizon, "test_seeds": n_chosen},
        "settings": [
            {
                "name": s.name,
                "env_id": s.env_id,
                "env_kwargs": s.env_kwargs,
                "metric": s.metric,
                "reference": s.reference,
                "best_other": s.best_other,
                "ratio_and_ci95": list(s.ratio()),
                "half_widths": widths(s.values),
                "seeds_needed": s.needed(),
            }
            for s in settings
        ],
    }


def plot(out: Path, cells: Sequence[Cell], chosen: Cell, check: dict[str, np.ndarray]) -> Path:
    """Three panels: widest half-width against horizon, each baseline's at the chosen p, and against seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16.0, 4.4))
    for label, upper in UPPERS.items():
        for warmup in (False, True):
            row = [c for c in cells if c.regime.upper == upper and c.regime.warmup == warmup]
            axes[0].loglog(
                [c.regime.horizon for c in row],
                [100 * c.worst_half_width() for c in row],
                marker="o",
                linestyle="--" if warmup else "-",
                label=label + (f", warm-up {WARMUP_FRACTION:.0%}" if warmup else ""),
            )
    axes[0].set(xlabel="arrivals per episode", ylabel="widest 95% half-width (% of mean)")
    axes[0].set_title(f"all baselines, {cells[0].n_seeds} seeds per set (worse set)", fontsize=10)
    row = [c for c in cells if c.regime.upper == chosen.regime.upper and not c.regime.warmup]
    for name in row[0].sets[0]:
        widths = [100 * max(relative_half_width(s[name]) for s in c.sets) for c in row]
        axes[1].loglog([c.regime.horizon for c in row], widths, marker="o", label=name)
    axes[1].set(xlabel="arrivals per episode", ylabel="95% half-width (% of mean), worse set")
    axes[1].set_title(f"p = {chosen.regime.upper:g}, each baseline", fontsize=10)
    counts = seed_counts(len(next(iter(check.values()))))
    for name, values in check.items():
        axes[2].loglog(counts, [100 * relative_half_width(values[:n]) for n in counts], marker="o", label=name)
    axes[2].set(xlabel="test seeds", ylabel="95% half-width (% of mean)")
    axes[2].set_title(f"chosen: {chosen.regime.label}", fontsize=10)
    for ax in axes:
        ax.axhline(100 * TARGET, color="black", linewidth=0.8)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / f"{FIGURE}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def seed_counts(n: int) -> list[int]:
    """Prefix sizes for the half-width against seeds: 50, 100, 200, 500, 1000, ... up to n."""
    counts = [c for base in (50, 100, 200) for c in (base * 10**k for k in range(6)) if c < n]
    return [*sorted(set(counts)), n]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("--quick", action="store_true", help="2 horizons, 30 seeds per set, small checks (< 1 minute)")
    parser.add_argument("--out", default="benchmarks/results", help="output directory")
    args = parser.parse_args(argv)
    args.horizons = QUICK_HORIZONS if args.quick else FULL_HORIZONS
    args.seeds = 30 if args.quick else 200
    args.other_seeds = 10 if args.quick else OTHER_SEEDS
    args.command = "python " + " ".join(
        shlex.quote(a) for a in [sys.argv[0], *(argv if argv is not None else sys.argv[1:])]
    )
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out = Path(args.out)
    started = time.perf_counter()
    cells = measure(args.horizons, args.seeds)
    chosen = choose(cells)
    n_chosen = chosen_seed_count(chosen)
    n_check = min(n_chosen, 100) if args.quick else n_chosen
    found = [slowdowns(chosen.regime.upper, chosen.regime.horizon, study_seeds(s, n_check)) for s in (2, 3)]
    check = ({n: v[0] for n, v in found[0].items()}, {n: v[0] for n, v in found[1].items()})
    settings = [measure_setting(name, config, args.other_seeds) for name, config in OTHER_SETTINGS.items()]
    preset = Setting("dispatch", ENV_ID, dict(BENCHMARK_KWARGS), METRIC, baselines.reference(ENV_ID), check[0], [])
    minutes = (time.perf_counter() - started) / 60
    verdicts = claims(cells, chosen, n_chosen, check, [preset, *settings], args.other_seeds)
    lines = [
        f"# {FIGURE}",
        "",
        DESCRIPTION,
        "",
        f"Env `{ENV_ID}`, load 0.5, 2 hosts, Bounded Pareto sizes (mean 3000, alpha 1.1), objective and metric "
        f"`{METRIC}`, every baseline with a compiled path (`schedenv.fastpath`). Seed sets 0 and 1: "
        f"{args.seeds} seeds each from {study_seeds(0, 1).start:,} and {study_seeds(1, 1).start:,}; the check of the "
        f"chosen regime: sets 2 and 3 ({n_check:,} seeds each from {study_seeds(2, 1).start:,} and "
        f"{study_seeds(3, 1).start:,}); other settings: {args.other_seeds} seeds from {study_seeds(4, 1).start:,} "
        "(all >= 2,000,000 and < 2^31: never test, validation or training seeds of `agents.protocol`).",
        "",
        "## Half-widths by regime",
        "",
        "Each baseline's 95% half-width in % of its mean on set 0 / set 1; seeds for ±10%: n (h / 10%)^2 for the "
        "widest; flips: pairs ordered differently on the two sets and not tied on both (a tie: means within "
        "±10% of each other, or a paired 95% ratio interval that contains 1). TAGS steps: decisions (arrivals and "
        "kills) per TAGS-slowdown episode.",
        "",
        *grid_table(cells),
        "",
        f"## The chosen regime: {chosen.regime.label}",
        "",
        f"The shortest horizon without warm-up with a stable ranking at which {FRESH_SEEDS} seeds put every baseline "
        f"within ±{TARGET:.0%} ({chosen.needed():,} seeds needed on the study sets). Test seeds: enough for that and "
        f"for the paper policy's ratio to the best other baseline within ±{RATIO_TARGET:.0%}, with a margin of "
        f"{MARGIN:g}: {n_chosen:,}. Means on the two check sets ({n_check:,} seeds each):",
        "",
        *means_table(Cell(chosen.regime, check, chosen.steps)),
        "",
        f"An episode is {chosen.steps:,.0f} decisions of TAGS-slowdown (arrivals and kills); an agent that kills "
        "less decides less often.",
        "",
        "## The other RL settings (shipped configs, baselines only)",
        "",
        f"{args.other_seeds} seeds; seeds needed: the most of n (h / {TARGET:.0%})^2 over baselines and "
        f"n (r / {RATIO_TARGET:.0%})^2 for the paper policy's ratio half-width r (to the best baseline that does not "
        "act exactly as the paper policy). Multiserver runs each baseline's "
        "own decisions on the simulator (`schedenv.fastpath.multiserver`); baselines without a compiled path are "
        "left out.",
        "",
        *settings_table(settings),
        "",
        *claims_section(verdicts),
        f"Wall time {minutes:.1f} minutes. " + provenance(args.command),
        "",
    ]
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / f"{FIGURE}.md", "\n".join(lines))
    write_atomic(out / f"{FIGURE}.json", json.dumps(as_json(cells, chosen, n_chosen, settings), indent=1) + "\n")
    plot(out, cells, chosen, check[0])
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
