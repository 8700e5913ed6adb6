"""Train a stable-baselines3 / sb3-contrib agent on any schedenv env id (docs/rl/index.md).

The run reads top to bottom: resolve the config (defaults < YAML file < command-line values),
seed everything, build the vectorised env (``Monitor`` + ``VecNormalize``), build or resume the
model, learn with checkpoint and evaluation callbacks, save the final model beside its statistics.

>>> from agents.train import TrainConfig, train
>>> result = train(TrainConfig(env_kwargs={"jobs": [1, 2, 4]}, timesteps=256), "runs/tiny")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import json
import pickle
import sys
import time
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnv

import schedenv
from agents.algorithms import Algorithm, algorithm_class, check_compatible
from agents.buffers import buffer_options
from agents.callbacks import AtomicCheckpointCallback, ReferenceEvalCallback, RolloutTimer, save_model
from agents.contender import load_normalizer
from agents.extractors import SlotSetExtractor, slot_layout
from agents.normalize import make_normalizer, resumed_normalizer
from agents.protocol import train_seeds, validation_seeds
from agents.runs import (
    ANCHOR,
    MODEL,
    TENSORBOARD,
    VECNORMALIZE,
    WARM_START,
    Checkpoint,
    add_training_cpu,
    clear_run,
    read_config,
    record_provenance,
    resume_candidates,
    write_atomic,
    write_config,
)
from agents.venv import VEC_ENVS, make_training_env
from agents.warmstart import (
    aggregate,
    check_baseline_kwargs,
    check_lookahead_space,
    check_smoothing,
    check_smoothing_space,
    check_warm_start,
    clone,
    demonstrate,
    demonstration_seeds,
    model_driver,
    teacher,
)
from schedenv import family
from schedenv.comparison import objective_metric
from schedenv.validation import suggest
from schedenv.workloads import from_spec

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
EXTRACTORS = ("mlp", "slots")
DEVICES = ("cpu", "cuda", "auto")
_ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "elu": torch.nn.ELU}


@dataclass
class TrainConfig:
    """Everything a training run depends on; written resolved to ``DIR/config.yaml``."""

    env_id: str = "schedenv/Malleable-v0"
    """Gymnasium id of the env (one of ``schedenv.ENV_IDS``)."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Env arguments as JSON values; ``{"type": "Pareto", "alpha": 1.5}`` specs become workload objects."""
    algo: str = "ppo"
    """Algorithm: ppo, a2c, sac, dqn or maskable_ppo (``agents.algorithms.ALGORITHMS``)."""
    timesteps: int = 100_000
    """Total env steps to train for (a resumed run continues up to this total)."""
    seed: int = 0
    """Seed of the model and torch; training env copy i is reset with ``agents.protocol.train_seed(seed, i)``."""
    n_envs: int = 256
    """Env copies stepped together; on the native batched env one compiled call steps them all."""
    vec_env: str = "native"
    """"native": the env's batched ``vector_entry_point`` (fast); "dummy": n_envs single envs in a loop."""
    device: str = "cpu"
    """Torch device: "cpu", "cuda" or "auto" (cuda when available)."""
    normalize_observation: bool = True
    """Standardise observations with running statistics (VecNormalize), saved beside the model."""
    normalize_reward: bool = True
    """Scale rewards by the running std of the discounted return (VecNormalize); keeps long-horizon returns O(1)."""
    clip_observation: float = 10.0
    """Clip normalised observations to +- this value."""
    extractor: str = "mlp"
    """Feature extractor: "mlp" (flat) or "slots" (shared per-slot network with pooling, agents.extractors)."""
    extractor_kwargs: dict[str, Any] = field(default_factory=dict)
    """Arguments of the "slots" extractor: embed_dim, hidden."""
    policy_kwargs: dict[str, Any] = field(default_factory=dict)
    """Policy arguments (net_arch, log_std_init, activation_fn as "relu" / "tanh" / "elu", ...)."""
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    """Algorithm hyperparameters (learning_rate, n_steps, gamma, ...); PPO's unset ones: BATCHED_ON_POLICY."""
    checkpoint_every: int = 100_000
    """Checkpoint interval in env steps (rounded up to whole rollouts); a killed run loses at most this many."""
    eval_every: int = 100_000
    """Interval in env steps of the evaluation against the paper policy on validation seeds (0: only at the end)."""
    eval_episodes: int = 20
    """Validation episodes (fixed seeds) per evaluation."""
    eval_seed: int = 1_000_000
    """First validation seed: eval_seed .. eval_seed + eval_episodes - 1 (``agents.protocol.VALIDATION_SEEDS``)."""
    eval_env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Env arguments of the validation episodes only, over ``env_kwargs`` key by key (the RL Zoo's name)."""
    eval_restore: float = 0.0
    """Restore the best model (policy, optimizer, statistics) when a validation ratio exceeds the best times this."""
    progress_bar: bool | None = None
    """Show a progress bar (None: only when stderr is a terminal)."""
    tensorboard: bool = True
    """Write TensorBoard logs to DIR/tb."""
    warm_start: str | None = None
    """Baseline cloned into the policy before RL (``agents.warmstart``; ppo, a2c, maskable_ppo); None: from scratch."""
    warm_start_steps: int = 20_000
    """Decisions of the baseline to clone (whole episodes on training-range seeds, at least this many)."""
    warm_start_epochs: int = 20
    """Passes of behaviour cloning over the demonstrations."""
    warm_start_smoothing: float = 0.0
    """Label smoothing ε of the cloning (discrete actions): ε of the target spread over the valid actions."""
    warm_start_explore: list[str] = field(default_factory=list)
    """Baselines whose actions share the smoothing ε instead of all valid actions (``Discrete`` spaces)."""
    warm_start_kl: bool = False
    """Replace the entropy bonus ent_coef·H(π) by the penalty ent_coef·KL(π ‖ clone) (maskable_ppo; see docs)."""
    warm_start_dagger: int = 0
    """DAgger rounds after the cloning: the clone plays, the teacher labels its states, the clone learns them all."""
    warm_start_lookahead: bool = False
    """Teach with the baseline's one-step lookahead (``agents.warmstart.Lookahead``; masked Discrete spaces)."""
    warm_start_kwargs: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of the warm start's baseline (``baselines.make(warm_start, **warm_start_kwargs)``), e.g.
    ``{futures: 4}`` for the ``hrf-easy-rollout`` planner."""

    def __post_init__(self) -> None:
        if self.env_id not in gym.registry:
            raise ValueError(
                f"env_id={self.env_id!r} is not a registered env{suggest(self.env_id, schedenv.ENV_IDS)}; "
                f"known: {list(schedenv.ENV_IDS)}"
            )
        if self.extractor not in EXTRACTORS:
            raise ValueError(
                f"extractor={self.extractor!r} is not allowed; choose one of {list(EXTRACTORS)}"
                f"{suggest(self.extractor, EXTRACTORS)}"
            )
        for name in (
            "timesteps",
            "n_envs",
            "checkpoint_every",
            "eval_episodes",
            "warm_start_steps",
            "warm_start_epochs",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}={value!r} is not allowed; it must be an integer >= 1")
        if not isinstance(self.eval_every, int) or self.eval_every < 0:
            raise ValueError(f"eval_every={self.eval_every!r} is not allowed; it must be an integer >= 0")
        restore = self.eval_restore
        if isinstance(restore, bool) or not isinstance(restore, (int, float)) or not (restore == 0 or restore >= 1):
            raise ValueError(
                f"eval_restore={restore!r} is not allowed; it must be 0 (never restore) or a factor >= 1 "
                "(restore the best model when a validation ratio exceeds the best times it)"
            )
        if self.vec_env not in VEC_ENVS:
            raise ValueError(f"vec_env={self.vec_env!r} is not allowed; choose one of {list(VEC_ENVS)}")
        if self.device not in DEVICES:
            raise ValueError(f"device={self.device!r} is not allowed; choose one of {list(DEVICES)}")
        train_seeds(self.seed, self.n_envs)  # seed and n_envs within the protocol's ranges
        validation_seeds(self.eval_seed, self.eval_episodes)
        if self.warm_start is not None:
            check_warm_start(self.warm_start, self.env_id, self.algo)
        elif self.warm_start_smoothing or self.warm_start_explore:
            raise ValueError(
                f"warm_start_smoothing={self.warm_start_smoothing!r} and "
                f"warm_start_explore={self.warm_start_explore!r} shape the warm start's cloning: set warm_start too, "
                "or leave them at 0 and []"
            )
        check_smoothing(self.warm_start_smoothing, self.warm_start_explore, self.env_id)
        dagger = self.warm_start_dagger
        if isinstance(dagger, bool) or not isinstance(dagger, int) or dagger < 0:
            raise ValueError(f"warm_start_dagger={dagger!r} is not allowed; it must be an integer >= 0")
        if not isinstance(self.warm_start_lookahead, bool):
            raise ValueError(f"warm_start_lookahead={self.warm_start_lookahead!r} is not allowed; it is true or false")
        if self.warm_start is None and (self.warm_start_dagger or self.warm_start_lookahead):
            raise ValueError(
                f"warm_start_dagger={self.warm_start_dagger!r} and warm_start_lookahead={self.warm_start_lookahead!r} "
                "shape the warm start's cloning: set warm_start too, or leave them at 0 and false"
            )
        if self.warm_start is None and self.warm_start_kwargs:
            raise ValueError(
                f"warm_start_kwargs={self.warm_start_kwargs!r} are the warm start's baseline's arguments: set "
                "warm_start too, or leave them at {}"
            )
        if self.warm_start is not None:
            check_baseline_kwargs(self.warm_start, self.warm_start_kwargs)
        if self.warm_start_kl is not False and (
            self.warm_start_kl is not True or self.warm_start is None or self.algo != "maskable_ppo"
        ):
            raise ValueError(
                f"warm_start_kl={self.warm_start_kl!r} is not allowed with warm_start={self.warm_start!r} and "
                f"algo={self.algo!r}; it is true or false, and true needs a warm start and algo maskable_ppo "
                "(its policy measures KL(π ‖ clone))"
            )

    def without_warm_start(self) -> TrainConfig:
        """This config trained from scratch: no warm start, nor the settings that shape one (smoothing, explore
        baselines, the KL anchor at the clone, DAgger, the lookahead, the baseline's arguments)."""
        return dataclasses.replace(
            self,
            warm_start=None,
            warm_start_smoothing=0.0,
            warm_start_explore=[],
            warm_start_kl=False,
            warm_start_dagger=0,
            warm_start_lookahead=False,
            warm_start_kwargs={},
        )

    def gamma(self) -> float:
        """The discount factor of the algorithm (also the one VecNormalize scales rewards with)."""
        return float(self.algo_kwargs.get("gamma", 0.99))


BATCHED_ON_POLICY: dict[str, int] = {"n_steps": 32, "batch_size": 2048, "n_epochs": 4}
"""PPO settings for many env copies: short rollouts per copy, large minibatches, few epochs.

SB3's defaults (2048 steps per copy, minibatches of 64, 10 epochs) suit one env: with 256 copies they
give 524,288-sample rollouts and 81,920 gradient steps per update. Measured by ``benchmarks/speed.py``
(the "defaults" rows, same network as SB3's ``MlpPolicy``)."""


def batched_on_policy_defaults(n_envs: int) -> dict[str, int]:
    """``BATCHED_ON_POLICY`` with the minibatch no larger than one rollout (``n_envs * n_steps``)."""
    rollout = n_envs * BATCHED_ON_POLICY["n_steps"]
    return {**BATCHED_ON_POLICY, "batch_size": min(BATCHED_ON_POLICY["batch_size"], rollout)}


def resolved_algo_kwargs(config: TrainConfig) -> dict[str, Any]:
    """The algorithm's hyperparameters a run uses: ``config.algo_kwargs`` over, for PPO and MaskablePPO,
    ``batched_on_policy_defaults``."""
    if config.algo in ("ppo", "maskable_ppo"):
        return {**batched_on_policy_defaults(config.n_envs), **config.algo_kwargs}
    return dict(config.algo_kwargs)


def field_docs() -> dict[str, str]:
    """Field name -> its one-line docstring (the comments of a written config)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, following in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
        ):
            docs[node.target.id] = str(following.value.value)
    return docs


def family_config(env_id: str, algo: str) -> Path | None:
    """The shipped config in ``agents/configs`` that the family of ``env_id`` names for ``algo``
    (``Family.rl_configs`` in ``schedenv.family``), if there is one."""
    try:
        name = family.of_env(env_id).rl_configs.get(algo)
    except ValueError:
        return None
    return None if name is None else CONFIG_DIR / name


def resolve_config(path: str | Path | None, overrides: dict[str, Any]) -> TrainConfig:
    """Defaults, then the YAML file at ``path`` (or the family's shipped config), then ``overrides``.

    ``env_kwargs`` merge key by key; every other field is replaced.
    """
    import yaml

    names = {f.name for f in dataclasses.fields(TrainConfig)}
    for key in overrides:
        if key not in names:
            raise ValueError(f"{key!r} is not a config field{suggest(key, names)}; fields: {sorted(names)}")
    values: dict[str, Any] = {}
    if path is None:
        path = family_config(overrides.get("env_id", TrainConfig.env_id), overrides.get("algo", TrainConfig.algo))
    if path is not None:
        if not Path(path).is_file():
            raise ValueError(f"config={str(path)!r} does not exist; shipped configs: {sorted(shipped_configs())}")
        loaded = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"config {path} must hold a mapping of TrainConfig fields")
        for key in loaded:
            if key not in names:
                raise ValueError(f"{path}: {key!r} is not a config field{suggest(key, names)}; fields: {sorted(names)}")
        values.update(loaded)
    for key, value in overrides.items():
        if key == "env_kwargs":
            values["env_kwargs"] = {**values.get("env_kwargs", {}), **value}
        else:
            values[key] = value
    return TrainConfig(**values)


def apply_hyperparams(config: TrainConfig, assignments: list[str]) -> TrainConfig:
    """``config`` with ``key=value`` assignments applied (the RL Zoo's ``--hyperparams``).

    Values are YAML (``1e-4``, ``[64, 64]``, ``true``). A key that names a ``TrainConfig`` field
    replaces it; ``field.key`` sets one entry of a mapping field (``policy_kwargs.net_arch=[64,64]``);
    any other key is a hyperparameter of the algorithm's constructor (``algo_kwargs``), checked
    against its signature.
    """
    import inspect

    import yaml

    values = dataclasses.asdict(config)
    names = set(values)
    accepted = set(inspect.signature(algorithm_class(config.algo)).parameters) - {"self", "policy", "env"}
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        if not sep or not key:
            raise ValueError(f"--hyperparams {assignment!r} is not allowed; write key=value, e.g. learning_rate=1e-4")
        value = yaml.safe_load(text)
        if isinstance(value, str):  # YAML 1.1 reads 1e-4 (no dot) as a string
            with contextlib.suppress(ValueError):
                value = float(value)
        head, _, entry = key.partition(".")
        if entry:
            if head not in names or not isinstance(values[head], dict):
                mappings = sorted(n for n in names if isinstance(values[n], dict))
                raise ValueError(f"--hyperparams {key!r}: {head!r} is not a mapping field; mapping fields: {mappings}")
            values[head] = {**values[head], entry: value}
        elif key in names:
            values[key] = value
        elif key in accepted:
            values["algo_kwargs"] = {**values["algo_kwargs"], key: value}
        else:
            raise ValueError(
                f"--hyperparams {key!r} is neither a config field nor a hyperparameter of {config.algo}"
                f"{suggest(key, names | accepted)}; config fields: {sorted(names)}"
            )
    return TrainConfig(**values)


def shipped_configs() -> list[str]:
    """Names of the configs in ``agents/configs``."""
    return [p.name for p in CONFIG_DIR.glob("*.yaml")]


def env_kwargs_objects(config: TrainConfig, validation: bool = False) -> dict[str, Any]:
    """The env kwargs with workload specs turned into objects (``schedenv.workloads.from_spec``); with
    ``validation``, those of the validation episodes (``config.eval_env_kwargs`` over ``config.env_kwargs``)."""
    merged = {**config.env_kwargs, **config.eval_env_kwargs} if validation else config.env_kwargs
    return {key: from_spec(value) for key, value in merged.items()}


def _check_eval_env(config: TrainConfig, eval_kwargs: dict[str, Any], probe: gym.Env) -> None:
    """Refuse ``eval_env_kwargs`` under which the validation env (``eval_kwargs``, as objects) has other spaces
    than the training env ``probe``."""
    if not config.eval_env_kwargs:
        return
    validation = gym.make(config.env_id, **eval_kwargs)
    try:
        for name in ("observation_space", "action_space"):
            if getattr(validation, name) != getattr(probe, name):
                raise ValueError(
                    f"eval_env_kwargs={config.eval_env_kwargs!r} is not allowed: the validation env's {name} "
                    f"{getattr(validation, name)} differs from the training env's {getattr(probe, name)}; "
                    "change only arguments that keep the spaces (episode length, load, ...)"
                )
    finally:
        validation.close()


@dataclass
class TrainResult:
    """What a training run produced."""

    model: BaseAlgorithm
    """The trained model."""
    run_dir: Path
    """Its folder (see ``agents.runs``)."""
    start_timesteps: int
    """Env steps the model had when this call started (> 0 when resumed)."""
    evaluations: list[dict[str, Any]]
    """The evaluations against the paper policy made during this call."""
    seconds: float
    """Wall time of learning."""
    phases: dict[str, float] = field(default_factory=dict)
    """Wall seconds of the call by phase (``PHASES``), adding up to its whole duration."""


PHASES = ("start_up", "warm_start", "rollout", "update", "validation", "save")
"""Where a ``train`` call spends its time (``TrainResult.phases``): start-up (envs, model, files), behaviour
cloning (its validation excluded), rollouts (env steps and the policy's forward passes), updates (the
gradient steps), validations (``ReferenceEvalCallback``, the paper policy's included) and saving (checkpoints,
best and final models)."""


def train(
    config: TrainConfig,
    out: str | Path,
    *,
    resume: bool = False,
    overwrite: bool = False,
    command: str | None = None,
) -> TrainResult:
    """Train per ``config`` into the folder ``out``; with ``resume``, continue its newest checkpoint.

    A run is never overwritten silently: a folder that already holds one is refused unless
    ``resume`` (continue it) or ``overwrite`` (delete its files first, ``agents.runs.clear_run``).
    ``resume`` continues from the newest *readable* checkpoint (an unreadable one is skipped with a
    warning), else from the final ``model.zip`` (its envs start fresh episodes); it starts from
    scratch only in a folder holding no model at all, and refuses one whose models are all
    unreadable. A run already at ``config.timesteps`` is left as it is (``model.zip`` untouched).

    A resumed run restores the envs, the rollout cursor and the random streams saved with the
    checkpoint (``agents.venv.TrainingState``), so on CPU it ends with the same model as an
    uninterrupted run of the same config. ``command`` is recorded in ``run.json`` (default: argv).
    """
    entered = time.perf_counter()
    run_dir = Path(out)
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other: continue the run in --out, or replace it")
    check_device(config.device)
    torch.set_num_threads(1)
    set_random_seed(config.seed)
    env_kwargs, eval_kwargs = env_kwargs_objects(config), env_kwargs_objects(config, validation=True)
    probe = gym.make(config.env_id, **env_kwargs)
    try:
        algo = check_compatible(config.algo, probe, config.env_id)
        policy_kwargs = build_policy_kwargs(config, probe)
        _check_eval_env(config, eval_kwargs, probe)
        check_smoothing_space(config.warm_start_smoothing, config.warm_start_explore, probe.action_space)
        if config.warm_start_lookahead:
            check_lookahead_space(probe)
    finally:
        probe.close()

    config = dataclasses.replace(config, algo_kwargs=resolved_algo_kwargs(config))
    saved = resume_candidates(run_dir)
    if saved and not resume:
        if not overwrite:
            raise ValueError(
                f"{run_dir} already holds a training run; pass --resume to continue it, --overwrite to replace it, "
                "or another --out"
            )
        clear_run(run_dir)
        saved = []
    venv = make_training_env(config.env_id, env_kwargs, config.n_envs, config.seed, config.vec_env)
    resumed = _resume_readable(algo, saved, venv, config)
    if resumed is None:
        if resume:
            print(f"no model in {run_dir}; starting from scratch", file=sys.stderr)
        model, start = _new_model(algo, venv, config, policy_kwargs, run_dir), 0
    else:
        model, start = resumed
    write_config(run_dir, dataclasses.asdict(config), field_docs())
    validation = validation_seeds(config.eval_seed, config.eval_episodes)
    record_provenance(
        run_dir,
        command or " ".join(sys.argv),
        {
            "train_seeds": train_seeds(config.seed, config.n_envs),
            "validation_seeds": [validation.start, validation.stop - 1],
            "device": str(model.device),
        },
    )
    _print_table(config, run_dir, start)

    checkpointer = AtomicCheckpointCallback(run_dir, config.checkpoint_every, algo.off_policy)
    evaluation = ReferenceEvalCallback(
        config.env_id,
        eval_kwargs,
        validation,
        objective_metric(config.env_id, eval_kwargs),
        config.eval_every or sys.maxsize,
        run_dir,
        algo.needs_masks,
        restore_above=float(config.eval_restore),
    )
    timer = RolloutTimer(lambda: checkpointer.seconds + evaluation.seconds)
    warm_started, cpu_started = time.perf_counter(), time.process_time()  # the budget counts the warm start too
    if config.warm_start is not None and resumed is None:
        _warm_start(model, config, env_kwargs, run_dir, evaluation)
    if config.warm_start_kl:
        _anchor(model, run_dir, resumed is None)
    warm_validation = evaluation.seconds
    progress = sys.stderr.isatty() if config.progress_bar is None else config.progress_bar
    started = time.perf_counter()
    if config.timesteps > start:
        with _unchecked_distributions():
            model.learn(
                total_timesteps=config.timesteps - start,
                callback=[timer, checkpointer, evaluation],
                reset_num_timesteps=start == 0,
                tb_log_name="run",
                progress_bar=progress,
            )
        seconds = time.perf_counter() - started
        checkpointer.save()
        if not evaluation.history or evaluation.history[-1]["timesteps"] != model.num_timesteps:
            evaluation.evaluate_now()
        add_training_cpu(run_dir, time.process_time() - cpu_started)
    else:
        seconds = 0.0
        print(f"{run_dir} is already at {start} >= {config.timesteps} steps; nothing to train", file=sys.stderr)
    saving = time.perf_counter()
    if model.num_timesteps > start or not (run_dir / MODEL).is_file():  # else model.zip stays byte for byte
        save_model(model, model.get_vec_normalize_env(), run_dir / MODEL, run_dir / VECNORMALIZE)
    steps = model.num_timesteps - start
    venv.close()
    finished = time.perf_counter()
    phases = {
        "start_up": 0.0,
        "warm_start": started - warm_started - warm_validation,
        "rollout": timer.rollout_seconds,
        "update": timer.update_seconds,
        "validation": evaluation.seconds,
        "save": checkpointer.seconds + finished - saving,
    }
    phases["start_up"] = (finished - entered) - sum(phases.values())  # envs, model, files, learn's first reset
    print(
        f"trained {steps} steps in {seconds:.1f} s ({steps / max(seconds, 1e-9):.0f} samples/s); model in {run_dir}",
        file=sys.stderr,
    )
    print(f"time: {', '.join(f'{name} {value:.1f} s' for name, value in phases.items())}", file=sys.stderr)
    return TrainResult(model, run_dir, start, evaluation.history, seconds, phases)


def _anchor(model: BaseAlgorithm, run_dir: Path, fresh: bool) -> None:
    """Anchor ``model``'s policy at the clone (``warm_start_kl``): a fresh run saves the clone's parameters
    to ``DIR/warm_start_policy.pt``, a resumed one reads them from there."""
    from agents.masking import FusedMaskablePolicy

    assert isinstance(model.policy, FusedMaskablePolicy)
    if fresh:
        buffer = io.BytesIO()
        torch.save(model.policy.state_dict(), buffer)
        write_atomic(run_dir / ANCHOR, buffer.getvalue())
        model.policy.set_anchor()
    else:
        model.policy.set_anchor(torch.load(run_dir / ANCHOR, map_location=model.device, weights_only=True))


def _warm_start(
    model: BaseAlgorithm,
    config: TrainConfig,
    env_kwargs: dict[str, Any],
    run_dir: Path,
    evaluation: ReferenceEvalCallback,
) -> None:
    """Clone ``config.warm_start`` into ``model``; its validation score goes to ``DIR/warm_start.json``.

    The clone is also the run's first evaluation (step 0), so ``best_model.zip`` keeps it when
    fine-tuning never beats it on the validation seeds.
    """
    assert config.warm_start is not None
    started = time.process_time()
    seeds = demonstration_seeds(config.seed)
    expert = teacher(config.warm_start, config.warm_start_lookahead, config.warm_start_kwargs)
    demos = demonstrate(config.env_id, env_kwargs, expert, seeds, config.warm_start_steps, config.warm_start_explore)
    gamma, epochs, smoothing = config.gamma(), config.warm_start_epochs, config.warm_start_smoothing
    losses = clone(model, demos, gamma=gamma, epochs=epochs, smoothing=smoothing)
    rounds = []
    for _ in range(config.warm_start_dagger):  # DAgger: the clone plays, the teacher labels, the clone learns all
        reached = demonstrate(
            config.env_id, env_kwargs, expert, seeds, config.warm_start_steps, config.warm_start_explore,
            driver=model_driver(model),
        )  # fmt: skip
        demos = aggregate(demos, reached)
        losses = clone(model, demos, gamma=gamma, epochs=epochs, smoothing=smoothing, statistics=reached)
        rounds.append({"decisions": int(reached.rewards.size), "episodes": reached.n_episodes, "losses": losses})
    report: dict[str, Any] = {
        "baseline": config.warm_start,
        "baseline_kwargs": config.warm_start_kwargs,
        "lookahead": config.warm_start_lookahead,
        "dagger_rounds": rounds,
        "decisions": int(demos.rewards.size),
        "episodes": demos.n_episodes,
        "epochs": config.warm_start_epochs,
        "smoothing": config.warm_start_smoothing,
        "explore": config.warm_start_explore,
        "losses": losses,
        "validation": evaluation.measure(model),
        "cpu_seconds": time.process_time() - started,
    }
    write_atomic(run_dir / WARM_START, (json.dumps(report, indent=2) + "\n").encode())
    evaluation.initial_row = report["validation"]
    row = report["validation"]
    print(
        f"warm start: cloned {config.warm_start} from {report['decisions']} decisions ({report['episodes']} episodes); "
        f"validation ratio {row['ratio']:.4f} to {row['reference']}",
        file=sys.stderr,
    )


def resume_config(out: str | Path, overrides: dict[str, Any]) -> TrainConfig:
    """The saved config of the run in ``out`` with ``overrides``; env and algo must not change."""
    saved = read_config(Path(out))
    for key in ("env_id", "algo", "env_kwargs", "eval_env_kwargs"):
        if key in overrides and overrides[key] != saved.get(key):
            raise ValueError(
                f"--resume continues the run in {out} trained with {key}={saved.get(key)!r}; "
                f"{key}={overrides[key]!r} differs (use another --out for a new run)"
            )
    return TrainConfig(**{**saved, **overrides})


def config_changes(saved: TrainConfig, wanted: TrainConfig) -> dict[str, tuple[Any, Any]]:
    """The fields in which ``wanted`` differs from the ``saved`` config of a run: name -> (saved, wanted).

    Both are compared as a run saves them (algorithm defaults resolved), so a config that only omits
    a default it would get anyway is no change.
    """
    before = dataclasses.asdict(dataclasses.replace(saved, algo_kwargs=resolved_algo_kwargs(saved)))
    after = dataclasses.asdict(dataclasses.replace(wanted, algo_kwargs=resolved_algo_kwargs(wanted)))
    return {name: (before[name], after[name]) for name in before if before[name] != after[name]}


def build_policy_kwargs(config: TrainConfig, env: gym.Env) -> dict[str, Any]:
    """The policy arguments of ``config`` for ``env``: activation names as torch classes, and the "slots"
    extractor with the slot layout of ``env`` (``agents.extractors``)."""
    kwargs = dict(config.policy_kwargs)
    if isinstance(kwargs.get("activation_fn"), str):
        name = kwargs["activation_fn"]
        if name not in _ACTIVATIONS:
            raise ValueError(f"policy_kwargs.activation_fn={name!r} is not allowed; choose one of {list(_ACTIVATIONS)}")
        kwargs["activation_fn"] = _ACTIVATIONS[name]
    if config.extractor == "slots":
        layout = slot_layout(env)
        if layout is None:
            warnings.warn(
                f"{config.env_id} does not describe a slot layout (attributes slot_features and n_slots/max_jobs, "
                "or module constants SLOT_FEATURES and GLOBAL_FEATURES); using the flat MLP extractor instead",
                stacklevel=3,
            )
            config.extractor = "mlp"
        else:
            kwargs["features_extractor_class"] = SlotSetExtractor
            kwargs["features_extractor_kwargs"] = {
                "start": layout.start,
                "n_slots": layout.n_slots,
                "slot_features": layout.slot_features,
                **config.extractor_kwargs,
            }
    return kwargs


def _normalize(venv: VecEnv, config: TrainConfig) -> VecEnv:
    if not (config.normalize_observation or config.normalize_reward):
        return venv
    return make_normalizer(
        venv,
        norm_obs=config.normalize_observation,
        norm_reward=config.normalize_reward,
        clip_obs=config.clip_observation,
        gamma=config.gamma(),
    )


def _new_model(
    algo: Algorithm, venv: VecEnv, config: TrainConfig, policy_kwargs: dict[str, Any], run_dir: Path
) -> BaseAlgorithm:
    cls = algorithm_class(algo.name)
    return cls(
        _policy_class(algo, venv.action_space),
        _normalize(venv, config),
        **buffer_options(algo.name, venv.observation_space),
        seed=config.seed,
        device=config.device,
        policy_kwargs=policy_kwargs,
        tensorboard_log=str(run_dir / TENSORBOARD) if config.tensorboard else None,
        **config.algo_kwargs,
    )


@contextlib.contextmanager
def _unchecked_distributions() -> Iterator[None]:
    """Skip ``torch.distributions``' argument checks while learning (restored after).

    SB3 builds a distribution object per forward pass; the checks re-validate logits and scales the
    network has just produced, about 8% of an update on the batched envs.
    """
    previous = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(previous)


def _policy_class(algo: Algorithm, action_space: gym.Space) -> Any:
    """MaskablePPO gets the fused masked head (``agents.masking``); everything else SB3's ``MlpPolicy``."""
    if algo.needs_masks and isinstance(action_space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete)):
        from agents.masking import FusedMaskablePolicy

        return FusedMaskablePolicy
    return "MlpPolicy"


def check_device(device: str) -> str:
    """``device`` if torch can use it here: "cuda" without a CUDA device is refused (never recorded as used)."""
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            "--device cuda is not allowed here: torch finds no CUDA device (this torch build: "
            f"{torch.__version__}); use --device cpu, or --device auto to take cuda only when present"
        )
    return device


READ_ERRORS = (OSError, EOFError, ValueError, KeyError, RuntimeError, pickle.UnpicklingError, zipfile.BadZipFile)
"""What loading a damaged model, statistics or state file raises (a torn zip, a truncated pickle)."""


def _resume_readable(
    algo: Algorithm, saved: list[Checkpoint], venv: VecEnv, config: TrainConfig
) -> tuple[BaseAlgorithm, int] | None:
    """The model of the newest readable entry of ``saved`` (newest last), or None when ``saved`` is empty.

    An unreadable checkpoint is skipped with a warning naming it and the error; when every saved
    model is unreadable the run is refused rather than restarted over it.
    """
    for checkpoint in reversed(saved):
        try:
            return _resume(algo, checkpoint, venv, config)
        except READ_ERRORS as error:
            warnings.warn(
                f"{checkpoint.model} cannot be read ({type(error).__name__}: {error}); falling back to the one before",
                stacklevel=3,
            )
    if saved:
        raise ValueError(
            f"no model of the run in {saved[0].model.parent} can be read ({', '.join(str(c.model) for c in saved)}); "
            "refusing to train from scratch over them: pass --overwrite to replace the run"
        )
    return None


def _resume(algo: Algorithm, checkpoint: Checkpoint, venv: VecEnv, config: TrainConfig) -> tuple[BaseAlgorithm, int]:
    normalizer = load_normalizer(checkpoint.vecnormalize)
    if normalizer is not None:
        normalizer = resumed_normalizer(normalizer, venv)
        normalizer.training = True
        normalizer.norm_reward = config.normalize_reward
        venv = normalizer
    options = buffer_options(algo.name, venv.observation_space)  # not in the saved file (save_model)
    model = algorithm_class(algo.name).load(checkpoint.model, env=venv, device=config.device, **options)
    if algo.off_policy and checkpoint.replay_buffer.is_file():
        model.load_replay_buffer(checkpoint.replay_buffer)
    if checkpoint.state.is_file():
        with open(checkpoint.state, "rb") as file:
            state = pickle.load(file)
        state.restore(model)
        how = "envs and random streams restored"
    else:
        how = "no saved env state: the envs start fresh episodes"
    print(f"resuming from {checkpoint.model} at {model.num_timesteps} steps ({how})", file=sys.stderr)
    return model, int(model.num_timesteps)


def _print_table(config: TrainConfig, run_dir: Path, start: int) -> None:
    rows = [(f.name, getattr(config, f.name)) for f in dataclasses.fields(config)]
    rows.append(("run_dir", str(run_dir)))
    rows.append(("start_timesteps", start))
    width = max(len(name) for name, _ in rows)
    print("\n".join(f"{name:<{width}}  {value}" for name, value in rows))
    if config.gamma() < 1:
        print(f"gamma = {config.gamma()}: effective horizon ~ {1 / (1 - config.gamma()):.0f} decisions")
