"""Warm start (``schedenv train --warm-start``): behaviour cloning of a baseline before RL."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.distributions import make_masked_proba_distribution
from stable_baselines3.common.distributions import make_proba_distribution

import baselines
from agents.masking import FusedMaskablePolicy, fused_distribution
from agents.runs import WARM_START, read_evaluations, read_provenance
from agents.train import TrainConfig, train
from agents.warmstart import (
    Demonstrations,
    Lookahead,
    aggregate,
    check_lookahead_space,
    check_smoothing,
    check_smoothing_space,
    check_warm_start,
    clone,
    demonstrate,
    demonstration_seeds,
    smoothing_loss,
    teacher,
    value_targets,
)
from baselines.moldable import HrfEasyRollout

MALLEABLE = {"n_jobs": 8, "max_jobs": 8}


def test_value_targets_are_discounted_returns_to_go_within_each_episode() -> None:
    """Hand-worked: gamma 0.5, episodes [-1, -1, -2] and [-3]; no normaliser."""
    demos = Demonstrations(
        np.zeros((4, 1), dtype=np.float32),
        np.zeros(4),
        None,
        np.array([-1.0, -1.0, -2.0, -3.0]),
        np.array([True, False, False, True]),
    )
    np.testing.assert_allclose(value_targets(demos, 0.5, None), [-2.0, -2.0, -2.0, -3.0])
    assert demos.n_episodes == 2


def test_demonstrations_are_whole_episodes_on_training_seeds_the_run_never_resets_with() -> None:
    seeds = demonstration_seeds(run_seed=3)
    first = next(seeds)
    assert first == 2**31 + 3 * 2**20 + 2**20 - 1  # the run's last copy index, counted down
    demos = demonstrate("schedenv/Malleable-v0", MALLEABLE, "hesrpt", demonstration_seeds(0), min_steps=20)
    # 8 jobs offline: one decision per completion, so whole episodes are 8 decisions long.
    assert demos.rewards.size == 24 and demos.n_episodes == 3
    assert demos.actions.shape == (24, 9) and demos.masks is None
    assert (demos.rewards < 0).all()


def test_cloning_heSRPT_gives_a_policy_within_one_percent_of_it(tiny: dict[str, Any], tmp_path: Path) -> None:
    """The clone's validation score is in warm_start.json and is the run's step-0 evaluation."""
    settings = tiny | {"eval_episodes": 20}
    config = TrainConfig(env_kwargs=MALLEABLE, timesteps=128, warm_start="hesrpt", warm_start_steps=4000, **settings)
    train(config, tmp_path)
    report = json.loads((tmp_path / WARM_START).read_text())
    assert report["baseline"] == "hesrpt" and report["decisions"] >= 4000
    assert report["validation"]["ratio"] < 1.01
    rows = read_evaluations(tmp_path)
    assert rows[0]["timesteps"] == 0 and rows[0]["ratio"] == pytest.approx(report["validation"]["ratio"], rel=1e-3)

    scratch = tmp_path / "scratch"
    train(TrainConfig(env_kwargs=MALLEABLE, timesteps=128, **settings), scratch)
    assert read_evaluations(scratch)[0]["ratio"] > report["validation"]["ratio"] + 0.02


def test_the_paper_policy_demonstrates_option_zero_in_ranked_mode() -> None:
    """Ranked mode lists the options in ServerFilling-SRPT's order: its every action is 0, always allowed."""
    kwargs = {"action_mode": "ranked", "n_servers": 8, "load": 0.8, "n_arrivals": 60}
    demos = demonstrate("schedenv/MultiserverJob-v0", kwargs, "serverfilling-srpt", demonstration_seeds(0), 300)
    assert demos.rewards.size >= 300 and demos.masks is not None and demos.masks.shape[1] == 16
    assert (demos.actions == 0).all() and demos.masks[:, 0].all()
    assert not demos.masks.all(axis=1).all()  # the masks do forbid options past the last one


@pytest.mark.parametrize("action_mode", ["select", "ranked"])
def test_cloning_a_masked_baseline_with_maskable_ppo(tiny: dict[str, Any], tmp_path: Path, action_mode: str) -> None:
    kwargs = {"action_mode": action_mode, "n_servers": 8, "load": 0.8, "n_arrivals": 100}
    config = TrainConfig(
        env_id="schedenv/MultiserverJob-v0",
        env_kwargs=kwargs,
        algo="maskable_ppo",
        timesteps=128,
        warm_start="serverfilling-srpt",
        warm_start_steps=3000,
        **tiny | {"eval_episodes": 10},
    )
    train(config, tmp_path)
    report = json.loads((tmp_path / WARM_START).read_text())
    assert report["validation"]["ratio"] < 1.05
    if action_mode == "ranked":  # "always option 0" is nearly learnt from 3000 decisions (20 000: exactly)
        assert report["validation"]["ratio"] < 1.01


