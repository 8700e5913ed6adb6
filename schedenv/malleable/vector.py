"""A native batched ``Malleable-v0``: B copies stepped in one compiled call (docs/api/vector.md).

``gym.make_vec("schedenv/Malleable-v0", num_envs=B, **kwargs)`` builds it (the id's
``vector_entry_point``). Each copy runs the single env's compiled step (``kernel.step``) and its
observation (``kernel.observe``), in ``kernel.step_rows``, and draws its workload with the
single env's own draw from its own generator, so a batch reset with ``seed=s`` equals B single envs
reset with seeds s, s+1, ... stepped in a loop (``tests/perf``). Copies are stepped one after the
other in one thread: on a shared 2-core machine (docs/results/speed.md) numba's ``prange`` gained nothing over
one thread (workqueue layer) and its default OpenMP layer was 15x slower (spin-waiting), so run one
process per core instead.

Autoreset, partial resets, seeding, ``final_obs`` / ``final_info`` and ``call`` / ``get_attr`` are
:class:`schedenv.vector.NativeVectorEnv`'s, the same in every family (the contract: the architecture
page, "The batched envs"); this module supplies the batched transition and the ``info`` arrays.
Observations, rewards, terminations and ``final_obs`` equal those of
``gym.make_vec(..., vectorization_mode="sync")`` bit for bit in both modes (``tests/test_vector_sync.py``).

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
from gymnasium.vector import AutoresetMode

from schedenv.malleable.core import GLOBAL_FEATURES, SLOT_FEATURES, weights_of_rows
from schedenv.malleable.env import MalleableEnv
from schedenv.malleable.kernel import REMAINING, WEIGHT, MalleableArrays, reset_rows, step_rows
from schedenv.validation import check_sampled
from schedenv.vector import NativeVectorEnv
from schedenv.workloads import Power


class MalleableVectorEnv(NativeVectorEnv[MalleableEnv]):
    """``num_envs`` copies of ``MalleableEnv(**kwargs)`` stepped together in compiled code (see module doc)."""

    def __init__(self, num_envs: int = 1, autoreset_mode: str | AutoresetMode = "NextStep", **kwargs: Any) -> None:
        self.template = self._set_up(MalleableEnv, num_envs, autoreset_mode, kwargs)
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
        self._length = self._episode_length()
        b, n = self.num_envs, self._length
        self._arrival_times, self._sizes = np.zeros((b, n)), np.zeros((b, n))
        self._ids, self._jobs, self._ints, self._floats = MalleableArrays(b, n).views(slice(None))
        """The kernel's state of every copy (``kernel.MalleableArrays``)."""
        self._window = np.zeros((b, self.max_jobs), dtype=np.int64)
        self._obs = np.zeros((b, self._core_length + self.template.param_features), dtype=np.float32)
        self._rewards, self._terminated = np.zeros(b), np.zeros(b, dtype=np.bool_)

    def _episode_length(self) -> int:
        template = self.template
        if template.jobs is not None:
            return int(template.jobs[1].size)
        return int(template.n_jobs if template.mode == "offline" else template.n_arrivals)

    # ----------------------------------------------------------------- the family's hooks
    def _step_rows(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mode = self.template.action_mode
        if mode == "weights":
            weights = self._real_actions(actions, self.max_jobs + 1, 0.0, 1.0, "weights")
        else:  # the single env's conversion, copy by copy (``core.weights_of_rows``)
            values = self._real_actions(actions, self.template.action_length, -1.0, 1.0, "entries")
            ints, jobs = self._ints, self._jobs
            weights = weights_of_rows(
                values, mode, jobs[:, REMAINING], jobs[:, WEIGHT], self._window, ints[:, 0], ints[:, 2], self._p
            )
        template = self.template
        step_rows(
            stepping, weights, self._ids, self._jobs, self._ints, self._floats, self._window, self._obs,
            self._core_length, self._rewards, self._terminated, self._arrival_times, self._sizes,
            float(template.n_servers), self._p, self._s_n, self._slowdown, float(template.scale), self._fractions,
        )  # fmt: skip
        return self._rewards, self._terminated

    # ----------------------------------------------------------------- internals
    def _reset_rows(self, rows: np.ndarray) -> None:
        template = self.template
        if template.p_range is not None or template.load_range is not None:  # the episode's p, load, workload
            for i in rows:
                template.np_random = self._generators[i]
                self._arrival_times[i], self._sizes[i] = template._draw_episode()
                speedup = template.speedup
                assert isinstance(speedup, Power)
                self._p[i], self._s_n[i] = speedup.p, float(speedup(template.n_servers))
                if template.observe_params:
                    self._obs[i, self._core_length :] = template.scenario_params
        else:  # p, s(N) and the scenario slots are the template's, fixed at construction
            if template.jobs is not None:
                self._arrival_times[rows], self._sizes[rows] = template.jobs  # the same episode every time
            elif template.mode == "offline":
                self._draw_offline_sizes(rows)
            else:
                for i in rows:
                    template.np_random = self._generators[i]
                    self._arrival_times[i], self._sizes[i] = template._draw_workload()
            if template.observe_params:
                self._obs[rows, self._core_length :] = template.scenario_params
        reset_rows(
            rows.astype(np.int64), self._ids, self._jobs, self._ints, self._floats, self._window, self._obs,
            self._core_length, self._arrival_times, self._sizes, self._s_n, self._slowdown, float(template.scale),
        )  # fmt: skip

    def _draw_offline_sizes(self, rows: np.ndarray) -> None:
        """The single env's offline draw (``MalleableEnv._draw_workload``: all jobs at t = 0, ``n_jobs`` sizes
        through ``draw_sizes``) for the copies ``rows``, with one sampled-value check for all of them.

        Offline episodes last about ``n_jobs`` steps, so resets are a large share of a batched step: checked
        copy by copy, ``draw_sizes``'s gate cost more than the compiled steps of a whole episode. A bad draw
        raises the message the single env would raise for the first copy that drew one.
        """
        template = self.template
        law, count, sizes = template.size_dist, self._length, self._sizes
        for i in rows:
            generator = self._generators[i]
            assert generator is not None
            drawn = law.sample(generator, count)
            if not (isinstance(drawn, np.ndarray) and drawn.dtype == np.float64 and drawn.shape == (count,)):
                drawn = check_sampled("size_dist", drawn, count, source=law)
            sizes[i] = drawn
        try:
            check_sampled("size_dist", sizes[rows].ravel(), rows.size * count, source=law)
        except ValueError:
            for i in rows:
                check_sampled("size_dist", sizes[i], count, source=law)
            raise
        self._arrival_times[rows] = 0.0

    def _state_info(self) -> dict[str, np.ndarray]:
        n_jobs = self._ints[:, 0].copy()
        return {
            "time": self._floats[:, 0].copy(),
            "n_jobs": n_jobs,
            "n_outside": np.maximum(n_jobs - self.max_jobs, 0),
            "invalid_action": np.zeros(self.num_envs, dtype=np.bool_),
        }

    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The single env's ``episode_metrics`` (``metrics.METRICS``) of the copies ``ended``, one value per copy."""
        ints, floats = self._ints[ended], self._floats[ended]
        completed = ints[:, 3].astype(np.float64)
        return {
            "n_completed": completed,
            "mean_response_time": floats[:, 1] / completed,
            "mean_slowdown": floats[:, 2] / completed,
            "total_flow_time": floats[:, 1],
            "total_slowdown": floats[:, 2],
            "makespan": floats[:, 0],
            "overflow_fraction": ints[:, 5] / np.maximum(ints[:, 4], 1),
        }
