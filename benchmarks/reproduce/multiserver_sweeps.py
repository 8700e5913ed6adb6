"""Load sweeps for the ServerFilling-SRPT paper's figures (Grosof et al. 2022, Figs. 2-4).

Every (load, seed) pair draws one job stream through the env (common random numbers), runs each
policy on it with the compiled fast path, and runs the resource-pooled SRPT-1 system on the
same stream; the Schrage-Miller mean of SRPT-1 and the Theorem 4.1 gap bound are added from
``schedenv.analysis``. Used by ``multiserver_fig*.py`` beside it (benchmarks/ is not a package:
they put this folder on ``sys.path``); ``tests/multiserver/test_experiments.py`` tests it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from schedenv.analysis.multiserver import sfs_gap_bound, srpt_mg1_response_time
from schedenv.fastpath.multiserver import ServiceSetPolicy, run_fast
from schedenv.multiserver.srpt1 import srpt1_completion_times
from schedenv.progress import progress_bar
from schedenv.reporting import add_output_arguments, resolve_output_args, write_atomic
from schedenv.stats import Interval, mean_interval

# benchmarks/ is not a package: the claim lines are a module beside this one.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _claims import CheckedClaim, claims_section

ENV_ID = "schedenv/MultiserverJob-v0"
SRPT1 = "SRPT-1"


@dataclass
class Sweep:
    """Per-seed mean response times of each policy (and SRPT-1) at each load."""

    loads: list[float]
    policies: list[str]
    n_arrivals: int
    seeds: list[int]
    response: dict[tuple[str, float], np.ndarray] = field(default_factory=dict)
    """(policy or "SRPT-1", load) -> per-seed mean response time (inf when a run was cut)."""
    caps: dict[str, int] = field(default_factory=dict)
    """Policies whose runs stop (as unstable) once more jobs than this are present."""
    schrage_miller: dict[float, float] = field(default_factory=dict)
    gap_bound: dict[float, float] = field(default_factory=dict)
    seconds: float = 0.0

    def interval(self, policy: str, load: float) -> Interval:
        """Mean and 95% interval over seeds of the mean response time (inf if any run was cut)."""
        values = self.response[(policy, load)]
        if not np.isfinite(values).all():
            return Interval(float("inf"), float("nan"), values.size)
        return mean_interval(values)

    def ratio(self, policy: str, load: float) -> Interval:
        """Per-seed E[T] / E[T^SRPT-1] on the same stream, with its interval."""
        values = self.response[(policy, load)] / self.response[(SRPT1, load)]
        if not np.isfinite(values).all():
            return Interval(float("inf"), float("nan"), values.size)
        return mean_interval(values)


def sweep(
    policies: dict[str, ServiceSetPolicy],
    loads: Sequence[float],
    n_arrivals: int,
    seeds: Sequence[int],
    *,
    caps: Mapping[str, int] | None = None,
    **env_kwargs: Any,
) -> Sweep:
    """Run every policy and SRPT-1 at every load and seed; ``env_kwargs`` set the workload.

    ``caps`` maps a policy to a number of jobs beyond which its run stops and counts as unstable
    (for policies that are not throughput-optimal, whose queues otherwise make runs quadratic).
    """
    start = time.perf_counter()
    result = Sweep([float(x) for x in loads], list(policies), int(n_arrivals), [int(s) for s in seeds])
    result.caps = dict(caps or {})
    bar = progress_bar(total=len(result.loads) * len(result.seeds), desc="multiserver sweep", unit="run")
    for load in result.loads:
        env = gym.make(ENV_ID, load=load, n_arrivals=n_arrivals, max_jobs=64, **env_kwargs)
        inner: Any = env.unwrapped
        table: dict[str, list[float]] = {name: [] for name in [*policies, SRPT1]}
        for seed in result.seeds:
            for name, policy in policies.items():
                run = run_fast(env, policy, seed, max_in_system=result.caps.get(name, 0))
                table[name].append(run.metrics["mean_response_time"])
            params = run.params
            pooled = srpt1_completion_times(params.arrival_times, params.sizes) - params.arrival_times
            table[SRPT1].append(float(pooled.mean()))
            bar.update()
        for name, values in table.items():
            result.response[(name, load)] = np.asarray(values)
        size_law = inner.workload.size_dist
        if size_law is not None:
            result.schrage_miller[load] = srpt_mg1_response_time(size_law, inner.arrival_rate)
        result.gap_bound[load] = sfs_gap_bound(inner.n_servers, inner.arrival_rate, load)
        env.close()
    bar.close()
    result.seconds = time.perf_counter() - start
    return result


@dataclass(frozen=True)
class SweepSettings:
    """What the command line of a figure script asks for: loads, arrivals per run, seeds, output folder."""

    loads: list[float]
    n_arrivals: int
    seeds: list[int]
    out: Path


def sweep_settings(
    argv: list[str] | None, description: str, loads: list[float], quick_loads: list[float]
) -> SweepSettings:
    """Parse the flags shared by the ServerFilling figure scripts (``--quick --out --seeds --arrivals``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--quick", action="store_true", help=f"{len(quick_loads)} loads, 20,000 arrivals (under a minute)"
    )
    add_output_arguments(parser)
    parser.add_argument("--seeds", type=int, default=None, help="seeds per load (default 3; 2 with --quick)")
    parser.add_argument("--arrivals", type=int, default=None, help="arrivals per run (default 1,000,000)")
    args = parser.parse_args(argv)
    return SweepSettings(
        loads=quick_loads if args.quick else loads,
        n_arrivals=args.arrivals or (20_000 if args.quick else 1_000_000),
        seeds=list(range(args.seeds or (2 if args.quick else 3))),
        out=resolve_output_args(args),
    )


