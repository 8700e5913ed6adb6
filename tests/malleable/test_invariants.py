"""Conservation invariants under arbitrary allocations (hypothesis), docs/architecture.md, "The property suite"."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import schedenv  # noqa: F401

weights = st.lists(st.floats(0.0, 1.0, width=32), min_size=5, max_size=5)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    p=st.floats(0.05, 1.0),
    actions=st.lists(weights, min_size=1, max_size=60),
    allocation=st.sampled_from(["normalized", "fractions"]),
)
def test_jobs_and_work_are_conserved(seed: int, p: float, actions: list[list[float]], allocation: str) -> None:
    env = gym.make(
        "schedenv/Malleable-v0",
        mode="online",
        n_arrivals=30,
        load=0.6,
        speedup=p,
        max_jobs=4,
        n_servers=50.0,
        allocation=allocation,
    )
    env.reset(seed=seed)
    inner = env.unwrapped
    sizes = inner.params.sizes
    completed: list = []
    for action in actions:
        state = inner.state
        theta = inner.allocation_from_action(np.asarray(action, np.float32))
        assert (theta >= 0).all() and theta.sum() <= 1.0 + 1e-12  # never more than N servers
        _, reward, terminated, _, info = env.step(np.asarray(action, np.float32))
        after = inner.state
        completed.extend(info["completed"])
        # No job lost: arrived = completed + in system.
        assert after.next_arrival == len(completed) + after.n_jobs == after.n_completed + after.n_jobs
        assert (after.remaining > 0).all() and (after.remaining <= after.size).all()
        # Work done equals the sizes of completed jobs plus the progress of those present.
        progress = float((after.size - after.remaining).sum())
        assert np.isclose(after.work_done, sum(r.size for r in completed) + progress, rtol=1e-9)
        # Work in the step never exceeds what the allocation's rates allow over the elapsed time.
        busy = after.time - state.time
        rates = inner.params.rates(theta)
        assert after.work_done - state.work_done <= float(rates.sum()) * busy * (1 + 1e-9) + 1e-12
        # The objective accrues only while jobs are present (idle gaps accrue nothing).
        assert 0.0 < -reward <= float(state.weight.sum()) * busy * (1 + 1e-12)
        if terminated:
            assert len(completed) == sizes.size
            break
