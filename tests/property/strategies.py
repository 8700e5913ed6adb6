"""Hypothesis strategies: small env configurations per family (valid, or with one argument spoiled).

A case runs in milliseconds: a handful of jobs, windows of 1-4 slots, few servers. The valid
configurations cover every mode of each family (Malleable ``action_mode`` weights/log/residual/exponent,
``allocation``, ``objective``; Dispatch ``time_limits``/``size_known``/objectives; MultiserverJob
``action_mode`` select/priority/ranked and packings; Moldable ``action_mode`` flat/factored/ranked), every
``invalid_action`` handling, several size laws (ties, heavy tails) and explicit ``jobs`` lists.
:func:`spoiled` replaces one argument by a value drawn from :data:`BAD_VALUES` (or adds an unknown
keyword, or gives a :class:`Hostile` size law), which the env must refuse with a clear error or accept
and run correctly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

from schedenv.workloads import (
    Amdahl,
    BoundedPareto,
    Choice,
    Deterministic,
    Distribution,
    Exponential,
    HyperExponential,
    Uniform,
)

MALLEABLE, DISPATCH, MOLDABLE, MULTISERVER = (
    "schedenv/Malleable-v0",
    "schedenv/Dispatch-v0",
    "schedenv/Moldable-v0",
    "schedenv/MultiserverJob-v0",
)
INVALID_ACTION_MODES = ("fallback", "penalty", "raise")
BAD_VALUES: list[Any] = [
    0, -1, 1, 2, 10**12, 0.5, -0.5, 1e-300, 1e300, math.nan, math.inf, -math.inf, True, False, None,
    "abc", "", [], [1.0, 2.0], [[1, 2], [3]], {"a": 1}, 1 + 1j, (0.0, 1.0), [0], [math.nan], [3.0, 1.0],
]  # fmt: skip
"""Values one argument is spoiled with: wrong types, edges, NaN/inf, out-of-range numbers, bad shapes."""


class Hostile(Distribution):
    """A user's size law (mean 1) whose draws hold one ``bad`` value among ordinary ones, in a row order
    fixed by the generator: what the single validation gate must refuse, naming the argument."""

    def __init__(self, bad: float) -> None:
        self.bad = bad

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        values = rng.exponential(1.0, 1 if size is None else size)
        values[int(rng.integers(values.size))] = self.bad
        return float(values[0]) if size is None else values

    @property
    def mean(self) -> float:
        return 1.0

    @property
    def variance(self) -> float:
        return 1.0

    def __repr__(self) -> str:
        return f"Hostile({self.bad!r})"


HOSTILE_VALUES = [math.nan, math.inf, -math.inf, 0.0, -1.0, 1e300, 1e-300, 5e-324, 2.0]
"""What a user's law may return (2.0 is harmless): each either refused naming the argument, or run."""


@dataclass(frozen=True)
class Case:
    """An env id, its keyword arguments, and the argument spoiled (None: a valid configuration)."""

    env_id: str
    kwargs: dict[str, Any]
    spoiled: str | None = None

    def __repr__(self) -> str:  # the falsifying example hypothesis prints
        return f"Case({self.env_id!r}, {self.kwargs!r})"


small_load = st.floats(0.01, 0.99)
positive = st.floats(1e-3, 1e3)
size_dists = st.one_of(
    st.none(),
    positive.map(Exponential),
    positive.map(Deterministic),
    st.tuples(positive, st.floats(1.01, 100.0)).map(lambda a: Uniform(a[0], a[0] * a[1])),
    st.tuples(positive, st.floats(1.0, 50.0)).map(lambda a: HyperExponential(*a)),
    st.tuples(positive, st.floats(10.0, 1e4), st.floats(0.5, 2.5)).map(
        lambda a: BoundedPareto(a[0], a[0] * a[1], a[2])
    ),
    st.lists(positive, min_size=1, max_size=3, unique=True).map(Choice),
)
"""Size laws (None: the env's default), with ties (Deterministic, Choice) and heavy tails."""


