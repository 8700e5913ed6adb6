"""The seed plan of the RL harness: which seeds train, validate, test and publish (docs/rl/seed-plan.md).

Every integer seed of an env belongs to at most one of four disjoint ranges, so that an episode
used for one purpose can never be one used for another, by construction:

=================  =====================================  ==================================================
split              seeds                                  used by
=================  =====================================  ==================================================
``test``           ``0 .. 999_999``                       development test: ``schedenv evaluate --agent``
                                                          (default), tuning, anything a person may look at
``validation``     ``1_000_000 .. 1_999_999``             in-training evaluation and ``best_model.zip``
``sealed``         ``1_000_000_000 .. 1_000_999_999``     published results only; every look is written to a
                                                          ledger (``benchmarks/results/ledger.jsonl``)
``train``          ``2**31 .. 2**31 + 2**30 - 1``         the training envs' resets
=================  =====================================  ==================================================

The sealed range sits in the gap between the validation range and the training range, far from
both: a count of episodes from any other range's start never reaches it, and the earlier ranges
keep their bounds (results and runs made before it existed stay valid).

A training run with seed ``s`` and ``n`` env copies resets copy ``i`` once with
``train_seed(s, i) = 2**31 + s * 2**20 + i``; every later episode of that copy comes from the same
generator stream (Gymnasium's autoreset keeps the copy's generator), so its workloads are those
of that stream, not of any test seed. Model selection (``best_model.zip``) uses validation
seeds only.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

TEST_SEEDS = range(0, 1_000_000)
"""Development-test seeds: held out from training and model selection, free to look at while tuning."""
DEVELOPMENT_TEST_SEEDS = TEST_SEEDS
"""The same range as ``TEST_SEEDS``, by the name of its role."""
VALIDATION_SEEDS = range(1_000_000, 2_000_000)
"""Seeds of the in-training evaluations (model selection)."""
SEALED_TEST_SEEDS = range(1_000_000_000, 1_001_000_000)
"""Seeds of published results only; every evaluation on them is recorded in a ledger."""
TRAIN_SEED_START = 2**31
"""First seed of the training range."""
MAX_ENV_COPIES = 2**20
"""Env copies a run may have (the stride between two runs' training seeds)."""
MAX_RUN_SEED = 2**10
"""Run seeds accepted (0 .. MAX_RUN_SEED - 1), so that training seeds stay below 2**32."""
TRAIN_SEEDS = range(TRAIN_SEED_START, TRAIN_SEED_START + MAX_RUN_SEED * MAX_ENV_COPIES)
"""Every seed a training env copy may be reset with."""

SPLITS: dict[str, range] = {
    "test": TEST_SEEDS,
    "validation": VALIDATION_SEEDS,
    "sealed": SEALED_TEST_SEEDS,
    "train": TRAIN_SEEDS,
}
"""The four disjoint seed ranges by split name."""

LEDGER = Path("benchmarks/results/ledger.jsonl")
"""The committed ledger of looks at the sealed seeds (relative to the repository root)."""


def _span(seeds: range) -> str:
    return f"{seeds.start}..{seeds.stop - 1}"


def split_range(split: str) -> range:
    """The seed range of ``split`` (one of ``SPLITS``)."""
    if split not in SPLITS:
        raise ValueError(f"split={split!r} is not allowed; choose one of {list(SPLITS)}")
    return SPLITS[split]


def check_split(seeds: range, split: str, what: str) -> range:
    """``seeds`` if they lie inside the ``split`` range, else a ``ValueError`` naming both ranges.

    ``what`` names where the seeds came from (e.g. ``"--seed=5 with --episodes=10"``). A range that
    overlaps another split names that split's range too.
    """
    allowed = split_range(split)
    if len(seeds) < 1:
        raise ValueError(f"{what} gives no seeds; at least one is needed")
    if allowed.start <= seeds.start and seeds.stop <= allowed.stop:
        return seeds
    overlaps = [
        f"the {name} range {_span(other)}"
        for name, other in SPLITS.items()
        if name != split and seeds.start < other.stop and other.start < seeds.stop
    ]
    clash = f"; they overlap {' and '.join(overlaps)}" if overlaps else ""
    raise ValueError(
        f"{what} gives seeds {_span(seeds)}, outside the {split} range {_span(allowed)}{clash} "
        "(see docs/rl/seed-plan.md)"
    )


def split_seeds(split: str, episodes: int, start: int | None = None) -> range:
    """``episodes`` consecutive seeds of ``split`` from ``start`` (default: the split's first seed)."""
    first = split_range(split).start if start is None else start
    return check_split(range(first, first + episodes), split, f"split={split!r} from {first} with {episodes} seeds")


def train_seed(run_seed: int, copy: int) -> int:
    """The seed that env copy ``copy`` of the training run with seed ``run_seed`` is reset with."""
    if not 0 <= run_seed < MAX_RUN_SEED:
        raise ValueError(f"seed={run_seed!r} is not allowed; a training run's seed must be in 0..{MAX_RUN_SEED - 1}")
    if not 0 <= copy < MAX_ENV_COPIES:
        raise ValueError(f"n_envs={copy + 1} is not allowed; at most {MAX_ENV_COPIES} env copies")
    return TRAIN_SEED_START + run_seed * MAX_ENV_COPIES + copy


def train_seeds(run_seed: int, n_envs: int) -> list[int]:
    """The reset seeds of the ``n_envs`` training copies of run ``run_seed`` (one each, at the start)."""
    return [train_seed(run_seed, i) for i in range(n_envs)]


def validation_seeds(start: int, episodes: int) -> range:
    """``episodes`` validation seeds from ``start``; refused if they leave the validation range."""
    return check_split(
        range(start, start + episodes), "validation", f"eval_seed={start!r} with eval_episodes={episodes!r}"
    )


def held_out_seeds(start: int, episodes: int, split: str = "test") -> range:
    """``episodes`` seeds of a held-out split (``test`` or ``sealed``) from ``start``; refused outside it."""
    if split not in ("test", "sealed"):
        raise ValueError(f"--split={split!r} is not allowed; held-out seeds are 'test' or 'sealed'")
    return check_split(range(start, start + episodes), split, f"--seed={start!r} with --episodes={episodes!r}")


def check_disjoint(test: Iterable[int], used: Iterable[int], what: str) -> None:
    """Refuse test seeds that a training run also used (``what`` names that use in the message)."""
    common = sorted(set(test) & set(used))
    if common:
        raise ValueError(
            f"test seeds {common[:5]}{'...' if len(common) > 5 else ''} were also {what}; "
            "a held-out evaluation needs seeds the agent never saw (see docs/rl/seed-plan.md)"
        )


RUN_SPECIFIC = ("seed", "progress_bar", "tensorboard", "device")
"""Config fields that differ between runs of one published config, left out of its hash."""


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of a resolved training config (canonical JSON), without the fields of ``RUN_SPECIFIC``."""
    kept = {key: value for key, value in config.items() if key not in RUN_SPECIFIC}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


LATER_FIELDS: dict[str, Any] = {
    "eval_env_kwargs": {},
    "eval_restore": 0.0,
    "warm_start_smoothing": 0.0,
    "warm_start_explore": [],
    "warm_start_kl": False,
    "warm_start_dagger": 0,
    "warm_start_lookahead": False,
    "warm_start_kwargs": {},
}
"""``agents.train.TrainConfig`` fields added after the seed plan's first publications, each with its default:
the value with which a config written before the field existed trains as it did then."""


def earlier_config_hashes(config: Mapping[str, Any]) -> set[str]:
    """``config_hash`` of ``config`` and of it without any set of the ``LATER_FIELDS`` that it holds at their
    defaults: the hashes the same config had under the ``TrainConfig`` of earlier commits. A publication whose
    hash is one of them was trained from this config (``--replicate`` checks it, docs/rl/seed-plan.md)."""
    defaults = [name for name, value in LATER_FIELDS.items() if name in config and config[name] == value]
    hashes = set()
    for mask in range(2 ** len(defaults)):
        dropped = {name for bit, name in enumerate(defaults) if mask >> bit & 1}
        hashes.add(config_hash({key: value for key, value in config.items() if key not in dropped}))
    return hashes


def ledger_entry(results: str, config: Mapping[str, Any], commit: str, seeds: range) -> dict[str, Any]:
    """One ledger line: the results it produced, the config's hash, the commit, the UTC date, and the seeds
    played as ``[first, last]``."""
    return {
        "results": results,
        "config_sha256": config_hash(config),
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seeds": [seeds.start, seeds.stop - 1],
    }


def append_ledger(path: Path, entry: Mapping[str, Any]) -> None:
    """Append ``entry`` as one JSON line to the ledger at ``path`` (created with its folder if missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as file:
        file.write(json.dumps(entry, sort_keys=True) + "\n")
