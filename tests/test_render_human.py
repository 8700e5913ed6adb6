"""``render_mode="human"`` (``schedenv.display``): the ``"ansi"`` text on stdout without pygame, the picture in a
window with it.

pygame is not a dependency, so the window is checked against a stand-in module that records what it is
asked to draw: after every reset and step the env shows exactly the frame ``render_mode="rgb_array"``
returns at the same point of the same episode.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import schedenv


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_human_without_pygame_prints_the_ansi_text_after_every_reset_and_step(
    env_id: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)  # what importlib finds when pygame is not installed
    human = gym.make(env_id, render_mode="human")
    text = gym.make(env_id, render_mode="ansi")
    expected = []
    for env in (human, text):
        env.reset(seed=5)
    human.action_space.seed(5)
    expected.append(text.render())
    for _ in range(3):
        action = human.action_space.sample()
        human.step(action)
        text.step(action)
        expected.append(text.render())
    assert human.render() is None  # Gymnasium's human convention: render() shows and returns nothing
    expected.append(expected[-1])
    assert capsys.readouterr().out == "".join(f"{frame}\n\n" for frame in expected)
    assert len(set(expected)) > 1  # the text follows the episode
    human.close()


class _Screen:
    def __init__(self, size: tuple[int, int], shown: list[np.ndarray]) -> None:
        self.size, self.shown = size, shown

    def get_size(self) -> tuple[int, int]:
        return self.size

    def blit(self, surface: np.ndarray, position: tuple[int, int]) -> None:
        assert position == (0, 0)
        self.shown.append(np.transpose(surface, (1, 0, 2)))  # back from pygame's (width, height) layout


def _fake_pygame(shown: list[np.ndarray], events: list[str]) -> types.ModuleType:
    """Just what ``HumanDisplay`` calls; frames blitted go to ``shown``, the other calls to ``events``."""
    pygame: Any = types.ModuleType("pygame")
    pygame.__spec__ = importlib.machinery.ModuleSpec("pygame", None)
    pygame.init = lambda: events.append("init")
    pygame.quit = lambda: events.append("quit")
    pygame.event = types.SimpleNamespace(pump=lambda: events.append("pump"))
    pygame.display = types.SimpleNamespace(
        init=lambda: None,
        set_mode=lambda size: _Screen(size, shown),
        flip=lambda: events.append("flip"),
        quit=lambda: events.append("display quit"),
    )
    pygame.time = types.SimpleNamespace(Clock=lambda: types.SimpleNamespace(tick=lambda fps: events.append(f"{fps}")))
    pygame.surfarray = types.SimpleNamespace(make_surface=lambda array: array.copy())
    return pygame


@pytest.mark.parametrize("env_id", schedenv.ENV_IDS)
def test_human_shows_the_rgb_array_frame_after_every_reset_and_step(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[np.ndarray] = []
    events: list[str] = []
    monkeypatch.setitem(sys.modules, "pygame", _fake_pygame(shown, events))
    human = gym.make(env_id, render_mode="human")
    picture = gym.make(env_id, render_mode="rgb_array")
    assert human.unwrapped.metadata["render_modes"] == ["ansi", "rgb_array", "human"]
    expected = []
    for env in (human, picture):
        env.reset(seed=3)
        env.action_space.seed(3)
    expected.append(picture.render())
    for _ in range(2):
        action = human.action_space.sample()
        human.step(action)
        picture.step(action)
        expected.append(picture.render())
    assert human.render() is None  # Gymnasium's human convention: render() draws and returns nothing
    assert len(shown) == 4 and events.count("flip") == 4 and events.count("4") == 4  # render_fps = 4
    for frame, reference in zip(shown[:3], expected, strict=True):
        np.testing.assert_array_equal(frame, reference)
    human.close()
    assert events[-2:] == ["display quit", "quit"]
