"""``benchmarks/speed.py``'s ``batched-parts`` section: its timers count every copy-step and change nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401 - registers the ids

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import speed


@pytest.mark.parametrize("env_id", ["schedenv/Moldable-v0", "schedenv/Malleable-v0"])
def test_timed_parts_step_as_the_plain_batched_env_and_add_up_within_the_step(env_id: str) -> None:
    plain, timed = (gym.make_vec(env_id, num_envs=8, vectorization_mode="vector_entry_point") for _ in range(2))
    spent = speed._time_parts(timed.unwrapped)
    for venv in (plain, timed):
        venv.reset(seed=3)
    ended = 0
    for _ in range(300):  # with actions drawn from all of them: episodes end and copies reset
        actions = plain.action_space.sample()
        first, second = plain.step(actions), timed.step(actions)
        np.testing.assert_array_equal(first[0], second[0])
        np.testing.assert_array_equal(first[1], second[1])
        np.testing.assert_array_equal(first[2], second[2])
        ended += int(first[2].sum())
    assert spent["copy_steps"] == 300 * 8
    assert ended > 0 and spent["reset"] > 0  # the autoresets were timed too
    assert all(spent[part] > 0 for part in speed.BATCHED_PARTS)
    plain.close()
    timed.close()
