"""Ranked mode: select mode with each decision's options in ServerFilling-SRPT's order (docs/envs/multiserver.md).

Option 0 at every step is the paper policy, bit for bit, in the single and the batched env; the
options, masks and observation follow the hand-worked example below; baselines act in this mode
(ServerFilling-SRPT's action is always 0, what the warm start clones).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import baselines
from schedenv.multiserver.kernel import RANKED_COMMIT
from tests.multiserver.episodes import ENV_ID, baseline_metrics

HAND_JOBS = [(4, 1.0), (1, 2.0), (8, 0.5), (2, 3.0), (1, 10.0)]
"""A (need 4, d 1), B (1, 2), C (8, 0.5), D (2, 3), E (1, 10), all at t = 0; k = 8. SRPT keys k_j d_j:
A 4, B 2, C 4, D 6, E 10, so the window is B, A, C, D, E (slots 0..4; A before C by arrival).
ServerFilling: the prefix B, A, C needs 13 >= 8; by decreasing need C (8) fits, then A does not:
it serves {C} alone."""
SLOT = 7
"""Features per slot."""


@pytest.mark.parametrize("load", [0.6, 0.9])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_option_zero_at_every_step_is_serverfilling_srpt_bit_for_bit(seed: int, load: float) -> None:
    env = gym.make(ENV_ID, action_mode="ranked", load=load, n_arrivals=200, invalid_action="raise")
    _, info = env.reset(seed=seed)
    steps = 0
    while True:
        assert info["action_mask"][0] == 1
        _, _, terminated, _, info = env.step(0)
        steps += 1
        if terminated:
            break
    assert info["episode_metrics"] == baseline_metrics("serverfilling-srpt", seed, load=load, n_arrivals=200)
    assert steps > 400  # several selection steps per epoch: the comparison covers many decisions


def test_option_zero_in_the_batched_env_is_serverfilling_srpt_bit_for_bit() -> None:
    num_envs, kwargs = 3, {"load": 0.9, "n_arrivals": 150}
    venv = gym.make_vec(ENV_ID, num_envs, vectorization_mode="vector_entry_point", action_mode="ranked", **kwargs)
    venv.reset(seed=20)
    got: dict[int, dict[str, float]] = {}
    while len(got) < num_envs:
        _, _, terminated, _, info = venv.step(np.zeros(num_envs, dtype=np.int64))
        for i in np.flatnonzero(terminated):
            got.setdefault(int(i), {name: float(values[i]) for name, values in info["episode_metrics"].items()
                                    if not name.startswith("_")})  # fmt: skip
    for i in range(num_envs):
        assert got[i] == baseline_metrics("serverfilling-srpt", 20 + i, **kwargs)


def test_the_paper_policy_acts_with_option_zero() -> None:
    """Baselines act in ranked mode; ServerFilling-SRPT's action is always 0 (what the warm start clones)."""
    env = gym.make(ENV_ID, action_mode="ranked", n_arrivals=150, invalid_action="raise")
    policy = baselines.make("serverfilling-srpt")
    observation, _ = env.reset(seed=4)
    policy.reset(env)
    terminated = False
    while not terminated:
        assert policy.act(observation, env) == 0
        observation, _, terminated, _, info = env.step(0)
    assert info["episode_metrics"] == baseline_metrics("serverfilling-srpt", 4, n_arrivals=150)


def test_option_zero_commits_where_serverfilling_leaves_fitting_jobs_out() -> None:
    """Needs (1, 2, 3, 6) on k = 6 (not power-of-two): ServerFilling can stop with servers free and a job
    that fits; option 0 then commits, and the episode is priority mode's ServerFilling packing of the
    window order (every score 1, ties in slot order) bit for bit."""
    kwargs = {"n_servers": 6, "server_needs": (1, 2, 3, 6), "load": 0.9, "n_arrivals": 300}
    ranked, priority = gym.make(ENV_ID, action_mode="ranked", **kwargs), gym.make(ENV_ID, **kwargs)
    ranked.reset(seed=6)
    priority.reset(seed=6)
    commits_with_room, terminated = 0, False
    while not terminated:
        options = ranked.unwrapped.ranked_options
        commits_with_room += bool(options[0] == RANKED_COMMIT and options.size > 1)
        _, _, terminated, _, info = ranked.step(0)
        if "elapsed" in info:  # a commit: the priority env takes its one step of this epoch
            _, _, done, _, expected = priority.step(np.ones(16, dtype=np.float32))
            assert done == terminated and expected["time"] == info["time"]
    assert commits_with_room > 0
    assert info["episode_metrics"] == expected["episode_metrics"]


