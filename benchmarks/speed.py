"""Speed of schedenv (docs/results/speed.md), every figure measured in one run with same-run references.

Sections: (1) env steps/s of every registered env through ``gym.make``, as ratios to CartPole-v1;
(2) the M/M/8 FCFS reference at rho = 0.9: Ciw and SimPy against ``schedenv.mmk`` (events/s, ratios,
simulated mean response time against Erlang-C), and the same queue as Dispatch-v0's central queue
through its fast path; (3) fast-path events/s per family (``schedenv.fastpath``; the multiserver
family's own ``run_fast``); (4) the native batched envs (``gym.make_vec``) at B
copies, next to the single env, for every env id, as ratios, with valid, sampled and mask-sampled actions;
(5) training samples/s of ``schedenv train`` on the batched env against SB3 PPO on one ``gym.make`` env
(the reference of docs/results/speed.md), per family.

The reference is Gymnasium's CartPole-v1 (a few float operations per step, so it measures the wrapper
floor of ``gym.make``). Each env is stepped with trivial valid actions: the first unmasked action for
masked discrete spaces, otherwise one fixed sample of the action space; episodes are reset as they end
and resets are included in the time. The project's target for Malleable-v0 with M = 64 jobs is
>= 50 k steps/s.

    python benchmarks/speed.py            # prints Markdown tables
    python benchmarks/speed.py --json     # one JSON object
    python benchmarks/speed.py --quick    # smaller runs (about a minute)

Ciw and SimPy are the ``bench`` extra; PPO needs the ``rl`` extra (sections are skipped without them).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import io
import json
import time
from typing import Any

import gymnasium as gym
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


def steps_per_second(env_id: str, seconds: float, action_kind: str = "first valid", **kwargs: Any) -> float:
    """Steps per second of ``gym.make(env_id, **kwargs)`` over about ``seconds`` of stepping.

    ``action_kind`` is one of ``ACTION_KINDS`` (``batched_section`` says what each means); with
    "masked sampling" only the ``step`` calls are timed.
    """
    env = gym.make(env_id, **kwargs)
    env.action_space.seed(0)
    fixed = env.action_space.sample()
    env.reset(seed=0)

    def action() -> Any:
        if action_kind == "sampled":
            return env.action_space.sample()
        if action_kind == "masked sampling":
            return env.action_space.sample(mask=env.unwrapped.action_masks())
        return trivial_action(env, fixed)

    steps, drawing, start = 0, 0.0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(256):
            if action_kind == "masked sampling":  # the draw is not timed
                began = time.perf_counter()
                chosen = action()
                drawing += time.perf_counter() - began
            else:
                chosen = action()
            _, _, terminated, truncated, _ = env.step(chosen)
            if terminated or truncated:
                env.reset()
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
    "Malleable offline defaults": (MALLEABLE, {}),
    "Dispatch defaults": (DISPATCH, {}),
    "MultiserverJob select mode": ("schedenv/MultiserverJob-v0", {"action_mode": "select"}),
    "MultiserverJob ranked mode": ("schedenv/MultiserverJob-v0", {"action_mode": "ranked"}),
    "Moldable defaults": ("schedenv/Moldable-v0", {}),
    "Moldable ranked mode": ("schedenv/Moldable-v0", {"action_mode": "ranked"}),
}
"""The native batched envs timed against their single env (same kwargs)."""


ACTION_KINDS: tuple[str, ...] = ("first valid", "sampled", "masked sampling")
"""How ``batched_section`` chooses actions in masked discrete spaces (see there); other spaces use the first."""


def batched_section(seconds: float, num_envs: int) -> dict[str, dict[str, float]]:
    """Steps/s of each native batched env (``vector_entry_point``) and of its single env (``gym.make``, same
    kwargs), and their ratio, per kind of action (``ACTION_KINDS``):

    - "first valid": the first unmasked action of each copy (bool argmax over ``action_masks()``), as in
      ``steps_per_second``; a fixed 0.5 vector in Box spaces (the only kind timed there);
    - "sampled": ``action_space.sample()``, so that many actions are masked and take the env's
      ``invalid_action`` fallback (the default);
    - "masked sampling": a uniformly drawn allowed action of each copy; drawing it costs more than a
      step, so only the ``step`` calls are timed (single and batched alike).
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


