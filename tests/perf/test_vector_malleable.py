"""The native batched Malleable env equals B single envs stepped in a loop (same seeds)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import schedenv  # noqa: F401
from schedenv.malleable.vector import MalleableVectorEnv
from schedenv.workloads import Distribution, Speedup

ENV = "schedenv/Malleable-v0"
CONFIGS: list[dict[str, Any]] = [
    {"n_jobs": 6, "max_jobs": 4},
    {"mode": "online", "n_arrivals": 40, "load": 0.9, "max_jobs": 3, "speedup": 0.3, "objective": "flow_time"},
    {
        "mode": "online",
        "n_arrivals": 30,
        "max_jobs": 3,
        "p_range": (0.1, 0.9),
        "observe_params": True,
        "allocation": "fractions",
    },
    {"jobs": [3.0, 1.0, 2.0, 0.5, 1.0], "max_jobs": 2, "observe_params": True},
]
IDS = ["offline", "online", "p_range-fractions", "explicit-jobs"]


def random_actions(rng: np.random.Generator, num_envs: int, width: int) -> np.ndarray:
    # Exact zeros, whole-group weights and small sums (idle servers with allocation="fractions")
    # exercise every allocation branch.
    weights = rng.random((num_envs, width)) * (rng.random((num_envs, width)) < 0.7)
    return (weights * np.where(rng.random((num_envs, 1)) < 0.3, 0.1, 1.0)).astype(np.float32)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_next_step_autoreset_equals_single_envs(kwargs: dict[str, Any]) -> None:
    num_envs, seed = 5, 20
    venv = gym.make_vec(ENV, num_envs=num_envs, **kwargs)
    assert isinstance(venv, MalleableVectorEnv)
    envs = [gym.make(ENV, **kwargs) for _ in range(num_envs)]
    obs, info = venv.reset(seed=seed)
    singles = [env.reset(seed=seed + i) for i, env in enumerate(envs)]
    np.testing.assert_array_equal(obs, np.stack([o for o, _ in singles]))
    np.testing.assert_array_equal(info["n_jobs"], [i["n_jobs"] for _, i in singles])
    rng = np.random.default_rng(0)
    ended = np.zeros(num_envs, dtype=bool)
    episodes = 0
    for _ in range(300):
        actions = random_actions(rng, num_envs, venv.single_action_space.shape[0])
        obs, rewards, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i, env in enumerate(envs):
            if ended[i]:
                single_obs, _ = env.reset()
                single_reward, single_terminated, single_info = 0.0, False, None
            else:
                single_obs, single_reward, single_terminated, _, single_info = env.step(actions[i])
            np.testing.assert_array_equal(obs[i], single_obs)
            assert rewards[i] == single_reward
            assert terminated[i] == single_terminated
            if single_info is not None:
                assert info["time"][i] == single_info["time"]
                assert info["n_outside"][i] == single_info["n_outside"]
            if single_terminated:
                assert single_info is not None and info["_episode_metrics"][i]
                for name, value in single_info["episode_metrics"].items():
                    assert info["episode_metrics"][name][i] == pytest.approx(value, rel=1e-9), name
                episodes += 1
        ended = terminated
    assert episodes >= 2 * num_envs


def test_same_step_autoreset_reports_the_final_observation() -> None:
    kwargs = CONFIGS[0]
    venv = MalleableVectorEnv(num_envs=3, autoreset_mode="SameStep", **kwargs)
    envs = [gym.make(ENV, **kwargs) for _ in range(3)]
    venv.reset(seed=[4, 9, 1])
    for env, seed in zip(envs, [4, 9, 1], strict=True):
        env.reset(seed=seed)
    rng = np.random.default_rng(1)
    finals = 0
    for _ in range(40):
        actions = random_actions(rng, 3, kwargs["max_jobs"] + 1)
        obs, rewards, terminated, _, info = venv.step(actions)
        for i, env in enumerate(envs):
            single_obs, single_reward, single_terminated, _, single_info = env.step(actions[i])
            assert rewards[i] == single_reward and terminated[i] == single_terminated
            if single_terminated:
                assert info["_final_obs"][i]
                np.testing.assert_array_equal(info["final_obs"][i], single_obs)
                expected = single_info["episode_metrics"]["mean_slowdown"]
                assert info["final_info"]["episode_metrics"]["mean_slowdown"][i] == pytest.approx(expected)
                single_obs, _ = env.reset()
                finals += 1
            np.testing.assert_array_equal(obs[i], single_obs)
    assert finals >= 6


def test_reset_mask_resets_only_the_masked_copies() -> None:
    venv = MalleableVectorEnv(num_envs=3, n_jobs=5)
    obs, _ = venv.reset(seed=0)
    stepped, _, _, _, _ = venv.step(np.full((3, 17), 0.5, dtype=np.float32))
    again, _ = venv.reset(seed=0, options={"reset_mask": np.array([True, False, True])})
    np.testing.assert_array_equal(again[[0, 2]], obs[[0, 2]])
    np.testing.assert_array_equal(again[1], stepped[1])


def test_invalid_actions_raise_and_change_nothing() -> None:
    venv, twin = MalleableVectorEnv(num_envs=2, n_jobs=5), MalleableVectorEnv(num_envs=2, n_jobs=5)
    venv.reset(seed=3)
    twin.reset(seed=3)
    bad = np.full((2, 17), 0.5)
    bad[1, 4] = np.nan
    with pytest.raises(ValueError, match=r"copies \[1\]"):
        venv.step(bad)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.full((3, 17), 0.5))
    good = np.full((2, 17), 0.25, dtype=np.float32)
    for a, b in zip(venv.step(good)[:3], twin.step(good)[:3], strict=True):
        np.testing.assert_array_equal(a, b)


class SpoiledOnCall(Distribution):
    """Uniform sizes in [1, 2), except that call number ``spoiled`` returns a negative third size."""

    def __init__(self, spoiled: int) -> None:
        self.spoiled, self.calls = spoiled, 0

    def sample(self, rng: np.random.Generator, size: int | None = None) -> Any:
        self.calls += 1
        sizes = 1.0 + rng.random(size)
        if self.calls == self.spoiled:
            sizes[2] = -1.0
        return sizes

    mean, variance = 1.5, 1.0 / 12.0


def test_a_bad_offline_draw_raises_the_single_envs_message() -> None:
    """The batch checks all copies' draws at once, yet names the first bad draw as the single envs do."""
    messages = []
    for mode in ("vector_entry_point", "sync"):
        venv = gym.make_vec(ENV, 6, vectorization_mode=mode, n_jobs=4, size_dist=SpoiledOnCall(spoiled=5))
        with pytest.raises(ValueError, match=r"returned -1\.0 \(draw 2\)") as error:
            venv.reset(seed=0)
        messages.append(str(error.value).split(" returned ")[1])
    assert messages[0] == messages[1]