@st.composite
def malleable(draw: st.DrawFn) -> Case:
    mode = draw(st.sampled_from(["offline", "online"]))
    allocation = draw(st.sampled_from(["normalized", "fractions"]))
    speedup = draw(st.one_of(st.floats(0.05, 1.0), st.floats(0.0, 1.0).map(Amdahl)))
    action_modes = ["weights"] if allocation == "fractions" else ["weights", "log", "residual", "exponent"]
    if isinstance(speedup, Amdahl):
        action_modes = action_modes[:2]  # residual and exponent need s(k) = k^p
    kwargs: dict[str, Any] = {
        "mode": mode,
        "n_servers": draw(st.one_of(st.sampled_from([1.0, 4.0, 1000.0]), st.floats(0.5, 1e6))),
        "speedup": speedup,
        "size_dist": draw(size_dists),
        "objective": draw(st.sampled_from(["slowdown", "flow_time"])),
        "max_jobs": draw(st.integers(1, 4)),
        "allocation": allocation,
        "action_mode": draw(st.sampled_from(action_modes)),
        "observe_params": draw(st.booleans()),
        "reward_scale": draw(st.sampled_from([1.0, 0.25])),
    }
    if not isinstance(speedup, Amdahl) and draw(st.booleans()):
        kwargs["p_range"] = draw(st.tuples(st.floats(0.05, 0.5), st.floats(0.5, 1.0)))
    if mode == "offline":
        kwargs["n_jobs"] = draw(st.integers(1, 6))
    else:
        kwargs["n_arrivals"] = draw(st.integers(1, 8))
        kwargs["load"] = draw(small_load)
    return Case(MALLEABLE, kwargs)


@st.composite
def dispatch(draw: st.DrawFn) -> Case:
    limits = st.lists(st.floats(1e-3, 1e5), min_size=1, max_size=3, unique=True).map(sorted)
    n = draw(st.integers(1, 8))
    kwargs: dict[str, Any] = {
        "n_hosts": draw(st.integers(1, 3)),
        "load": draw(small_load),
        "size_dist": draw(size_dists),
        "n_arrivals": n,
        "size_known": draw(st.booleans()),
        "time_limits": draw(st.one_of(st.none(), limits, limits.map(lambda ladder: [*ladder, math.inf]))),
        "objective": draw(st.sampled_from(["slowdown", "response_time", "waiting_time", "waiting_slowdown"])),
        "max_jobs": draw(st.integers(0, 3)),
        "invalid_action": draw(st.sampled_from(INVALID_ACTION_MODES)),
        "invalid_action_penalty": draw(st.sampled_from([1.0, 0.0, 2.5])),
        "observe_params": draw(st.booleans()),
        "reward_scale": draw(st.sampled_from([1.0, 0.25])),
    }
    return Case(DISPATCH, kwargs)


@st.composite
def multiserver(draw: st.DrawFn) -> Case:
    n_servers = draw(st.sampled_from([1, 2, 4, 8]))
    powers = [need for need in (1, 2, 4, 8) if need <= n_servers]
    n = draw(st.integers(1, 8))
    kwargs: dict[str, Any] = {
        "n_servers": n_servers,
        "server_needs": draw(st.lists(st.sampled_from(powers), min_size=1, max_size=3, unique=True)),
        "load": draw(small_load),
        draw(st.sampled_from(["size_dist", "duration_dist"])): draw(size_dists),
        "n_arrivals": n,
        "size_known": draw(st.booleans()),
        "action_mode": draw(st.sampled_from(["select", "priority", "ranked", "residual"])),
        "packing": draw(st.sampled_from(["serverfilling", "firstfit", "greedy"])),
        "max_jobs": draw(st.integers(1, 4)),
        "invalid_action": draw(st.sampled_from(INVALID_ACTION_MODES)),
        "invalid_action_penalty": draw(st.sampled_from([1.0, 0.0, 2.5])),
        "observe_params": draw(st.booleans()),
        "reward_scale": draw(st.sampled_from([1.0, 0.25])),
    }
    return Case(MULTISERVER, kwargs)