@pytest.mark.parametrize(
    ("baseline", "algo", "message"),
    [
        ("hesrp", "ppo", "not a baseline of schedenv/Malleable-v0.*hesrpt"),
        ("serverfilling-srpt", "ppo", "not a baseline of schedenv/Malleable-v0"),
        ("hesrpt", "sac", "actor-critic algorithm"),
    ],
)
def test_a_bad_warm_start_is_refused_before_training(baseline: str, algo: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_warm_start(baseline, "schedenv/Malleable-v0", algo)
    with pytest.raises(ValueError, match=message):
        TrainConfig(env_kwargs=MALLEABLE, algo=algo, warm_start=baseline)


def test_the_smoothing_loss_is_minus_the_mean_log_probability_of_the_valid_actions() -> None:
    """Hand-worked: uniform logits over 4 choices, 2 valid in row 0 and 4 in row 1: (log 2 + log 4) / 2."""
    logits = torch.zeros(2, 4)
    masks = np.array([[True, False, True, False], [True, True, True, True]])
    expected = (np.log(2.0) + np.log(4.0)) / 2
    for head in (fused_distribution(spaces.Discrete(4)), make_masked_proba_distribution(spaces.Discrete(4))):
        head.proba_distribution(logits)
        head.apply_masking(masks)
        assert smoothing_loss(head, masks).item() == pytest.approx(expected)
    plain = make_proba_distribution(spaces.MultiDiscrete([4, 2])).proba_distribution(torch.zeros(2, 6))
    assert smoothing_loss(plain, None).item() == pytest.approx(np.log(4.0) + np.log(2.0))


def test_a_smoothed_clone_keeps_the_baselines_choices_and_leaves_epsilon_to_the_others() -> None:
    """Ranked mode: the paper policy always picks option 0. With ε = 0.2 the clone still picks it, with
    probability 1 - ε + ε/k (k valid options) instead of ~1, so fine-tuning samples the others."""
    kwargs = {"action_mode": "ranked", "n_servers": 8, "load": 0.8, "n_arrivals": 60}
    demos = demonstrate("schedenv/MultiserverJob-v0", kwargs, "serverfilling-srpt", demonstration_seeds(0), 1000)
    assert demos.masks is not None
    valid = demos.masks.sum(axis=1)
    target = 1.0 - 0.2 + 0.2 / valid
    observations = torch.as_tensor(demos.observations)
    for smoothing in (0.0, 0.2):
        env = gym.make("schedenv/MultiserverJob-v0", **kwargs)
        model = MaskablePPO(FusedMaskablePolicy, env, seed=0, device="cpu")
        clone(model, demos, gamma=0.99, epochs=30, smoothing=smoothing)
        with torch.no_grad():
            distribution = model.policy.get_distribution(observations, action_masks=demos.masks)
            chosen = distribution.log_prob(torch.as_tensor(demos.actions)).exp().numpy()
            mode = distribution.mode().numpy()
        assert (mode == demos.actions).mean() > 0.99  # deterministic, it acts as the baseline
        if smoothing == 0.0:
            assert chosen.mean() > 0.99
        else:
            assert np.abs(chosen - target).mean() < 0.03 and chosen.mean() < 0.95
        env.close()


def test_smoothing_is_refused_outside_zero_one_and_for_continuous_actions() -> None:
    assert check_smoothing(0.1, [], "schedenv/Malleable-v0") == 0.1
    with pytest.raises(ValueError, match=r"warm_start_smoothing=1\.0 .*\[0, 1\)"):
        check_smoothing(1.0, [], "schedenv/Malleable-v0")
    with pytest.raises(ValueError, match=r"warm_start_smoothing=0\.1 .*needs a Discrete or MultiDiscrete"):
        check_smoothing_space(0.1, [], spaces.Box(0.0, 1.0, (3,)))
    with pytest.raises(ValueError, match=r"needs a Discrete action space, not MultiDiscrete"):
        check_smoothing_space(0.1, ["hrf-easy"], spaces.MultiDiscrete([3, 4]))
    check_smoothing_space(0.0, [], spaces.Box(0.0, 1.0, (3,)))


def test_train_refuses_smoothing_for_a_box_action_space_before_writing_anything(
    tiny: dict[str, Any], tmp_path: Path
) -> None:
    config = TrainConfig(env_kwargs=MALLEABLE, warm_start="hesrpt", warm_start_smoothing=0.1, **tiny)
    with pytest.raises(ValueError, match=r"warm_start_smoothing=0\.1 .*needs a Discrete"):
        train(config, tmp_path / "run")
    assert not (tmp_path / "run").exists()


DISPATCH = {"n_hosts": 2, "load": 0.5, "n_arrivals": 300}


def test_explore_baselines_only_say_what_they_would_do_at_the_teachers_decisions() -> None:
    """The teacher's episodes are unchanged; asking TAGS-slowdown itself repeats its actions, asking
    Central-Queue always gives its one destination (the central queue, index h, no time limit)."""
    seeds = list(range(2**31, 2**31 + 5))
    plain = demonstrate("schedenv/Dispatch-v0", DISPATCH, "tags-slowdown", iter(seeds), 500)
    asked = demonstrate(
        "schedenv/Dispatch-v0", DISPATCH, "tags-slowdown", iter(seeds), 500, explore=["tags-slowdown", "central-queue"]
    )
    assert plain.alternatives is None and asked.alternatives is not None
    np.testing.assert_array_equal(asked.actions, plain.actions)
    np.testing.assert_array_equal(asked.rewards, plain.rewards)
    assert asked.alternatives.shape == (asked.actions.size, 2)
    np.testing.assert_array_equal(asked.alternatives[:, 0], asked.actions)
    env = gym.make("schedenv/Dispatch-v0", **DISPATCH)
    n_limits = env.unwrapped.n_limits
    assert (asked.alternatives[:, 1] == 2 * n_limits + n_limits - 1).all()
    assert asked.masks is not None and asked.masks[np.arange(asked.actions.size), asked.alternatives[:, 1]].all()
    env.close()


def test_a_clone_with_explore_puts_epsilon_on_the_other_baselines_choice() -> None:
    """ε = 0.2 toward Central-Queue: wherever it differs from TAGS-slowdown, the clone gives TAGS's action
    ~0.8 and Central-Queue's ~0.2, and nearly nothing to the other valid actions."""
    demos = demonstrate(
        "schedenv/Dispatch-v0", DISPATCH, "tags-slowdown", demonstration_seeds(0), 2000, explore=["central-queue"]
    )
    assert demos.alternatives is not None
    env = gym.make("schedenv/Dispatch-v0", **DISPATCH)
    model = MaskablePPO(FusedMaskablePolicy, env, seed=0, device="cpu")
    clone(model, demos, gamma=0.99, epochs=30, smoothing=0.2)
    with torch.no_grad():
        distribution = model.policy.get_distribution(torch.as_tensor(demos.observations), action_masks=demos.masks)
        teacher = distribution.log_prob(torch.as_tensor(demos.actions)).exp().numpy()
        other = distribution.log_prob(torch.as_tensor(demos.alternatives[:, 0])).exp().numpy()
        mode = distribution.mode().numpy()
    differ = demos.alternatives[:, 0] != demos.actions
    assert differ.mean() > 0.5
    assert (mode == demos.actions).mean() > 0.99
    assert abs(teacher[differ].mean() - 0.8) < 0.03 and abs(other[differ].mean() - 0.2) < 0.03
    env.close()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"warm_start_explore": ["central-queue"]}, r"needs warm_start_smoothing > 0"),
        ({"warm_start_smoothing": 0.1, "warm_start_explore": ["centrl-queue"]}, r"'centrl-queue', not a baseline"),
        ({"warm_start": None, "warm_start_smoothing": 0.1}, r"set warm_start too"),
    ],
)
def test_bad_explore_settings_are_refused_by_name(fields: dict[str, Any], message: str) -> None:
    settings = {"warm_start": "tags-slowdown", "algo": "maskable_ppo"} | fields
    with pytest.raises(ValueError, match=message):
        TrainConfig(env_id="schedenv/Dispatch-v0", env_kwargs=DISPATCH, **settings)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"warm_start": None}, r"warm_start_kl=True is not allowed with warm_start=None and algo='maskable_ppo'"),
        ({"algo": "ppo"}, r"warm_start_kl=True is not allowed with warm_start='tags-slowdown' and algo='ppo'"),
        ({"warm_start_kl": 1}, r"warm_start_kl=1 is not allowed"),
    ],
)
def test_bad_kl_settings_are_refused_by_name(fields: dict[str, Any], message: str) -> None:
    settings = {"warm_start": "tags-slowdown", "algo": "maskable_ppo", "warm_start_kl": True} | fields
    with pytest.raises(ValueError, match=message):
        TrainConfig(env_id="schedenv/Dispatch-v0", env_kwargs=DISPATCH, **settings)


