"""Speed of schedenv (docs/results/speed.md), every figure measured in one run with same-run references.

Sections: (1) env steps/s of every registered env through ``gym.make``, as ratios to CartPole-v1;
(2) the M/M/8 FCFS reference at rho = 0.9: Ciw and SimPy against ``schedenv.mmk`` (events/s, ratios,
simulated mean response time against Erlang-C), and the same queue as Dispatch-v0's central queue
through its fast path; (3) fast-path events/s per family (``schedenv.fastpath``; the multiserver
family's own ``run_fast``); (4) the native batched envs (``gym.make_vec``) at B
copies, next to the single env, for every env id, as ratios, with valid, sampled and mask-sampled actions,
and (``batched-parts``) where a batched step's time goes per copy: the family's transition, the ``info`` it
carries, the resets and the rest, with the highest ratio those parts allow;
(5) training samples/s of ``schedenv train`` on the batched env against SB3 PPO on one ``gym.make`` env
(the reference of docs/results/speed.md), per family, learning only; (6) the same end to end, for every
shipped config: the wall time of a whole ``agents.train.train`` call (start-up, warm start, learning,
validations, saves) on a shortened budget, with the time by phase; (7) learning samples/s of every shipped
config under other settings (epochs, network size, torch threads), split into rollout and update; (8) the
arithmetic floor of every shipped config's learning: its FLOPs per sample against this core's float32 GEMM
rate, and so the highest ratio to the SB3 reference that its settings allow on this machine.

The reference is Gymnasium's CartPole-v1 (a few float operations per step, so it measures the wrapper
floor of ``gym.make``). Each env is stepped with trivial valid actions: the first unmasked action for
masked discrete spaces, otherwise one fixed sample of the action space; episodes are reset as they end
and resets are included in the time. The project's target for Malleable-v0 with M = 64 jobs is
>= 50 k steps/s.

    python benchmarks/speed.py            # prints Markdown tables
    python benchmarks/speed.py --json     # one JSON object
    python benchmarks/speed.py --quick    # smaller runs (a few minutes)
    python benchmarks/speed.py --sections end-to-end,settings   # the training sections only

Ciw and SimPy are the ``bench`` extra; PPO needs the ``rl`` extra (sections are skipped without them).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib.util
import io
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numba
import numpy as np

import schedenv
from schedenv.analysis.queueing_mmk import erlang_c_mean_response_time
from schedenv.fastpath import run_fast
from schedenv.mmk import simulate_mmk_fcfs
from schedenv.reporting import markdown_table, provenance

MMK_SERVERS, MMK_LOAD = 8, 0.9
MALLEABLE = "schedenv/Malleable-v0"
DISPATCH = "schedenv/Dispatch-v0"

CASES: dict[str, dict[str, Any]] = {
    "schedenv/Malleable-v0 (M = 64, offline)": {"id": "schedenv/Malleable-v0", "n_jobs": 64, "max_jobs": 64},
    "schedenv/Malleable-v0 (online, load 0.9)": {"id": "schedenv/Malleable-v0", "mode": "online", "load": 0.9},
    "schedenv/Moldable-v0 (ranked)": {"id": "schedenv/Moldable-v0", "action_mode": "ranked"},
}


def trivial_action(env: gym.Env, fixed: Any) -> Any:
    """The first valid action under the env's mask, or the fixed sample when there is no mask."""
    masks = getattr(env.unwrapped, "action_masks", None)
    if masks is None or not isinstance(env.action_space, gym.spaces.Discrete):
        return fixed
    return int(np.argmax(masks()))  # the first valid action; argmax is cheaper than flatnonzero


WARMUP_STEPS = 2048
"""Untimed steps before each single env's timing (first calls of its compiled kernels, an episode end)."""


def steps_per_second(env_id: str, seconds: float, action_kind: str = "first valid", **kwargs: Any) -> float:
    """Steps per second of ``gym.make(env_id, **kwargs)`` over about ``seconds`` of stepping.

    ``action_kind`` is one of ``ACTION_KINDS`` (``batched_section`` says what each means); with
    "masked sampling" only the ``step`` calls are timed.
    """
    env = gym.make(env_id, **kwargs)
    env.action_space.seed(0)
    fixed = env.action_space.sample()
    env.reset(seed=0)

    rng, drawn = np.random.default_rng(0), np.zeros(1, dtype=np.int64)

    def action() -> Any:
        if action_kind == "sampled":
            return env.action_space.sample()
        if action_kind == "masked sampling":
            draw_allowed(env.unwrapped.action_masks().reshape(1, -1), rng.random(1), drawn)
            return int(drawn[0])
        return trivial_action(env, fixed)

    def run(n: int) -> float:
        """Step ``n`` times (resetting at episode ends); the seconds spent drawing masked samples."""
        drawing = 0.0
        for _ in range(n):
            if action_kind == "masked sampling":  # the draw is not timed
                began = time.perf_counter()
                chosen = action()
                drawing += time.perf_counter() - began
            else:
                chosen = action()
            _, _, terminated, truncated, _ = env.step(chosen)
            if terminated or truncated:
                env.reset()
        return drawing

    run(WARMUP_STEPS)  # numba compiles a kernel at its first call (a cold cache: seconds) outside the timing
    steps, drawing, start = 0, 0.0, time.perf_counter()
    deadline = start + seconds
    while True:
        drawing += run(256)
        steps += 256
        if time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start - drawing)


def env_section(seconds: float) -> dict[str, float]:
    """Steps/s through ``gym.make`` of CartPole-v1 (the reference) and every case."""
    results = {"CartPole-v1 (reference)": steps_per_second("CartPole-v1", seconds)}
    cases = dict(CASES)
    for env_id in schedenv.ENV_IDS:
        cases.setdefault(f"{env_id} (defaults)", {"id": env_id})
    for label, kwargs in cases.items():
        kwargs = dict(kwargs)
        results[label] = steps_per_second(kwargs.pop("id"), seconds, **kwargs)
    return results


