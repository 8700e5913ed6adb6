"""The ``schedenv train`` subcommand and ``schedenv evaluate --agent DIR`` (registered by ``schedenv.cli``).

    schedenv train --env schedenv/Malleable-v0 --env-kwargs '{"n_jobs": 8}' --algo ppo \\
        --timesteps 200000 --seed 0 --out runs/malleable
    schedenv train --config agents/configs/malleable_ppo.yaml --out runs/m --hyperparams learning_rate=1e-4 n_epochs=5
    schedenv train --out runs/malleable --timesteps 400000 --resume
    schedenv evaluate --agent runs/malleable --json      # 100 development-test seeds by default
    schedenv evaluate --agent runs/m-seed0 runs/m-seed1 runs/m-seed2 --split sealed --ledger my-ledger.jsonl

Flags follow the RL Zoo's: ``--config FILE`` alone is enough (the YAML names the env),
``--hyperparams key=value ...`` overrides config fields or algorithm hyperparameters (values are
YAML; ``policy_kwargs.net_arch=[64,64]`` sets one entry of a mapping field), ``--n-envs``,
``--eval-freq`` (env steps), ``--device``.

This module imports no torch at import time, so ``schedenv list`` works without the ``rl`` extra.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.algorithms import ALGORITHMS, get_algorithm
from agents.runs import CONFIG, read_config
from schedenv.comparison import (
    check_env_id,
    check_metric,
    check_out_dir,
    objective_metric,
    print_comparison,
    strict_json,
)
from schedenv.workloads import from_spec

INTERRUPTED = 130
"""Exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""


def add_train_parser(commands: Any) -> None:
    """Add the ``train`` subcommand to the ``schedenv`` subparsers ``commands``."""
    tr = commands.add_parser("train", help="train an RL agent (stable-baselines3) on an env id")
    tr.add_argument("--env", default=None, help="env id, e.g. schedenv/Malleable-v0 (not needed with --resume)")
    tr.add_argument("--env-kwargs", default=None, help="JSON env arguments, e.g. '{\"n_jobs\": 8}'")
    tr.add_argument("--algo", default=None, help=f"one of {', '.join(ALGORITHMS)} (default: the config's, else ppo)")
    tr.add_argument(
        "--config",
        action="append",
        default=None,
        help="YAML config (default: agents/configs/<family>_<algo>.yaml); repeat it to sweep over configs",
    )
    tr.add_argument("--timesteps", type=int, default=None, help="total env steps (a resumed run continues to it)")
    tr.add_argument("--seed", type=int, default=None, help="seed of the model and the training envs (0..1023)")
    tr.add_argument("--n-envs", type=int, default=None, help="env copies stepped together (default: the config's)")
    tr.add_argument("--eval-freq", type=int, default=None, help="env steps between validation evaluations (0: end)")
    tr.add_argument("--eval-episodes", type=int, default=None, help="validation episodes per evaluation")
    tr.add_argument(
        "--eval-env-kwargs",
        default=None,
        help="JSON object of env arguments for the validation episodes only, over the env's, "
        "e.g. '{\"n_arrivals\": 20000}'",
    )
    tr.add_argument("--device", default=None, help="torch device: cpu, cuda or auto (default: cpu)")
    tr.add_argument("--vec-env", default=None, help="native (batched env, default) or dummy (single envs in a loop)")
    tr.add_argument(
        "--warm-start",
        default=None,
        metavar="BASELINE",
        help="clone this baseline into the policy (behaviour cloning) before RL; its score goes to OUT/warm_start.json",
    )
    tr.add_argument(
        "--hyperparams",
        nargs="+",
        default=None,
        metavar="KEY=VALUE",
        help="override config fields or algorithm hyperparameters, e.g. learning_rate=1e-4 n_envs=64",
    )
    tr.add_argument(
        "--seeds",
        default=None,
        help="a sweep: comma-separated seeds, one run per (config, seed) in OUT/<config>-seed<S>",
    )
    tr.add_argument("--backend", default="local", help="sweep backend: local (process pool) or ray")
    tr.add_argument("--workers", type=int, default=1, help="sweep: runs trained at once")
    tr.add_argument("--address", default=None, help="sweep with --backend ray: address of an existing Ray cluster")
    tr.add_argument("--out", required=True, help="run folder: model, checkpoints, config, TensorBoard logs")
    tr.add_argument(
        "--resume", action="store_true", help="continue the run in --out from its newest readable checkpoint or model"
    )
    tr.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --out (its model, checkpoints, logs are deleted)",
    )
    tr.set_defaults(run=train_command)