def test_the_kl_anchor_is_the_clone_and_a_resumed_run_reads_it_back(tiny: dict[str, Any], tmp_path: Path) -> None:
    """The anchor holds the clone's parameters while fine-tuning moves the policy; ``--resume`` anchors at the
    same clone (``DIR/warm_start_policy.pt``), not at the resumed policy."""
    from agents.runs import ANCHOR

    config = TrainConfig(
        env_id="schedenv/Dispatch-v0",
        env_kwargs=DISPATCH,
        algo="maskable_ppo",
        timesteps=128,
        warm_start="tags-slowdown",
        warm_start_steps=500,
        warm_start_kl=True,
        **tiny | {"algo_kwargs": {"n_steps": 64, "batch_size": 64, "n_epochs": 2, "ent_coef": 0.1}},
    )
    first = train(config, tmp_path).model.policy
    clone_state = torch.load(tmp_path / ANCHOR, weights_only=True)
    assert isinstance(first, FusedMaskablePolicy) and first.anchor is not None
    for name, tensor in first.anchor.state_dict().items():
        assert torch.equal(tensor, clone_state[name]), name
    assert not torch.equal(first.state_dict()["action_net.weight"], clone_state["action_net.weight"])

    resumed = train(dataclasses.replace(config, timesteps=256), tmp_path, resume=True).model.policy
    assert isinstance(resumed, FusedMaskablePolicy) and resumed.anchor is not None
    for name, tensor in resumed.anchor.state_dict().items():
        assert torch.equal(tensor, clone_state[name]), name


