"""The env arguments ``reference`` and ``reward_scale``, shared by the four families (docs/envs/index.md).

- ``reference=<baseline name>``: on the step that terminates an episode, ``info["reference_metrics"]`` holds
  that baseline's ``episode_metrics`` on the very same episode (same seed, same jobs, same
  arrivals), so per-episode ratios, regret rewards and optimality gaps need no second pass. The
  baseline runs on the compiled fast path when it has one for the env's configuration (as
  ``schedenv.fastpath.evaluate_fast`` chooses), else through a private copy of the env; either way
  the numbers are those of ``schedenv.evaluation.evaluate`` on the same seed. The agent's own
  episode (observations, rewards, random draws) is untouched. Where a paper gives an optimum or a
  bound, the env adds it beside (Malleable's ``optimal_metrics``, MultiserverJob's ``bound_metrics``).
- ``reward_scale``: every reward is multiplied by it, so the undiscounted return is minus the
  episode's total objective (and penalties) times the scale; ``episode_metrics`` are never scaled.
  ``1.0`` (the default) keeps the rewards in the objective's units; ``"auto"`` is one over the
  family's paper policy's mean total objective on ``AUTO_SCALE_SEEDS`` of the same scenario, so that
  a return is about -1 and a value function's targets are O(1) in every family.

The envs sit below the baselines and the fast path in the import layers (``pyproject.toml``), so
they reach the code that runs a baseline through its module name (``RUNNER``) at run time, as
Gymnasium reaches an env through its entry-point string; nothing is imported unless ``reference``
or ``reward_scale="auto"`` is given.
"""

from __future__ import annotations

import copy
import importlib
from types import ModuleType
from typing import Any

import numpy as np

from schedenv.validation import check_positive

RUNNER = "schedenv.fastpath.reference_run"
"""The module that builds and runs the baselines (``make_reference``, ``reference_metrics``,
``auto_reward_scale``)."""

AUTO = "auto"

AUTO_SCALE_SEEDS: tuple[int, ...] = tuple(range(2**40, 2**40 + 5))
"""The episodes ``reward_scale="auto"`` measures the paper policy on: five seeds above every range
of ``agents.protocol`` (its training seeds stay below 2**32), so the scale depends on the scenario
only and never on an evaluation seed."""

_NOT_FORWARDED = ("self", "reference", "reward_scale", "__class__")


def _runner() -> ModuleType:
    return importlib.import_module(RUNNER)


def check_reward_scale(value: Any) -> float | str:
    """``reward_scale`` as a finite float > 0, or ``"auto"``; anything else is refused."""
    if isinstance(value, str):
        if value != AUTO:
            raise ValueError(f"reward_scale={value!r} is not allowed; give a finite number > 0 or {AUTO!r}")
        return value
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"reward_scale={value!r} is not allowed; give a finite number > 0 or {AUTO!r}")
    return check_positive("reward_scale", value)


class EpisodeReference:
    """The env side of ``reference`` and ``reward_scale``, built first thing in an env's constructor.

    ``arguments`` are the constructor's arguments (``locals()`` before any other statement); the
    reference run and ``reward_scale="auto"`` rebuild the env from them without these two (and
    without rendering). The env calls ``start`` right after seeding in ``reset``, scales every
    reward by ``reward_scale`` and calls ``finish(info)`` on the terminal step's info.
    """

    def __init__(self, env_id: str, arguments: dict[str, Any]) -> None:
        self.env_id = env_id
        self.env_kwargs = {name: value for name, value in arguments.items() if name not in _NOT_FORWARDED}
        if "render_mode" in self.env_kwargs:
            self.env_kwargs["render_mode"] = None
        name = arguments.get("reference")
        self._policy = None if name is None else _runner().make_reference(env_id, name)
        self.name: str | None = None if name is None else str(name)
        """The reference baseline's name, or None."""
        scale = check_reward_scale(arguments.get("reward_scale", 1.0))
        self.reward_scale = _runner().auto_reward_scale(env_id, self.env_kwargs) if scale == AUTO else float(scale)
        """The factor applied to every reward (``"auto"`` resolved to its number)."""
        self._seed: int | None = None
        self._generator: np.random.Generator | None = None

    def start(self, seed: int | None, generator: np.random.Generator) -> None:
        """Remember the episode's seed and its generator before the workload is drawn from it."""
        if self.name is not None:
            self._seed = None if seed is None else int(seed)
            self._generator = copy.deepcopy(generator)

    def finish(self, info: dict[str, Any]) -> None:
        """Add ``reference_metrics`` to the terminal step's ``info`` (nothing without a reference)."""
        if self._policy is None:
            return
        if self._generator is None:
            raise RuntimeError("EpisodeReference.finish before start; the env must call start in reset")
        info["reference_metrics"] = _runner().reference_metrics(
            self.env_id, self._policy, self._seed, self._generator, self.env_kwargs
        )


__all__ = ["AUTO", "AUTO_SCALE_SEEDS", "RUNNER", "EpisodeReference", "check_reward_scale"]
