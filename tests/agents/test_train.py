"""Training on every env id: a short run saves a model that loads and evaluates through ``evaluate``."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

import agents
import baselines
import schedenv
from agents.algorithms import ALGORITHMS, compatible_algorithms
from agents.extractors import SlotSetExtractor, slot_layout
from agents.runs import CONFIG, MODEL, WARM_START, checkpoint_paths, checkpoints, read_config, write_config
from agents.train import TrainConfig, resolve_config, train
from schedenv.comparison import objective_metric
from schedenv.evaluation import evaluate
from tests.agents.conftest import natural_algo

TINY_MALLEABLE = {"jobs": [1.0, 2.0, 4.0], "max_jobs": 3}


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_short_run_saves_an_agent_that_evaluate_accepts(env_id: str, tiny: dict[str, Any], tmp_path: Path) -> None:
    algo = natural_algo(env_id)
    probe = gym.make(env_id)
    layout = slot_layout(probe)
    probe.close()
    config = TrainConfig(env_id=env_id, algo=algo, timesteps=128, extractor="slots", **tiny)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = train(config, tmp_path)
    fallback = [w for w in caught if "flat MLP" in str(w.message)]
    if layout is None:
        assert fallback, f"{env_id} has no slot layout, so train must say it falls back to the flat MLP"
        assert read_config(tmp_path)["extractor"] == "mlp"
    else:
        assert not fallback
        assert isinstance(result.model.policy.features_extractor, SlotSetExtractor)
    assert result.model.num_timesteps == 128
    assert (tmp_path / MODEL).is_file() and [c.steps for c in checkpoints(tmp_path)] == [128]

    agent = agents.load(tmp_path)
    assert agent.name == f"{algo}:{tmp_path.name}"
    first = evaluate(env_id, agent, [0], keep_records=False)
    again = evaluate(env_id, agent, [0], keep_records=False)
    metric = objective_metric(env_id, {})
    assert math.isfinite(first.summary[metric].mean) and first.summary[metric].mean > 0
    assert first.episodes[0].metrics == again.episodes[0].metrics, "a loaded agent acts deterministically"

    row = result.evaluations[-1]
    reference = evaluate(env_id, baselines.reference(env_id), [config.eval_seed], keep_records=False)
    assert row["reference"] == baselines.reference(env_id)
    assert row["reference_mean"] == pytest.approx(reference.summary[metric].mean, rel=1e-12)
    assert row["ratio"] == pytest.approx(row["mean"] / row["reference_mean"], rel=1e-12)


@pytest.mark.parametrize("algo", ["a2c", "sac"])
def test_other_algorithms_train_on_the_malleable_env(algo: str, tiny: dict[str, Any], tmp_path: Path) -> None:
    algo_kwargs = {"n_steps": 16} if algo == "a2c" else {"learning_starts": 32, "batch_size": 32}
    config = TrainConfig(algo=algo, env_kwargs=TINY_MALLEABLE, timesteps=128, **{**tiny, "algo_kwargs": algo_kwargs})
    result = train(config, tmp_path)
    assert result.model.num_timesteps == 128
    if algo == "sac":
        assert checkpoint_paths(tmp_path, 128).replay_buffer.is_file()
    agent = agents.load(tmp_path)
    result_eval = evaluate("schedenv/Malleable-v0", agent, [0], **TINY_MALLEABLE)
    assert result_eval.episodes[0].metrics["n_completed"] == 3


def test_resume_continues_from_the_newest_complete_checkpoint(tiny: dict[str, Any], tmp_path: Path) -> None:
    config = TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=256, **tiny)
    train(config, tmp_path / "killed")
    # a run killed between its checkpoints at 128 and 256 steps: no final model, no newer checkpoint
    (tmp_path / "killed" / MODEL).unlink()
    checkpoint_paths(tmp_path / "killed", 256).model.unlink()
    resumed = train(TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=384, **tiny), tmp_path / "killed", resume=True)
    assert resumed.start_timesteps == 128
    # checkpoints between rollouts of 2 envs x 64 steps, and one at the end
    assert resumed.model.num_timesteps == 384
    assert [c.steps for c in checkpoints(tmp_path / "killed")] == [128, 256, 384]
    # the resumed run continued the env seed stream and random streams: it equals an uninterrupted run
    whole = train(TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=384, **tiny), tmp_path / "whole")
    mine, theirs = resumed.model.policy.state_dict(), whole.model.policy.state_dict()
    assert all(torch.equal(mine[key], theirs[key]) for key in theirs)


def test_a_resumed_masked_run_equals_an_uninterrupted_one(tiny: dict[str, Any], tmp_path: Path) -> None:
    """MaskablePPO on the batched Dispatch env: masks come from the restored envs, so nothing diverges."""
    fields = {**tiny, "algo": "maskable_ppo", "env_id": "schedenv/Dispatch-v0", "env_kwargs": {"n_arrivals": 40}}
    train(TrainConfig(timesteps=256, **fields), tmp_path / "killed")
    resumed = train(TrainConfig(timesteps=512, **fields), tmp_path / "killed", resume=True)
    whole = train(TrainConfig(timesteps=512, **fields), tmp_path / "whole")
    assert resumed.start_timesteps == 256 and resumed.model.num_timesteps == whole.model.num_timesteps == 512
    mine, theirs = resumed.model.policy.state_dict(), whole.model.policy.state_dict()
    assert all(torch.equal(mine[key], theirs[key]) for key in theirs)
    # and a fresh run with another seed does differ (the comparison can fail)
    other = train(TrainConfig(timesteps=256, seed=1, **fields), tmp_path / "other").model.policy.state_dict()
    first = train(TrainConfig(timesteps=256, **fields), tmp_path / "first").model.policy.state_dict()
    assert not all(torch.equal(first[key], other[key]) for key in first)


def test_a_fresh_run_refuses_a_folder_that_holds_one(tiny: dict[str, Any], tmp_path: Path) -> None:
    config = TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=64, **tiny)
    train(config, tmp_path)
    with pytest.raises(ValueError, match="already holds a training run"):
        train(config, tmp_path)


def test_same_seed_gives_the_same_agent(tiny: dict[str, Any], tmp_path: Path) -> None:
    actions = []
    for name in ("a", "b"):
        train(TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=128, seed=3, **tiny), tmp_path / name)
        agent = agents.load(tmp_path / name)
        env = gym.make("schedenv/Malleable-v0", **TINY_MALLEABLE)
        observation, _ = env.reset(seed=0)
        actions.append(agent.act(observation, env))
    np.testing.assert_array_equal(actions[0], actions[1])


def test_bad_configs_name_the_field_and_suggest(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="did you mean 'schedenv/Malleable-v0'"):
        TrainConfig(env_id="schedenv/Maleable-v0")
    with pytest.raises(ValueError, match="did you mean 'slots'"):
        TrainConfig(extractor="slot")
    with pytest.raises(ValueError, match="timesteps=0"):
        TrainConfig(timesteps=0)
    bad = tmp_path / "bad.yaml"
    bad.write_text("timestep: 10\n")
    with pytest.raises(ValueError, match="did you mean 'timesteps'"):
        resolve_config(bad, {})


def test_shipped_configs_resolve_and_fit_their_env() -> None:
    from agents.train import CONFIG_DIR, env_kwargs_objects

    paths = sorted(CONFIG_DIR.glob("*.yaml"))
    assert paths
    for path in paths:
        config = resolve_config(path, {})
        assert config.algo in ALGORITHMS
        env = gym.make(config.env_id, **env_kwargs_objects(config))  # workload specs become objects, as in train
        assert config.algo in compatible_algorithms(env), f"{path.name}: {config.algo} cannot train {config.env_id}"
        env.close()


def test_the_phases_of_a_run_add_up_to_its_wall_time(tiny: dict[str, Any], tmp_path: Path) -> None:
    import time

    from agents.train import PHASES

    config = TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=256, **{**tiny, "eval_every": 128})
    started = time.perf_counter()
    result = train(config, tmp_path)
    wall = time.perf_counter() - started
    assert tuple(result.phases) == PHASES
    assert all(seconds >= 0 for seconds in result.phases.values()), result.phases
    assert 0.9 * wall <= sum(result.phases.values()) <= wall  # what the call spent, measured inside it
    # none configured: nothing cloned, and the phase is only the few statements around the skipped call (a bound
    # loose enough for a preempted process on a busy machine, not a speed figure)
    assert not (tmp_path / WARM_START).exists() and result.phases["warm_start"] < 0.05 * wall
    assert [row["timesteps"] for row in result.evaluations] == [128, 256]
    assert result.phases["validation"] >= sum(row["seconds"] for row in result.evaluations)
    assert result.phases["rollout"] > 0 and result.phases["update"] > 0
    # learning is rollouts, updates, and what the callbacks did inside them (validation at 128 steps, checkpoints)
    assert result.phases["rollout"] + result.phases["update"] < result.seconds


def test_validation_plays_the_eval_env_kwargs_episodes(tiny: dict[str, Any], tmp_path: Path) -> None:
    """``eval_env_kwargs`` change the validation episodes only: the paper policy's validation mean is its mean on
    the shorter episodes, not on the training env's."""
    from baselines import reference
    from schedenv.fastpath import evaluate_fast

    fields = {**tiny, "algo": "maskable_ppo", "env_id": "schedenv/Dispatch-v0", "env_kwargs": {"n_arrivals": 400}}
    config = TrainConfig(timesteps=128, eval_env_kwargs={"n_arrivals": 30}, **{**fields, "eval_episodes": 3})
    row = train(config, tmp_path).evaluations[-1]
    seeds = range(config.eval_seed, config.eval_seed + 3)
    short = evaluate_fast(config.env_id, reference(config.env_id), seeds, n_arrivals=30).values(row["metric"])
    long = evaluate_fast(config.env_id, reference(config.env_id), seeds, n_arrivals=400).values(row["metric"])
    assert row["reference_mean"] == pytest.approx(float(short.mean()), rel=1e-12)
    assert not math.isclose(float(short.mean()), float(long.mean()), rel_tol=1e-6)
    assert read_config(tmp_path)["eval_env_kwargs"] == {"n_arrivals": 30}


