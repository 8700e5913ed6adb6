"""``toy/Queue-v0``: one server, n jobs queued at time 0, two actions (run the job in slot 0 or 1)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class ToyQueueEnv(gym.Env[np.ndarray, int]):
    """The window is the first two queued jobs; action 1 with one job left falls back to slot 0.

    The reward is minus the flow time accrued while the chosen job runs (every queued job waits),
    so the return is minus the total response time.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    reward_scale = 1.0

    def __init__(self, n_jobs: int = 4, jobs: list[float] | None = None) -> None:
        self.n_jobs = n_jobs if jobs is None else len(jobs)
        self.jobs = None if jobs is None else [float(size) for size in jobs]
        self.observation_space = gym.spaces.Box(0.0, np.inf, shape=(2,), dtype=np.float64)
        self.action_space = gym.spaces.Discrete(2)
        self.queue: list[float] = []
        self.now = 0.0
        self.completions: list[float] = []

    def _observation(self) -> np.ndarray:
        window = self.queue[:2] + [0.0] * (2 - len(self.queue[:2]))
        return np.asarray(window, dtype=np.float64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        sizes = self.jobs if self.jobs is not None else self.np_random.exponential(1.0, self.n_jobs).tolist()
        self.queue, self.now, self.completions = list(sizes), 0.0, []
        return self._observation(), {"action_mask": self._mask()}

    def _mask(self) -> np.ndarray:
        return np.array([True, len(self.queue) > 1])

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        slot = int(action) if self._mask()[int(action)] else 0
        waiting = len(self.queue)
        size = self.queue.pop(slot)
        self.now += size
        self.completions.append(self.now)
        done = not self.queue
        info: dict[str, Any] = {"action_mask": self._mask()}
        if done:
            info["episode_metrics"] = {
                "n_completed": float(len(self.completions)),
                "mean_response_time": float(np.mean(self.completions)),
                "makespan": self.now,
            }
        return self._observation(), -size * waiting, done, False, info
