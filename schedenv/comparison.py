"""What the command lines share to compare contenders on one env (``schedenv evaluate``, with or
without ``--agent``): the env id and kwargs they read, the metric they rank by, the table and its JSON.

Both ``schedenv.cli`` and ``agents.cli`` import it, so it sits below both (docs/architecture.md: every
contender on the same seeds, the ratio to the family's paper policy).
"""

from __future__ import annotations

import json
import math
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

import baselines
from schedenv import family
from schedenv.evaluation import EvaluationResult
from schedenv.fastpath import evaluate_fast
from schedenv.stats import seed_view
from schedenv.validation import check_int, suggest
from schedenv.workloads import from_spec

USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, gym.error.Error)
"""What a command reports as the user's mistake: bad values and types (our checks raise ValueError,
or a ValueError-and-TypeError for unknown arguments), unusable paths, what Gymnasium refuses."""


def run_reporting_errors(prog: str, run: Callable[[], int]) -> int:
    """``run()``; a user error becomes one line on stderr and exit status 2, a bug a traceback and 1.

    User errors are ``USER_ERRORS`` and ``SystemExit`` with a message (a command's own refusals).
    Anything else is a bug of ours: it is labelled as such, with the traceback to report.
    """
    try:
        return int(run())
    except SystemExit as stop:
        if isinstance(stop.code, str):
            print(f"{prog}: error: {_one_line(stop.code)}", file=sys.stderr)
            return 2
        raise
    except USER_ERRORS as error:
        print(f"{prog}: error: {_one_line(str(error))}", file=sys.stderr)
        return 2
    except Exception as error:  # the last resort: say it is a bug, keep the traceback
        print(f"{prog}: internal error (a bug; please report): {type(error).__name__}: {error}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 1


def _one_line(message: str) -> str:
    return " ".join(message.split())


def check_out_dir(flag: str, path: str | Path) -> Path:
    """Create the output folder given to ``flag`` (with its parents) or refuse it, naming the flag."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"{flag} {str(path)!r} cannot be created: {error.strerror or error}") from error
    if not folder.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is not a folder")
    return folder


def check_seeds(flag: str, seed: int, episodes: int) -> range:
    """``episodes`` consecutive seeds from ``seed``; both are checked (seeds are integers >= 0)."""
    check_int(flag, seed, minimum=0)
    check_int("--episodes", episodes, minimum=1)
    return range(seed, seed + episodes)


def check_metric(metric: str, available: Sequence[str]) -> str:
    """``metric`` if the evaluation reports it, else refuse naming the near matches."""
    if metric not in available:
        raise ValueError(
            f"--metric {metric!r} is not reported by this env{suggest(metric, available)}; known: {sorted(available)}"
        )
    return metric


def parse_env_kwargs(text: str | None) -> dict[str, Any]:
    """Env kwargs from JSON; a value like ``{"type": "Pareto", "alpha": 1.5}`` becomes the object."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"--env-kwargs is not valid JSON: {error}") from error
    if not isinstance(raw, dict):
        raise SystemExit(f"--env-kwargs must be a JSON object, got {type(raw).__name__}")
    return {key: from_spec(value) for key, value in raw.items()}


def check_env_id(env_id: str) -> str:
    """``env_id`` if registered, else exit naming the near matches."""
    if env_id not in gym.registry:
        known = [entry.env_id for entry in family.families()]
        raise SystemExit(f"unknown env id {env_id!r}{suggest(env_id, known)}; known: {known}")
    return env_id


def objective_metric(env_id: str, env_kwargs: dict[str, Any]) -> str:
    """The metric that the env's reward accrues (what a table should rank by)."""
    env = gym.make(env_id, **env_kwargs)
    objective = str(getattr(env.unwrapped, "objective", "response_time"))
    env.close()
    return {"flow_time": "mean_response_time", "response_time": "mean_response_time"}.get(
        objective, f"mean_{objective}"
    )


def strict_json(value: Any) -> Any:
    """``value`` with NaN and inf floats replaced by None, so that the output is strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [strict_json(item) for item in value]
    return value


def comparison_rows(results: dict[str, EvaluationResult], reference: str, metric: str) -> list[dict[str, Any]]:
    """One row per contender: mean, 95% interval, the paired ratio to ``reference`` on common seeds, and on how
    many of them the contender is below, equal to and above it (``seeds``: ``schedenv.stats.seed_view``)."""
    base = results[reference]
    return [
        {
            "contender": name,
            "env_id": result.env_id,
            "mean": result.summary[metric].mean,
            "ci95": result.summary[metric].ci95,
            "reference": reference,
            "reference_mean": base.summary[metric].mean,
            "ratio": result.compare(base, metric).ratio,
            "seeds": seed_counts(*result.paired_values(base, metric)),
        }
        for name, result in results.items()
    ]


def seed_counts(costs: np.ndarray, reference: np.ndarray) -> dict[str, int]:
    """``{"below": b, "equal": e, "above": a}``: the seeds on which ``costs`` lie below, equal to (within
    ``schedenv.stats.SEED_TIE``) and above ``reference`` (a comparison row's ``seeds``)."""
    view = seed_view(costs, reference)
    return {"below": view.below, "equal": view.equal, "above": view.above}


def evaluate_applicable(
    env_id: str, names: Sequence[str], seeds: Sequence[int], env_kwargs: dict[str, Any]
) -> tuple[dict[str, EvaluationResult], dict[str, str]]:
    """Evaluate the paper policy and the baselines ``names`` of ``env_id`` on ``seeds`` (paper policy first).

    A baseline that cannot act in this configuration (e.g. a size-aware dispatcher when the env
    hides job sizes) is not an error: it comes back in the second dict with the reason, to be shown
    as n/a. A name that is not a baseline of ``env_id`` is refused.
    """
    reference = baselines.reference(env_id)
    known = baselines.available(env_id, planners=True)
    for name in names:
        if name not in known:
            raise ValueError(
                f"--contenders: {name!r} is not a baseline of {env_id}{suggest(name, known)}; known: {known}"
            )
    results = {reference: evaluate_fast(env_id, reference, seeds, **env_kwargs)}
    skipped: dict[str, str] = {}
    for name in names:
        if name == reference:
            continue
        try:
            results[name] = evaluate_fast(env_id, name, seeds, **env_kwargs)
        except ValueError as error:
            skipped[name] = str(error)
    return results, skipped


def print_comparison(
    rows: list[dict[str, Any]],
    metric: str,
    reference: str,
    file: TextIO | None = None,
    not_applicable: dict[str, str] | None = None,
) -> None:
    """The rows of ``comparison_rows`` as an aligned text table on ``file`` (default stdout), then the
    baselines that do not apply (``evaluate_applicable``) as n/a with the reason."""
    skipped = not_applicable or {}
    width = max(16, *(len(name) + 2 for name in [*(row["contender"] for row in rows), *skipped]))
    print(
        f"{'contender':<{width}} {metric + ' (mean ± 95%)':>34} {'ratio to ' + reference:>20} "
        f"{'seeds below / equal / above':>28}",
        file=file,
    )
    for row in rows:
        seeds = "{below} / {equal} / {above}".format(**row["seeds"])
        print(
            f"{row['contender']:<{width}} {row['mean']:>20.6g} ± {row['ci95']:<11.3g} {row['ratio']:>20.4f} "
            f"{seeds:>28}",
            file=file,
        )
    for name, reason in skipped.items():
        print(f"{name:<{width}} {'n/a':>20}   ({reason})", file=file)
