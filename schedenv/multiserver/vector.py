"""A native batched ``MultiserverJob-v0``: B copies stepped in one compiled call (docs/api/vector.md).

``gym.make_vec("schedenv/MultiserverJob-v0", num_envs=B, **kwargs)`` builds it (the id's
``vector_entry_point``). Each copy runs the single env's compiled step (``kernel.env_step``, inside
``kernel.step_rows``, which also transcribes the select-mode bookkeeping of ``MultiserverJobEnv.step``)
on the family's one state layout (``kernel.MultiserverArrays``, B copies)
and draws its workload with the single env's own draw from its own generator, so a batch reset with
``seed=s`` equals B single envs reset with seeds s, s+1, ... stepped in a loop, i.e.
``gym.make_vec(..., vectorization_mode="sync")``: same observations, rewards, terminations, masks and
``info`` entries, bit for bit (``tests/multiserver/test_vector.py``). Copies are stepped one after the
other in one thread (see ``schedenv.malleable.vector`` for why: run one process per core instead),
the kernels prefetching the next copy's state while they step one (``kernel.prefetch_step``).

Actions: select mode, a (B,) integer array of the single env's ``Discrete`` actions, with
``action_masks()`` giving the (B, max_jobs + 1) int8 masks (what MaskablePPO reads; all ones for a copy
whose episode has just ended); priority mode, a (B, max_jobs) array of scores in [-1, 1] (residual mode:
the same array, each row made scores by the single env's ``residual_scores``). A masked
select action is handled by ``invalid_action`` exactly as in the single env (fallback: commit if
allowed, else slot 0; ``info["invalid_action"]`` flags it; "penalty" also charges
``invalid_action_penalty``; "raise" raises naming the copies and changes nothing). Actions outside the
space raise ``ValueError`` naming the copies, in every mode, and change nothing.

Autoreset, partial resets, seeding, ``final_obs`` / ``final_info`` and ``call`` / ``get_attr`` are
:class:`schedenv.vector.NativeVectorEnv`'s, the same in every family (the contract: the architecture
page, "The batched envs"); this module supplies the batched transition and the ``info`` arrays.

Ranked mode: a (B,) integer array of options with (B, max_jobs) masks; each option becomes the select
step it names and ``kernel.rank_rows`` lists every stepped copy's next options with the single env's
``kernel.rank_options``; a masked option is option 0 (flagged, and charged ``invalid_action_penalty``
under "penalty"; "raise" raises naming the copies).

``info`` holds arrays ``time``, ``n_jobs``, ``n_outside``, ``invalid_action`` and, in select and ranked modes,
``action_mask``, and, for copies whose episode ended, ``episode_metrics`` (a dict of arrays, valid where
``info["_episode_metrics"]``; NaN elsewhere). Per-job ``completed`` records, ``busy_servers`` and
``elapsed`` are not reported (use the single env, or ``schedenv.fastpath.multiserver``, for them).
``render_mode`` is not supported. With ``observe_params=True`` every copy's observation ends with the
scenario's parameters, as the single env's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from schedenv.multiserver import kernel
from schedenv.multiserver.env import MultiserverJobEnv, residual_base, residual_scores
from schedenv.multiserver.metrics import metrics_of_completions
from schedenv.multiserver.workload import PARAMETERS
from schedenv.vector import NativeVectorEnv

METRICS = (
    "n_completed",
    "mean_response_time",
    "mean_slowdown",
    "mean_waiting_time",
    "utilisation",
    "mean_number_in_system",
    "total_flow_time",
    "makespan",
    "overflow_fraction",
)
"""The single env's ``episode_metrics`` keys."""