def mmk_section(quick: bool) -> dict[str, dict[str, float]]:
    """M/M/8 FCFS at rho = 0.9 in our kernel, Ciw and SimPy: events/s and mean response time."""
    lam, mu = MMK_LOAD * MMK_SERVERS, 1.0
    simulate_mmk_fcfs(lam, mu, MMK_SERVERS, 1000, seed=0)  # compile (or load the cache) outside the timing
    ours = simulate_mmk_fcfs(lam, mu, MMK_SERVERS, 10**6 if quick else 10**7, seed=1)
    rows = {
        "schedenv.mmk (numba)": {
            "events_per_second": ours.events_per_second,
            "mean_response_time": ours.mean_response_time,
            "jobs": float(ours.n_jobs),
        }
    }
    if importlib.util.find_spec("ciw") and importlib.util.find_spec("simpy"):
        from mmk_reference import ciw_mmk, simpy_mmk

        for label, function, jobs in (
            ("Ciw", ciw_mmk, 10_000 if quick else 40_000),
            ("SimPy", simpy_mmk, 40_000 if quick else 200_000),
        ):
            mean, rate = function(lam, mu, MMK_SERVERS, jobs, 1)
            rows[label] = {"events_per_second": rate, "mean_response_time": mean, "jobs": float(jobs)}
    rows.update(dispatch_mmk(quick))
    return rows


def dispatch_mmk(quick: bool) -> dict[str, dict[str, float]]:
    """The same M/M/8 as Dispatch-v0's central queue through its compiled fast path (workload draw included)."""
    from schedenv.workloads import Exponential

    kwargs = {"n_hosts": MMK_SERVERS, "load": MMK_LOAD, "size_dist": Exponential(1.0), "objective": "response_time"}
    run_fast(DISPATCH, "central-queue", 0, n_arrivals=1000, **kwargs)  # compile outside the timing
    run = run_fast(DISPATCH, "central-queue", 1, n_arrivals=10**6 if quick else 10**7, **kwargs)
    return {
        "Dispatch-v0 central-queue (schedenv.fastpath)": {
            "events_per_second": run.n_events / run.seconds,
            "mean_response_time": run.metrics["mean_response_time"],
            "jobs": run.metrics["n_completed"],
        }
    }


def fastpath_section(quick: bool) -> dict[str, float]:
    """Events/s (arrivals + departures) of the compiled baselines, one long episode each."""
    n = 10**5 if quick else 10**6
    results = {}
    for policy in ("hesrpt", "equi", "srpt"):
        for emulate in (True, False):
            run_fast(MALLEABLE, policy, 0, mode="online", n_arrivals=1000)  # compile outside the timing
            run = run_fast(MALLEABLE, policy, 1, emulate_env=emulate, mode="online", load=MMK_LOAD, n_arrivals=n)
            label = f"Malleable {policy}, load 0.9, {n:.0e} arrivals" + (", env window" if emulate else ", no window")
            results[label] = run.n_events / run.seconds
    results.update(multiserver_fastpath(n))
    for policy in ("central-queue", "tags-slowdown"):
        run_fast(DISPATCH, policy, 0, n_arrivals=1000)  # compile outside the timing
        run = run_fast(DISPATCH, policy, 1, n_arrivals=n)
        results[f"Dispatch {policy}, defaults (2 hosts, load 0.5), {n:.0e} arrivals"] = run.n_events / run.seconds
    return results


def multiserver_fastpath(n: int) -> dict[str, float]:
    """ServerFilling-SRPT at k = 8 through the multiserver family's own compiled ``run_fast``."""
    import baselines
    from schedenv.fastpath.multiserver import run_fast as multiserver_run

    env = gym.make("schedenv/MultiserverJob-v0", n_servers=8, load=MMK_LOAD, n_arrivals=n)
    policy: Any = baselines.make("serverfilling-srpt")
    small = gym.make("schedenv/MultiserverJob-v0", n_servers=8, n_arrivals=500)
    multiserver_run(small, policy, 0)  # compile outside the timing
    started = time.perf_counter()  # includes the env's workload draw at reset
    result = multiserver_run(env, policy, 1)
    seconds = time.perf_counter() - started
    return {
        f"MultiserverJob serverfilling-srpt, k = 8, load 0.9, {n:.0e} arrivals": 2 * result.completion.size / seconds
    }


BATCHED_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "Malleable online, load 0.9": (MALLEABLE, {"mode": "online", "load": MMK_LOAD}),
    "Malleable online, load 0.9, exponent mode": (
        MALLEABLE,
        {"mode": "online", "load": MMK_LOAD, "action_mode": "exponent"},
    ),
    "Malleable offline defaults": (MALLEABLE, {}),
    "Dispatch defaults": (DISPATCH, {}),
    "MultiserverJob select mode": ("schedenv/MultiserverJob-v0", {"action_mode": "select"}),
    "MultiserverJob ranked mode": ("schedenv/MultiserverJob-v0", {"action_mode": "ranked"}),
    "Moldable defaults": ("schedenv/Moldable-v0", {}),
    "Moldable ranked mode": ("schedenv/Moldable-v0", {"action_mode": "ranked"}),
}
"""The native batched envs timed against their single env (same kwargs)."""


