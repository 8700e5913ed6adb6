"""Where ``schedenv evaluate --agent PATH`` finds an agent: four forms, one resolver (docs/rl/index.md).

| PATH | the model | the env it acts in |
|---|---|---|
| a ``schedenv train`` folder | ``model.zip``, else the newest checkpoint | ``config.yaml`` |
| an RL Zoo run folder | ``<env name>.zip``, ``best_model.zip`` or a checkpoint | ``<env name>/args.yml`` |
| an SB3 ``.zip`` | the file (algorithm read from its ``data``) | its folder's, else ``--env`` |
| ``module:function`` | ``function(obs, info) -> action`` for one env copy | ``--env`` |

An RL Zoo run folder is ``<log>/<algo>/<env name>_<n>/`` as ``rl_zoo3.train`` writes it, where the
env name is the env id with ``/`` replaced by ``-`` (``schedenv-Malleable-v0``): the final model
``<env name>.zip`` (else ``best_model.zip``, else the newest ``rl_model_<N>_steps.zip``), and the
folder ``<env name>/`` with ``args.yml`` and ``config.yml`` (the env, the algorithm, the env kwargs)
and ``vecnormalize.pkl`` (the observation statistics). A ``.zip`` inside one of the two run folders
takes that folder's env; a lone ``.zip`` uses a ``vecnormalize.pkl`` next to it.

Nothing here imports torch: resolving reads YAML, JSON and file names only; ``load_agent`` imports
stable-baselines3 when a model must be built.
"""

from __future__ import annotations

import importlib
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from agents.algorithms import ALGORITHMS
from agents.runs import BEST_MODEL, BEST_VECNORMALIZE, CONFIG, MODEL, VECNORMALIZE, final_model, read_config

SourceKind = Literal["train", "zoo", "zip", "callable"]

_CALLABLE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_ZOO_CHECKPOINT = re.compile(r"^rl_model_(\d+)_steps\.zip$")
_ZOO_FILES = ("args.yml", "config.yml")


@dataclass(frozen=True)
class AgentSource:
    """A resolved ``--agent`` argument: what kind of agent, its files and what it says about its env."""

    kind: SourceKind
    """``train`` (a ``schedenv train`` folder), ``zoo`` (an RL Zoo run), ``zip`` (a lone SB3 file) or ``callable``."""
    location: str
    """The ``--agent`` argument as given."""
    name: str
    """The contender's name in tables and JSON."""
    env_id: str | None = None
    """The env id the agent was trained on, when its files say so."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """The env kwargs of training, when its files say so."""
    algo: str | None = None
    """The ``agents.algorithms`` name of the model's algorithm (None for a callable)."""
    model: Path | None = None
    """The SB3 model file (None for a callable)."""
    vecnormalize: Path | None = None
    """Observation statistics saved with the model (None: observations are used as they are)."""
    run_dir: Path | None = None
    """The ``schedenv train`` folder (its ``run.json`` lists the training seeds), else None."""


def resolve_agent(spec: str) -> AgentSource:
    """Tell which of the four forms ``spec`` is and find its files; ``ValueError`` (one line) if none fits."""
    path = Path(spec)
    if not path.exists():
        if _CALLABLE.match(spec):
            return AgentSource("callable", spec, spec.rpartition(":")[2])
        raise ValueError(f"--agent {spec!r}: no such file or folder, and not a Python callable written module:function")
    if path.is_dir():
        if (path / CONFIG).is_file():
            return _train_run(spec, path)
        params = _zoo_params(path)
        if params is not None:
            return _zoo_run(spec, path, params, model=None)
        raise ValueError(
            f"--agent {spec}: no agent found in this folder; looked for {CONFIG} (a `schedenv train` run) and "
            f"<env name>/{' or '.join(_ZOO_FILES)} (an RL Zoo run folder <log>/<algo>/<env name>_<n>)"
        )
    if path.suffix != ".zip":
        raise ValueError(f"--agent {spec}: not a stable-baselines3 model (.zip), a run folder or module:function")
    return _zip_file(spec, path)


