"""The papers' policies, one module per family, behind one registry.

>>> import baselines
>>> policy = baselines.make("hesrpt")
>>> "equi" in baselines.available("schedenv/Malleable-v0")
True

Each family module defines ``ENV_ID`` (the env id it acts on), ``REFERENCE`` (the name of the
family's paper policy, against which ratios are reported) and ``POLICIES`` (name -> factory; an
alias is a second name for the same factory), and may define ``PLANNERS`` (the same, for policies
that plan by simulating futures: made by name, listed only when asked, ``available(planners=True)``).
The modules are those of the registered families (``Family.baselines`` in ``schedenv.family``), so a
new family's baselines join by its registry entry.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from baselines.base import Policy
from schedenv import family as families
from schedenv.validation import suggest


def _families() -> list[ModuleType]:
    return [families.resolve(f.baselines) for f in families.families() if f.baselines is not None]


def _factories(planners: bool = True) -> dict[str, tuple[str, Callable[..., Policy]]]:
    table: dict[str, tuple[str, Callable[..., Policy]]] = {}
    for module in _families():
        policies = {**module.POLICIES, **(getattr(module, "PLANNERS", {}) if planners else {})}
        for name, factory in policies.items():
            table[name] = (module.ENV_ID, factory)
    return table


def make(name: str, **kwargs: Any) -> Policy:
    """Build the baseline registered as ``name``; unknown names suggest near matches."""
    table = _factories()
    if name not in table:
        raise ValueError(f"unknown baseline {name!r}{suggest(name, table)}; known: {sorted(table)}")
    return table[name][1](**kwargs)


def available(env_id: str | None = None, planners: bool = False) -> list[str]:
    """Baseline names (aliases included) for ``env_id``, or for every env when None. ``planners``: also the
    policies that plan by simulating futures (a family module's ``PLANNERS``), too slow for default lists:
    leaderboards, ``schedenv evaluate`` without ``--contenders``, the RL comparisons' baseline pools."""
    return [name for name, (env, _) in _factories(planners).items() if env_id is None or env == env_id]


def env_id_of(name: str) -> str:
    """The env id the baseline ``name`` acts on."""
    table = _factories()
    if name not in table:
        raise ValueError(f"unknown baseline {name!r}{suggest(name, table)}; known: {sorted(table)}")
    return table[name][0]


def reference(env_id: str) -> str:
    """The name of the paper policy of the family ``env_id`` (heSRPT, TAGS, ...)."""
    for module in _families():
        if env_id == module.ENV_ID:
            return str(module.REFERENCE)
    known = [module.ENV_ID for module in _families()]
    raise ValueError(f"no baselines for env id {env_id!r}{suggest(env_id, known)}; known: {known}")


__all__ = ["Policy", "available", "env_id_of", "make", "reference"]
