"""The evaluation protocol of the RL harness: which seeds train, which validate, which test (docs/rl/index.md).

Every integer seed of an env belongs to exactly one of three ranges, so that a test episode can
never be one a training env was reset with, by construction:

==================  ===============================  =========================================
range               seeds                            used by
==================  ===============================  =========================================
test                ``0 .. 999_999``                 ``schedenv evaluate --agent`` (default 0..99),
                                                     ``benchmarks/rl_versus_paper.py``, baselines
validation          ``1_000_000 .. 1_999_999``       in-training evaluation and ``best_model.zip``
train               ``2**31 ..``                     the training envs' resets
==================  ===============================  =========================================

A training run with seed ``s`` and ``n`` env copies resets copy ``i`` once with
``train_seed(s, i) = 2**31 + s * 2**20 + i``; every later episode of that copy comes from the same
generator stream (Gymnasium's autoreset keeps the copy's generator), so its workloads are those
of that stream, not of any test seed. Model selection (``best_model.zip``) uses validation
seeds only, so the test seeds are touched once, by the final evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable

TEST_SEEDS = range(0, 1_000_000)
"""Seeds reserved for held-out evaluation."""
VALIDATION_SEEDS = range(1_000_000, 2_000_000)
"""Seeds of the in-training evaluations (model selection)."""
TRAIN_SEED_START = 2**31
"""First seed of the training range."""
MAX_ENV_COPIES = 2**20
"""Env copies a run may have (the stride between two runs' training seeds)."""
MAX_RUN_SEED = 2**10
"""Run seeds accepted (0 .. MAX_RUN_SEED - 1), so that training seeds stay below 2**32."""


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
    seeds = range(start, start + episodes)
    if seeds.start < VALIDATION_SEEDS.start or seeds.stop > VALIDATION_SEEDS.stop:
        raise ValueError(
            f"eval_seed={start!r} with eval_episodes={episodes!r} gives seeds {seeds.start}..{seeds.stop - 1}, "
            f"outside the validation range {VALIDATION_SEEDS.start}..{VALIDATION_SEEDS.stop - 1} "
            "(test and training seeds must never be used for model selection)"
        )
    return seeds


def held_out_seeds(start: int, episodes: int) -> range:
    """``episodes`` test seeds from ``start``; refused if they leave the test range."""
    seeds = range(start, start + episodes)
    if episodes < 1 or seeds.start < TEST_SEEDS.start or seeds.stop > TEST_SEEDS.stop:
        raise ValueError(
            f"--seed={start!r} with --episodes={episodes!r} gives test seeds outside "
            f"{TEST_SEEDS.start}..{TEST_SEEDS.stop - 1} (the held-out range; see agents.protocol)"
        )
    return seeds


def check_disjoint(test: Iterable[int], used: Iterable[int], what: str) -> None:
    """Refuse test seeds that a training run also used (``what`` names that use in the message)."""
    common = sorted(set(test) & set(used))
    if common:
        raise ValueError(
            f"test seeds {common[:5]}{'...' if len(common) > 5 else ''} were also {what}; "
            "a held-out evaluation needs seeds the agent never saw (see agents.protocol)"
        )
