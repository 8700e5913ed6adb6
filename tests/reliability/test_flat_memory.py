"""Flat memory and bounded frames: a long Malleable episode keeps O(1) bytes per step when nothing
renders (16 bytes per finished job for its metrics, no history), and a picture draws only the last
``RENDER_WINDOW`` epochs with at most ``RENDER_JOBS + 1`` bars each, whatever the episode length."""

from __future__ import annotations

import tracemalloc

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401  (registers the env ids)
from schedenv.display import RENDER_JOBS, RENDER_WINDOW
from schedenv.malleable.render import allocation_bars
from schedenv.records import CompletedJobs, JobRecord, basic_metrics

ARRIVALS = 20_000


def _run(render_mode: str | None, steps: int) -> tuple[gym.Env, float]:
    """Step an online episode of 20,000 arrivals ``steps`` times; bytes kept per step from step 5,000 on."""
    env = gym.make("schedenv/Malleable-v0", mode="online", n_arrivals=ARRIVALS, render_mode=render_mode)
    env.reset(seed=0)
    action = np.ones(env.action_space.shape, dtype=np.float32)
    tracemalloc.start()
    try:
        for step in range(1, steps + 1):
            *_, terminated, truncated, _ = env.step(action)
            assert not (terminated or truncated)
            if step == 5_000:
                start = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    return env, grown / (steps - 5_000)


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
def test_an_online_episode_of_20000_arrivals_keeps_under_100_bytes_a_step(render_mode: str | None) -> None:
    env, per_step = _run(render_mode, 20_000)
    assert per_step <= 100, f"{per_step:.0f} bytes kept per step"
    history = env.unwrapped._history
    assert len(history) == (0 if render_mode is None else RENDER_WINDOW)
    if render_mode == "rgb_array":
        bars = allocation_bars(history)
        assert len(bars) <= RENDER_WINDOW * (RENDER_JOBS + 1)
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.shape[2] == 3


def test_a_long_queue_draws_at_most_RENDER_JOBS_plus_one_bars_an_epoch() -> None:
    theta = np.full(50, 1 / 50)
    bars = allocation_bars([(0.0, 2.0, np.arange(50), theta), (2.0, 3.0, np.array([7, 8]), np.array([0.25, 0.75]))])
    assert len(bars) == RENDER_JOBS + 1 + 2
    grey = bars[RENDER_JOBS]
    assert grey[4] == -1 and grey[2] == pytest.approx(RENDER_JOBS / 50) and grey[3] == pytest.approx(30 / 50)
    assert bars[-2:] == [(2.0, 1.0, 0.0, 0.25, 7), (2.0, 1.0, 0.25, 0.75, 8)]  # stacked: bottom, height, job


def test_completed_jobs_give_basic_metrics_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    records = [JobRecord(j, a, 1.0, a + d, d * 1.7) for j, (a, d) in enumerate(rng.exponential(size=(1000, 2)))]
    completed = CompletedJobs()
    for start in range(0, 1000, 37):  # growth past the first buffer, in uneven chunks
        completed.extend(records[start : start + 37])
    assert completed.metrics() == basic_metrics(records)
    assert CompletedJobs().metrics()["n_completed"] == 0.0


def test_moldable_draws_only_the_last_RENDER_WINDOW_finished_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from schedenv.moldable import env as moldable_env

    drawn: list[int] = []

    def counting(records: list, view: object) -> np.ndarray:
        drawn.append(len(records))
        return np.zeros((2, 2, 3), dtype=np.uint8)

    monkeypatch.setattr(moldable_env, "render_gantt", counting)
    env = gym.make("schedenv/Moldable-v0", n_jobs=RENDER_WINDOW + 50, render_mode="rgb_array")
    env.reset(seed=0)
    terminated = False
    while not terminated:  # the first legal action each step
        _, _, terminated, _, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    env.render()
    assert len(env.unwrapped._records) == RENDER_WINDOW + 50 and drawn == [RENDER_WINDOW]