MOLDABLE_RANKED = {"action_mode": "ranked", "n_jobs": 16, "arrival_interval": "heavy"}


def _episode(policy: Any, seed: int, kwargs: dict[str, Any] = MOLDABLE_RANKED) -> tuple[float, list[int]]:
    """(return, actions) of ``policy`` (``reset``/``act``) over one ranked Moldable episode."""
    env = gym.make("schedenv/Moldable-v0", **kwargs)
    observation, _ = env.reset(seed=seed)
    policy.reset(env)
    total, actions, done = 0.0, [], False
    while not done:
        actions.append(int(policy.act(observation, env)))
        observation, reward, terminated, truncated, _ = env.step(actions[-1])
        total, done = total + float(reward), terminated or truncated
    return total, actions


def test_the_lookahead_never_returns_less_than_its_baseline_and_beats_it_by_leaving_option_zero() -> None:
    """HRF-EASY is option 0 of the ranked mode; its one-step lookahead tries every option on a copy, so its
    return is at least HRF-EASY's on each episode (the policy improvement of rollout), here strictly more."""
    gains = []
    for seed in (1_000_000, 1_000_001, 1_000_002):
        paper, paper_actions = _episode(baselines.make("hrf-easy"), seed)
        looked, looked_actions = _episode(Lookahead("hrf-easy"), seed)
        assert set(paper_actions) == {0}
        assert looked >= paper
        gains.append(looked - paper)
        if looked > paper:
            assert any(action != 0 for action in looked_actions)
    assert max(gains) > 0


def test_the_lookahead_label_is_the_action_whose_trial_returns_most() -> None:
    """At a decision, each allowed option followed by HRF-EASY is played out by hand on copies: the label is
    the best one, and option 0 (HRF-EASY's own) wherever it is best."""
    env = gym.make("schedenv/Moldable-v0", **MOLDABLE_RANKED)
    observation, _ = env.reset(seed=1_000_001)
    teacher_policy = Lookahead("hrf-easy")
    teacher_policy.reset(env)
    paper = baselines.make("hrf-easy")
    paper.reset(env)
    checked = 0
    while checked < 12:
        label = teacher_policy.act(observation, env)
        paper.act(observation, env)
        returns = {}
        for action in np.flatnonzero(env.unwrapped.action_masks()).tolist():
            trial, follower = copy.deepcopy((env, paper))
            step = trial.step(action)
            total, done = float(step[1]), step[2] or step[3]
            while not done:
                step = trial.step(follower.act(step[0], trial))
                total, done = total + float(step[1]), step[2] or step[3]
            returns[action] = total
        best = max(returns.values())  # the label's trials run in compiled code: equal to rounding
        assert returns[label] >= best - 1e-12 * abs(best)
        if returns[0] >= best - 1e-12 * abs(best):
            assert label == 0
        checked += 1
        observation, _, terminated, truncated, _ = env.step(label)
        if terminated or truncated:
            break
    assert checked >= 5