@numba.njit  # not cache=True: numba's cache names the importing module, and a run of this script (__main__) then
# failed to load what an import as benchmarks.speed (the tests) had cached: ModuleNotFoundError
def draw_allowed(masks: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    """``out[i]``: a uniformly drawn allowed action of row i of ``masks`` ((B, n), nonzero = allowed), the
    floor(u c)-th allowed entry, u = ``uniforms[i]`` in [0, 1) and c the row's allowed count.

    The draw of the "masked sampling" kind (``batched_section``). It reads the masks and writes B integers,
    nothing else: a numpy draw (a (B, n) array of uniforms, masked, then an argmax) writes two (B, n) float
    arrays, 64 MB for Moldable's flat masks at B = 1024, which evicts the batch's state from the caches, so
    that the untimed draw slowed the timed step that followed (Moldable defaults: 373,000-421,000 steps/s
    against 638,000-677,000 with this draw, in alternating runs on one machine).
    """
    for i in range(masks.shape[0]):
        allowed = 0
        for j in range(masks.shape[1]):
            allowed += masks[i, j] != 0
        k = np.int64(uniforms[i] * allowed)
        for j in range(masks.shape[1]):
            if masks[i, j] != 0:
                if k == 0:
                    out[i] = j
                    break
                k -= 1


ACTION_KINDS: tuple[str, ...] = ("first valid", "sampled", "masked sampling")
"""How ``batched_section`` chooses actions in masked discrete spaces (see there); other spaces use the first."""


def batched_section(seconds: float, num_envs: int) -> dict[str, dict[str, float]]:
    """Steps/s of each native batched env (``vector_entry_point``) and of its single env (``gym.make``, same
    kwargs), and their ratio, per kind of action (``ACTION_KINDS``):

    - "first valid": the first unmasked action of each copy (bool argmax over ``action_masks()``), as in
      ``steps_per_second``; a fixed 0.5 vector in Box spaces (the only kind timed there);
    - "sampled": ``action_space.sample()``, so that many actions are masked and take the env's
      ``invalid_action`` fallback (the default);
    - "masked sampling": a uniformly drawn allowed action of each copy (``draw_allowed``, compiled, single and
      batched alike); drawing it costs more than a step, so only the ``step`` calls are timed.
    """
    results = {}
    for label, (env_id, kwargs) in BATCHED_CASES.items():
        venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
        kinds = ACTION_KINDS if isinstance(venv.single_action_space, gym.spaces.Discrete) else ACTION_KINDS[:1]
        for kind in kinds:
            single = steps_per_second(env_id, seconds, action_kind=kind, **kwargs)
            batched = _batched_rate(venv, seconds, kind)
            results[f"{label}, {kind}"] = {"single": single, "batched": batched, "ratio": batched / single}
        venv.close()
    return results


def _batched_rate(venv: Any, seconds: float, kind: str, started: Callable[[], None] | None = None) -> float:
    """Aggregate steps/s of ``venv`` over about ``seconds`` with actions of ``kind`` (``batched_section``);
    ``started`` is called after the warm-up steps, just before the timed ones."""
    masked = isinstance(venv.single_action_space, gym.spaces.Discrete)
    fixed = None if masked else np.full(venv.action_space.shape, 0.5, dtype=venv.action_space.dtype)
    rng, drawn = np.random.default_rng(0), np.zeros(venv.num_envs, dtype=np.int64)
    venv.action_space.seed(0)

    def actions() -> Any:
        if fixed is not None:
            return fixed
        if kind == "sampled":
            return venv.action_space.sample()
        masks = venv.unwrapped.action_masks()
        if kind == "masked sampling":
            draw_allowed(masks, rng.random(venv.num_envs), drawn)
            return drawn.copy()
        return masks.view(np.bool_).argmax(axis=1)

    venv.reset(seed=0)
    for _ in range(3):
        venv.step(actions())
    if started is not None:
        started()
    steps, drawing, start = 0, 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        chosen = actions()
        if kind == "masked sampling":  # the draw is not timed
            drawing += time.perf_counter() - began
        venv.step(chosen)
        steps += venv.num_envs
    return steps / (time.perf_counter() - start - drawing)


BATCHED_PARTS: dict[str, str] = {"transition": "_step_rows", "info": "_state_info", "reset": "_reset_rows"}
"""The parts of a batched step that ``batched_parts_section`` times, each the hook of
``schedenv.vector.NativeVectorEnv`` that does it: the family's batched transition and observation, the ``info``
arrays of every step (the masks among them), and the autoresets."""


def batched_parts_section(seconds: float, num_envs: int) -> dict[str, dict[str, float]]:
    """Where a batched step's time goes, per copy, for each ``BATCHED_CASES`` env and action kind
    (``ACTION_KINDS``, timed as in ``batched_section``), beside its single env's time per step.

    The step runs as it is; its ``BATCHED_PARTS`` hooks are wrapped on the instance to add up their own time,
    and the rest (the base class: action checks, copies of the observation and the rewards, Python) is the
    step's time less theirs. ``highest_ratio``, the single env's time per step over the parts' time per copy,
    is the ratio to the single env that the batched env could reach if the rest cost nothing: what the family's
    compiled transition and the ``info`` it must carry allow (docs/results/speed.md)."""
    results = {}
    for label, (env_id, kwargs) in BATCHED_CASES.items():
        venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
        spent = _time_parts(venv.unwrapped)
        kinds = ACTION_KINDS if isinstance(venv.single_action_space, gym.spaces.Discrete) else ACTION_KINDS[:1]
        for kind in kinds:
            single = 1e6 / steps_per_second(env_id, seconds, action_kind=kind, **kwargs)
            per_copy = 1e6 / _batched_rate(venv, seconds, kind, started=functools.partial(_restart, spent))
            parts = {part: 1e6 * spent[part] / spent["copy_steps"] for part in BATCHED_PARTS}
            results[f"{label}, {kind}"] = {
                "single_us": single,
                "batched_us": per_copy,
                **{f"{part}_us": value for part, value in parts.items()},
                "rest_us": per_copy - sum(parts.values()),
                "ratio": single / per_copy,
                "highest_ratio": single / sum(parts.values()),
            }
        venv.close()
    return results


def _restart(spent: dict[str, float]) -> None:
    """Zero the sums of ``_time_parts``."""
    spent.update(dict.fromkeys(spent, 0))


def _time_parts(venv: Any) -> dict[str, float]:
    """Wrap ``venv``'s ``BATCHED_PARTS`` hooks (on the instance) to add their seconds, and ``step`` to count the
    copy-steps, into the returned dict (``batched_parts_section``); results are unchanged."""
    spent: dict[str, float] = dict.fromkeys(BATCHED_PARTS, 0.0) | {"copy_steps": 0}

    def timed(part: str, method: Any) -> Any:
        def run(*args: Any) -> Any:
            began = time.perf_counter()
            try:
                return method(*args)
            finally:
                spent[part] += time.perf_counter() - began

        return run

    for part, hook in BATCHED_PARTS.items():
        setattr(venv, hook, timed(part, getattr(venv, hook)))
    step = venv.step

    def counted(actions: Any) -> Any:
        spent["copy_steps"] += venv.num_envs
        return step(actions)

    venv.step = counted
    return spent


TRAINING_CASES = {
    "Malleable offline": "malleable_ppo.yaml",
    "Malleable online": "malleable_online_ppo.yaml",
    "Dispatch": "dispatch_maskable_ppo.yaml",
    "MultiserverJob (select)": "multiserverjob_maskable_ppo.yaml",
    "MultiserverJob (ranked)": "multiserverjob_ranked_maskable_ppo.yaml",
    "Moldable": "moldable_maskable_ppo.yaml",
}
"""Each family's shipped training config, timed end to end by ``training_section``."""


def training_section(reference_steps: int, rollouts: int) -> dict[str, dict[str, float]]:
    """Training samples/s: SB3 PPO on one ``gym.make`` env against ``schedenv train`` on the batched env.

    The reference is what a new user writes: ``PPO("MlpPolicy", gym.make(env_id, **kwargs), n_steps=512,
    batch_size=64)`` (SB3's other defaults), timed over ``reference_steps`` after a 512-step warm-up.
    ``schedenv train`` runs the family's shipped config (its algorithm, extractor, ``n_envs`` copies of
    the native batched env, VecNormalize) for ``rollouts`` rollouts after a one-rollout warm-up (numba
    and torch compiled), timed over its rollouts and updates (``TrainResult.phases``, the end-to-end
    section's "learning only"): the first reset of ``learn``, which draws every copy's whole episode
    (7 s for Dispatch's 512 copies of 200,000 arrivals), and the checkpoints are a run's start-up and
    saves, which the end-to-end section counts. Both use one torch thread.

    Each family is also timed with ``THROUGHPUT`` settings (the shipped config with 256 copies, 32
    steps per copy, 4 epochs of 2048-sample minibatches, and the reference's network: the flat MLP
    extractor and SB3's default 64 x 64 policy and value networks):
    some shipped configs spend more on the network (the permutation-aware slot extractor, more
    gradient steps per sample) for sample efficiency within a CPU budget, so the two rows separate
    what the harness can do from what a config chooses.
    """
    if importlib.util.find_spec("stable_baselines3") is None:
        return {}
    import torch

    from agents.train import CONFIG_DIR, resolve_config

    torch.set_num_threads(1)
    results = {}
    for label, name in TRAINING_CASES.items():
        config = resolve_config(CONFIG_DIR / name, {"progress_bar": False, "tensorboard": False, "eval_every": 0})
        reference = _sb3_reference(config, reference_steps)
        fast = dataclasses.replace(
            config,
            n_envs=THROUGHPUT["n_envs"],
            extractor=THROUGHPUT["extractor"],
            policy_kwargs={**config.policy_kwargs, **THROUGHPUT["policy_kwargs"]},
            algo_kwargs={**config.algo_kwargs, **THROUGHPUT["algo_kwargs"]},
        )
        for variant, chosen in (("shipped config", config), ("throughput settings", fast)):
            ours = _train_rate(chosen, rollouts)
            results[f"{label}, {variant}"] = {
                "sb3_ppo_one_env": reference,
                "schedenv_train": ours,
                "ratio": ours / reference,
                "n_envs": chosen.n_envs,
                "algo": chosen.algo,
            }
    return results


THROUGHPUT: dict[str, Any] = {
    "n_envs": 256,
    "extractor": "mlp",
    "policy_kwargs": {"net_arch": [64, 64]},
    "algo_kwargs": {"n_steps": 32, "batch_size": 2048, "n_epochs": 4},
}
"""Settings of the throughput rows of ``training_section``."""


def _train_rate(config: Any, rollouts: int) -> float:
    """Samples/s of ``agents.train.train`` over ``rollouts`` rollouts of ``config``, after a one-rollout warm-up.

    Learning only (the rollout and update phases of ``TrainResult.phases``), so the config's warm start, which
    that figure leaves out, is not run: it changes the policy's weights, not the cost of a rollout or an
    update (Dispatch's clone of a 208,000-decision episode took a minute per call). Nor is a ``warm_start_kl``
    anchor, which needs the clone: its forward pass in each minibatch is counted by the end-to-end section
    only."""
    import tempfile

    from agents.train import train

    config = config.without_warm_start()
    rollout = config.n_envs * int(config.algo_kwargs.get("n_steps", 2048))
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):  # train's config tables
        train(dataclasses.replace(config, timesteps=rollout, eval_episodes=1), f"{folder}/warm")
        result = train(dataclasses.replace(config, timesteps=rollout * rollouts, eval_episodes=1), f"{folder}/timed")
    return result.model.num_timesteps / (result.phases["rollout"] + result.phases["update"])


