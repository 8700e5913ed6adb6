"""The base of the four family envs: what every one does around its compiled core (docs/architecture.md).

Seeding and the reference run at ``reset`` (``reference``, ``reward_scale``: ``schedenv.reference``),
the terminal step's ``episode_metrics``, the ``"human"`` window after every reset and step, ``render``
and ``close`` (``schedenv.display``). A family's env supplies its core, its text and picture, and its
own translation of actions and observations.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Generic, Protocol, TypeVar

import gymnasium as gym
import numpy as np

from schedenv.display import RENDER_MODES, HumanDisplay, check_render_mode, rendered
from schedenv.reference import EpisodeReference
from schedenv.validation import check_choice, check_nonnegative, check_seed

INVALID_ACTION_MODES: tuple[str, ...] = ("raise", "fallback", "penalty")
"""``invalid_action``: what a masked action does (each env's section on masks)."""


class _Core(Protocol):
    @property
    def done(self) -> bool: ...


ActT = TypeVar("ActT")
CoreT = TypeVar("CoreT", bound=_Core)


class SchedulingEnv(gym.Env[np.ndarray, ActT], Generic[ActT, CoreT]):
    """A family env over its core (``CoreT``, set by ``reset``): the plumbing the four envs share."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    _core: CoreT | None
    _display: HumanDisplay | None
    _reference: EpisodeReference
    reference: str | None
    """The ``reference`` baseline's name, or None (see Information)."""
    reward_scale: float
    """The factor applied to every reward (see Rewards; ``"auto"`` resolved to its number)."""

    def _set_up_rendering(self, render_mode: Any) -> None:
        """Check ``render_mode``; open nothing yet (the window opens at the first frame)."""
        self.render_mode = check_render_mode(render_mode)
        self._display = HumanDisplay(self.metadata["render_fps"]) if self.render_mode == "human" else None

    def _set_up_reference(self, env_id: str, arguments: dict[str, Any]) -> None:
        """``reference`` and ``reward_scale`` from the constructor's ``arguments`` (``EpisodeReference``)."""
        self._reference = EpisodeReference(env_id, arguments)
        self.reference = self._reference.name
        self.reward_scale = self._reference.reward_scale

    def _set_up_invalid_actions(self, invalid_action: Any, invalid_action_penalty: Any) -> None:
        """``invalid_action`` (one of ``INVALID_ACTION_MODES``) and ``invalid_action_penalty`` (>= 0), checked."""
        self.invalid_action = check_choice("invalid_action", invalid_action, INVALID_ACTION_MODES)
        self.invalid_action_penalty = check_nonnegative("invalid_action_penalty", invalid_action_penalty)

    def _penalty(self, invalid: bool) -> float:
        """What a step's reward loses (before ``reward_scale``): ``invalid_action_penalty`` for a masked
        action under ``invalid_action="penalty"``, else 0."""
        return self.invalid_action_penalty if invalid and self.invalid_action == "penalty" else 0.0

    def _start_episode(self, seed: Any) -> None:
        """``reset``'s first step: seed ``np_random`` (``check_seed``) and let the reference run remember it."""
        super().reset(seed=check_seed(seed))
        self._reference.start(seed, self.np_random)

    def _end_episode(self, info: dict[str, Any], metrics: dict[str, float]) -> None:
        """The terminal step's ``info``: ``episode_metrics``, and ``reference_metrics`` with a reference."""
        info["episode_metrics"] = metrics
        self._reference.finish(info)

    def _show(self) -> None:
        """``render_mode="human"``: show the env (after every reset and step)."""
        if self._display is not None:
            self.render()

    def _require_core(self) -> CoreT:
        if self._core is None:
            raise RuntimeError("call reset() before using the env")
        return self._core

    def _live_core(self) -> CoreT:
        """The core of an episode still running (``step``'s precondition)."""
        core = self._require_core()
        if core.done:
            raise RuntimeError("the episode has ended; call reset()")
        return core

    @abstractmethod
    def _render_text(self) -> str:
        """``render_mode="ansi"``: the current state as text."""

    @abstractmethod
    def _render_picture(self) -> np.ndarray:
        """``render_mode="rgb_array"``: the current state as an RGB picture."""

    def render(self) -> Any:
        if self.render_mode is None or self._core is None:
            return None
        return rendered(self.render_mode, self._display, self._render_text, self._render_picture)

    def close(self) -> None:
        if self._display is not None:
            self._display.close()


__all__ = ["INVALID_ACTION_MODES", "SchedulingEnv"]