def _batched_rate(venv: Any, seconds: float, kind: str) -> float:
    """Aggregate steps/s of ``venv`` over about ``seconds`` with actions of ``kind`` (``batched_section``)."""
    masked = isinstance(venv.single_action_space, gym.spaces.Discrete)
    fixed = None if masked else np.full(venv.action_space.shape, 0.5, dtype=venv.action_space.dtype)
    rng = np.random.default_rng(0)
    venv.action_space.seed(0)

    def actions() -> Any:
        if fixed is not None:
            return fixed
        if kind == "sampled":
            return venv.action_space.sample()
        masks = venv.unwrapped.action_masks().view(np.bool_)
        if kind == "masked sampling":
            return np.where(masks, rng.random(masks.shape), -1.0).argmax(axis=1)
        return masks.argmax(axis=1)

    venv.reset(seed=0)
    for _ in range(3):
        venv.step(actions())
    steps, drawing, start = 0, 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        chosen = actions()
        if kind == "masked sampling":  # the draw is not timed
            drawing += time.perf_counter() - began
        venv.step(chosen)
        steps += venv.num_envs
    return steps / (time.perf_counter() - start - drawing)


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
    the native batched env, VecNormalize, checkpoints) for ``rollouts`` rollouts after a one-rollout
    warm-up (numba and torch compiled), end to end: ``TrainResult.seconds`` is the wall time of
    ``learn``, updates and checkpoints included. Both use one torch thread.

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
    from stable_baselines3 import PPO

    from agents.train import CONFIG_DIR, env_kwargs_objects, resolve_config

    torch.set_num_threads(1)
    results = {}
    for label, name in TRAINING_CASES.items():
        config = resolve_config(CONFIG_DIR / name, {"progress_bar": False, "tensorboard": False, "eval_every": 0})
        kwargs = env_kwargs_objects(config)  # workload specs become objects, as in training
        model = PPO("MlpPolicy", gym.make(config.env_id, **kwargs), n_steps=512, batch_size=64, seed=0, device="cpu")
        model.learn(total_timesteps=512)
        start = time.perf_counter()
        model.learn(total_timesteps=reference_steps, reset_num_timesteps=False)
        reference = reference_steps / (time.perf_counter() - start)
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
    """Samples/s of ``agents.train.train`` over ``rollouts`` rollouts of ``config``, after a one-rollout warm-up."""
    import tempfile

    from agents.train import train

    rollout = config.n_envs * int(config.algo_kwargs.get("n_steps", 2048))
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):  # train's config tables
        train(dataclasses.replace(config, timesteps=rollout, eval_episodes=1), f"{folder}/warm")
        result = train(dataclasses.replace(config, timesteps=rollout * rollouts, eval_episodes=1), f"{folder}/timed")
    return result.model.num_timesteps / result.seconds


def print_tables(report: dict[str, Any]) -> None:
    reference = report["env_steps_per_second"]["CartPole-v1 (reference)"]
    rows = [
        (label, f"{rate:,.0f}", f"{rate / reference:.3f}") for label, rate in report["env_steps_per_second"].items()
    ]
    print(markdown_table(["env", "steps/s", "ratio to CartPole-v1"], rows))
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
    rows = [(label, f"{rate:,.0f}") for label, rate in report["fastpath_events_per_second"].items()]
    print(markdown_table(["fast path", "events/s"], rows))
    print()
    rows = [
        (label, f"{row['single']:,.0f}", f"{row['batched']:,.0f}", f"{row['ratio']:.1f}x")
        for label, row in report["batched_steps_per_second"].items()
    ]
    print(markdown_table(["batched env, actions", "single env steps/s", "batched steps/s", "ratio"], rows))
    print()
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
    print(f"\n{provenance()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per steps/s measurement")
    parser.add_argument("--num-envs", type=int, default=1024, help="copies of the batched env")
    parser.add_argument("--ppo-steps", type=int, default=4096, help="reference PPO timesteps timed (1 env)")
    parser.add_argument("--rollouts", type=int, default=5, help="rollouts of schedenv train timed per family")
    parser.add_argument("--quick", action="store_true", help="shorter runs (about a minute)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    seconds = min(args.seconds, 0.5) if args.quick else args.seconds
    report: dict[str, Any] = {
        "env_steps_per_second": env_section(seconds),
        "mmk_fcfs": mmk_section(args.quick),
        "mmk_erlang_c_mean_response_time": erlang_c_mean_response_time(MMK_LOAD * MMK_SERVERS, 1.0, MMK_SERVERS),
        "fastpath_events_per_second": fastpath_section(args.quick),
        "batched_steps_per_second": batched_section(seconds, args.num_envs),
        "training_samples_per_second": training_section(
            1024 if args.quick else args.ppo_steps, 1 if args.quick else args.rollouts
        ),
        "reference": "CartPole-v1",
    }
    if args.json:
        print(json.dumps(report))
    else:
        print_tables(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
