"""A native batched ``Moldable-v0``: B copies stepped in one compiled call (docs/api/vector.md).

``gym.make_vec("schedenv/Moldable-v0", num_envs=B, **kwargs)`` builds it (the id's
``vector_entry_point``). Each copy runs the single env's compiled transition and observation
(``kernel.step_rows``: fallback, ``transition``, ``_observe``) on its own rows of batched arrays, its
mask written from its state only when asked (``kernel.mask_rows``; ``kernel.factored_mask_rows`` in the
factored mode), and draws its job set from its own generator with the single env's draws
(``CirneWorkload.raw_draws`` per copy, then the columns and arrival rows of all the copies resetting
together at once, the same operations element by element; a subclass's
own ``sample`` per copy), so a batch reset with ``seed=s`` equals B single envs reset with seeds s, s+1,
..., i.e. ``gym.make_vec(..., vectorization_mode="sync")``, bit for bit:
observations, rewards, terminations, masks (``tests/moldable/test_vector.py``). Copies are stepped
one after the other in one thread (see ``schedenv.malleable.vector`` for why: run one process per
core instead).

Actions are a (B,) integer array of the single env's ``Discrete`` actions (flat, or the candidates of
``action_mode="ranked"``, ranked by ``kernel.rank`` after each copy's step), or (B, 2) with
``action_mode="factored"``. A masked action is handled per copy as the single env's
``invalid_action`` says (fallback, penalty; "raise" raises ``ValueError`` naming the copies and
changes nothing); ``info["invalid_action"]`` says which copies fell back. A value outside the
action space raises in every mode. ``action_masks()`` gives the (B, n) int8 masks (what MaskablePPO
reads), all ones for a copy whose episode has just ended; a step's ``info["action_mask"]`` is the same
array (written once per state).

Autoreset, partial resets, seeding, ``final_obs`` / ``final_info`` and ``call`` / ``get_attr`` are
:class:`schedenv.vector.NativeVectorEnv`'s, the same in every family (the contract: the architecture
page, "The batched envs"); this module supplies the batched transition and the ``info`` arrays.

``info`` holds arrays ``time``, ``n_jobs``, ``n_queued``, ``n_running``, ``free_procs``,
``n_outside``, ``action_mask`` and ``invalid_action`` and, for copies whose episode ended,
``episode_metrics`` (a dict of arrays, valid where ``info["_episode_metrics"]``). The metrics are
accumulated per completion in the kernel (memory stays flat over long traces), so they equal the
single env's (numpy means over the records) to rounding, not bit for bit. Per-job ``completed``
records are not built (use the single env, or ``schedenv.fastpath``, for records).
``render_mode`` is not supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from schedenv.moldable.core import n_candidates, obs_length, ranked_obs_length
from schedenv.moldable.env import MoldableEnv
from schedenv.moldable.kernel import (
    A_TIME,
    ADVANCE,
    BUSY,
    EPOCHS,
    FREE,
    LAST,
    N_COMPLETED,
    N_INTS,
    N_JOBS,
    N_QUEUED,
    N_RUNNING,
    NEED_QUEUE,
    NEXT_ARRIVAL,
    OVERFLOW,
    Q_COLUMNS,
    R_COLUMNS,
    RUNTIME,
    SLOWDOWN,
    TIME,
    TURNAROUND,
    WAITING,
    WORK_ROWS,
    arrival_arrays,
    arrival_rows,
    factored_mask_rows,
    initial_policy_state,
    mask_rows,
    rank_rows,
    start_rows,
    step_rows,
)
from schedenv.moldable.workload import CirneWorkload, power_of_two_request
from schedenv.validation import check_sampled
from schedenv.vector import NativeVectorEnv

BATCH_QUEUE_ROWS = 256
"""Queue rows per copy the batch starts with (all of an episode's jobs up to this many): growing the queue
copies every copy's rows, so the batch starts with room for the usual episode (pages untouched by a
copy's queue are never committed) and doubles it only for longer ones."""


class MoldableVectorEnv(NativeVectorEnv[MoldableEnv]):
    """``num_envs`` copies of ``MoldableEnv(**kwargs)`` stepped together in compiled code (see module doc)."""

    def __init__(self, num_envs: int = 1, autoreset_mode: str | AutoresetMode = "NextStep", **kwargs: Any) -> None:
        self.template = template = self._set_up(MoldableEnv, num_envs, autoreset_mode, kwargs)
        b, m, n = self.num_envs, template.n_procs, template.n_jobs
        self.max_jobs, self.n_procs, self.n_actions = template.max_jobs, m, template.max_jobs * m + 1
        self._factored = template.action_mode == "factored"
        self._ranked = template.action_mode == "ranked"
        self._penalty = template.invalid_action_penalty if template.invalid_action == "penalty" else 0.0
        self._core_length = obs_length(template.max_jobs, template.max_running)
        ranked_length = ranked_obs_length(template.max_jobs, template.max_running) if self._ranked else 0
        if self._ranked:
            self.n_actions = n_candidates(template.max_jobs)
        self._fixed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if template.fixed_jobs is not None:
            self._fixed = arrival_arrays(template.fixed_jobs)
            self._tables = self._fixed[2]
        else:
            self._tables = np.zeros((0, m))
        self._ints = np.zeros((b, N_INTS), dtype=np.int64)
        self._floats = np.zeros((b, 5))
        self._queue = np.zeros((b, min(n, BATCH_QUEUE_ROWS), Q_COLUMNS))
        self._running, self._done = np.zeros((b, m, R_COLUMNS)), np.zeros((b, m, 6))
        self._arrivals_f, self._arrivals_i = np.zeros((b, n, 5)), np.zeros((b, n, 3), dtype=np.int64)
        core_length = ranked_length or self._core_length
        length = core_length + (template.scenario_params.size if template.observe_params else 0)
        self._obs = np.zeros((b, length), dtype=np.float32)
        if template.observe_params:
            self._obs[:, core_length:] = template.scenario_params  # constant: the kernel writes the core only
        # the ranked mode: the flat observation the step writes, HRF-EASY's state and the candidates per copy
        self._flat_obs = np.zeros((b, self._core_length), dtype=np.float32) if self._ranked else self._obs
        self._ranked_length = ranked_length  # rank_rows writes each copy's self._obs[i, :ranked_length]
        k, jobs = (n_candidates(template.max_jobs), n) if self._ranked else (0, 0)
        self._policy = np.zeros((b, initial_policy_state().size))
        self._turn_of, self._count_of = np.zeros((b, jobs), dtype=np.int64), np.zeros((b, jobs), dtype=np.int64)
        self._work = np.zeros((WORK_ROWS, self._queue.shape[1] if self._ranked else 0))  # one for all copies
        self._counts = np.zeros((b, template.max_jobs), dtype=np.int64)
        self._candidates, self._candidate_mask = np.zeros((b, k, 2), dtype=np.int64), np.zeros((b, k), dtype=np.int8)
        self._masked = np.zeros(b, dtype=np.bool_)
        self._stats = np.zeros((b, 8))
        self._rewards, self._invalid = np.zeros(b), np.zeros(b, dtype=np.bool_)
        self._status = np.zeros(b, dtype=np.int64)
        self._masks: np.ndarray | None = None
        """``action_masks()`` of the current state once written (None: not yet, or the state has changed)."""

    def action_masks(self) -> np.ndarray:
        """(num_envs, n) int8: each copy's mask, as the single env's ``action_masks()``.

        Written once per state (4 MB at B = 1024 with the defaults): this step's ``info["action_mask"]`` and
        every call until the next step or reset return that same array, a new one at every step."""
        if self._masks is None:
            self._masks = self._write_masks()
        return self._masks

    def _write_masks(self) -> np.ndarray:
        """A new array of every copy's mask of the current state (``action_masks``)."""
        if self._ranked:
            return self._candidate_mask.copy()
        if self._factored:  # written off each copy's state, not reduced from its flat mask
            masks = np.empty((self.num_envs, self.max_jobs + 1 + self.n_procs), dtype=np.int8)
            factored_mask_rows(self._ints, self._queue, self._tables, masks)
            return masks
        return self._flat_masks()

    def _flat_masks(self) -> np.ndarray:
        """(num_envs, max_jobs n_procs + 1) int8: each copy's flat mask, written from its state (a fresh array).

        Every entry is written once (``dirty`` the row length): no zeroing pass first. A zeroed 4 MB array
        (B = 1024, the defaults) costs a calloc as large as the masks' whole write."""
        masks = np.empty((self.num_envs, self.max_jobs * self.n_procs + 1), dtype=np.int8)
        mask_rows(self._ints, self._queue, self._tables, masks, masks.shape[1])
        return masks

    # ----------------------------------------------------------------- the family's hooks
    def _step_rows(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        chosen = self._check_actions(actions, stepping)
        self._invalid[self._autoreset] = False
        self._run(stepping, chosen)
        if self._ranked:  # the flat actions stepped were valid: a masked candidate was replaced by candidate 0
            self._invalid[stepping] = self._masked[stepping]
            self._rewards[stepping] -= self._penalty * self._masked[stepping]
        ints = self._ints
        terminated = (ints[:, NEXT_ARRIVAL] == ints[:, N_JOBS]) & (ints[:, N_QUEUED] + ints[:, N_RUNNING] == 0)
        return self._rewards, terminated

    def _check_actions(self, actions: Any, stepping: np.ndarray) -> np.ndarray:
        """The flat actions of all copies (validated); masked ones of stepping copies raise in "raise" mode."""
        k, m = self.max_jobs, self.n_procs
        if self._factored:
            chosen = self._integer_actions(actions, (k + 1, m), f"slot in [0, {k}], procs - 1 in [0, {m})")
            flat = np.where(chosen[:, 0] == k, k * m, chosen[:, 0] * m + chosen[:, 1])
        elif self._ranked:
            chosen = self._integer_actions(actions, self.n_actions, f"[0, {self.n_actions})")
            if self.template.invalid_action == "raise":
                self._refuse_masked(self._candidate_mask, chosen, stepping, "they do not fit or repeat a candidate")
            copies = np.arange(self.num_envs)
            self._masked = self._candidate_mask[copies, chosen] == 0
            pairs = self._candidates[copies, np.where(self._masked, 0, chosen)]
            return np.where(pairs[:, 0] < 0, k * m, pairs[:, 0] * m + pairs[:, 1] - 1)
        else:
            flat = self._integer_actions(actions, self.n_actions, f"[0, {self.n_actions})")
        if self.template.invalid_action == "raise":
            self._refuse_masked(self._flat_masks(), flat, stepping, "they do not fit those copies' states")
        return flat

    def _kernel_arrays(self) -> tuple[Any, ...]:
        return (
            self._ints, self._floats, self._queue, self._running, self._arrivals_f, self._arrivals_i, self._tables,
            self._done, self._flat_obs, self._core_length, self._stats, self._rewards, self._invalid,
            self._status,
        )  # fmt: skip

    def _run(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Step (or start, with ``ADVANCE``) the copies ``rows``; grow the queue while some copy needs it."""
        self._masks = None
        step_rows(rows, actions, self._penalty, *self._kernel_arrays())
        while True:
            waiting = rows[self._status[rows] == NEED_QUEUE]
            if not waiting.size:
                if self._ranked:
                    rank_rows(
                        rows, self._ints, self._floats, self._queue, self._running, self._tables, self._flat_obs,
                        self._policy, self._turn_of, self._count_of, self._work, self._counts, self._candidates,
                        self._candidate_mask, self._obs, self._ranked_length,
                    )  # fmt: skip
                return
            grown = np.zeros((self.num_envs, 2 * self._queue.shape[1], self._queue.shape[2]))
            grown[:, : self._queue.shape[1]] = self._queue
            self._queue = grown
            if self._ranked:  # the allocation turn's scratch: nothing to keep
                self._work = np.zeros((WORK_ROWS, grown.shape[1]))
            advance = np.full(self.num_envs, ADVANCE, dtype=np.int64)
            step_rows(waiting, advance, self._penalty, *self._kernel_arrays())

    def _reset_rows(self, rows: np.ndarray) -> None:
        template = self.template
        if self._fixed is not None:
            self._arrivals_f[rows], self._arrivals_i[rows] = self._fixed[0], self._fixed[1]
        elif _plain_cirne(template.generator):
            self._draw_rows(rows)
        else:  # a subclass's own sample or draw: each copy through it, as the single env
            for i in rows:
                generator = self._generators[i]
                assert generator is not None and template.generator is not None
                jobs = template.generator.draw(generator, template.n_jobs, template.n_procs)
                self._arrivals_f[i], self._arrivals_i[i], _ = arrival_arrays(jobs)
        rows = rows.astype(np.int64)
        self._policy[rows], self._turn_of[rows], self._count_of[rows] = initial_policy_state(), -1, 0
        start_rows(
            rows, self._ints, self._floats, self._arrivals_f, self._stats, self._invalid, template.max_jobs,
            template.n_procs, template.n_jobs, template.max_running, float(template.time_scale),
        )  # fmt: skip
        self._run(rows, np.full(self.num_envs, ADVANCE, dtype=np.int64))

    def _draw_rows(self, rows: np.ndarray) -> None:
        """The arrival rows of copies ``rows`` drawn as ``CirneWorkload.draw`` draws a single env's jobs: each
        copy's ``raw_draws`` from its own generator, then the columns (``CirneWorkload.columns``), the gate on
        the works (``check_sampled``) and the rows (``arrival_rows``, the Downey jobs of ``downey_jobs``:
        size L, power-of-two request, no table) of all of them at once, element by element the same."""
        generator, n, m = self.template.generator, self.template.n_jobs, self.template.n_procs
        assert generator is not None
        draws = []
        for i in rows:
            rng = self._generators[i]
            assert rng is not None
            draws.append(generator.raw_draws(rng, n))
        submit, L, A, sigma = generator.columns(np.stack(draws), m)
        try:
            check_sampled("workload", L.ravel(), L.size, source=generator)
        except ValueError:  # refused as the first copy's own draw would be
            for works in L:
                check_sampled("workload", works, n, source=generator)
        self._arrivals_f[rows], self._arrivals_i[rows] = arrival_rows(
            submit, L, L, A, sigma, np.full(submit.shape, -1, dtype=np.int64), power_of_two_request(A, m)
        )

    def _state_info(self) -> dict[str, np.ndarray]:
        ints = self._ints
        n_queued, n_running = ints[:, N_QUEUED].copy(), ints[:, N_RUNNING].copy()
        return {
            "time": self._floats[:, TIME].copy(),
            "n_jobs": n_queued + n_running,
            "n_queued": n_queued,
            "n_running": n_running,
            "free_procs": ints[:, FREE].copy(),
            "n_outside": n_queued - np.minimum(n_queued, self.max_jobs),
            "action_mask": self.action_masks(),
            "invalid_action": self._invalid.copy(),
        }

    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The single env's ``episode_metrics`` of the copies ``ended``, one value per copy."""
        stats = self._stats[ended]
        completed = self._ints[ended, N_COMPLETED].astype(np.float64)
        first = self._arrivals_f[ended, 0, A_TIME]
        span = stats[:, LAST] - first
        return {
            "n_completed": completed,
            "mean_response_time": stats[:, TURNAROUND] / completed,
            "mean_slowdown": stats[:, SLOWDOWN] / completed,
            "ATT": stats[:, TURNAROUND] / completed,
            "AWT": stats[:, WAITING] / completed,
            "mean_waiting_time": stats[:, WAITING] / completed,
            "ART": stats[:, RUNTIME] / completed,
            "mean_runtime": stats[:, RUNTIME] / completed,
            "utilisation": np.where(span > 0, stats[:, BUSY] / (self.n_procs * np.where(span > 0, span, 1.0)), 0.0),
            "makespan": span,
            "overflow_fraction": stats[:, OVERFLOW] / np.maximum(stats[:, EPOCHS], 1.0),
        }


def _plain_cirne(generator: CirneWorkload | None) -> bool:
    """``generator`` draws with ``CirneWorkload``'s own ``draw`` and ``sample`` (a subclass may override them)."""
    if generator is None:
        return False
    kind = type(generator)
    return kind.draw is CirneWorkload.draw and kind.sample is CirneWorkload.sample