def test_eval_env_kwargs_that_change_the_spaces_are_refused(tiny: dict[str, Any], tmp_path: Path) -> None:
    config = TrainConfig(env_kwargs=TINY_MALLEABLE, eval_env_kwargs={"max_jobs": 4}, timesteps=64, **tiny)
    with pytest.raises(ValueError, match=r"eval_env_kwargs=\{'max_jobs': 4\} is not allowed: the validation env's "):
        train(config, tmp_path)
    assert not (tmp_path / MODEL).exists()


def test_resume_refuses_other_validation_episodes(tiny: dict[str, Any], tmp_path: Path) -> None:
    from agents.train import resume_config

    train(TrainConfig(env_kwargs=TINY_MALLEABLE, timesteps=64, **tiny), tmp_path)
    with pytest.raises(ValueError, match="eval_env_kwargs"):
        resume_config(tmp_path, {"eval_env_kwargs": {"jobs": [1.0, 2.0, 3.0]}})


def test_a_written_config_comments_every_line_of_a_docstring_and_reads_back(tmp_path: Path) -> None:
    """A field documented over several lines stays a comment: the file is YAML that reads back as written."""
    config = {"timesteps": 100, "env_kwargs": {"n_jobs": 8}, "warm_start": None}
    write_config(tmp_path, config, {"timesteps": "Total steps,\n    over two lines: not a key", "warm_start": "one"})
    text = (tmp_path / CONFIG).read_text()
    assert "# Total steps,\n# over two lines: not a key\ntimesteps: 100" in text
    assert read_config(tmp_path) == config