@pytest.mark.parametrize("name", ["fcfs", "greedy-srpt", "maxweight", "serverfilling"])
def test_every_baseline_gives_the_same_episode_in_ranked_and_select_mode(name: str) -> None:
    select, ranked = (
        {"action_mode": mode, "n_arrivals": 120, "invalid_action": "raise"} for mode in ("select", "ranked")
    )
    assert baseline_metrics(name, 9, **ranked) == baseline_metrics(name, 9, **select)


def test_hand_worked_options_masks_and_observation() -> None:
    env = gym.make(ENV_ID, jobs=HAND_JOBS, action_mode="ranked", max_jobs=8, invalid_action="raise")
    unwrapped = env.unwrapped
    observation, info = env.reset(seed=0)
    assert env.action_space == gym.spaces.Discrete(8)
    # The paper's set {C} (slot 2) first, then the others in SRPT order; no commit with nothing selected.
    assert unwrapped.ranked_options.tolist() == [2, 0, 1, 3, 4]
    assert info["action_mask"].tolist() == [1, 1, 1, 1, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="commit is not an option of this decision"):
        _ = unwrapped.commit_action
    assert observation[SLOT * 0 + 1] == 1.0 and observation[SLOT * 1 + 1] == 1 / 8  # C, then B
    assert observation[SLOT * 2 + 1] == 0.5 and observation[SLOT * 5] == 0.0  # A; slot 5 is padding
    # Deviate: take B (option 1). C no longer fits, so commit comes first, then A, D, E.
    observation, reward, _, _, info = env.step(1)
    assert reward == 0.0 and unwrapped.ranked_options.tolist() == [RANKED_COMMIT, 1, 3, 4]
    assert info["action_mask"].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert observation[:SLOT].tolist() == [1, 0, 0, 0, 0, 1, 0]  # the commit option
    assert observation[SLOT + 1] == 0.5 and observation[SLOT * 8] == 7 / 8  # A; 7 servers free
    # Take D (option 2: slot 3), then commit (option 0): B and D run until B completes at t = 2.
    env.step(2)
    assert unwrapped.ranked_options.tolist() == [RANKED_COMMIT, 1, 4] and unwrapped.commit_action == 0
    observation, reward, _, _, info = env.step(0)
    assert info["time"] == 2.0 and info["busy_servers"] == 3 and reward == -5 * 2.0
    assert [record.job_id for record in info["completed"]] == [1]
    # New epoch: window D (key 2), A (4), C (4), E (10); the paper's prefix D, A, C serves {C} again.
    assert unwrapped.ranked_options.tolist() == [2, 0, 1, 3]
    assert observation[SLOT * 0 + 1] == 1.0 and observation[SLOT * 1 + 6] == 1.0  # C; D was served
    # Option 0 from here on: C alone until 2.5.
    _, reward, _, _, info = env.step(0)
    assert info["time"] == 2.5 and reward == -4 * 0.5


@pytest.mark.parametrize("invalid_action", ["fallback", "penalty", "raise"])
def test_masked_options_take_option_zero_or_raise(invalid_action: str) -> None:
    kwargs = {"jobs": HAND_JOBS, "action_mode": "ranked", "max_jobs": 8, "invalid_action_penalty": 0.25}
    env = gym.make(ENV_ID, invalid_action=invalid_action, **kwargs)
    twin = gym.make(ENV_ID, invalid_action="raise", **kwargs)
    env.reset(seed=0)
    twin.reset(seed=0)
    if invalid_action == "raise":
        with pytest.raises(ValueError, match=r"action=5 is masked: this decision has 5 options \(0..4\)"):
            env.step(5)
        assert env.unwrapped.ranked_options.tolist() == [2, 0, 1, 3, 4]  # unchanged
        return
    observation, reward, _, _, info = env.step(5)
    expected = twin.step(0)
    assert info["invalid_action"] is True and not expected[4]["invalid_action"]
    np.testing.assert_array_equal(observation, expected[0])
    assert reward == expected[1] - (0.25 if invalid_action == "penalty" else 0.0)


