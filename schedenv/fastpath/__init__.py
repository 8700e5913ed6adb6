"""Compiled simulation paths for baselines, without the Gymnasium shell (docs/baselines/index.md).

For long evaluations (the papers simulate up to 10^7 arrivals per point) a baseline can run in one
numba loop that fuses its decision rule (``baselines.kernels``) with the family's event step: one
module per family here, a layer above the baselines and the families they join, found through the
family registry (``Family.fast_path`` in ``schedenv.family``; a family without one is evaluated by
``evaluate``). Each module has ``supports(agent, env_kwargs)``, ``run(env, agent, seed, **options)``
returning a ``FastRun`` and ``OPTIONS``, the options of ``run_fast`` it takes. The multiserver module
is not such an entry: its ``run_fast(env, policy, seed)`` serves every job present, outside the env's
window, so its numbers are the paper's policy rather than ``evaluate``'s; it returns a ``FastRun``
too (``MultiserverFastRun``, with the multiserver totals; docs/families.md).
``supports`` says whether a (env id, policy, configuration) has such a path; ``run_fast`` runs one
episode of it and returns the env's ``episode_metrics`` (streamed, so memory stays flat) and, on
request, per-job completion times, which equal those of ``schedenv.evaluation.evaluate`` on the
same seed (``tests/perf``).

>>> from schedenv.fastpath import run_fast, supports
>>> supports("schedenv/Malleable-v0", "hesrpt")
True
>>> run = run_fast("schedenv/Malleable-v0", "hesrpt", seed=0, mode="online", n_arrivals=2000)
>>> run.metrics["n_completed"]
2000.0

Covered: Malleable-v0 with s(k) = k^p (either ``allocation`` mode; no ``p_range``, ``load_range`` or
``action_mode`` other than "weights") for hesrpt, a-hesrpt,
equi, srpt, rs, hell, hell-waterfill and knee;
Dispatch-v0 for central-queue, random, round-robin, shortest-queue, least-work-remaining and sita-e
(these two with ``size_known=True``), tags-slowdown, tags-waiting, tags-fair, tags-slowdown-cs,
tags-cs-tuned, tags-cq-tuned and tags-cq-idle-tuned;
Moldable-v0 (every configuration) for hrf-fcfs, hrf-easy, rigid-fcfs and rigid-easy.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

import gymnasium as gym

import baselines
from schedenv import family
from schedenv.evaluation import EvaluationResult, evaluate
from schedenv.fastpath.result import DEFAULT_CHUNK, FastRun


def _policy_object(policy: Any) -> Any:
    if isinstance(policy, str):
        return baselines.make(policy)
    return policy


def _fast_module(env_id: str) -> ModuleType | None:
    """The fast-path module of ``env_id``'s family (``Family.fast_path``), or None."""
    try:
        path = family.of_env(env_id).fast_path
    except ValueError:
        return None
    return None if path is None else family.resolve(path)


def supports(env_id: str, policy: Any, **env_kwargs: Any) -> bool:
    """True when ``policy`` (a baseline name or object) has a compiled path on this env configuration."""
    module = _fast_module(env_id)
    if module is None:
        return False
    try:
        agent = _policy_object(policy)
    except ValueError:
        return False
    return bool(module.supports(agent, env_kwargs))


def run_fast(
    env_id: str,
    policy: Any,
    seed: int,
    *,
    emulate_env: bool = True,
    chunk: int = DEFAULT_CHUNK,
    keep_completions: bool = False,
    **env_kwargs: Any,
) -> FastRun:
    """One episode of ``policy`` on ``gym.make(env_id, **env_kwargs)``'s workload for ``seed``.

    ``emulate_env``: apply decisions exactly as the env would (its window and action encoding), so
    results equal ``evaluate``'s; False applies the policy's own decisions (the paper's policy).
    ``chunk``: jobs drawn at a time; runs of at most ``chunk`` arrivals use the env's exact job
    stream, longer ones a streamed draw with flat memory. ``keep_completions``: keep per-job
    completion times (``FastRun.completion``, ``FastRun.records()``). A family's fast path takes
    the options that apply to it (its ``OPTIONS``): Dispatch-v0 applies a policy's action exactly
    (no ``emulate_env``), Moldable-v0 runs the env's exact job set (neither ``emulate_env`` nor ``chunk``).
    """
    if not supports(env_id, policy, **env_kwargs):
        raise ValueError(
            f"no compiled path for policy {policy!r} on {env_id!r} with {env_kwargs!r}; "
            "check supports() first, or use schedenv.evaluation.evaluate"
        )
    if chunk < 1:
        raise ValueError(f"chunk={chunk!r} is not allowed; it must be a positive number of jobs")
    module = _fast_module(env_id)
    assert module is not None  # supports() said so
    given = {"emulate_env": emulate_env, "chunk": chunk, "keep_completions": keep_completions}
    options = {name: value for name, value in given.items() if name in module.OPTIONS}
    env = gym.make(env_id, **env_kwargs)
    try:
        run: FastRun = module.run(env.unwrapped, _policy_object(policy), seed, **options)
    finally:
        env.close()
    run.episode_return *= env.get_wrapper_attr("reward_scale")  # as the env's rewards (docs/envs/index.md)
    return run


def evaluate_fast(env_id: str, contender: Any, seeds: Iterable[int], **env_kwargs: Any) -> EvaluationResult:
    """``schedenv.evaluation.evaluate`` through the compiled path when the contender has one.

    The compiled path emulates the env's window and action encoding, so the numbers are those of
    ``evaluate`` on the same seeds (``tests/perf``); contenders without a compiled path (RL agents,
    baselines not covered) simply go through ``evaluate``. Per-job records are not kept.
    """
    seeds = list(seeds)
    if not supports(env_id, contender, **env_kwargs):
        return evaluate(env_id, contender, seeds, keep_records=False, **env_kwargs)
    if not seeds:
        raise ValueError("seeds is empty; evaluate needs at least one seed")
    episodes = [run_fast(env_id, contender, seed, **env_kwargs).episode_result() for seed in seeds]
    name = contender if isinstance(contender, str) else str(_policy_object(contender).name)
    return EvaluationResult(env_id, name, dict(env_kwargs), episodes)


__all__ = ["FastRun", "evaluate_fast", "run_fast", "supports"]
