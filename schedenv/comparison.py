"""What the command lines share to compare contenders on one env (``schedenv evaluate``, with or
without ``--agent``): the env id and kwargs they read, the metric they rank by, the table and its JSON.

Both ``schedenv.cli`` and ``agents.cli`` import it, so it sits below both (DESIGN §2.4: every
contender on the same seeds, the ratio to the family's paper policy).
"""

from __future__ import annotations

import json
import math
from typing import Any

import gymnasium as gym

import schedenv
from schedenv.evaluation import EvaluationResult
from schedenv.validation import suggest
from schedenv.workloads import from_spec


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
        raise SystemExit(
            f"unknown env id {env_id!r}{suggest(env_id, schedenv.ENV_IDS)}; known: {list(schedenv.ENV_IDS)}"
        )
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
    """One row per contender: mean, 95% interval and the paired ratio to ``reference`` on common seeds."""
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
        }
        for name, result in results.items()
    ]


def print_comparison(rows: list[dict[str, Any]], metric: str, reference: str) -> None:
    """The rows of ``comparison_rows`` as an aligned text table."""
    width = max(16, *(len(row["contender"]) + 2 for row in rows))
    print(f"{'contender':<{width}} {metric + ' (mean ± 95%)':>34} {'ratio to ' + reference:>20}")
    for row in rows:
        print(f"{row['contender']:<{width}} {row['mean']:>20.6g} ± {row['ci95']:<11.3g} {row['ratio']:>20.4f}")
