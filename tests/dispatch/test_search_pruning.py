"""``search_rungs`` stops a move's episodes once it cannot be the lowest, and still returns the exhaustive
coordinate descent's rungs (``exhaustive=True``; docs/baselines/dispatch.md, "Cutoffs for cycle stealing")."""

from __future__ import annotations

import pytest

from baselines.dispatch import (
    TUNING_SEEDS,
    Tags,
    TagsCentralQueue,
    TagsCentralQueueIdle,
    TagsSlowdownCycleStealing,
    search_rungs,
)
from schedenv import family as families
from schedenv.dispatch.env import DispatchEnv
from schedenv.workloads import BoundedPareto

REGIME = {"load": 0.5, "size_dist": BoundedPareto.with_mean(3000.0, alpha=1.1, upper=1e7), "n_arrivals": 2_000}
"""The Dispatch preset's sizes and load on short episodes (the search's every move is played here)."""


class _Counted:
    """The family's fast-path ``run``, counting its episodes."""

    def __init__(self) -> None:
        self.run = families.resolve(f"{families.of_env('schedenv/Dispatch-v0').fast_path}:run")
        self.episodes = 0

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.episodes += 1
        return self.run(*args, **kwargs)


@pytest.mark.parametrize(
    ("rule", "n_hosts", "start"),
    [
        (TagsCentralQueueIdle, 2, [6, 6]),
        (TagsCentralQueueIdle, 2, [2, 9]),
        (TagsSlowdownCycleStealing, 2, [3]),
        (TagsCentralQueue, 3, [3, 8]),
    ],
)
def test_the_stopped_search_finds_the_exhaustive_searchs_rungs_in_fewer_episodes(
    rule: type[Tags], n_hosts: int, start: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = DispatchEnv(n_hosts=n_hosts, **REGIME)
    seeds = TUNING_SEEDS[:8]
    counted = _Counted()
    resolve = families.resolve
    monkeypatch.setattr(families, "resolve", lambda name: counted if name.endswith(":run") else resolve(name))
    expected = search_rungs(inner, rule, start, seeds, exhaustive=True)
    exhaustive_episodes, counted.episodes = counted.episodes, 0
    assert exhaustive_episodes % len(seeds) == 0  # every move it played, it played on every seed
    assert search_rungs(inner, rule, start, seeds) == expected
    assert counted.episodes < 0.75 * exhaustive_episodes  # many moves lose within a few seeds