def _sb3_reference(config: Any, steps: int) -> float:
    """Samples/s of the reference (``training_section``) on ``config``'s env: SB3 PPO on one ``gym.make`` env."""
    from stable_baselines3 import PPO

    from agents.train import env_kwargs_objects

    env = gym.make(config.env_id, **env_kwargs_objects(config))
    model = PPO("MlpPolicy", env, n_steps=512, batch_size=64, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    start = time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - start)


END_TO_END_STEPS = 200_000
"""Default budget of ``end_to_end_section``: each shipped config trains min(its timesteps, this) steps."""


def scaled_config(config: Any, steps: int) -> Any:
    """``config`` trained for ``steps`` (at most its own budget) with its validation and checkpoint cadence
    scaled by the same factor, so the shortened run holds as many validations as the full one (at least one
    rollout apart); progress bar and TensorBoard off. Warm start settings are kept as they are."""
    steps = min(steps, config.timesteps)
    factor = steps / config.timesteps
    rollout = config.n_envs * int(config.algo_kwargs.get("n_steps", 2048))
    every = 0 if config.eval_every == 0 else max(rollout, round(config.eval_every * factor))
    return dataclasses.replace(
        config,
        timesteps=steps,
        eval_every=every,
        checkpoint_every=max(rollout, round(config.checkpoint_every * factor)),
        progress_bar=False,
        tensorboard=False,
    )