def test_the_lookahead_needs_a_masked_discrete_action_space() -> None:
    env = gym.make("schedenv/Malleable-v0", **MALLEABLE)
    with pytest.raises(ValueError, match=r"warm_start_lookahead=True .* needs a Discrete action space"):
        check_lookahead_space(env)
    ranked = gym.make("schedenv/Moldable-v0", **MOLDABLE_RANKED)
    check_lookahead_space(ranked)


def test_with_a_driver_the_driver_plays_and_the_teacher_only_labels() -> None:
    """DAgger's data: the episode is the driver's (its rewards, bit for bit), the actions are the teacher's."""

    def last_allowed(observation: Any, env: gym.Env) -> int:
        return int(np.flatnonzero(env.unwrapped.action_masks())[-1])

    class LastAllowed:
        def reset(self, env: gym.Env) -> None:
            pass

        def act(self, observation: Any, env: gym.Env) -> int:
            return last_allowed(observation, env)

    seed = 2**31 + 2**20 - 1  # the first of demonstration_seeds(0)
    demos = demonstrate(
        "schedenv/Moldable-v0", MOLDABLE_RANKED, "hrf-easy", demonstration_seeds(0), 1, driver=last_allowed
    )
    played, played_actions = _episode(LastAllowed(), seed)
    assert demos.n_episodes == 1 and demos.rewards.size == len(played_actions)
    assert demos.rewards.sum() == pytest.approx(played, rel=1e-12)
    assert (demos.actions == 0).all() and any(action != 0 for action in played_actions)


def test_a_dagger_round_clones_the_aggregate_and_counts_each_observation_once(tiny: dict[str, Any]) -> None:
    first = demonstrate("schedenv/Moldable-v0", MOLDABLE_RANKED, "hrf-easy", iter([2**31, 2**31 + 1]), 1)
    second = demonstrate("schedenv/Moldable-v0", MOLDABLE_RANKED, "hrf-easy", iter([2**31 + 2]), 1)
    both = aggregate(first, second)
    assert both.rewards.size == first.rewards.size + second.rewards.size and both.n_episodes == 2
    np.testing.assert_array_equal(both.observations[first.rewards.size :], second.observations)
    assert both.masks is not None and both.masks.shape[0] == both.rewards.size

    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    venv = VecNormalize(DummyVecEnv([lambda: gym.make("schedenv/Moldable-v0", **MOLDABLE_RANKED)]), gamma=0.99)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, seed=0)
    clone(model, first, gamma=0.99, epochs=1)
    clone(model, both, gamma=0.99, epochs=1, statistics=second)
    assert venv.obs_rms.count == pytest.approx(1e-4 + both.rewards.size)
    assert venv.ret_rms.count == pytest.approx(1e-4 + both.rewards.size)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"warm_start_dagger": -1}, r"warm_start_dagger=-1 is not allowed; it must be an integer >= 0"),
        ({"warm_start_dagger": True}, r"warm_start_dagger=True is not allowed"),
        ({"warm_start_lookahead": 1}, r"warm_start_lookahead=1 is not allowed; it is true or false"),
        ({"warm_start": None, "warm_start_dagger": 1}, r"set warm_start too"),
        ({"warm_start": None, "warm_start_lookahead": True}, r"set warm_start too"),
        ({"warm_start": None, "warm_start_kwargs": {"alpha": 0.8}}, r"warm_start_kwargs=\{'alpha': 0.8\} .* set"),
        ({"warm_start_kwargs": {"futures": 4}}, r"warm_start_kwargs=\{'futures': 4\} is not allowed for .*'hrf-easy'"),
        ({"warm_start_kwargs": [4]}, r"warm_start_kwargs=\[4\] is not allowed; it is a mapping"),
        (
            {"warm_start": "hrf-easy-rollout", "warm_start_kwargs": {"futures": 0}},
            r"warm_start_kwargs=\{'futures': 0\} is not allowed for warm_start='hrf-easy-rollout': futures=0",
        ),
    ],
)
def test_bad_dagger_and_lookahead_settings_are_refused_by_name(fields: dict[str, Any], message: str) -> None:
    settings = {"warm_start": "hrf-easy", "algo": "maskable_ppo"} | fields
    with pytest.raises(ValueError, match=message):
        TrainConfig(env_id="schedenv/Moldable-v0", env_kwargs=MOLDABLE_RANKED, **settings)