class MultiserverJobVectorEnv(NativeVectorEnv[MultiserverJobEnv]):
    """``num_envs`` copies of ``MultiserverJobEnv(**kwargs)`` stepped together in compiled code (see module doc)."""

    def __init__(self, num_envs: int = 1, autoreset_mode: str | AutoresetMode = "NextStep", **kwargs: Any) -> None:
        self.template = template = self._set_up(MultiserverJobEnv, num_envs, autoreset_mode, kwargs)
        self.max_jobs, self.n_servers, self.slot_features = (
            template.max_jobs,
            template.n_servers,
            template.slot_features,
        )
        self.ranked = template.action_mode == "ranked"
        self.select = template.action_mode in ("select", "ranked")  # ranked steps are select steps (kernel)
        self._residual_base = residual_base(self.max_jobs) if template.action_mode == "residual" else None
        self._penalty = template.invalid_action_penalty if template.invalid_action == "penalty" else 0.0
        self._packing = kernel.PACKINGS[template.packing]
        b, n = self.num_envs, int(template.jobs[1].size) if template.jobs is not None else template.n_arrivals
        self._state = kernel.MultiserverArrays.zeros(b, n, self.n_servers, self.max_jobs)
        self._ints, self._floats, self._times = self._state.ints, self._state.floats, self._state.times
        self._finished = np.zeros((b, 3, n))
        self._window = np.zeros((b, self.max_jobs), dtype=np.int64)
        shape = self.single_observation_space.shape
        assert shape is not None
        self._obs = np.zeros((b, *shape), dtype=np.float32)
        if template.observe_params:  # constant: the kernels never write past the job features
            self._obs[:, shape[0] - PARAMETERS :] = template.scenario_params
        self._selected = np.zeros((b, self.max_jobs), dtype=np.bool_)
        self._mask = np.zeros((b, self.max_jobs + 1), dtype=np.int8)
        self._rewards, self._terminated = np.zeros(b), np.zeros(b, dtype=np.bool_)
        self._invalid = np.zeros(b, dtype=np.bool_)
        self._no_slots, self._no_scores = np.zeros(b, dtype=np.int64), np.zeros((b, self.max_jobs))
        # Ranked mode: the single env's options, their masks, plans and window-order features, per copy.
        self._options = np.zeros((b, self.max_jobs), dtype=np.int64)
        self._ranked_mask = np.zeros((b, self.max_jobs), dtype=np.int8)
        self._plan = np.zeros((b, self.max_jobs), dtype=np.bool_)
        self._features = np.zeros((b, self.slot_features * self.max_jobs), dtype=np.float32)
        self._rank_work = np.zeros((b, 2 * self.max_jobs + 2 * self.n_servers), dtype=np.int64)

    def action_masks(self) -> np.ndarray:
        """Select mode: (num_envs, max_jobs + 1) int8 masks of the legal actions (the single env's); ranked
        mode: (num_envs, max_jobs) masks of the options."""
        if not self.select:
            raise ValueError(
                f"action_masks() exists only for action_mode='select' or 'ranked'; {self.template.action_mode} mode "
                "takes any scores"
            )
        return (self._ranked_mask if self.ranked else self._mask).copy()

    # ----------------------------------------------------------------- the family's hooks
    def _step_rows(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        slots, scores = self._check_actions(actions, stepping)
        template = self.template
        invalid = np.zeros(0, dtype=np.bool_)
        if self.ranked:
            slots, invalid = self._ranked_slots(slots, stepping)
        kernel.step_rows(
            stepping, slots, scores, self.select, self._penalty, self._packing, self._window, self._obs,
            self._selected, self._mask, self._finished, self._rewards, self._terminated, self._invalid,
            *self._state, self.n_servers, float(template.scale), template.size_known,
        )  # fmt: skip
        if self.ranked:
            self._invalid[stepping] = invalid
            self._rewards[stepping[invalid]] -= self._penalty  # the select steps given to the kernel are valid
            self._rank(stepping)
        return self._rewards, self._terminated

    def _ranked_slots(self, choices: np.ndarray, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ranked mode: the select actions (window slot, or commit = max_jobs) the options ``choices`` name,
        a masked option replaced by option 0 (the single env's fallback), and which copies in ``stepping``
        chose a masked one."""
        rows = np.arange(self.num_envs)
        invalid = self._ranked_mask[rows, choices] == 0
        choices = np.where(invalid, 0, choices)
        slots = self._options[rows, choices]
        return np.where(slots == kernel.RANKED_COMMIT, self.max_jobs, slots), invalid[stepping]

    def _rank(self, rows: np.ndarray) -> None:
        """Ranked mode: each copy's options, masks and observation after its step or reset, as the single env's."""
        kernel.rank_rows(
            rows.astype(np.int64), self._state.jobs_i, self._window, self._selected, self._ints, self._times.shape[1],
            self.n_servers, self._plan, self._features, self._obs, self._options, self._ranked_mask, self._rank_work,
        )  # fmt: skip

    def _check_actions(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The actions as the kernel takes them: (slots, scores); raise for values outside the space and,
        with invalid_action="raise", for masked ones."""
        if not self.select:
            scores = self._real_actions(actions, self.max_jobs, -1.0, 1.0, "scores")
            if self._residual_base is not None:
                scores = residual_scores(scores, self._residual_base)
            return self._no_slots, scores
        if self.ranked:
            choices = self._integer_actions(actions, self.max_jobs, f"0..{self.max_jobs - 1}")
            if self.template.invalid_action == "raise":
                self._refuse_masked(self._ranked_mask, choices, stepping, "an option this decision does not have")
            return choices, self._no_scores
        slots = self._integer_actions(actions, self.max_jobs + 1, f"0..{self.max_jobs}")
        if self.template.invalid_action == "raise":
            why = "an empty, already selected or non-fitting slot, or commit with nothing selected"
            self._refuse_masked(self._mask, slots, stepping, why)
        return slots, self._no_scores

    def _reset_rows(self, rows: np.ndarray) -> None:
        template, state = self.template, self._state
        for i in rows:
            if template.jobs is not None:
                state.times[i], state.needs[i], state.durations[i] = template.jobs
            else:
                generator = self._generators[i]
                assert generator is not None
                state.times[i], state.needs[i], state.durations[i] = template.workload.draw(
                    generator, template.n_arrivals, template.load
                )
        kernel.reset_rows(
            rows.astype(np.int64), self._window, self._obs, self._selected, self._mask, *state, self.n_servers,
            float(template.scale), template.size_known,
        )  # fmt: skip
        self._invalid[rows] = False
        if self.ranked:
            self._rank(rows)

    def _state_info(self) -> dict[str, np.ndarray]:
        n_jobs = self._ints[:, kernel.N_JOBS].copy()
        info = {
            "time": self._floats[:, kernel.TIME].copy(),
            "n_jobs": n_jobs,
            "n_outside": n_jobs - self._ints[:, kernel.N_WINDOW],
            "invalid_action": self._invalid.copy(),
        }
        if self.select:
            info["action_mask"] = self.action_masks()
        return info

    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The single env's ``episode_metrics`` of the copies ``ended``, one value per copy."""
        values: dict[str, list[float]] = {name: [] for name in METRICS}
        ints, floats, finished = self._ints, self._floats, self._finished
        for i in ended:
            n = ints[i, kernel.N_COMPLETED]
            metrics = metrics_of_completions(
                finished[i, kernel.RESPONSE, :n], finished[i, kernel.SLOWDOWN, :n],
                finished[i, kernel.DONE_DURATION, :n], self.n_servers, float(self._times[i, 0]),
                float(floats[i, kernel.TIME]), float(floats[i, kernel.BUSY_TIME]), float(floats[i, kernel.TOTAL_FLOW]),
            )  # fmt: skip
            metrics["overflow_fraction"] = ints[i, kernel.OVERFLOW] / max(int(ints[i, kernel.EPOCHS]), 1)
            for name, value in metrics.items():
                values[name].append(value)
        return {name: np.array(column, dtype=np.float64) for name, column in values.items()}
