"""``render_mode="human"``: an env's ``"rgb_array"`` picture shown in a pygame window.

Gymnasium's ``make`` gives an env that lacks ``"human"`` its ``HumanRendering`` wrapper, which needs
pygame and, without it, fails with a message that names neither ``render_mode`` nor the modes that
work. The four envs therefore take ``"human"`` themselves: without pygame the constructor refuses it,
naming the parameter, what it needs and what else is allowed; with pygame they do what
``HumanRendering`` does, following Gymnasium's convention for the mode: the frame is drawn after every
``reset`` and ``step`` (at most ``render_fps`` frames a second) and ``render()`` returns None.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from schedenv.validation import check_choice

RENDER_MODES: tuple[str, ...] = ("ansi", "rgb_array", "human")
"""Every env's render modes: text, a picture as an RGB array, the picture in a window."""

RENDER_WINDOW = 200
"""Past events a picture shows: the last 200 decision epochs of Malleable's allocation chart and the
last 200 finished jobs of Moldable's busy-processor chart. An env keeps no more than this (and keeps
nothing when no picture is asked for), so memory stays flat and a frame costs the same whatever the
episode length."""

RENDER_JOBS = 20
"""Jobs drawn one colour each per epoch of Malleable's allocation chart (tab20's colours); the rest of
an epoch's jobs are drawn as one grey bar, so an epoch costs at most ``RENDER_JOBS + 1`` bars."""


def check_render_mode(render_mode: Any) -> str | None:
    """``render_mode`` if it is None or one of ``RENDER_MODES`` whose needs are installed, else a ValueError."""
    if render_mode is None:
        return None
    mode = check_choice("render_mode", render_mode, RENDER_MODES)
    if mode == "human" and importlib.util.find_spec("pygame") is None:
        raise ValueError(
            "render_mode='human' is not allowed here: it shows the 'rgb_array' picture in a pygame window, and "
            "pygame is not installed (pip install pygame); or choose render_mode='ansi' (the state as text) or "
            "'rgb_array' (the picture as an array)"
        )
    return mode


class HumanWindow:
    """A pygame window showing RGB frames, at most ``fps`` a second (as Gymnasium's ``HumanRendering``)."""

    def __init__(self, fps: int) -> None:
        self.fps = fps
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: np.ndarray) -> None:
        """Draw ``frame`` (height x width x 3, uint8), opening or resizing the window to fit it."""
        import pygame

        size = (frame.shape[1], frame.shape[0])
        if self._screen is None or self._screen.get_size() != size:
            pygame.init()
            pygame.display.init()
            self._screen = pygame.display.set_mode(size)
            self._clock = pygame.time.Clock()
        self._screen.blit(pygame.surfarray.make_surface(np.transpose(frame, (1, 0, 2))), (0, 0))
        pygame.event.pump()
        self._clock.tick(self.fps)
        pygame.display.flip()

    def close(self) -> None:
        """Close the window if one is open."""
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            pygame.quit()
            self._screen = self._clock = None

    def __getstate__(self) -> dict[str, Any]:
        # a copy (pickle, deepcopy) opens its own window when it first shows a frame
        return {"fps": self.fps, "_screen": None, "_clock": None}