def json_object(text: str | None, flag: str) -> dict[str, Any]:
    """The JSON object given to ``flag`` (empty when not given); malformed JSON exits with the reason."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"{flag} is not valid JSON: {error}") from error
    if not isinstance(value, dict):
        raise SystemExit(f"{flag} must be a JSON object, got {type(value).__name__}: {text}")
    for item in value.values():
        from_spec(item)
    return value


def train_command(args: argparse.Namespace) -> int:
    """Handler of ``schedenv train``."""
    overrides: dict[str, Any] = {}
    if args.env is not None:
        overrides["env_id"] = check_env_id(args.env)
    if args.env_kwargs:
        overrides["env_kwargs"] = json_object(args.env_kwargs, "--env-kwargs")
    if args.eval_env_kwargs:
        overrides["eval_env_kwargs"] = json_object(args.eval_env_kwargs, "--eval-env-kwargs")
    if args.algo is not None:
        overrides["algo"] = get_algorithm(args.algo).name
    for name, field in (
        ("timesteps", "timesteps"),
        ("seed", "seed"),
        ("n_envs", "n_envs"),
        ("eval_freq", "eval_every"),
        ("eval_episodes", "eval_episodes"),
        ("device", "device"),
        ("vec_env", "vec_env"),
        ("warm_start", "warm_start"),
    ):
        if getattr(args, name) is not None:
            overrides[field] = getattr(args, name)
    if args.seeds is not None:
        return _sweep_command(args, overrides)
    if args.config is not None and len(args.config) > 1:
        raise SystemExit("several --config values make a sweep: give --seeds too")
    config_path = args.config[0] if args.config else None
    resuming = args.resume and (Path(args.out) / CONFIG).is_file()
    if resuming and config_path is not None:
        raise SystemExit(f"--config cannot change the resumed run in {args.out}; it continues with its saved config")
    if not resuming and "env_id" not in overrides and config_path is None:
        raise SystemExit("schedenv train: give --env or --config FILE (unless --resume continues a run in --out)")
    check_out_dir("--out", args.out)

    from agents.train import apply_hyperparams, resolve_config, resume_config, train

    config = resume_config(args.out, overrides) if resuming else resolve_config(config_path, overrides)
    if args.hyperparams:
        config = apply_hyperparams(config, args.hyperparams)
    try:
        train(config, args.out, resume=args.resume, overwrite=args.overwrite, command=args.command_line)
    except KeyboardInterrupt:
        print(f"interrupted; resume with: schedenv train --out {shlex.quote(args.out)} --resume", file=sys.stderr)
        return INTERRUPTED
    return 0


def _sweep_command(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``schedenv train --seeds ...``: one run per (config, seed), on the chosen backend."""
    from agents.sweep import sweep

    if args.seed is not None:
        raise SystemExit("give either --seed (one run) or --seeds (a sweep), not both")
    try:
        seeds = [int(seed) for seed in args.seeds.split(",") if seed.strip()]
    except ValueError as error:
        raise SystemExit(f"--seeds={args.seeds!r} is not allowed; give comma-separated integers, e.g. 0,1,2") from error
    if "env_id" not in overrides and not args.resume:
        raise SystemExit("schedenv train: --env is required for a sweep")
    results = sweep(
        args.config or [None],
        seeds,
        overrides,
        args.out,
        backend=args.backend,
        workers=args.workers,
        address=args.address,
        resume=args.resume,
    )
    for summary in results:
        print(f"{summary['out']}: {summary['seconds']:.1f} s, last evaluation {summary['last_evaluation']}")
    return 0