def _train_run(spec: str, run_dir: Path, model: Path | None = None) -> AgentSource:
    config = read_config(run_dir)
    if model is None:
        checkpoint = final_model(run_dir)
        if checkpoint is None:
            raise ValueError(
                f"--agent {spec}: this `schedenv train` run holds no model yet "
                f"(looked for {MODEL} and checkpoints/step_<N>.zip)"
            )
        model, vecnormalize = checkpoint.model, checkpoint.vecnormalize
    else:
        vecnormalize = _train_statistics(model)
    return AgentSource(
        "train",
        spec,
        f"{config['algo']}:{run_dir.resolve().name}",
        env_id=str(config["env_id"]),
        env_kwargs=dict(config.get("env_kwargs") or {}),
        algo=str(config["algo"]),
        model=model,
        vecnormalize=vecnormalize,
        run_dir=run_dir,
    )


def _train_statistics(model: Path) -> Path:
    """The ``VecNormalize`` file saved with a model file of a ``schedenv train`` run (``agents.runs`` layout)."""
    if model.name == BEST_MODEL:
        return model.with_name(BEST_VECNORMALIZE)
    if model.name == MODEL:
        return model.with_name(VECNORMALIZE)
    return model.with_name(f"{model.stem}.vecnormalize.pkl")  # checkpoints/step_<N>.zip


def _zoo_params(run_dir: Path) -> Path | None:
    """The parameter folder ``<env name>/`` of an RL Zoo run folder (the one holding ``args.yml``/``config.yml``)."""
    found = [sub for sub in sorted(run_dir.iterdir()) if sub.is_dir() and any((sub / f).is_file() for f in _ZOO_FILES)]
    return found[0] if found else None


class _ZooLoader(yaml.SafeLoader):
    """Safe YAML plus the ``OrderedDict`` tag that the RL Zoo's ``yaml.dump`` writes (read as a dict)."""


def _ordered_dict(loader: yaml.SafeLoader, node: yaml.Node) -> dict[Any, Any]:
    (pairs,) = loader.construct_sequence(node, deep=True)  # type: ignore[arg-type]
    return dict(pairs)


_ZooLoader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", _ordered_dict)


def read_zoo_yaml(path: Path) -> dict[str, Any]:
    """A YAML file of an RL Zoo run (``args.yml``, ``config.yml``, ``env_kwargs.yml``); empty if absent."""
    if not path.is_file():
        return {}
    try:
        loaded = yaml.load(path.read_text(), Loader=_ZooLoader)  # a SafeLoader subclass
    except yaml.YAMLError as error:
        raise ValueError(f"{path} is not YAML that schedenv can read safely: {str(error).splitlines()[0]}") from error
    return dict(loaded) if isinstance(loaded, dict) else {}


def zoo_env_name(env_id: str) -> str:
    """The folder/file name the RL Zoo gives an env id (``/`` replaced by ``-``, as huggingface_sb3 does)."""
    name = env_id.replace("/", "-")
    return name.partition(":")[2] if ":" in name else name  # a ``module:id`` names the env by its id


def _zoo_run(spec: str, run_dir: Path, params: Path, model: Path | None) -> AgentSource:
    args = read_zoo_yaml(params / "args.yml")
    config = read_zoo_yaml(params / "config.yml")
    env_id = str(args["env"]) if args.get("env") else None
    if env_id is not None and ":" in env_id:
        env_id = env_id.partition(":")[2]  # ``module:id`` (Gymnasium's import form) names the env by its id
    env_name = zoo_env_name(env_id) if env_id else params.name
    # the precedence of rl_zoo3.enjoy: env_kwargs.yml (hub downloads) < config.yml < args.yml
    env_kwargs = {**read_zoo_yaml(params / "env_kwargs.yml"), **(config.get("env_kwargs") or {})}
    if args.get("env_kwargs") is not None:
        env_kwargs = dict(args["env_kwargs"])
    if model is None:
        model = _zoo_model(spec, run_dir, env_name)
    algo = str(args.get("algo") or run_dir.resolve().parent.name)
    if algo not in ALGORITHMS:
        raise ValueError(f"--agent {spec}: RL Zoo algo {algo!r} is not one schedenv loads; it loads {list(ALGORITHMS)}")
    statistics = params / "vecnormalize.pkl"
    return AgentSource(
        "zoo",
        spec,
        f"{algo}:{run_dir.resolve().name}",
        env_id=env_id,
        env_kwargs=env_kwargs,
        algo=algo,
        model=model,
        vecnormalize=statistics if statistics.is_file() else None,
    )