def _cell(value: Interval) -> str:
    if np.isinf(value.mean):
        return "unstable"
    return f"{value.mean:.4g}" if np.isnan(value.ci95) else f"{value.mean:.4g} ± {value.ci95:.2g}"


def markdown_report(
    result: Sweep, figure: str, description: str, command: str, kind: str, verdicts: Sequence[CheckedClaim]
) -> str:
    """The figure's Markdown: claim, command, seeds and arrivals, a table, and the checked claims.

    ``kind`` is "response" (E[T] per policy, plus SRPT-1 simulated and by Schrage-Miller) or
    "ratio" (E[T] / E[T^SRPT-1] per seed on the same stream, plus the Theorem 4.1 bound as a ratio).
    """
    lines = [
        f"# {figure}",
        "",
        description,
        "",
        f"Command: `{command}`",
        "",
        f"Seeds {result.seeds}; {result.n_arrivals:,} arrivals per (load, seed) (the paper uses 10^7). "
        + "".join(
            f"Runs of {name} stop as unstable once more than {cap} jobs are present. "
            for name, cap in result.caps.items()
        )
        + f"Cells: mean ± 95% interval over seeds. Wall time {result.seconds:.0f} s.",
        "",
    ]
    if kind == "response":
        header = ["load", "SRPT-1 (Schrage-Miller)", "SRPT-1 (simulated)", *result.policies]
        rows = [
            [f"{load:g}", f"{result.schrage_miller.get(load, float('nan')):.4g}", _cell(result.interval(SRPT1, load))]
            + [_cell(result.interval(name, load)) for name in result.policies]
            for load in result.loads
        ]
    else:
        header = ["load", *result.policies, "Thm 4.1 bound / SRPT-1"]
        rows = [
            [f"{load:g}"]
            + [_cell(result.ratio(name, load)) for name in result.policies]
            + [f"{(result.schrage_miller[load] + result.gap_bound[load]) / result.schrage_miller[load]:.4g}"]
            for load in result.loads
        ]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", *claims_section(verdicts)]
    return "\n".join(lines)


def plot(result: Sweep, figure: str, kind: str, path: str) -> None:
    """E[T] (log scale) or the ratio to SRPT-1 against the load, one line per policy."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), dpi=100)
    axes = fig.add_subplot()
    names = [*result.policies, SRPT1] if kind == "response" else result.policies
    for name in names:
        values = [result.interval(name, x) if kind == "response" else result.ratio(name, x) for x in result.loads]
        finite = [(x, v.mean) for x, v in zip(result.loads, values, strict=True) if np.isfinite(v.mean)]
        if finite:
            axes.plot(*zip(*finite, strict=True), marker="o", label=name)
    if kind == "response":
        axes.set_yscale("log")
        axes.set_ylabel("mean response time E[T]")
    else:
        axes.axhline(1.0, color="grey", linestyle=":")
        axes.set_ylabel("E[T] / E[T] of SRPT-1")
    axes.set_xlabel("load rho")
    axes.set_title(figure)
    axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def write_figure(
    result: Sweep,
    figure: str,
    description: str,
    script: str,
    argv: list[str] | None,
    kind: str,
    verdicts: list[CheckedClaim],
    out: Path,
) -> str:
    """Write ``<figure>.md`` (with the exact command of ``script``) and ``<figure>.png`` to ``out``."""
    arguments = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"python benchmarks/reproduce/{script} {arguments}".strip()
    report = markdown_report(result, figure, description, command, kind, verdicts)
    write_atomic(out / f"{figure}.md", report)
    plot(result, figure, kind, str(out / f"{figure}.png"))
    return report
