"""One descriptor per env family and the registry that every consumer reads (docs/families.md).

A ``Family`` names, as data, everything the rest of the project needs to know about a family:
its env id and classes, its baselines and paper policy, its compiled fast path, its metrics, its
leaderboard scenarios and its shipped RL configs. Code is referred to by import path strings
(``"module:attribute"`` or ``"module"``), resolved only where it is used (``resolve``), so this
module imports no family and no layer above it: ``import schedenv`` stays cheap, and the layers
of ``lint-imports`` hold.

The fast-path dispatch (``schedenv.fastpath``), the ``schedenv`` command, the leaderboard suites,
the baselines registry, ``agents.train.family_config`` and the docs' family table all read
``families()``. Adding a family is one folder plus one ``register(Family(...))``
(``tests/test_family_registry.py`` registers a toy family that way).

>>> from schedenv import family
>>> family.of_env("schedenv/Malleable-v0").paper_policy
'hesrpt'
>>> [f.name for f in family.families()]
['malleable', 'dispatch', 'moldable', 'multiserver']
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gymnasium.envs.registration import register as gym_register
from gymnasium.envs.registration import registry as gym_registry

from schedenv.validation import suggest


@dataclass(frozen=True)
class Family:
    """What the project knows about one env family; code fields are import paths (see ``resolve``)."""

    name: str
    """Short lowercase name (``schedenv leaderboard --families``, scenario tables)."""
    env_id: str
    """The Gymnasium id of the family's env."""
    env: str
    """Entry point of the single env class, ``"module:Class"``."""
    paper: str
    """The paper the family reproduces (its page under docs/envs/)."""
    paper_policy: str
    """The baseline name of the paper's policy: the reference every ratio is reported against."""
    objective_metric: str
    """The episode metric the env's reward accrues under its default arguments (what tables rank by)."""
    metrics: tuple[str, ...]
    """Metrics every episode of the env reports (``episode_metrics`` keys; some envs add more)."""
    vector_env: str | None = None
    """Entry point of the native batched env (``gym.make_vec``), or None: Gymnasium's own vectorisation."""
    baselines: str | None = None
    """Module of the family's baselines (defining ``ENV_ID``, ``REFERENCE``, ``POLICIES``), or None."""
    fast_path: str | None = None
    """Module with ``supports(agent, env_kwargs)`` and ``run(env, agent, seed, *, emulate_env, chunk,
    keep_completions) -> FastRun`` whose numbers equal ``evaluate``'s; None sends every evaluation
    through ``schedenv.evaluation.evaluate``. (The multiserver family's own ``run_fast`` acts on all
    jobs, outside the env's window, so it is not this entry: see docs/families.md.)"""
    scenarios: str | None = None
    """Entry point of ``scenarios(suite: str) -> list[Scenario]`` (the leaderboard's per-family table)."""
    rl_configs: Mapping[str, str] = field(default_factory=dict)
    """Algorithm name -> the config file in ``agents/configs`` that ``schedenv train`` uses by default."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rl_configs", MappingProxyType(dict(self.rl_configs)))
        object.__setattr__(self, "metrics", tuple(self.metrics))


_REGISTRY: dict[str, Family] = {}
_GYM_IDS_ADDED: set[str] = set()
"""The Gymnasium ids that ``register`` added (``unregister`` removes only those)."""


def register(family: Family) -> Family:
    """Add ``family`` to the registry and its env id to Gymnasium's (when not registered yet)."""
    if family.name in _REGISTRY:
        raise ValueError(f"family name={family.name!r} is already registered; registered: {list(_REGISTRY)}")
    taken = {f.env_id: f.name for f in _REGISTRY.values()}
    if family.env_id in taken:
        raise ValueError(f"env_id={family.env_id!r} already belongs to the family {taken[family.env_id]!r}")
    if family.env_id not in gym_registry:
        gym_register(id=family.env_id, entry_point=family.env, vector_entry_point=family.vector_env)
        _GYM_IDS_ADDED.add(family.env_id)
    _REGISTRY[family.name] = family
    return family


def unregister(name: str) -> Family:
    """Remove the family ``name``, and its Gymnasium id if ``register`` added it (the inverse of ``register``)."""
    family = get(name)
    del _REGISTRY[name]
    if family.env_id in _GYM_IDS_ADDED:
        _GYM_IDS_ADDED.discard(family.env_id)
        del gym_registry[family.env_id]
    return family