def evaluate_agent(args: argparse.Namespace) -> int:
    """Handler of ``schedenv evaluate --agent PATH [PATH ...]``: the agent, the paper policy and the best baseline.

    PATH is a ``schedenv train`` folder, an RL Zoo run folder, an SB3 ``.zip`` or a Python callable
    ``module:function`` (``agents.sources``). The agent plays held-out seeds (docs/rl/seed-plan.md),
    100 by default, in the native batched env; the baselines play the same seeds: development-test
    seeds (``--split test``, the default) or sealed ones (``--split sealed``, only with ``--ledger
    PATH``, to which each such evaluation appends one line). Several PATHs trained on one env
    configuration are one agent with several training runs: the headline is their ratio of means to
    the paper policy with the two-level bootstrap interval (``schedenv.stats.ratio_of_means``).
    ``--env-kwargs`` merges over the runs' training env kwargs. ``--json`` prints one JSON document
    on stdout with, besides the comparison rows: ``ratio`` and ``ratio_ci95``, ``run_ratios``,
    ``seed_view`` (the (run, seed) pairs below, equal to and above the paper policy on their seed),
    ``per_seed``, ``test_seeds``, ``train_seeds``, ``split``, ``env_kwargs`` (as played), ``agent``
    (the form read), ``best_baseline`` and ``best_baseline_ratio``.
    """
    from agents.assess import assess, merge_env_kwargs
    from agents.protocol import (
        append_ledger,
        check_disjoint,
        held_out_seeds,
        ledger_entry,
        split_range,
        train_seeds,
    )
    from agents.runs import read_provenance
    from agents.sources import check_agent_env, load_agent, resolve_agent
    from schedenv.reporting import git_commit

    sources = [resolve_agent(path) for path in args.agent]
    training = (sources[0].env_id, sources[0].env_kwargs)
    for source in sources[1:]:
        if (source.env_id, source.env_kwargs) != training:
            raise ValueError(
                f"--agent {source.location} was trained on {source.env_id} {json.dumps(source.env_kwargs)}, "
                f"--agent {sources[0].location} on {training[0]} {json.dumps(training[1])}; "
                "several runs must share one env configuration"
            )
    if args.split == "sealed" and not args.ledger:
        raise ValueError(
            "--split sealed needs --ledger PATH: every evaluation on the sealed seeds is recorded "
            "(see docs/rl/seed-plan.md)"
        )
    if args.ledger and args.split != "sealed":
        raise ValueError(f"--ledger records evaluations on sealed seeds; --split={args.split!r} does not need it")
    env_id = check_env_id(check_agent_env(sources[0], args.env))
    raw_kwargs = merge_env_kwargs(sources[0].env_kwargs, json_object(args.env_kwargs, "--env-kwargs"))
    env_kwargs = {key: from_spec(value) for key, value in raw_kwargs.items()}
    loaded = [load_agent(source) for source in sources]
    for agent in loaded:
        model = getattr(agent, "model", None)
        if model is not None:
            _check_spaces(model, env_id, env_kwargs)
    episodes = 100 if args.episodes is None else args.episodes
    start = split_range(args.split).start if args.seed is None else args.seed
    seeds = held_out_seeds(start, episodes, args.split)
    trained_on: list[int] = []
    for source in sources:
        if source.run_dir is not None:
            saved = read_config(source.run_dir)
            used = read_provenance(source.run_dir).get("train_seeds") or train_seeds(
                int(saved.get("seed", 0)), int(saved.get("n_envs", 1))
            )
            check_disjoint(seeds, used, f"training env seeds of the run in {source.run_dir}")
            trained_on.extend(used)
    metric = args.metric or objective_metric(env_id, env_kwargs)
    if args.metric:
        import baselines
        from schedenv.fastpath import evaluate_fast

        probe = evaluate_fast(env_id, baselines.reference(env_id), seeds[:1], **env_kwargs)
        check_metric(metric, list(probe.summary))
    contenders = args.contenders.split(",") if args.contenders else None
    policies = [
        agent if source.kind == "callable" else agent.act_batch for agent, source in zip(loaded, sources, strict=True)
    ]
    result = assess(policies, env_id, env_kwargs, seeds, metric, contenders=contenders)
    if args.ledger:
        config = read_config(sources[0].run_dir) if sources[0].run_dir is not None else {"agent": args.agent}
        append_ledger(Path(args.ledger), ledger_entry(args.command_line, config, git_commit(full=True), seeds))
    rows = _rows(sources[0].name, result)
    report = sys.stderr if args.json else sys.stdout
    names = " ".join(f"{source.location} ({source.kind})" for source in sources)
    print(
        f"{env_id}  {json.dumps(raw_kwargs)}  {args.split} seeds {seeds.start}..{seeds.stop - 1}  agent {names}",
        file=report,
    )
    print_comparison(rows, metric, result.reference, file=report, not_applicable=result.skipped)
    headline = result.headline(result.reference)
    best = result.best_baseline
    print(
        f"ratio of means to {result.reference} over {len(sources)} run(s): {headline} (95% interval, runs and "
        f"seeds resampled); best baseline {best}: ratio {result.ratio(best):.4f}",
        file=report,
    )
    print(f"per seed against {result.reference}: {result.seed_view(result.reference)}", file=report)
    if args.json:
        summary = {
            **rows[0],
            **result.summary(),
            "contender": sources[0].name,
            "agent": {"kind": sources[0].kind, "path": sources[0].location, "algo": sources[0].algo},
            "agents": [source.location for source in sources],
            "episodes": episodes,
            "seed": start,
            "split": args.split,
            "env_kwargs": raw_kwargs,
            "train_seeds": trained_on,
            "rows": rows,
        }
        print(json.dumps(strict_json(summary)))
    return 0


def _rows(agent_name: str, result: Any) -> list[dict[str, Any]]:
    """Comparison rows (the agent, averaged over its runs, first, then every baseline) as ``schedenv evaluate``'s."""
    from schedenv.comparison import seed_counts
    from schedenv.stats import mean_interval

    reference = result.values(result.reference)
    rows = []
    for name, values in [(agent_name, result.agent), *((n, result.values(n)) for n in result.baselines)]:
        interval = mean_interval(values)
        rows.append(
            {
                "contender": name,
                "env_id": result.env_id,
                "metric": result.metric,
                "mean": interval.mean,
                "ci95": interval.ci95,
                "reference": result.reference,
                "reference_mean": float(reference.mean()),
                "ratio": float(values.mean() / reference.mean()),
                "seeds": seed_counts(values, reference),
            }
        )
    return rows


def _check_spaces(model: Any, env_id: str, env_kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, **env_kwargs)
    try:
        if env.observation_space.shape != model.observation_space.shape or env.action_space != model.action_space:
            raise ValueError(
                f"the agent was trained on observations {model.observation_space.shape} and actions "
                f"{model.action_space}; {env_id} with these env kwargs has {env.observation_space.shape} and "
                f"{env.action_space} (keep the window size, e.g. max_jobs, as in training)"
            )
    finally:
        env.close()
