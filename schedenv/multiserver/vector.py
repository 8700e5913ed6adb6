"""A native batched ``MultiserverJob-v0``: B copies stepped in one compiled call (docs/api/vector.md).

``gym.make_vec("schedenv/MultiserverJob-v0", num_envs=B, **kwargs)`` builds it (the id's
``vector_entry_point``). Each copy runs the single env's compiled step (``kernel.env_step``, inside
``kernel.step_rows``, which also transcribes the select-mode bookkeeping of ``MultiserverJobEnv.step``)
and draws its workload with the single env's own draw from its own generator, so a batch reset with
``seed=s`` equals B single envs reset with seeds s, s+1, ... stepped in a loop, i.e.
``gym.make_vec(..., vectorization_mode="sync")``: same observations, rewards, terminations, masks and
``info`` entries, bit for bit (``tests/multiserver/test_vector.py``). Copies are stepped one after the
other in one thread (see ``schedenv.malleable.vector`` for why: run one process per core instead).

Actions: select mode, a (B,) integer array of the single env's ``Discrete`` actions, with
``action_masks()`` giving the (B, max_jobs + 1) int8 masks (what MaskablePPO reads; all ones for a copy
whose episode has just ended); priority mode, a (B, max_jobs) array of scores in [-1, 1]. A masked
select action is handled by ``invalid_action`` exactly as in the single env (fallback: commit if
allowed, else slot 0; ``info["invalid_action"]`` flags it; "penalty" also charges
``invalid_action_penalty``; "raise" raises naming the copies and changes nothing). Actions outside the
space raise ``ValueError`` naming the copies, in every mode, and change nothing.

Autoreset follows Gymnasium 1.x: ``"NextStep"`` (default: the step after a termination resets that
copy, ignoring its action, with reward 0) or ``"SameStep"`` (the copy resets in the step that
terminates it; ``info["final_obs"]``, an object array as SyncVectorEnv's, and ``info["final_info"]``
hold what it ended with). Options: ``reset(options={"reset_mask": mask})`` resets only the masked copies.

``info`` holds arrays ``time``, ``n_jobs``, ``n_outside``, ``invalid_action`` and, in select mode,
``action_mask``, and, for copies whose episode ended, ``episode_metrics`` (a dict of arrays, valid where
``info["_episode_metrics"]``; NaN elsewhere). Per-job ``completed`` records, ``busy_servers`` and
``elapsed`` are not reported (use the single env, or ``schedenv.fastpath.multiserver``, for them).
``render_mode`` is not supported. With ``observe_params=True`` every copy's observation ends with the
scenario's parameters, as the single env's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from schedenv.multiserver import kernel
from schedenv.multiserver.env import MultiserverJobEnv
from schedenv.multiserver.metrics import metrics_of_completions
from schedenv.multiserver.workload import PARAMETERS
from schedenv.validation import as_real_array
from schedenv.vector_reset import reseed_copies, set_up_batch

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


class MultiserverJobVectorEnv(VectorEnv):
    """``num_envs`` copies of ``MultiserverJobEnv(**kwargs)`` stepped together in compiled code (see module doc)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, autoreset_mode: str | AutoresetMode = "NextStep", **kwargs: Any) -> None:
        self.template = template = set_up_batch(self, MultiserverJobEnv, num_envs, autoreset_mode, kwargs)
        self.max_jobs, self.n_servers, self.slot_features = (
            template.max_jobs,
            template.n_servers,
            template.slot_features,
        )
        self.select = template.action_mode == "select"
        self._penalty = template.invalid_action_penalty if template.invalid_action == "penalty" else 0.0
        self._packing = kernel.PACKINGS[template.packing]
        b, n = self.num_envs, int(template.jobs[1].size) if template.jobs is not None else template.n_arrivals
        self._times, self._durations = np.zeros((b, n)), np.zeros((b, n))
        self._needs = np.zeros((b, n), dtype=np.int64)
        self._jobs_i, self._jobs_f = np.zeros((b, 2, n), dtype=np.int64), np.zeros((b, 3, n))
        self._flags = np.zeros((b, 2, n), dtype=np.bool_)
        self._finished = np.zeros((b, 3, n))
        self._done = np.zeros((b, self.n_servers), dtype=np.int64)
        int_size, float_size = kernel.scratch_sizes(n, self.max_jobs, self.n_servers)
        self._work, self._keys = np.zeros((b, int_size), dtype=np.int64), np.zeros((b, float_size))
        self._window = np.zeros((b, self.max_jobs), dtype=np.int64)
        shape = self.single_observation_space.shape
        assert shape is not None
        self._obs = np.zeros((b, *shape), dtype=np.float32)
        if template.observe_params:  # constant: the kernels never write past the job features
            self._obs[:, shape[0] - PARAMETERS :] = template.scenario_parameters()
        self._selected = np.zeros((b, self.max_jobs), dtype=np.bool_)
        self._mask = np.zeros((b, self.max_jobs + 1), dtype=np.int8)
        self._ints = np.zeros((b, 7), dtype=np.int64)
        self._floats = np.zeros((b, 3))
        self._rewards, self._terminated = np.zeros(b), np.zeros(b, dtype=np.bool_)
        self._invalid = np.zeros(b, dtype=np.bool_)
        self._no_slots, self._no_scores = np.zeros(b, dtype=np.int64), np.zeros((b, self.max_jobs))
        self._generators: list[np.random.Generator | None] = [None] * b
        self._autoreset = np.zeros(b, dtype=np.bool_)
        self._started = False

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
        resetting = np.flatnonzero(self._autoreset)
        stepping = np.flatnonzero(~self._autoreset)
        slots, scores = self._check_actions(actions, stepping)
        template = self.template
        kernel.step_rows(
            stepping, slots, scores, self.select, self._penalty, self._packing, self._jobs_i, self._jobs_f,
            self._flags, self._done, self._window, self._obs, self._selected, self._mask, self._ints, self._floats,
            self._finished, self._times, self._needs, self._durations, self.n_servers, float(template.scale),
            template.size_known, self._rewards, self._terminated, self._invalid, self._keys, self._work,
        )  # fmt: skip
        rewards, terminated = self._rewards.copy(), self._terminated.copy()
        rewards[resetting], terminated[resetting] = 0.0, False
        ended = np.flatnonzero(terminated)
        info: dict[str, Any] = {}
        if ended.size:
            info["episode_metrics"], info["_episode_metrics"] = self._episode_metrics(ended), terminated.copy()
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP:
            if ended.size:
                final_info = info | {key: value for key, value in self._info().items() if not key.startswith("_")}
                final_info |= {f"_{key}": terminated.copy() for key in final_info if not key.startswith("_")}
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in ended:
                    final_obs[i] = self._obs[i].copy()
                info["final_obs"], info["_final_obs"] = final_obs, terminated.copy()
                info["final_info"], info["_final_info"] = final_info, terminated.copy()
                self._reset(ended)
        else:
            self._reset(resetting)
            self._autoreset = terminated
        info.update(self._info())
        return self._obs.copy(), rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), info

    def action_masks(self) -> np.ndarray:
        """Select mode: (num_envs, max_jobs + 1) int8 masks of the legal actions (the single env's)."""
        if not self.select:
            raise ValueError("action_masks() exists only for action_mode='select'; priority mode takes any scores")
        return self._mask.copy()

    # ----------------------------------------------------------------- internals
    def _check_actions(self, actions: Any, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The actions as the kernel takes them: (slots, scores); raise for values outside the space and,
        with invalid_action="raise", for masked ones."""
        b, max_jobs = self.num_envs, self.max_jobs
        if not self.select:
            scores = as_real_array("actions", actions, allow_bool=True)
            if scores.shape != (b, max_jobs):
                raise ValueError(f"actions have shape {scores.shape}; expected {(b, max_jobs)}, one score per slot")
            bad = ~((scores >= -1.0) & (scores <= 1.0)).all(axis=1)  # NaN fails both
            if bad.any():
                raise ValueError(f"actions of copies {np.flatnonzero(bad).tolist()} have scores NaN or outside [-1, 1]")
            return self._no_slots, np.ascontiguousarray(scores)
        chosen = np.asarray(actions)
        if chosen.shape != (b,) or chosen.dtype.kind not in "iu":
            raise ValueError(
                f"actions with shape {chosen.shape} and dtype {chosen.dtype} are not allowed; "
                f"give ({b},) integers in 0..{max_jobs}"
            )
        slots = chosen.astype(np.int64)
        outside = (slots < 0) | (slots > max_jobs)
        if outside.any():
            raise ValueError(
                f"actions of copies {np.flatnonzero(outside).tolist()} are out of range; each must lie in 0..{max_jobs}"
            )
        if self.template.invalid_action == "raise":
            masked = stepping[self._mask[stepping, slots[stepping]] == 0]
            if masked.size:
                raise ValueError(
                    f"actions of copies {masked.tolist()} are masked: an empty, already selected or non-fitting "
                    "slot, or commit with nothing selected; see action_masks()"
                )
        return slots, self._no_scores

    def _reset(self, rows: np.ndarray) -> None:
        template = self.template
        for i in rows:
            if template.jobs is not None:
                self._times[i], self._needs[i], self._durations[i] = template.jobs
            else:
                generator = self._generators[i]
                assert generator is not None
                self._times[i], self._needs[i], self._durations[i] = template.workload.draw(
                    generator, template.n_arrivals, template.load
                )
        kernel.reset_rows(
            rows.astype(np.int64), self._jobs_i, self._jobs_f, self._flags, self._window, self._obs, self._selected,
            self._mask, self._ints, self._floats, self._times, self._needs, self._durations, self.n_servers,
            float(template.scale), template.size_known, self._keys, self._work,
        )  # fmt: skip
        self._invalid[rows] = False

    def _info(self) -> dict[str, Any]:
        everyone = np.ones(self.num_envs, dtype=np.bool_)
        n_jobs = self._ints[:, kernel.N_JOBS].copy()
        info = {
            "time": self._floats[:, kernel.TIME].copy(),
            "_time": everyone,
            "n_jobs": n_jobs,
            "_n_jobs": everyone,
            "n_outside": n_jobs - self._ints[:, kernel.N_WINDOW],
            "_n_outside": everyone,
            "invalid_action": self._invalid.copy(),
            "_invalid_action": everyone,
        }
        if self.select:
            info["action_mask"], info["_action_mask"] = self._mask.copy(), everyone
        return info

    def _episode_metrics(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The single env's ``episode_metrics`` for the copies ``ended`` (arrays; NaN elsewhere)."""
        values = {name: np.full(self.num_envs, np.nan) for name in METRICS}
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
                values[name][i] = value
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[ended] = True
        return values | {f"_{name}": mask for name in METRICS}
