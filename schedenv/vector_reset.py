"""The reset rule shared by the native batched envs (``malleable/vector.py``, ``dispatch/vector.py``).

Gymnasium's vector convention: ``seed=s`` seeds copy i with s + i, a list seeds each copy, None keeps
each copy's generator (creating one on first use); ``options["reset_mask"]`` limits the reset to
some copies. Copy i's generator is then exactly the one a single env reset with that seed would own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.utils import seeding


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
    if isinstance(seed, (bool, np.bool_)):
        raise ValueError(f"seed={seed!r} is not allowed; give an integer >= 0, a list of num_envs seeds or None")
    if seed is None or isinstance(seed, (int, np.integer)):
        seeds: list[int | None] = [None if seed is None else int(seed) + i for i in range(n)]
    else:
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"seed has {len(seeds)} entries; expected num_envs={n}")
    indices = np.flatnonzero(mask)
    for i in indices:
        if seeds[i] is not None or generators[i] is None:
            generators[i] = seeding.np_random(seeds[i])[0]
    return indices