@pytest.mark.parametrize("action", [8, -1])
def test_actions_outside_the_space_raise(action: int) -> None:
    env = gym.make(ENV_ID, jobs=HAND_JOBS, action_mode="ranked", max_jobs=8)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"out of range; ranked mode takes 0..7"):
        env.step(action)


def test_observation_slot_i_describes_option_i() -> None:
    """On random valid options the ranked env stays in step with a select env given the same choices,
    and slot i of the ranked observation is the select observation's slot of option i."""
    kwargs = {"n_arrivals": 60, "load": 0.9, "max_jobs": 8, "invalid_action": "raise"}
    ranked, select = gym.make(ENV_ID, action_mode="ranked", **kwargs), gym.make(ENV_ID, action_mode="select", **kwargs)
    (obs_r, info_r), (obs_s, _) = ranked.reset(seed=3), select.reset(seed=3)
    rng, k, commits = np.random.default_rng(0), SLOT * 8, 0
    while True:
        options = ranked.unwrapped.ranked_options
        assert info_r["action_mask"].tolist() == [1] * options.size + [0] * (8 - options.size)
        for i, slot in enumerate(options.tolist()):
            if slot == RANKED_COMMIT:
                assert obs_r[SLOT * i : SLOT * (i + 1)].tolist() == [1, 0, 0, 0, 0, 1, 0]
            else:
                assert obs_s[SLOT * slot + 5] == 0.0  # options are never selected yet
                np.testing.assert_array_equal(obs_r[SLOT * i : SLOT * (i + 1)], obs_s[SLOT * slot : SLOT * (slot + 1)])
        assert not obs_r[SLOT * options.size : k].any()
        assert obs_r[k:].tolist() == obs_s[k:].tolist()
        choice = int(rng.integers(options.size))
        slot = int(options[choice])
        commits += slot == RANKED_COMMIT
        obs_r, reward_r, done_r, _, info_r = ranked.step(choice)
        obs_s, reward_s, done_s, _, _ = select.step(8 if slot == RANKED_COMMIT else slot)
        assert reward_r == reward_s and done_r == done_s
        if done_r:
            break
    assert commits > 0


def test_ranked_mode_specific_attributes_refuse_other_modes() -> None:
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="ranked_options exists only for action_mode='ranked'"):
        _ = env.unwrapped.ranked_options
    with pytest.raises(ValueError, match="action_masks\\(\\) exists only for action_mode='select' or 'ranked'"):
        env.unwrapped.action_masks()
    with pytest.raises(ValueError, match="action_mode='ranks' is not allowed"):
        gym.make(ENV_ID, action_mode="ranks")


def test_reference_run_and_auto_reward_scale_in_ranked_mode() -> None:
    """The reference baseline's metrics on the same episode are option 0's, and "auto" scales the return to -1."""
    env = gym.make(ENV_ID, action_mode="ranked", n_arrivals=100, reference="serverfilling-srpt", reward_scale="auto")
    env.reset(seed=12)
    total, terminated = 0.0, False
    while not terminated:
        _, reward, terminated, _, info = env.step(0)
        total += reward
    assert info["reference_metrics"] == info["episode_metrics"]
    assert total == pytest.approx(-1.0, rel=0.5)


def test_batched_masked_options_raise_naming_the_copies_and_change_nothing() -> None:
    kwargs = {"action_mode": "ranked", "n_arrivals": 20, "invalid_action": "raise"}
    venv = gym.make_vec(ENV_ID, 3, vectorization_mode="vector_entry_point", **kwargs)
    twin = gym.make_vec(ENV_ID, 3, vectorization_mode="vector_entry_point", **kwargs)
    venv.reset(seed=3)
    twin.reset(seed=3)
    masks = venv.unwrapped.action_masks()
    assert masks.shape == (3, 16) and (masks[:, 0] == 1).all() and (masks[:, -1] == 0).all()
    with pytest.raises(ValueError, match=r"actions of copies \[1\] are masked: an option this decision does not"):
        venv.step(np.array([0, 15, 0]))
    with pytest.raises(ValueError, match=r"copies \[2\] are out of range; each must lie in 0..15"):
        venv.step(np.array([0, 0, 16]))
    np.testing.assert_array_equal(venv.unwrapped.action_masks(), masks)
    for a, b in zip(
        venv.step(np.zeros(3, dtype=np.int64))[:3], twin.step(np.zeros(3, dtype=np.int64))[:3], strict=True
    ):
        np.testing.assert_array_equal(a, b)
