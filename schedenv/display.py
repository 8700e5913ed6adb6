"""``render_mode="human"``: the env shown after every reset and step, in a window or as text.

Gymnasium's ``make`` gives an env that lacks ``"human"`` its ``HumanRendering`` wrapper, which needs
pygame and, without it, fails with a message that names neither ``render_mode`` nor the modes that
work. The four envs therefore take ``"human"`` themselves and follow Gymnasium's convention for the
mode: the env is shown after every ``reset`` and ``step`` and ``render()`` returns None. With pygame
installed they show the ``"rgb_array"`` picture in a window (at most ``render_fps`` frames a second, as
``HumanRendering`` does); without it they print the ``"ansi"`` text to stdout, so that the mode works on
a plain install (Gymnasium's ``check_env`` and RL Zoo's ``enjoy`` try every declared mode). See the
"Rendering" section of docs/envs/index.md.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from schedenv.validation import check_choice

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RENDER_MODES: tuple[str, ...] = ("ansi", "rgb_array", "human")
"""Every env's render modes: text, a picture as an RGB array, the env shown after every reset and step."""

RENDER_WINDOW = 200
"""Past events a picture shows: the last 200 decision epochs of Malleable's allocation chart and the
last 200 finished jobs of Moldable's busy-processor chart. An env keeps no more than this (and keeps
nothing when no picture is asked for), so memory stays flat and a frame costs the same whatever the
episode length."""

RENDER_JOBS = 20
"""Jobs drawn one colour each per epoch of Malleable's allocation chart (tab20's colours); the rest of
an epoch's jobs are drawn as one grey bar, so an epoch costs at most ``RENDER_JOBS + 1`` bars."""


def check_render_mode(render_mode: Any) -> str | None:
    """``render_mode`` if it is None or one of ``RENDER_MODES``, else a ValueError naming them."""
    if render_mode is None:
        return None
    return check_choice("render_mode", render_mode, RENDER_MODES)


def agg_figure(width: float, height: float) -> Figure:
    """A matplotlib figure of ``width`` x ``height`` inches at 80 dpi on the Agg canvas (no window)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=80)
    FigureCanvasAgg(figure)
    return figure


def figure_rgb(figure: Figure) -> np.ndarray:
    """An ``agg_figure`` laid out and drawn: the (height, width, 3) uint8 array of ``render_mode="rgb_array"``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure.tight_layout()
    canvas = figure.canvas
    assert isinstance(canvas, FigureCanvasAgg)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def rendered(
    mode: str, display: HumanDisplay | None, text: Callable[[], str], picture: Callable[[], np.ndarray]
) -> Any:
    """What ``env.render()`` returns in ``mode``: the text, the picture, or None once ``display`` showed it.

    ``text`` and ``picture`` draw the env's current state; only the one the mode needs is called.
    """
    if display is not None:
        display.show(text, picture)
        return None
    return text() if mode == "ansi" else picture()


class HumanDisplay:
    """``render_mode="human"``: a pygame window showing RGB frames, at most ``fps`` a second (as Gymnasium's
    ``HumanRendering``), or the text printed to stdout when pygame is not installed."""

    def __init__(self, fps: int) -> None:
        self.fps = fps
        self.window = importlib.util.find_spec("pygame") is not None
        """True: frames go to a pygame window; False: text goes to stdout."""
        self._screen: Any = None
        self._clock: Any = None

    def show(self, text: Callable[[], str], picture: Callable[[], np.ndarray]) -> None:
        """Show the env: ``picture()`` in the window, or ``text()`` on stdout followed by a blank line."""
        if self.window:
            self._draw(picture())
        else:
            print(text(), end="\n\n", flush=True)

    def _draw(self, frame: np.ndarray) -> None:
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
        return {"fps": self.fps, "window": self.window, "_screen": None, "_clock": None}