def end_to_end(name: str, steps: int) -> dict[str, Any]:
    """One whole ``agents.train.train`` call of the shipped config ``name`` shortened by ``scaled_config``:
    its wall time (env construction, warm start, learning, validations at the scaled cadence, checkpoints and
    the final save), the time by phase (``TrainResult.phases``) and samples/s end to end and learning only.

    The shortened run does all the non-learning work of the full run (its warm start, as many validations
    and checkpoints), so the full run's wall time is about this one's plus the learning it skips, at this
    run's learning rate: ``full_run`` is the full budget's samples/s so projected."""
    import tempfile

    from agents.train import CONFIG_DIR, resolve_config, train

    shipped = resolve_config(CONFIG_DIR / name, {})
    config = scaled_config(shipped, steps)
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())  # config, evaluations
    with tempfile.TemporaryDirectory() as folder, quiet[0], quiet[1]:
        started = time.perf_counter()
        result = train(config, f"{folder}/run")
        wall = time.perf_counter() - started
    phases = result.phases
    trained = result.model.num_timesteps
    learning = phases["rollout"] + phases["update"]
    full = shipped.timesteps
    return {
        "config": name,
        "timesteps": trained,
        "full_timesteps": full,
        "validations": len(result.evaluations),
        "wall_seconds": wall,
        "end_to_end": trained / wall,
        "learning_only": trained / learning,
        "full_run": full / (wall + max(full - trained, 0) * learning / trained),
        "phases": phases,
    }


