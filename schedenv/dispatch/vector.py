"""A native batched ``Dispatch-v0``: B copies stepped in one compiled call (docs/api/vector.md).

``gym.make_vec("schedenv/Dispatch-v0", num_envs=B, **kwargs)`` builds it (the id's
``vector_entry_point``). Each copy runs the kernels the single env runs (``kernel.step_rows``, the
compiled transcription of ``DispatchSim`` and of the observation; see ``fast.py``) and draws its
workload with the single env's own draw from its own generator, so a batch reset with
``seed=s`` equals B single envs reset with seeds s, s+1, ... stepped in a loop: same observations,
rewards, terminations and ``info`` entries (``tests/perf``). Copies are stepped one after the other in
one thread (see ``schedenv.malleable.vector`` for why: run one process per core instead).

Actions are a (B,) integer array of the single env's ``Discrete`` actions; ``action_masks()`` gives the
(B, n_actions) int8 masks (what MaskablePPO reads) and ``info["action_mask"]`` the same. A masked action
is handled per copy as the single env's ``invalid_action`` says (default ``"fallback"``: same destination,
the next limit above the one the job exceeded; ``"penalty"`` also subtracts ``invalid_action_penalty``
from that copy's reward; ``"raise"``: ``ValueError`` naming the copies, and nothing changes), so
``action_space.sample()`` is a legal batch of actions. An out-of-range or non-integer action raises
``ValueError`` naming the copies in every mode, and changes nothing.

Autoreset, partial resets, seeding, ``final_obs`` / ``final_info`` and ``call`` / ``get_attr`` are
:class:`schedenv.vector.NativeVectorEnv`'s, the same in every family (the contract: the architecture
page, "The batched envs"); this module supplies the batched transition and the ``info`` arrays.
It equals ``SyncVectorEnv`` over the single env (``vectorization_mode="sync"``) bit for bit, in both
autoreset modes (``tests/dispatch/test_vector_sync.py``, ``tests/test_vector_sync.py``).

``info`` holds arrays ``time``, ``n_jobs``, ``killed``, ``n_outside``, ``invalid_action`` and
``action_mask`` and, for copies whose episode ended, ``episode_metrics`` (a dict of arrays, valid where
``info["_episode_metrics"]``, 0 elsewhere); in ``"SameStep"`` mode it is in ``final_info`` too. Per-job
``completed`` records are not built (use the single env, or ``schedenv.fastpath``, for records).
``observe_params=True`` appends the scenario's parameters as in the single env. ``render_mode`` is not
supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from schedenv.dispatch.env import DispatchEnv
from schedenv.dispatch.fast import INITIAL_CAPACITY
from schedenv.dispatch.kernel import KILLED, N_PRESENT, TIME, DispatchArrays, reset_rows, step_rows
from schedenv.dispatch.metrics import episode_metrics
from schedenv.vector import NativeVectorEnv
from schedenv.workloads import poisson_job_stream


class DispatchVectorEnv(NativeVectorEnv[DispatchEnv]):
    """``num_envs`` copies of ``DispatchEnv(**kwargs)`` stepped together in compiled code (see module doc)."""

    metrics_fill = 0.0  # as SyncVectorEnv fills the copies that did not end

    def __init__(self, num_envs: int = 1, autoreset_mode: str | AutoresetMode = "NextStep", **kwargs: Any) -> None:
        self.template = template = self._set_up(DispatchEnv, num_envs, autoreset_mode, kwargs)
        self.n_actions, self.n_limits = template.n_actions, template.n_limits
        self._limits = np.asarray(template.time_limits, dtype=np.float64)
        self._bounds = np.asarray(template.size_class_bounds, dtype=np.float64)
        self._per_size = template.objective in ("slowdown", "waiting_slowdown")
        self._waiting = template.objective in ("waiting_time", "waiting_slowdown")
        self._mask_table = np.asarray(template._masks)
        b = self.num_envs
        n = int(template.jobs[1].size) if template.jobs is not None else template.n_arrivals
        self._arrival_times, self._sizes = np.zeros((b, n)), np.zeros((b, n))
        self._draws: list[dict[str, Any] | None] = [None] * b
        """Per copy, its generator's state just before it drew its current episode's arrivals (None: not drawn);
        a pickle keeps these instead of the arrivals (``__getstate__``)."""
        self._state = DispatchArrays(b, template.n_hosts, self._bounds.size + 1, min(INITIAL_CAPACITY, n + 1))
        layout = template.layout
        self._obs = np.zeros((b, layout.length), dtype=np.float32)
        self._obs[:, layout.summary_end :] = layout.shown_params  # constant; the kernels write the rest
        self._out_i = np.zeros((b, 3), dtype=np.int64)
        """Per copy: mask row (largest exceeded limit index + 1), queued jobs outside the windows, terminated."""
        self._rewards = np.zeros(b)
        self._invalid = np.zeros(b, dtype=np.bool_)
        """Per copy: its last action was masked (False after a reset)."""
        self._no_records = (np.empty((3, 0)), np.empty((2, 0), dtype=np.int64))
        """The kernels' per-job result arrays, empty: the batched env keeps no per-job records."""

    def action_masks(self) -> np.ndarray:
        """(num_envs, n_actions) int8: 1 where each copy's pending job may go (the single env's masks)."""
        return np.take(self._mask_table, self._out_i[:, 0], axis=0)  # faster than fancy indexing

    # ----------------------------------------------------------------- the family's hooks
    def _step_rows(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        chosen, invalid = self._check_actions(actions)
        state = self._state
        if int(state.si[:, N_PRESENT].max()) >= state.capacity:  # a step admits at most one job
            state.grow()
        step_rows(
            stepping, chosen, *state.views(slice(None)), self._limits, self._bounds, self._per_size, self._waiting,
            self._arrival_times, self._sizes, self._obs, self.template.max_jobs, float(self.template.scale),
            self.template.size_known, self._out_i, self._rewards, *self._no_records,
        )  # fmt: skip
        self._invalid[stepping] = invalid[stepping]
        rewards = self._rewards.copy()
        if self.template.invalid_action == "penalty":
            rewards[self._invalid] -= self.template.invalid_action_penalty
        return rewards, self._out_i[:, 2].astype(np.bool_)

    def _check_actions(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        """The actions to apply (masked ones replaced by their fallback) and which were masked."""
        chosen = self._integer_actions(actions, self.n_actions, f"[0, {self.n_actions})")
        # Row r of the mask table allows exactly the limit indices >= r (r = largest exceeded index + 1).
        destination, limit = np.divmod(chosen, self.n_limits)
        allowed = self._out_i[:, 0]
        masked = limit < allowed
        if masked.any():
            if self.template.invalid_action == "raise":
                raise ValueError(
                    f"actions of copies {np.flatnonzero(masked).tolist()} are masked: their jobs already exceeded "
                    "that limit; see action_masks()"
                )
            chosen = destination * self.n_limits + np.maximum(limit, allowed)
        return chosen, masked

    def _reset_rows(self, rows: np.ndarray) -> None:
        template = self.template
        for i in rows:
            if template.jobs is not None:
                self._arrival_times[i], self._sizes[i] = template.jobs
            else:
                generator = self._generators[i]
                assert generator is not None
                self._draws[i] = generator.bit_generator.state
                self._draw_arrivals(i, generator)
        reset_rows(
            rows.astype(np.int64), *self._state.views(slice(None)), self._limits, self._bounds, self._per_size,
            self._waiting, self._arrival_times, self._sizes, self._obs, template.max_jobs, float(template.scale),
            template.size_known, self._out_i, self._rewards, *self._no_records,
        )  # fmt: skip
        self._invalid[rows] = False

    def _draw_arrivals(self, i: int, generator: np.random.Generator) -> None:
        """Copy ``i``'s arrival times and sizes: the single env's draw (``poisson_job_stream``) from ``generator``."""
        template = self.template
        self._arrival_times[i], self._sizes[i] = poisson_job_stream(
            template.n_arrivals, template.arrival_process, template.size_dist, generator
        )

    def __getstate__(self) -> dict[str, Any]:
        """The env without its drawn arrivals (16 bytes per arrival and copy: 400 MB for 128 copies of the
        preset's 200,000 arrivals), which ``__setstate__`` draws again from ``_draws``, bit for bit."""
        state = self.__dict__.copy()
        if self.template.jobs is None:
            state["_arrival_times"] = state["_sizes"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._arrival_times is None:
            shape = (self.num_envs, self.template.n_arrivals)
            self._arrival_times, self._sizes = np.zeros(shape), np.zeros(shape)
            for i, drawn in enumerate(self._draws):
                if drawn is not None:
                    generator = np.random.Generator(getattr(np.random, drawn["bit_generator"])())
                    generator.bit_generator.state = drawn
                    self._draw_arrivals(i, generator)

    def _state_info(self) -> dict[str, np.ndarray]:
        state = self._state
        return {
            "time": state.sf[:, TIME].copy(),
            "n_jobs": state.si[:, N_PRESENT].copy(),
            "killed": state.si[:, KILLED].astype(np.bool_),
            "n_outside": self._out_i[:, 1].copy(),
            "invalid_action": self._invalid.copy(),
            "action_mask": self.action_masks(),
        }

    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The single env's ``episode_metrics`` of the copies ``ended``, one value per copy."""
        state, template = self._state, self.template
        per_copy = [
            episode_metrics(
                template.n_hosts, template.size_class_bounds, state.hf[i], state.si[i], state.sf[i], state.ct[i]
            )
            for i in ended
        ]
        return {name: np.array([metrics[name] for metrics in per_copy]) for name in per_copy[0]}