def families() -> tuple[Family, ...]:
    """Every registered family, in registration order."""
    return tuple(_REGISTRY.values())


def get(name: str) -> Family:
    """The family registered as ``name``; unknown names suggest near matches."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown family {name!r}{suggest(name, _REGISTRY)}; known: {list(_REGISTRY)}")
    return _REGISTRY[name]


def of_env(env_id: str) -> Family:
    """The family whose env id is ``env_id``; unknown ids suggest near matches."""
    for family in _REGISTRY.values():
        if family.env_id == env_id:
            return family
    known = [f.env_id for f in _REGISTRY.values()]
    raise ValueError(f"unknown env id {env_id!r}{suggest(env_id, known)}; known: {known}")


def resolve(path: str) -> Any:
    """The object at ``"module:attribute"``, or the module at ``"module"`` (imported on first use)."""
    module_name, _, attribute = path.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


BUILTIN: tuple[Family, ...] = (
    Family(
        name="malleable",
        env_id="schedenv/Malleable-v0",
        env="schedenv.malleable.env:MalleableEnv",
        vector_env="schedenv.malleable.vector:MalleableVectorEnv",
        paper="heSRPT (Berg, Vesilo, Harchol-Balter, 2020)",
        paper_policy="hesrpt",
        baselines="baselines.malleable",
        fast_path="schedenv.fastpath.malleable",
        objective_metric="mean_slowdown",
        metrics=("n_completed", "mean_response_time", "mean_slowdown", "makespan", "overflow_fraction"),
        scenarios="schedenv.leaderboard.suites:malleable",
        rl_configs={"ppo": "malleable_ppo.yaml"},
    ),
    Family(
        name="dispatch",
        env_id="schedenv/Dispatch-v0",
        env="schedenv.dispatch.env:DispatchEnv",
        vector_env="schedenv.dispatch.vector:DispatchVectorEnv",
        paper="TAGS (Harchol-Balter, J. ACM 2002)",
        paper_policy="tags-slowdown",
        baselines="baselines.dispatch",
        fast_path="schedenv.fastpath.dispatch",
        objective_metric="mean_slowdown",
        metrics=("n_completed", "mean_response_time", "mean_waiting_time", "mean_slowdown", "makespan"),
        scenarios="schedenv.leaderboard.suites:dispatch",
        rl_configs={"maskable_ppo": "dispatch_maskable_ppo.yaml"},
    ),
    Family(
        name="moldable",
        env_id="schedenv/Moldable-v0",
        env="schedenv.moldable.env:MoldableEnv",
        vector_env="schedenv.moldable.vector:MoldableVectorEnv",
        paper="HRF (Wu, Tuo, Jin, Yan, Weng, CF'15)",
        paper_policy="hrf-easy",
        baselines="baselines.moldable",
        fast_path="schedenv.fastpath.moldable",
        objective_metric="mean_response_time",
        metrics=("n_completed", "mean_response_time", "mean_slowdown", "mean_waiting_time", "makespan"),
        scenarios="schedenv.leaderboard.suites:moldable",
        rl_configs={"maskable_ppo": "moldable_maskable_ppo.yaml"},
    ),
    Family(
        name="multiserver",
        env_id="schedenv/MultiserverJob-v0",
        env="schedenv.multiserver.env:MultiserverJobEnv",
        vector_env="schedenv.multiserver.vector:MultiserverJobVectorEnv",
        paper="ServerFilling-SRPT (Grosof, Scully, Harchol-Balter, Scheller-Wolf, POMACS 2022)",
        paper_policy="serverfilling-srpt",
        baselines="baselines.multiserver",
        objective_metric="mean_response_time",
        metrics=("n_completed", "mean_response_time", "mean_slowdown", "mean_waiting_time", "makespan"),
        scenarios="schedenv.leaderboard.suites:multiserver",
        rl_configs={"ppo": "multiserverjob_ppo.yaml", "maskable_ppo": "multiserverjob_maskable_ppo.yaml"},
    ),
)
"""The four families of the package, registered by ``import schedenv`` in this order (that of ``schedenv.ENV_IDS``)."""


__all__ = ["BUILTIN", "Family", "families", "get", "of_env", "register", "resolve", "unregister"]
