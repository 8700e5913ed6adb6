"""What the native batched envs (``<family>/vector.py``) share: their set-up and their reset rule.

Gymnasium's vector convention: ``seed=s`` seeds copy i with s + i, a list seeds each copy, None keeps
each copy's generator (creating one on first use); ``options["reset_mask"]`` limits the reset to
some copies. Copy i's generator is then exactly the one a single env reset with that seed would own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from schedenv.validation import check_choice, check_int

Env = TypeVar("Env", bound=gym.Env)


def set_up_batch(
    batch: VectorEnv,
    make_env: Callable[..., Env],
    num_envs: int,
    autoreset_mode: str | AutoresetMode,
    kwargs: dict[str, Any],
) -> Env:
    """Give ``batch`` its copy count, autoreset mode and spaces from one single env ``make_env(**kwargs)``.

    The single env (returned: the template the batch reads its parameters from) checks every argument;
    ``render_mode`` is refused, as the batched envs do not render, and so is ``reference`` (its run is
    the single env's); ``reward_scale`` is the template's, which the batch applies to its rewards.
    """
    batch.num_envs = check_int("num_envs", num_envs)
    value = autoreset_mode.value if isinstance(autoreset_mode, AutoresetMode) else autoreset_mode
    mode = AutoresetMode(check_choice("autoreset_mode", value, ("NextStep", "SameStep")))
    batch.metadata = {"autoreset_mode": mode, "render_modes": []}
    if kwargs.get("render_mode") is not None:
        raise ValueError(f"render_mode={kwargs['render_mode']!r} is not supported by the batched env; use None")
    if kwargs.get("reference") is not None:
        raise ValueError(
            f"reference={kwargs['reference']!r} is not supported by the batched env yet; use the single env "
            "(gym.make) or schedenv.fastpath.evaluate_fast for the reference's metrics"
        )
    template = make_env(**kwargs)
    batch.spec = None
    batch.single_observation_space = template.observation_space
    batch.single_action_space = template.action_space
    batch.observation_space = batch_space(batch.single_observation_space, batch.num_envs)
    batch.action_space = batch_space(batch.single_action_space, batch.num_envs)
    return template


def reseed_copies(
    generators: list[np.random.Generator | None], seed: int | list[int | None] | None, options: dict[str, Any] | None
) -> np.ndarray:
    """Reseed the copies to reset (in place in ``generators``) and return their indices."""
    n = len(generators)
    mask = np.ones(n, dtype=np.bool_)
    if options is not None and "reset_mask" in options:
        mask = np.asarray(options["reset_mask"], dtype=np.bool_)
        if mask.shape != (n,):
            raise ValueError(f"options['reset_mask'] has shape {mask.shape}; expected ({n},)")
    if seed is None:
        seeds: list[int | None] = [None] * n
    elif isinstance(seed, (int, np.integer)) and _is_seed(seed):
        seeds = [int(seed) + i for i in range(n)]
    elif isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"seed has {len(seeds)} entries; expected num_envs={n}")
        bad = [s for s in seeds if s is not None and not _is_seed(s)]
        if bad:
            raise ValueError(f"seed={seed!r} is not allowed: entry {bad[0]!r} is not an integer >= 0 or None")
        seeds = [None if s is None else int(s) for s in seeds]  # Gymnasium's seeding takes Python integers
    else:
        raise ValueError(f"seed={seed!r} is not allowed; give an integer >= 0, a list of num_envs seeds or None")
    indices = np.flatnonzero(mask)
    for i in indices:
        if seeds[i] is not None or generators[i] is None:
            generators[i] = seeding.np_random(seeds[i])[0]
    return indices


def _is_seed(value: Any) -> bool:
    """An integer >= 0 (Python or NumPy; not a boolean), as ``np.random.default_rng`` takes."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and bool(value >= 0)