def _zoo_model(spec: str, run_dir: Path, env_name: str) -> Path:
    """The model of an RL Zoo run, in the order ``rl_zoo3.enjoy`` offers: final, best, newest checkpoint."""
    for name in (f"{env_name}.zip", BEST_MODEL):
        if (run_dir / name).is_file():
            return run_dir / name
    steps = {int(m.group(1)): p for p in run_dir.glob("rl_model_*_steps.zip") if (m := _ZOO_CHECKPOINT.match(p.name))}
    if steps:
        return steps[max(steps)]
    raise ValueError(
        f"--agent {spec}: this RL Zoo run holds no model (looked for {env_name}.zip, {BEST_MODEL} "
        "and rl_model_<N>_steps.zip)"
    )


def _zip_file(spec: str, path: Path) -> AgentSource:
    folder = path.parent
    if (folder / CONFIG).is_file():
        return _train_run(spec, folder, model=path)
    if folder.name == "checkpoints" and (folder.parent / CONFIG).is_file():
        return _train_run(spec, folder.parent, model=path)
    params = _zoo_params(folder)
    if params is not None:
        return _zoo_run(spec, folder, params, model=path)
    statistics = folder / VECNORMALIZE
    return AgentSource(
        "zip",
        spec,
        f"{zip_algorithm(path)}:{path.stem}",
        algo=zip_algorithm(path),
        model=path,
        vecnormalize=statistics if statistics.is_file() else None,
    )


def zip_algorithm(path: Path) -> str:
    """The ``agents.algorithms`` name of the model saved in the SB3 file ``path``, read from its ``data``.

    The policy class's module tells MaskablePPO, DQN and SAC apart; PPO and A2C share a policy
    class and differ in PPO's ``clip_range`` field.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as error:
        raise ValueError(f"--agent {path}: not a stable-baselines3 model file ({error})") from error
    module = str((data.get("policy_class") or {}).get("__module__", ""))
    by_module = {
        "sb3_contrib.common.maskable.policies": "maskable_ppo",
        "stable_baselines3.dqn.policies": "dqn",
        "stable_baselines3.sac.policies": "sac",
    }
    if module in by_module:
        return by_module[module]
    if module == "stable_baselines3.common.policies":
        return "ppo" if "clip_range" in data else "a2c"
    raise ValueError(
        f"--agent {path}: cannot tell which algorithm saved this model (policy class from {module or 'nowhere'}); "
        f"schedenv loads {list(ALGORITHMS)}"
    )


def check_agent_env(source: AgentSource, env_id: str | None) -> str:
    """The env id to evaluate ``source`` on: the one its files name, which ``--env`` may repeat but not change."""
    if source.env_id is not None and env_id is not None and env_id != source.env_id:
        raise ValueError(
            f"--agent {source.location} was trained on {source.env_id}; --env {env_id} is another env "
            "(leave --env out, or give an agent of that env)"
        )
    chosen = env_id or source.env_id
    if chosen is None:
        raise ValueError(f"--agent {source.location} does not say which env it acts in; give --env (and --env-kwargs)")
    return chosen


class CallableAgent:
    """A Python function ``function(obs, info) -> action`` acting in every copy of a batched env.

    ``info`` is the copy's own info dict (for masked envs it holds ``action_mask``), as a single
    env would return it from ``reset`` or ``step``.
    """

    wants_info = True
    """``agents.assess.play_batched`` passes each copy's info to agents that set this."""

    def __init__(self, name: str, function: Callable[[Any, dict[str, Any]], Any]) -> None:
        self.name = name
        self.function = function

    def __call__(self, observations: np.ndarray, masks: np.ndarray | None, infos: list[dict[str, Any]]) -> np.ndarray:
        return np.asarray([self.function(obs, info) for obs, info in zip(observations, infos, strict=True)])

    def __repr__(self) -> str:
        return f"CallableAgent(name={self.name!r})"


def load_callable(spec: str) -> Callable[[Any, dict[str, Any]], Any]:
    """The function named ``module:function`` (imported); ``ValueError`` naming what is missing."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"--agent {spec}: cannot import module {module_name!r} ({error})") from error
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ValueError(f"--agent {spec}: module {module_name!r} has no callable {attribute!r}")
    return function


def load_agent(source: AgentSource) -> Any:
    """The batched policy of ``source`` for ``agents.assess.assess``: a ``CallableAgent`` or an ``AgentContender``."""
    if source.kind == "callable":
        return CallableAgent(source.name, load_callable(source.location))
    from agents.contender import load_model

    assert source.model is not None and source.algo is not None
    return load_model(source.model, source.algo, source.vecnormalize, name=source.name)
