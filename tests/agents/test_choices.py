"""``agents.choices``: an agent's choices beside a baseline asked in the same states, and its script."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import baselines
from agents.choices import choice_differences
from agents.train import TrainConfig, train
from schedenv.evaluation import evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import agent_choices

DISPATCH = {"n_hosts": 2, "load": 0.5, "n_arrivals": 200}


def _episode_length(env_id: str, policy: str, seed: int, **kwargs: Any) -> int:
    env = gym.make(env_id, **kwargs)
    acting = baselines.make(policy)
    observation, _ = env.reset(seed=seed)
    acting.reset(env)
    steps, done = 0, False
    while not done:
        observation, _, terminated, truncated, _ = env.step(acting.act(observation, env))
        steps, done = steps + 1, terminated or truncated
    env.close()
    return steps


def test_a_baseline_beside_itself_differs_nowhere() -> None:
    found = choice_differences(baselines.make("tags-slowdown"), "tags-slowdown", "schedenv/Dispatch-v0", DISPATCH, 3)
    assert found.differing == 0 and not found.pairs and found.observations.shape[0] == 0
    assert found.decisions == _episode_length("schedenv/Dispatch-v0", "tags-slowdown", 3, **DISPATCH)


def test_central_queue_beside_tags_differs_where_tags_would_not_use_the_central_queue() -> None:
    """Central-Queue's every action is the one action "central queue, no limit": every differing pair ends in
    it, the episode is Central-Queue's own (its objective as ``evaluate`` gives it), and TAGS-slowdown never
    picks that action, so every decision differs."""
    agent = baselines.make("central-queue")
    found = choice_differences(agent, "tags-slowdown", "schedenv/Dispatch-v0", DISPATCH, 3)
    env = gym.make("schedenv/Dispatch-v0", **DISPATCH)
    observation, _ = env.reset(seed=3)
    agent.reset(env)
    central = env.unwrapped.decode_action(agent.act(observation, env))
    env.close()
    assert {mine for _, mine in found.pairs} == {central}
    assert found.differing == found.decisions == _episode_length("schedenv/Dispatch-v0", "central-queue", 3, **DISPATCH)
    assert found.metric == "mean_slowdown"
    assert found.observations.shape == (found.decisions, *env.observation_space.shape)
    np.testing.assert_array_equal(found.observations[0], observation)  # the first decision's state
    expected = evaluate("schedenv/Dispatch-v0", "central-queue", [3], keep_records=False, **DISPATCH)
    assert found.value == pytest.approx(float(expected.values("mean_slowdown")[0]), rel=1e-12)


def test_box_actions_are_refused_naming_the_space() -> None:
    with pytest.raises(
        ValueError, match=r"env_id='schedenv/Malleable-v0' has the action space Box.*Discrete actions only"
    ):
        choice_differences(baselines.make("equi"), "equi", "schedenv/Malleable-v0", {"n_jobs": 4}, 0)


def test_the_script_prints_each_runs_differences_and_refuses_sealed_seeds(
    tiny: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fields = {**tiny, "algo": "maskable_ppo", "env_id": "schedenv/Dispatch-v0", "env_kwargs": DISPATCH}
    train(TrainConfig(timesteps=128, **fields), tmp_path)
    capsys.readouterr()  # the training's own table
    argv = [str(tmp_path), "--baseline", "tags-slowdown", "--env-kwargs", '{"n_arrivals": 40}']
    assert agent_choices.main(argv) == 0
    first, *pairs = capsys.readouterr().out.strip().splitlines()
    assert (
        first.startswith(f"{tmp_path}: mean_slowdown ")
        and "decisions" in first
        and "differ from tags-slowdown" in first
    )
    assert all(line.startswith("  tags-slowdown (") and " -> agent (" in line for line in pairs)
    with pytest.raises(SystemExit):
        agent_choices.main([*argv, "--seed", "1000000000"])
    assert "is not a development-test seed" in capsys.readouterr().err
