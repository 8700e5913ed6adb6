"""The one base of the native batched envs: autoreset, resets, seeding and ``info`` as Gymnasium's.

Each family's ``vector.py`` (the id's ``vector_entry_point``) subclasses :class:`NativeVectorEnv` and
supplies only its batched transition and what it reports; this class owns everything a batched env
shares with ``gymnasium.vector.SyncVectorEnv`` over the single env, so that the two agree step by
step on the same seeds and actions (``tests/test_vector_sync.py``). The contract is written out in
the architecture page (``docs/architecture.md``, "The batched envs").

- **Seeding** (Gymnasium's vector convention): ``seed=s`` seeds copy i with s + i, a list seeds each
  copy, None keeps each copy's generator (creating one on first use). Copy i's generator is then
  exactly the one a single env reset with that seed would own.
- **Resets**: ``reset(options={"reset_mask": mask})`` resets only the copies where ``mask`` (a (B,)
  boolean array with at least one True) is True; the others keep their episodes. ``step`` refuses
  to run while some copy has never been reset (e.g. after a first reset with a partial mask), naming
  the copies. The reset's ``info`` holds the reset copies' entries only (0 and mask False elsewhere).
- **Autoreset** (``autoreset_mode``, Gymnasium 1.x ``AutoresetMode``): ``"NextStep"`` (default) resets
  a copy in the step after the one that ended its episode, ignoring its action, with reward 0 and
  terminated False; ``"SameStep"`` resets it in the step that ends it, and ``info["final_obs"]`` (an
  object array: the ended copies' last observations, None elsewhere) and ``info["final_info"]``
  (their last step's ``info``) hold what it ended with, each ``_key`` mask marking the ended copies
  only. ``info["episode_metrics"]`` (masked to the ended copies) is also kept at the top level.
- **Attributes**: ``get_attr(name)`` gives, per copy, the configuration every copy shares (the single
  env the batch was built from), or its own generator for ``"np_random"``; ``call(name)`` also
  splits a batched method such as ``action_masks`` into one row per copy; ``set_attr`` is refused
  (build a new batch instead).

No episode here ends by truncation (truncated is always False), and the batched envs do not render.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from schedenv.validation import as_real_array, check_choice, check_int, is_seed

Env = TypeVar("Env", bound=gym.Env)

_NO_ROWS = np.empty(0, dtype=np.intp)
_NO_ROWS.flags.writeable = False


class NativeVectorEnv(VectorEnv, ABC, Generic[Env]):
    """``num_envs`` copies of one single env stepped together; a family subclass supplies the hooks.

    The hooks (each works on the rows of the family's batched arrays):

    - :meth:`_reset_rows` draws the episodes of the copies ``rows`` from ``self._generators`` and
      sets their state, so that ``_state_info`` and ``self._obs`` there equal the single env's reset;
    - :meth:`_step_rows` validates the actions (raising before anything changes) and steps the copies
      ``stepping``, returning rewards and terminations for all copies (others' entries are ignored);
    - :meth:`_state_info` gives the ``info`` arrays every step reports for every copy (no masks);
    - :meth:`_episode_metrics` gives the ended copies' ``episode_metrics``: per metric, one value per
      ended copy (the base spreads them over the batch, ``metrics_fill`` elsewhere, with their masks).

    ``self._obs`` is the (B, ...) observation array the hooks write.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    per_copy_methods: ClassVar[tuple[str, ...]] = ("action_masks",)
    """Batched methods whose result has one row per copy: ``call`` splits them as SyncVectorEnv would."""
    metrics_fill: ClassVar[float] = np.nan
    """What ``episode_metrics`` holds for the copies whose episode did not end (their mask is False)."""

    template: Env
    """The single env the batch was built from: its parameters are every copy's."""
    _obs: np.ndarray

    def _set_up(
        self, make_env: Callable[..., Env], num_envs: int, autoreset_mode: str | AutoresetMode, kwargs: dict[str, Any]
    ) -> Env:
        """Copy count, autoreset mode and spaces from one single env ``make_env(**kwargs)``, returned.

        The single env (the template the batch reads its parameters from) checks every argument;
        ``render_mode`` is refused, as the batched envs do not render, and so is ``reference`` (its run is
        the single env's); ``reward_scale`` is the template's, which ``step`` applies to the rewards.
        """
        self.num_envs = check_int("num_envs", num_envs)
        value = autoreset_mode.value if isinstance(autoreset_mode, AutoresetMode) else autoreset_mode
        mode = AutoresetMode(check_choice("autoreset_mode", value, ("NextStep", "SameStep")))
        self.metadata = {"autoreset_mode": mode, "render_modes": []}
        if kwargs.get("render_mode") is not None:
            raise ValueError(f"render_mode={kwargs['render_mode']!r} is not supported by the batched env; use None")
        if kwargs.get("reference") is not None:
            raise ValueError(
                f"reference={kwargs['reference']!r} is not supported by the batched env yet; use the single env "
                "(gym.make) or schedenv.fastpath.evaluate_fast for the reference's metrics"
            )
        self.template = template = make_env(**kwargs)
        self.spec = None
        self.single_observation_space = template.observation_space
        self.single_action_space = template.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._generators: list[np.random.Generator | None] = [None] * self.num_envs
        self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)
        """Copies that ended in the last step and reset in this one (NextStep mode)."""
        self._has_episode = np.zeros(self.num_envs, dtype=np.bool_)
        """Copies reset at least once (a step needs them all)."""
        self._all_rows = np.arange(self.num_envs)
        """Every copy's index, the ``stepping`` rows of a step in which no copy resets (read-only)."""
        self._all_rows.flags.writeable = False
        self._reward_scale = float(getattr(template, "reward_scale", 1.0))
        """The single env's ``reward_scale`` (1 for an env without one)."""
        return template

    # ----------------------------------------------------------------- hooks of a family
    @abstractmethod
    def _reset_rows(self, rows: np.ndarray) -> None:
        """Draw the episodes of the copies ``rows`` (from ``self._generators``) and set their state; the base
        calls it only with at least one row."""

    @abstractmethod
    def _step_rows(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Check ``actions``, step the copies ``stepping``; (rewards, terminated) of all copies."""

    @abstractmethod
    def _state_info(self) -> dict[str, np.ndarray]:
        """The per-copy ``info`` arrays of the current state (no masks)."""

    @abstractmethod
    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """Per metric, the values of the copies ``ended`` (in that order)."""

    def _spread_metrics(self, ended: np.ndarray, terminated: np.ndarray) -> dict[str, np.ndarray]:
        """``_episode_metrics(ended)`` as (B,) arrays, ``metrics_fill`` where the episode did not end, with masks."""
        spread: dict[str, np.ndarray] = {}
        for name, column in self._episode_metrics(ended).items():
            spread[name] = np.full(self.num_envs, self.metrics_fill)
            spread[name][ended] = column
            spread[f"_{name}"] = terminated
        return spread

    # ----------------------------------------------------------------- Gymnasium VectorEnv API
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every copy, or those of ``options["reset_mask"]``; seeds as in the module doc."""
        rows = self._reseed(seed, options)
        if rows.size:
            self._reset_rows(rows)
        self._autoreset[rows] = False
        self._has_episode[rows] = True
        reset = np.zeros(self.num_envs, dtype=np.bool_)
        reset[rows] = True
        return self._obs.copy(), _only_copies(self._state_info(), reset)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One step of every copy (or its autoreset), as ``SyncVectorEnv`` over the single env."""
        if not self._has_episode.all():
            never = np.flatnonzero(~self._has_episode).tolist()
            raise RuntimeError(
                f"copies {never} have never been reset; call reset() (or reset with an options['reset_mask'] "
                "covering them) before step()"
            )
        autoreset = self._autoreset
        if autoreset.any():
            resetting, stepping = np.flatnonzero(autoreset), np.flatnonzero(~autoreset)
        else:  # the common step: every copy steps, none resets (no index arrays to build)
            resetting, stepping = _NO_ROWS, self._all_rows
        rewards, terminated = self._step_rows(actions, stepping)
        rewards, terminated = np.array(rewards, dtype=np.float64), np.array(terminated, dtype=np.bool_)
        if resetting.size:
            rewards[resetting], terminated[resetting] = 0.0, False
        if self._reward_scale != 1.0:  # as the single env scales its reward (x * 1.0 is x: skipped)
            rewards *= self._reward_scale
        info: dict[str, Any] = {}
        ended = np.flatnonzero(terminated) if terminated.any() else _NO_ROWS
        if ended.size:
            info["episode_metrics"] = self._spread_metrics(ended, terminated.copy())
            info["_episode_metrics"] = terminated.copy()
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP:
            if ended.size:
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in ended:
                    final_obs[i] = self._obs[i].copy()
                info["final_obs"], info["_final_obs"] = final_obs, terminated.copy()
                final_info = {"episode_metrics": info["episode_metrics"], "_episode_metrics": terminated.copy()}
                info["final_info"] = final_info | _only_copies(self._state_info(), terminated)
                info["_final_info"] = terminated.copy()
                self._reset_rows(ended)
        else:
            if resetting.size:
                self._reset_rows(resetting)
            self._autoreset = terminated.copy()
        everyone = np.ones(self.num_envs, dtype=np.bool_)
        for key, value in self._state_info().items():
            info[key], info[f"_{key}"] = value, everyone.copy()
        return self._obs.copy(), rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), info

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Per copy, the single env's configuration attribute ``name`` (every copy shares it), or each
        copy's own generator for ``"np_random"``."""
        if name == "np_random":
            return tuple(self._generators)
        if name.startswith("_") or not hasattr(self.template, name) or callable(getattr(self.template, name)):
            raise AttributeError(
                f"the batched env has no per-copy attribute {name!r}; get_attr gives the configuration every "
                "copy shares (a public, non-method attribute of the single env)"
            )
        value = getattr(self.template, name)
        return tuple(value for _ in range(self.num_envs))

    def set_attr(self, name: str, values: Any) -> None:
        """Refused: the copies share one configuration, fixed when the batch was built."""
        raise AttributeError(
            f"cannot set {name!r}: the batched env's copies share one configuration fixed at construction; "
            "build a new batched env with the keyword you need"
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Per copy, as ``SyncVectorEnv.call``: a batched method of ``per_copy_methods`` split by row, or
        else ``get_attr(name)``."""
        if name in self.per_copy_methods and hasattr(self, name):
            result = getattr(self, name)(*args, **kwargs)
            return tuple(result[i] for i in range(self.num_envs))
        return self.get_attr(name)

    # ----------------------------------------------------------------- action checks the families share
    def _integer_actions(self, actions: Any, highs: int | tuple[int, ...], allowed: str) -> np.ndarray:
        """``actions`` as int64, checked before anything changes: (B,) integers in [0, highs), or with a
        tuple of highs (B, len(highs)) whose column j lies in [0, highs[j]); ``allowed`` words the range."""
        chosen = np.asarray(actions)
        shape = (self.num_envs,) if isinstance(highs, int) else (self.num_envs, len(highs))
        if chosen.shape != shape or chosen.dtype.kind not in "iu":
            raise ValueError(
                f"actions with shape {chosen.shape} and dtype {chosen.dtype} are not allowed; "
                f"give {shape} integers in {allowed}"
            )
        chosen = chosen.astype(np.int64)
        bad = (chosen < 0) | (chosen >= (highs if isinstance(highs, int) else np.asarray(highs)))
        if bad.any():  # the per-copy detail only when some action is out of range
            outside = bad.reshape(self.num_envs, -1).any(axis=1)
            raise ValueError(
                f"actions of copies {np.flatnonzero(outside).tolist()} are out of range; each must lie in {allowed}"
            )
        return chosen

    def _real_actions(self, actions: Any, columns: int, low: float, high: float, what: str) -> np.ndarray:
        """``actions`` as a contiguous (B, columns) float array of ``what`` (e.g. "scores") in [low, high]."""
        values = as_real_array("actions", actions, allow_bool=True)
        if values.shape != (self.num_envs, columns):
            raise ValueError(f"actions have shape {values.shape}; expected {(self.num_envs, columns)}, {what}")
        bad = ~((values >= low) & (values <= high)).all(axis=1)  # NaN fails both
        if bad.any():
            raise ValueError(
                f"actions of copies {np.flatnonzero(bad).tolist()} have {what} NaN or outside [{low:g}, {high:g}]"
            )
        return np.ascontiguousarray(values)

    def _refuse_masked(self, masks: np.ndarray, actions: np.ndarray, stepping: np.ndarray, why: str) -> None:
        """Raise, naming the copies, if a copy in ``stepping`` chose a flat action its row of ``masks`` forbids
        (``invalid_action="raise"``); ``why`` says what a masked action is in the family."""
        masked = stepping[masks[stepping, actions[stepping]] == 0]
        if masked.size:
            raise ValueError(f"actions of copies {masked.tolist()} are masked: {why}; see action_masks()")

    # ----------------------------------------------------------------- internals
    def _reseed(self, seed: int | list[int | None] | None, options: dict[str, Any] | None) -> np.ndarray:
        """Reseed the copies to reset (in place in ``self._generators``) and return their indices."""
        n = self.num_envs
        mask = np.ones(n, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.shape != (n,) or mask.dtype != np.bool_:
                raise ValueError(
                    f"options['reset_mask'] has shape {mask.shape} and dtype {mask.dtype}; expected a ({n},) "
                    "boolean array"
                )
            if not mask.any():
                raise ValueError(
                    "options['reset_mask'] is all False, which would reset nothing; give at least one True "
                    "(or leave the batch as it is without calling reset)"
                )
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)) and is_seed(seed):
            seeds = [int(seed) + i for i in range(n)]
        elif isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"seed has {len(seeds)} entries; expected num_envs={n}")
            bad = [s for s in seeds if s is not None and not is_seed(s)]
            if bad:
                raise ValueError(f"seed={seed!r} is not allowed: entry {bad[0]!r} is not an integer >= 0 or None")
            seeds = [None if s is None else int(s) for s in seeds]  # Gymnasium's seeding takes Python integers
        else:
            raise ValueError(f"seed={seed!r} is not allowed; give an integer >= 0, a list of num_envs seeds or None")
        rows = np.flatnonzero(mask)
        for i in rows:
            if seeds[i] is not None or self._generators[i] is None:
                self._generators[i] = seeding.np_random(seeds[i])[0]
        return rows


def _only_copies(info: dict[str, Any], rows: np.ndarray) -> dict[str, Any]:
    """``info`` as ``SyncVectorEnv`` gathers it from the copies ``rows`` alone: 0 elsewhere, masks ``rows``."""
    gathered: dict[str, Any] = {}
    for key, value in info.items():
        gathered[key] = np.zeros_like(value)
        gathered[key][rows] = value[rows]
        gathered[f"_{key}"] = rows.copy()
    return gathered