def end_to_end_section(steps: int, reference_steps: int, configs: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """``end_to_end`` of every shipped config (``agents/configs``; or of ``configs``), beside the SB3 reference
    on its env."""
    if importlib.util.find_spec("stable_baselines3") is None:
        return {}
    import torch

    from agents.train import CONFIG_DIR, resolve_config, shipped_configs

    results = {}
    for name in configs or sorted(shipped_configs()):
        torch.set_num_threads(1)
        reference = _sb3_reference(resolve_config(CONFIG_DIR / name, {}), reference_steps)
        row = end_to_end(name, steps)
        row["sb3_ppo_one_env"] = reference
        row["ratio_end_to_end"] = row["end_to_end"] / reference
        row["ratio_learning_only"] = row["learning_only"] / reference
        row["ratio_full_run"] = row["full_run"] / reference
        results[name] = row
    return results


SETTINGS: dict[str, dict[str, Any]] = {
    "shipped": {},
    "shipped, 2 torch threads": {"threads": 2},
    "2 epochs": {"algo_kwargs": {"n_epochs": 2}},
    "1 epoch": {"algo_kwargs": {"n_epochs": 1}},
    "64 x 64 nets": {"policy_kwargs": {"net_arch": [64, 64]}},
    "64 x 64 nets, 1 epoch": {"policy_kwargs": {"net_arch": [64, 64]}, "algo_kwargs": {"n_epochs": 1}},
    "64 x 64 nets, 1 epoch, 8192-sample minibatches": {
        "policy_kwargs": {"net_arch": [64, 64]},
        "algo_kwargs": {"n_epochs": 1, "batch_size": 8192},
    },
    "shipped, torch.compile": {"compile": True},
}
"""Variants of each shipped config timed by ``settings_section`` (the shipped configs are not changed);
``compile``: the policy's forward pass and ``evaluate_actions`` through ``torch.compile`` (``compiled``)."""


def can_compile() -> bool:
    """Whether ``torch.compile`` can generate code here: its CPU backend needs a C++ compiler (without one the
    settings section leaves the ``compile`` variant out)."""
    return any(shutil.which(name) for name in ("c++", "g++", "clang++"))


def compiled(model: Any) -> Any:
    """``model`` with its policy's ``forward`` (the rollouts' pass) and ``evaluate_actions`` (the update's) run
    through ``torch.compile`` (inductor, the default mode): the same function, fused and generated as C++ for
    this CPU. The first call of each compiles it (in ``settings_section``'s warm-up, untimed)."""
    import torch

    policy = model.policy
    policy.forward = torch.compile(policy.forward)
    policy.evaluate_actions = torch.compile(policy.evaluate_actions)
    return model


def _variant(config: Any, changes: dict[str, Any]) -> Any:
    """``config`` with the ``SETTINGS`` entry ``changes`` merged into its mappings (the minibatch at most one
    rollout)."""
    algo_kwargs = {**config.algo_kwargs, **changes.get("algo_kwargs", {})}
    rollout = config.n_envs * int(algo_kwargs.get("n_steps", 2048))
    if "batch_size" in algo_kwargs:
        algo_kwargs["batch_size"] = min(int(algo_kwargs["batch_size"]), rollout)
    policy_kwargs = {**config.policy_kwargs, **changes.get("policy_kwargs", {})}
    return dataclasses.replace(config, algo_kwargs=algo_kwargs, policy_kwargs=policy_kwargs)


def fresh_model(config: Any, folder: str) -> Any:
    """The model ``agents.train.train`` starts from for ``config`` (same seeding, envs and policy), no run files."""
    from stable_baselines3.common.utils import set_random_seed

    from agents.algorithms import check_compatible
    from agents.train import _new_model, build_policy_kwargs, env_kwargs_objects, resolved_algo_kwargs
    from agents.venv import make_training_env

    set_random_seed(config.seed)
    kwargs = env_kwargs_objects(config)
    probe = gym.make(config.env_id, **kwargs)
    algo = check_compatible(config.algo, probe, config.env_id)
    policy_kwargs = build_policy_kwargs(config, probe)
    probe.close()
    config = dataclasses.replace(config, algo_kwargs=resolved_algo_kwargs(config), tensorboard=False)
    venv = make_training_env(config.env_id, kwargs, config.n_envs, config.seed, config.vec_env)
    return _new_model(algo, venv, config, policy_kwargs, Path(folder))


def _timed_learn(model: Any, rollouts: int, threads: int) -> tuple[float, float]:
    """Seconds in rollouts and in updates of ``rollouts`` more rollouts of ``model`` with ``threads`` torch threads."""
    import torch

    from agents.callbacks import RolloutTimer
    from agents.train import _unchecked_distributions

    torch.set_num_threads(threads)
    timer = RolloutTimer(lambda: 0.0)
    per_rollout = model.n_envs * model.n_steps
    with _unchecked_distributions():
        model.learn(total_timesteps=rollouts * per_rollout, callback=timer, reset_num_timesteps=False)
    torch.set_num_threads(1)
    return timer.rollout_seconds, timer.update_seconds


def settings_section(
    rollouts: int, rounds: int, reference_steps: int, configs: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Learning samples/s of each shipped config (or of ``configs``) under each ``SETTINGS`` variant, split into
    rollout and update.

    Per config, one fresh model per variant (as ``train`` builds it, warmed up by one rollout), then
    ``rounds`` rounds in which every variant learns ``rollouts`` more rollouts in turn (the machine's
    load falls on all variants alike); the median round (the faster of two) is reported with the range, and that
    round's split into rollout and update. Learning only: no
    validation, checkpoint or warm start. "same model" says whether 2 torch threads train the
    bit-identical model of 1 thread (parameters after two rollouts from the same seed).
    """
    if importlib.util.find_spec("stable_baselines3") is None:
        return {}
    import tempfile

    import torch

    from agents.train import CONFIG_DIR, resolve_config, shipped_configs

    results: dict[str, dict[str, Any]] = {}
    for name in configs or sorted(shipped_configs()):
        torch.set_num_threads(1)
        config = resolve_config(CONFIG_DIR / name, {"progress_bar": False, "tensorboard": False})
        reference = _sb3_reference(config, reference_steps)
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
            settings = {
                label: changes for label, changes in SETTINGS.items() if can_compile() or not changes.get("compile")
            }
            models = {label: fresh_model(_variant(config, changes), folder) for label, changes in settings.items()}
            models = {
                label: compiled(model) if settings[label].get("compile") else model for label, model in models.items()
            }
            timings: dict[str, list[tuple[float, float]]] = {label: [] for label in settings}
            for model in models.values():  # warm-up (numba, torch); also sets the models' first observation
                model.learn(total_timesteps=model.n_envs * model.n_steps)
            for _ in range(rounds):
                for label, model in models.items():
                    timings[label].append(_timed_learn(model, rollouts, settings[label].get("threads", 1)))
            same = _same_model_with_threads(config, folder)
        for label, model in models.items():
            samples = rollouts * model.n_envs * model.n_steps
            rates = sorted(samples / (rollout + update) for rollout, update in timings[label])
            middle = sorted(timings[label], key=lambda pair: -(pair[0] + pair[1]))[len(timings[label]) // 2]
            results[f"{name}, {label}"] = {
                "config": name,
                "settings": label,
                "learning": rates[len(rates) // 2],
                "learning_min": rates[0],
                "learning_max": rates[-1],
                "rollout": samples / middle[0],
                "update": samples / middle[1],
                "sb3_ppo_one_env": reference,
                "ratio": rates[len(rates) // 2] / reference,
                "same_model_with_2_threads": same,
            }
            model.get_env().close()
    return results


def _same_model_with_threads(config: Any, folder: str) -> bool:
    """Whether two rollouts and updates of ``config`` give bit-identical parameters with 1 and 2 torch threads."""
    import torch

    from agents.train import _unchecked_distributions

    parameters = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        model = fresh_model(config, folder)
        with _unchecked_distributions():
            model.learn(total_timesteps=2 * model.n_envs * model.n_steps)
        parameters.append([p.detach().clone() for p in model.policy.parameters()])
        model.get_env().close()
    torch.set_num_threads(1)
    return all(torch.equal(a, b) for a, b in zip(*parameters, strict=True))


def print_tables(report: dict[str, Any]) -> None:
    if "env_steps_per_second" in report:
        reference = report["env_steps_per_second"]["CartPole-v1 (reference)"]
        rows = [
            (label, f"{rate:,.0f}", f"{rate / reference:.3f}") for label, rate in report["env_steps_per_second"].items()
        ]
        print(markdown_table(["env", "steps/s", "ratio to CartPole-v1"], rows))
    if "mmk_fcfs" in report:
        mmk, erlang = report["mmk_fcfs"], report["mmk_erlang_c_mean_response_time"]
        print(f"\nM/M/{MMK_SERVERS} FCFS at rho = {MMK_LOAD} (Erlang-C mean response time {erlang:.4f})\n")
        ciw_rate = mmk.get("Ciw", {}).get("events_per_second", float("nan"))
        rows = [
            (
                label,
                f"{row['jobs']:,.0f}",
                f"{row['events_per_second']:,.0f}",
                f"{row['events_per_second'] / ciw_rate:,.1f}",
                f"{row['mean_response_time']:.4f}",
                f"{row['mean_response_time'] / erlang - 1:+.2%}",
            )
            for label, row in mmk.items()
        ]
        print(markdown_table(["simulator", "jobs", "events/s", "ratio to Ciw", "mean response", "vs Erlang-C"], rows))
        print()
    if "fastpath_events_per_second" in report:
        rows = [(label, f"{rate:,.0f}") for label, rate in report["fastpath_events_per_second"].items()]
        print(markdown_table(["fast path", "events/s"], rows))
        print()
    if "batched_steps_per_second" in report:
        rows = [
            (label, f"{row['single']:,.0f}", f"{row['batched']:,.0f}", f"{row['ratio']:.1f}x")
            for label, row in report["batched_steps_per_second"].items()
        ]
        print(markdown_table(["batched env, actions", "single env steps/s", "batched steps/s", "ratio"], rows))
        print()
    if report.get("batched_parts"):
        print_batched_parts(report["batched_parts"])
    if report.get("training_samples_per_second"):
        rows = [
            (
                label,
                f"{row['sb3_ppo_one_env']:,.0f}",
                f"{row['algo']}, {row['n_envs']} copies: {row['schedenv_train']:,.0f}",
                f"{row['ratio']:.1f}x",
            )
            for label, row in report["training_samples_per_second"].items()
        ]
        headers = ["family (shipped config)", "SB3 PPO, 1 gym.make env", "schedenv train, batched env", "ratio"]
        print(markdown_table(headers, rows))
        print()
    if report.get("end_to_end"):
        print_end_to_end(report["end_to_end"])
    if report.get("settings"):
        print_settings(report["settings"])
    if report.get("floor"):
        print_floor(report["floor"])
    print(f"\n{provenance()}")


def print_batched_parts(table: dict[str, dict[str, Any]]) -> None:
    """The ``batched_parts_section`` table."""
    rows = [
        (
            label,
            f"{row['single_us']:.2f}",
            f"{row['batched_us']:.2f}",
            *(f"{row[f'{part}_us']:.2f}" for part in BATCHED_PARTS),
            f"{row['rest_us']:.2f}",
            f"{row['ratio']:.1f}x",
            f"{row['highest_ratio']:.1f}x",
        )
        for label, row in table.items()
    ]
    headers = [
        "batched env, actions",
        "single env µs/step",
        "batched µs/copy-step",
        "transition",
        "info (masks)",
        "resets",
        "rest",
        "ratio",
        "highest ratio (rest free)",
    ]
    print(markdown_table(headers, rows))
    print()


def print_end_to_end(table: dict[str, dict[str, Any]]) -> None:
    """The ``end_to_end_section`` table: samples/s end to end and learning only, ratios, and where the time goes."""
    rows = []
    for name, row in table.items():
        phases = row["phases"]
        share = " / ".join(f"{100 * phases.get(key, float('nan')) / row['wall_seconds']:.0f}" for key in _PHASE_KEYS)
        rows.append(
            (
                name.removesuffix(".yaml"),
                f"{row['timesteps']:,} of {row['full_timesteps']:,}",
                str(row["validations"]),
                f"{row['sb3_ppo_one_env']:,.0f}",
                f"{row['learning_only']:,.0f} ({row['ratio_learning_only']:.1f}x)",
                f"{row['end_to_end']:,.0f} ({row['ratio_end_to_end']:.1f}x)",
                f"{row['full_run']:,.0f} ({row['ratio_full_run']:.1f}x)",
                f"{row['wall_seconds']:.1f}",
                share,
            )
        )
    headers = [
        "shipped config",
        "steps timed (of the config's)",
        "validations",
        "SB3 PPO, 1 env",
        "learning only (ratio)",
        "end to end (ratio)",
        "full run, projected (ratio)",
        "wall s",
        "% start-up / warm start / rollout / update / validation / save",
    ]
    print(markdown_table(headers, rows))
    print()


_PHASE_KEYS = ("start_up", "warm_start", "rollout", "update", "validation", "save")


GEMM_SHAPES: tuple[tuple[int, int, int], ...] = ((1024, 1024, 1024), (2048, 128, 128), (2048, 300, 128))
"""(rows, inner, columns) of the float32 matrix products ``gemm_rate`` times: a large square one and two of an
update's minibatch shapes (2048 samples through a 128-wide layer)."""


def gemm_rate(seconds: float) -> float:
    """FLOP/s of this core's fastest float32 matrix product among ``GEMM_SHAPES`` (torch, one thread): the
    arithmetic rate that a network's forward and backward passes cannot exceed."""
    import torch

    torch.set_num_threads(1)
    best = 0.0
    for rows, inner, columns in GEMM_SHAPES:
        left, right = torch.randn(rows, inner), torch.randn(inner, columns)
        for _ in range(3):
            left @ right
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / len(GEMM_SHAPES):
            left @ right
            count += 1
        best = max(best, 2.0 * rows * inner * columns * count / (time.perf_counter() - start))
    return best


def learning_flops(config: Any) -> float:
    """Floating-point operations per sample of ``config``'s learning: the policy's forward passes in one rollout
    and the whole update that follows it (every epoch and minibatch, backward passes included), counted by
    torch's ``FlopCounterMode`` over one ``learn`` of one rollout of the model ``train`` builds (warm start
    aside: it changes the weights, not the work)."""
    import tempfile

    from torch.utils.flop_counter import FlopCounterMode

    from agents.train import _unchecked_distributions

    config = config.without_warm_start()
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
        model = fresh_model(config, folder)
        rollout = model.n_envs * model.n_steps
        counter = FlopCounterMode(display=False)
        with counter, _unchecked_distributions():
            model.learn(total_timesteps=rollout)
        model.get_env().close()
    return counter.get_total_flops() / rollout


def floor_section(seconds: float, reference_steps: int, configs: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The arithmetic floor of each shipped config's learning on this machine: its FLOPs per sample
    (``learning_flops``) at this core's float32 matrix-product rate (``gemm_rate``, measured in the same run)
    are the least time a sample's forward and backward passes can take at the config's settings, however
    they are computed (fused, compiled or not; bit-identical or not, in float32 on one thread); one over that
    time and the SB3 reference's samples/s (``_sb3_reference``, timed just before) is the highest ratio to the
    reference that learning can reach, before the env steps, validations, warm start and start-up."""
    if importlib.util.find_spec("stable_baselines3") is None:
        return {}
    import torch

    from agents.train import CONFIG_DIR, resolve_config, shipped_configs

    torch.set_num_threads(1)
    rate = gemm_rate(seconds)
    results: dict[str, dict[str, Any]] = {}
    for name in configs or sorted(shipped_configs()):
        config = resolve_config(CONFIG_DIR / name, {"progress_bar": False, "tensorboard": False})
        reference = _sb3_reference(config, reference_steps)
        flops = learning_flops(config)
        results[name] = {
            "config": name,
            "flops_per_sample": flops,
            "gemm_flops_per_second": rate,
            "floor_seconds_per_sample": flops / rate,
            "sb3_ppo_one_env": reference,
            "highest_ratio": rate / (flops * reference),
        }
    return results


def print_floor(table: dict[str, dict[str, Any]]) -> None:
    """The ``floor_section`` table."""
    rows = [
        (
            row["config"].removesuffix(".yaml"),
            f"{row['flops_per_sample'] / 1e6:.2f}",
            f"{row['floor_seconds_per_sample'] * 1e6:.1f}",
            f"{row['sb3_ppo_one_env']:,.0f}",
            f"{row['highest_ratio']:.1f}x",
        )
        for row in table.values()
    ]
    rate = next(iter(table.values()))["gemm_flops_per_second"]  # one rate, measured once per run
    headers = [
        "shipped config",
        "MFLOP per sample (rollout + update)",
        "µs per sample at the GEMM rate",
        "SB3 PPO, 1 env (samples/s)",
        "highest ratio learning can reach",
    ]
    print(
        f"\nArithmetic floor of learning, at this core's float32 GEMM rate of {rate / 1e9:.1f} GFLOP/s (one thread)\n"
    )
    print(markdown_table(headers, rows))
    print()


def print_settings(table: dict[str, dict[str, Any]]) -> None:
    """The ``settings_section`` table."""
    rows = [
        (
            row["config"].removesuffix(".yaml"),
            row["settings"],
            f"{row['learning']:,.0f} ({row['learning_min']:,.0f}-{row['learning_max']:,.0f})",
            f"{row['rollout']:,.0f}",
            f"{row['update']:,.0f}",
            f"{row['ratio']:.1f}x",
            "yes" if row["same_model_with_2_threads"] else "no",
        )
        for row in table.values()
    ]
    headers = [
        "shipped config",
        "settings",
        "learning samples/s (range)",
        "rollout samples/s",
        "update samples/s",
        "ratio to SB3",
        "2 threads: same model",
    ]
    print(markdown_table(headers, rows))
    print()


SECTIONS = ("env", "mmk", "fastpath", "batched", "batched-parts", "training", "end-to-end", "settings", "floor")
"""Values of ``--sections`` (all by default)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per steps/s measurement")
    parser.add_argument("--num-envs", type=int, default=1024, help="copies of the batched env")
    parser.add_argument("--ppo-steps", type=int, default=4096, help="reference PPO timesteps timed (1 env)")
    parser.add_argument("--rollouts", type=int, default=5, help="rollouts of schedenv train timed per family")
    parser.add_argument(
        "--e2e-steps",
        type=int,
        default=END_TO_END_STEPS,
        help="steps of each end-to-end training run (at most the config's)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the settings section (median reported)")
    parser.add_argument(
        "--sections", default=",".join(SECTIONS), help=f"comma-separated sections to run, of {', '.join(SECTIONS)}"
    )
    parser.add_argument(
        "--configs", default=None, help="comma-separated shipped configs of the end-to-end and settings sections"
    )
    parser.add_argument("--quick", action="store_true", help="shorter runs (a few minutes)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.sections.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        parser.error(f"--sections {','.join(unknown)} is not allowed; choose among {', '.join(SECTIONS)}")
    configs = None if args.configs is None else [name.strip() for name in args.configs.split(",")]
    seconds = min(args.seconds, 0.5) if args.quick else args.seconds
    reference_steps = 1024 if args.quick else args.ppo_steps
    report: dict[str, Any] = {"reference": "CartPole-v1"}
    if "env" in chosen:
        report["env_steps_per_second"] = env_section(seconds)
    if "mmk" in chosen:
        report["mmk_fcfs"] = mmk_section(args.quick)
        report["mmk_erlang_c_mean_response_time"] = erlang_c_mean_response_time(
            MMK_LOAD * MMK_SERVERS, 1.0, MMK_SERVERS
        )
    if "fastpath" in chosen:
        report["fastpath_events_per_second"] = fastpath_section(args.quick)
    if "batched" in chosen:
        report["batched_steps_per_second"] = batched_section(seconds, args.num_envs)
    if "batched-parts" in chosen:
        report["batched_parts"] = batched_parts_section(seconds, args.num_envs)
    if "training" in chosen:
        report["training_samples_per_second"] = training_section(reference_steps, 1 if args.quick else args.rollouts)
    if "end-to-end" in chosen:
        report["end_to_end"] = end_to_end_section(
            min(args.e2e_steps, 50_000) if args.quick else args.e2e_steps, reference_steps, configs
        )
    if "settings" in chosen:
        rounds = 1 if args.quick else args.rounds
        report["settings"] = settings_section(1 if args.quick else 2, rounds, reference_steps, configs)
    if "floor" in chosen:
        report["floor"] = floor_section(seconds, reference_steps, configs)
    if args.json:
        print(json.dumps(report))
    else:
        print_tables(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