class Linear(Speedup):
    def __call__(self, servers: Any) -> Any:
        return np.asarray(servers, dtype=float)

    def derivative(self, servers: Any) -> Any:
        return np.ones_like(np.asarray(servers, dtype=float))


def test_bad_construction_arguments() -> None:
    with pytest.raises(ValueError, match="autoreset_mode"):
        MalleableVectorEnv(num_envs=2, autoreset_mode="Never")
    with pytest.raises(ValueError, match="speedup"):
        MalleableVectorEnv(num_envs=2, speedup=Linear())
    with pytest.raises(ValueError, match="render_mode"):
        MalleableVectorEnv(num_envs=2, render_mode="ansi")
    with pytest.raises(ValueError, match="n_jobs"):
        MalleableVectorEnv(num_envs=2, n_jobs=0)


def info_keys(info: dict[str, Any]) -> dict[str, Any]:
    """The batched info entries both vector envs build (records are the single env's alone)."""
    keys = ("time", "n_jobs", "n_outside", "invalid_action")
    return {k: info[k] for k in keys} | {f"_{k}": info[f"_{k}"] for k in keys}


def assert_same_arrays(native: Any, sync: Any, what: str) -> None:
    native, sync = np.asarray(native), np.asarray(sync)
    assert native.dtype == sync.dtype and native.shape == sync.shape, (what, native.dtype, sync.dtype)
    np.testing.assert_array_equal(native, sync, err_msg=what)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
@pytest.mark.parametrize("autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next", "same"])
def test_native_batch_equals_sync_vector_env_bit_for_bit(kwargs: dict[str, Any], autoreset: AutoresetMode) -> None:
    num_envs = 4
    native = gym.make_vec(ENV, num_envs, vectorization_mode="vector_entry_point", autoreset_mode=autoreset, **kwargs)
    sync = gym.make_vec(ENV, num_envs, vectorization_mode="sync", vector_kwargs={"autoreset_mode": autoreset}, **kwargs)
    assert isinstance(native, MalleableVectorEnv)
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == autoreset
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    (obs_a, info_a), (obs_b, info_b) = native.reset(seed=11), sync.reset(seed=11)
    assert_same_arrays(obs_a, obs_b, "reset observation")
    for key, value in info_keys(info_b).items():
        assert_same_arrays(info_keys(info_a)[key], value, f"reset info {key}")
    native.action_space.seed(5)
    ended = 0
    for step in range(250):
        actions = native.action_space.sample()
        actions[step % num_envs] *= step % 3 != 0  # some all-zero rows (EQUI)
        actions[(step + 1) % num_envs] *= 0.1 if step % 2 else 1.0  # sums below 1 (idle with "fractions")
        a, b = native.step(actions), sync.step(actions)
        for name, x, y in zip(("obs", "reward", "terminated", "truncated"), a[:4], b[:4], strict=True):
            assert_same_arrays(x, y, f"step {step} {name}")
        info_a, info_b = a[4], b[4]
        for key, value in info_keys(info_b).items():
            assert_same_arrays(info_keys(info_a)[key], value, f"step {step} info {key}")
        assert ("final_obs" in info_a) == ("final_obs" in info_b)
        if "final_obs" in info_b:
            final_a, final_b = info_a["final_obs"], info_b["final_obs"]
            assert final_a.dtype == final_b.dtype == object and final_a.shape == final_b.shape == (num_envs,)
            assert_same_arrays(info_a["_final_obs"], info_b["_final_obs"], "_final_obs")
            for x, y in zip(final_a, final_b, strict=True):
                assert (x is None) == (y is None)
                if y is not None:
                    assert_same_arrays(x, y, f"step {step} final_obs")
            assert_same_arrays(info_a["final_info"]["_episode_metrics"], info_b["final_info"]["_episode_metrics"], "")
        if b[2].any():
            ended += int(b[2].sum())
            done = np.flatnonzero(b[2])
            # SameStep: the ended episode's info is final_info (the native env also keeps it at the top).
            where_a, where_b = (
                (a[4], b[4]) if autoreset == AutoresetMode.NEXT_STEP else (a[4]["final_info"], b[4]["final_info"])
            )
            for name, values in where_b["episode_metrics"].items():
                if not name.startswith("_"):
                    np.testing.assert_allclose(where_a["episode_metrics"][name][done], values[done], rtol=1e-12)
    assert ended >= num_envs