@st.composite
def moldable(draw: st.DrawFn) -> Case:
    n = draw(st.integers(1, 6))
    kwargs: dict[str, Any] = {
        "n_procs": draw(st.one_of(st.integers(1, 8), st.sampled_from([64, 128]))),
        "n_jobs": n,
        "arrival_interval": draw(st.one_of(st.sampled_from([None, "light", "middle", "heavy"]), st.floats(1e-2, 1e5))),
        "max_jobs": draw(st.integers(1, 4)),
        "max_running": draw(st.integers(0, 3)),
        "action_mode": draw(st.sampled_from(["flat", "factored", "ranked"])),
        "invalid_action": draw(st.sampled_from(INVALID_ACTION_MODES)),
        "invalid_action_penalty": draw(st.sampled_from([1.0, 0.0, 2.5])),
        "observe_params": draw(st.booleans()),
        "reward_scale": draw(st.sampled_from([1.0, 0.25])),
    }
    return Case(MOLDABLE, kwargs)


times = st.floats(0.0, 100.0)
sizes = st.floats(1e-2, 100.0)


@st.composite
def with_jobs(draw: st.DrawFn, cases: st.SearchStrategy[Case]) -> Case:
    """A valid case from ``cases`` whose workload becomes an explicit ``jobs`` list (1-6 jobs, ties likely)."""
    case = draw(cases)
    kwargs = dict(case.kwargs)
    n = draw(st.integers(1, 6))
    arrivals = sorted(draw(st.lists(st.sampled_from([0.0, 1.0]) | times, min_size=n, max_size=n)))
    if case.env_id == MALLEABLE:
        for name in ("n_jobs", "n_arrivals", "load", "size_dist"):
            kwargs.pop(name, None)
        jobs: Any = draw(st.lists(sizes, min_size=n, max_size=n))
        if kwargs["mode"] == "online":
            jobs = [[a, x] for a, x in zip(arrivals, jobs, strict=True)]
    elif case.env_id == DISPATCH:
        del kwargs["n_arrivals"]
        jobs = [[a, draw(sizes)] for a in arrivals]
    elif case.env_id == MULTISERVER:
        for name in ("server_needs", "size_dist", "duration_dist", "load", "n_arrivals"):
            kwargs.pop(name, None)
        needs = st.integers(1, kwargs["n_servers"])
        jobs = [[a, draw(needs), draw(sizes)] for a in arrivals]
    else:
        for name in ("n_jobs", "arrival_interval"):
            del kwargs[name]
        m = kwargs["n_procs"]
        downey = st.fixed_dictionaries({"L": sizes, "A": st.floats(1.0, float(m)), "sigma": st.floats(0.0, 2.0)})
        table = st.lists(sizes, min_size=1, max_size=min(m, 4)).map(
            lambda r: {"runtimes": {k + 1: t for k, t in enumerate(sorted(r, reverse=True))}}
        )
        jobs = [{"submit": a, **draw(downey | table)} for a in arrivals]
    return Case(case.env_id, {**kwargs, "jobs": jobs})


FAMILIES = {MALLEABLE: malleable(), DISPATCH: dispatch(), MULTISERVER: multiserver(), MOLDABLE: moldable()}
generated_cases = st.one_of(*FAMILIES.values())
valid_cases = generated_cases | with_jobs(generated_cases)
"""A valid small configuration of any registered env (generated workload, or explicit jobs)."""


@st.composite
def spoiled(draw: st.DrawFn) -> Case:
    """A valid case with one argument replaced by a bad value, or an unknown keyword added, or (for a
    generated workload) a user's size law returning a hostile value."""
    case = draw(valid_cases)
    laws = [name for name in ("size_dist", "duration_dist") if name in case.kwargs]
    if laws and draw(st.booleans()):
        bad: Any = Hostile(draw(st.sampled_from(HOSTILE_VALUES)))
        name = laws[0]
    else:
        name = draw(st.sampled_from([*case.kwargs, "bogus_arg"]))
        bad = draw(st.sampled_from(BAD_VALUES))
    return replace(case, kwargs={**case.kwargs, name: bad}, spoiled=name)
