"""A native batched ``Malleable-v0``: B copies stepped in one compiled call (docs/api/vector.md).

``gym.make_vec("schedenv/Malleable-v0", num_envs=B, **kwargs)`` builds it (the id's
``vector_entry_point``). Each copy runs the single env's compiled step (``kernel.step``) and its
observation (``kernel.observe``), in ``kernel.step_rows``, and draws its workload with the
single env's own draw from its own generator, so a batch reset with ``seed=s`` equals B single envs
reset with seeds s, s+1, ... stepped in a loop (``tests/perf``). Copies are stepped one after the
other in one thread: on a shared 2-core machine (docs/results/speed.md) numba's ``prange`` gained nothing over
one thread (workqueue layer) and its default OpenMP layer was 15x slower (spin-waiting), so run one
process per core instead.

Autoreset follows Gymnasium 1.x: ``"NextStep"`` (default: the step after a termination resets that
copy, ignoring its action, with reward 0) or ``"SameStep"`` (the copy resets in the step that
terminates it; ``info["final_obs"]`` and ``info["final_info"]`` hold what it ended with: as in
``SyncVectorEnv``, ``final_obs`` is an object array of shape (B,) holding the ended copies' last
observations and None elsewhere). Options: ``reset(options={"reset_mask": mask})`` resets only the
masked copies. Observations, rewards, terminations and ``final_obs`` equal those of
``gym.make_vec(..., vectorization_mode="sync")`` bit for bit in both modes (``tests/perf``).

``info`` holds arrays ``time``, ``n_jobs``, ``n_outside`` and ``invalid_action`` (always False; every
action in the Box is valid) with their masks, and, for copies whose episode ended, ``episode_metrics``
(a dict of arrays, valid where ``info["_episode_metrics"]``, NaN elsewhere). Per-job ``completed``
records are not built (use the single env, or ``schedenv.fastpath``, for records).
Every keyword of the single env is accepted (``allocation``, ``observe_params`` and ``p_range``
included: with ``p_range`` each copy draws its own p at its reset, as its single env would).
Only s(k) = k^p speedups are compiled; ``render_mode`` is not supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from schedenv.malleable.core import GLOBAL_FEATURES, SLOT_FEATURES
from schedenv.malleable.env import MalleableEnv
from schedenv.malleable.kernel import reset_rows, step_rows
from schedenv.malleable.metrics import METRICS
from schedenv.validation import as_real_array
from schedenv.vector_reset import reseed_copies, set_up_batch
from schedenv.workloads import Power


class MalleableVectorEnv(VectorEnv):
    """``num_envs`` copies of ``MalleableEnv(**kwargs)`` stepped together in compiled code (see module doc)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, autoreset_mode: str | AutoresetMode = "NextStep", **kwargs: Any) -> None:
        self.template = set_up_batch(self, MalleableEnv, num_envs, autoreset_mode, kwargs)
        if not isinstance(self.template.speedup, Power):
            raise ValueError(
                f"speedup={self.template.speedup!r} has no compiled batched path (s(k) = k^p only); "
                "use gym.make_vec(..., vectorization_mode='sync')"
            )
        self.max_jobs = self.template.max_jobs
        self._p = np.full(self.num_envs, self.template.speedup.p)
        self._s_n = np.full(self.num_envs, float(self.template.speedup(self.template.n_servers)))
        """Per copy: p and s(N) (they differ between copies only with ``p_range``)."""
        self._slowdown = self.template.objective == "slowdown"
        self._fractions = self.template.allocation == "fractions"
        self._core_length = SLOT_FEATURES * self.max_jobs + GLOBAL_FEATURES
        self._generators: list[np.random.Generator | None] = [None] * self.num_envs
        self._length = self._episode_length()
        b, n = self.num_envs, self._length
        self._arrival_times, self._sizes = np.zeros((b, n)), np.zeros((b, n))
        self._ids, self._jobs = np.zeros((b, 3, n), dtype=np.int64), np.zeros((b, 7, n))
        self._ints = np.zeros((b, 6), dtype=np.int64)
        """Per copy: n_jobs, next_arrival, n_window, n_completed, epochs, overflow epochs."""
        self._floats = np.zeros((b, 3))
        """Per copy: time, sum of response times, sum of slowdowns."""
        self._window = np.zeros((b, self.max_jobs), dtype=np.int64)
        self._obs = np.zeros((b, self._core_length + self.template.param_features), dtype=np.float32)
        self._rewards, self._terminated = np.zeros(b), np.zeros(b, dtype=np.bool_)
        self._autoreset = np.zeros(b, dtype=np.bool_)
        self._started = False

    def _episode_length(self) -> int:
        template = self.template
        if template.jobs is not None:
            return int(template.jobs[1].size)
        return int(template.n_jobs if template.mode == "offline" else template.n_arrivals)

    # ----------------------------------------------------------------- Gymnasium VectorEnv API
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        indices = reseed_copies(self._generators, seed, options)
        self._reset(indices)
        self._autoreset[indices] = False
        self._started = True
        return self._obs.copy(), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        weights = self._check_actions(actions)
        resetting = np.flatnonzero(self._autoreset)
        stepping = np.flatnonzero(~self._autoreset)
        template = self.template
        step_rows(
            stepping, weights, self._ids, self._jobs, self._ints, self._floats, self._window, self._obs,
            self._core_length, self._rewards, self._terminated, self._arrival_times, self._sizes,
            float(template.n_servers), self._p, self._s_n, self._slowdown, float(template.scale), self.max_jobs,
            self._fractions,
        )  # fmt: skip
        rewards, terminated = self._rewards.copy(), self._terminated.copy()
        rewards[resetting], terminated[resetting] = 0.0, False
        ended = np.flatnonzero(terminated)
        info: dict[str, Any] = {}
        if ended.size:
            info["episode_metrics"], info["_episode_metrics"] = self._episode_metrics(ended), terminated.copy()
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP:
            if ended.size:
                # As SyncVectorEnv: final_obs is an object array holding the ended copies' observations.
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in ended:
                    final_obs[i] = self._obs[i].copy()
                final_info = info | self._info(terminated)
                info["final_obs"], info["_final_obs"] = final_obs, terminated.copy()
                info["final_info"] = final_info
                info["_final_info"] = terminated.copy()
                self._reset(ended)
        else:
            self._reset(resetting)
            self._autoreset = terminated
        info.update(self._info())
        return self._obs.copy(), rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), info

    # ----------------------------------------------------------------- internals
    def _check_actions(self, actions: Any) -> np.ndarray:
        weights = as_real_array("actions", actions, allow_bool=True)
        expected = (self.num_envs, self.max_jobs + 1)
        if weights.shape != expected:
            raise ValueError(f"actions have shape {weights.shape}; expected {expected}")
        if not (weights >= 0.0).all() or not (weights <= 1.0).all():  # NaN fails both
            bad = np.flatnonzero(~((weights >= 0.0) & (weights <= 1.0)).all(axis=1))
            raise ValueError(f"actions of copies {bad.tolist()} have entries that are NaN or outside [0, 1]")
        return np.ascontiguousarray(weights)

    def _reset(self, rows: np.ndarray) -> None:
        template = self.template
        for i in rows:
            template.np_random = self._generators[i]
            self._arrival_times[i], self._sizes[i] = template._draw_episode()
            speedup = template.speedup
            assert isinstance(speedup, Power)
            self._p[i], self._s_n[i] = speedup.p, float(speedup(template.n_servers))
            if template.observe_params:
                self._obs[i, self._core_length :] = template.scenario_features()
        reset_rows(
            rows.astype(np.int64), self._ids, self._jobs, self._ints, self._floats, self._window, self._obs,
            self._core_length, self._arrival_times, self._sizes, self._s_n, self._slowdown, float(template.scale),
            self.max_jobs,
        )  # fmt: skip

    def _info(self, present: np.ndarray | None = None) -> dict[str, Any]:
        """The per-copy info arrays, each with its mask (``present``: all copies when None)."""
        n_jobs = self._ints[:, 0].copy()
        values = {
            "time": self._floats[:, 0].copy(),
            "n_jobs": n_jobs,
            "n_outside": np.maximum(n_jobs - self.max_jobs, 0),
            "invalid_action": np.zeros(self.num_envs, dtype=np.bool_),
        }
        mask = np.ones(self.num_envs, dtype=np.bool_) if present is None else present
        return values | {f"_{name}": mask.copy() for name in values}

    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The single env's ``episode_metrics`` for the copies ``ended`` (arrays; NaN elsewhere)."""
        ints, floats = self._ints, self._floats
        values = {name: np.full(self.num_envs, np.nan) for name in METRICS}
        completed = ints[ended, 3].astype(np.float64)
        values["n_completed"][ended] = completed
        values["mean_response_time"][ended] = floats[ended, 1] / completed
        values["mean_slowdown"][ended] = floats[ended, 2] / completed
        values["total_flow_time"][ended] = floats[ended, 1]
        values["total_slowdown"][ended] = floats[ended, 2]
        values["makespan"][ended] = floats[ended, 0]
        values["overflow_fraction"][ended] = ints[ended, 5] / np.maximum(ints[ended, 4], 1)
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[ended] = True
        return values | {f"_{name}": mask for name in METRICS}
