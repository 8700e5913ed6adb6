"""Arguments that explicit ``jobs`` (or a trace) make moot are refused, naming them, instead of being
silently ignored; their defaults, and the arguments a job set still uses, keep working."""

from __future__ import annotations

import gymnasium as gym
import pytest

import schedenv  # noqa: F401  (registers the env ids)
from schedenv.moldable.workload import CirneWorkload
from schedenv.workloads import Exponential

MOLDABLE_JOBS = [{"runtimes": {1: 5.0, 2: 3.0}}, {"submit": 1.0, "runtimes": {1: 2.0}}]
CASES = [
    ("schedenv/Malleable-v0", {"jobs": [1.0, 2.0]}, {"n_jobs": 3}),
    ("schedenv/Malleable-v0", {"jobs": [1.0, 2.0]}, {"size_dist": Exponential(1.0)}),
    ("schedenv/Malleable-v0", {"jobs": [[0.0, 1.0], [1.0, 2.0]], "mode": "online"}, {"load": 0.5}),
    ("schedenv/Malleable-v0", {"jobs": [[0.0, 1.0], [1.0, 2.0]], "mode": "online"}, {"n_arrivals": 10}),
    ("schedenv/Dispatch-v0", {"jobs": [(0.0, 1.0), (1.0, 2.0)]}, {"n_arrivals": 10}),
    ("schedenv/MultiserverJob-v0", {"jobs": [(1, 1.0), (2, 2.0)]}, {"load": 0.5}),
    ("schedenv/MultiserverJob-v0", {"jobs": [(1, 1.0), (2, 2.0)]}, {"server_needs": [1, 2]}),
    ("schedenv/MultiserverJob-v0", {"jobs": [(1, 1.0), (2, 2.0)]}, {"duration_dist": Exponential(1.0)}),
    ("schedenv/Moldable-v0", {"jobs": MOLDABLE_JOBS}, {"arrival_interval": 10.0}),
    ("schedenv/Moldable-v0", {"jobs": MOLDABLE_JOBS}, {"workload": CirneWorkload(work_low=10.0)}),
]


@pytest.mark.parametrize(("env_id", "base", "ignored"), CASES)
def test_a_kwarg_that_explicit_jobs_make_moot_is_refused(env_id: str, base: dict, ignored: dict) -> None:
    env = gym.make(env_id, **base)  # the job set alone, and with the moot argument at its default, works
    env.reset(seed=0)
    name = next(iter(ignored))
    with pytest.raises(ValueError, match=rf"^{name}=.* is not allowed with explicit jobs: it is unused then and "):
        gym.make(env_id, **base, **ignored)


def test_every_moot_kwarg_is_named_at_once() -> None:
    with pytest.raises(ValueError, match=r"^load=0\.6, n_arrivals=10 are not allowed .* drop load and n_arrivals$"):
        gym.make("schedenv/Malleable-v0", mode="online", jobs=[(0.0, 1.0)], load=0.6, n_arrivals=10)


def test_dispatch_keeps_load_and_size_dist_with_jobs_for_model_based_policies() -> None:
    env = gym.make("schedenv/Dispatch-v0", jobs=[(0.0, 1.0), (1.0, 2.0)], load=0.9, size_dist=Exponential(2.0))
    assert env.unwrapped.load == 0.9