def test_train_with_dagger_and_lookahead_reports_each_round(tiny: dict[str, Any], tmp_path: Path) -> None:
    config = TrainConfig(
        env_id="schedenv/Moldable-v0",
        env_kwargs=MOLDABLE_RANKED,
        algo="maskable_ppo",
        timesteps=64,
        warm_start="hrf-easy",
        warm_start_steps=30,
        warm_start_epochs=2,
        warm_start_dagger=1,
        warm_start_lookahead=True,
        **tiny,
    )
    train(config, tmp_path)
    report = json.loads((tmp_path / WARM_START).read_text())
    assert report["lookahead"] is True and len(report["dagger_rounds"]) == 1
    (round_one,) = report["dagger_rounds"]
    assert round_one["decisions"] >= 30 and round_one["episodes"] >= 1
    assert report["decisions"] - round_one["decisions"] >= 30  # the first cloning's, then the round's
    assert report["episodes"] - round_one["episodes"] >= 1
    with pytest.raises(ValueError, match="warm_start_lookahead"):
        train(
            dataclasses.replace(
                config, env_id="schedenv/Malleable-v0", env_kwargs=MALLEABLE, algo="ppo", warm_start="hesrpt"
            ),
            tmp_path / "box",
        )
    assert not (tmp_path / "box").exists()


def test_the_warm_start_teaches_with_the_baselines_arguments(tiny: dict[str, Any], tmp_path: Path) -> None:
    """``warm_start_kwargs`` reach the baseline: the planner at 2 futures labels as ``HrfEasyRollout(futures=2)``
    does on the same demonstration episode, and the report records them."""
    config = TrainConfig(
        env_id="schedenv/Moldable-v0",
        env_kwargs=MOLDABLE_RANKED,
        algo="maskable_ppo",
        timesteps=64,
        warm_start="hrf-easy-rollout",
        warm_start_kwargs={"futures": 2},
        warm_start_steps=20,
        warm_start_epochs=1,
        **tiny,
    )
    expert = teacher(config.warm_start, config.warm_start_lookahead, config.warm_start_kwargs)
    assert isinstance(expert, HrfEasyRollout) and expert.futures == 2
    seed = next(demonstration_seeds(0))
    labels = demonstrate("schedenv/Moldable-v0", MOLDABLE_RANKED, expert, iter([seed]), 1).actions
    by_hand = demonstrate("schedenv/Moldable-v0", MOLDABLE_RANKED, HrfEasyRollout(futures=2), iter([seed]), 1).actions
    np.testing.assert_array_equal(labels, by_hand)
    assert (labels != 0).any()  # the planner leaves HRF-EASY's decision somewhere
    train(config, tmp_path)
    report = json.loads((tmp_path / WARM_START).read_text())
    assert report["baseline_kwargs"] == {"futures": 2}
    # the run's training budget counts its warm start (the planner's trials: most of this run's CPU time)
    assert read_provenance(tmp_path)["train_cpu_seconds"] > report["cpu_seconds"] > 0


def test_trials_that_play_on_with_option_zero_choose_as_those_that_ask_the_baseline() -> None:
    """The ranked Moldable env names HRF-EASY as its action 0 (``option_zero_baseline``); the lookahead's trials
    then step 0 instead of asking the baseline, with the very same labels over a whole episode."""
    assert gym.make("schedenv/Moldable-v0", **MOLDABLE_RANKED).unwrapped.option_zero_baseline == "hrf-easy"
    assert gym.make("schedenv/Moldable-v0").unwrapped.option_zero_baseline is None

    class Asking(Lookahead):
        def reset(self, env: gym.Env) -> None:
            super().reset(env)
            assert self._zero
            self._zero = False

    fast, fast_actions = _episode(Lookahead("hrf-easy"), 1_000_002)
    slow, slow_actions = _episode(Asking("hrf-easy"), 1_000_002)
    assert fast_actions == slow_actions and fast == slow and any(action != 0 for action in fast_actions)
