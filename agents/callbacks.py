"""Training callbacks: evaluation against the family's paper policy, and atomic checkpoints.

``ReferenceEvalCallback`` plays the current policy on fixed *validation* seeds
(``agents.protocol.VALIDATION_SEEDS``, disjoint from training and test seeds) in the native batched
env and logs its objective, the paper policy's (``baselines.reference(env_id)``, evaluated once on
the same seeds, in the env's default action mode as in the held-out assessment) and their ratio, the
number an RL result on these problems is judged by (docs/rl/index.md).
The best model so far is kept as ``best_model.zip``; each evaluation prints one plain line to stderr.
``AtomicCheckpointCallback`` saves at the start of a rollout (after an update), with the training
state of ``agents.venv``, so a resumed run continues exactly where the interrupted one was.
"""

from __future__ import annotations

import io
import json
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecNormalize

import baselines
from agents.assess import baseline_kwargs, play_batched
from agents.contender import AgentContender, load_normalizer
from agents.runs import (
    BEST_MODEL,
    BEST_VECNORMALIZE,
    EVALUATIONS,
    checkpoint_paths,
    deferred_interrupt,
    read_evaluations,
    write_atomic,
)
from agents.venv import TrainingState
from schedenv.evaluation import EvaluationResult
from schedenv.fastpath import evaluate_fast


def save_model(model: Any, normalizer: VecNormalize | None, model_path: Path, vecnormalize_path: Path) -> None:
    """Save statistics, then the model, each atomically (the model's presence marks completeness); a Ctrl-C
    meanwhile is raised when both are written (``agents.runs.deferred_interrupt``). The rollout buffer's class
    (``agents.buffers``) is left out, so that plain SB3 / sb3-contrib load the file without this package."""
    with deferred_interrupt():
        if normalizer is not None:
            write_atomic(vecnormalize_path, pickle.dumps(normalizer))
        buffer = io.BytesIO()
        model.save(buffer, exclude=["rollout_buffer_class"])
        write_atomic(model_path, buffer.getvalue())


class AtomicCheckpointCallback(BaseCallback):
    """A complete checkpoint in ``run_dir/checkpoints`` every ``every`` env steps (see ``agents.runs``).

    Checkpoints are taken when a rollout starts, i.e. between the previous update and the next
    sample, so that nothing half-collected is lost; the interval is therefore rounded up to whole
    rollouts.
    """

    def __init__(self, run_dir: Path, every: int, save_replay_buffer: bool) -> None:
        super().__init__()
        self.run_dir = Path(run_dir)
        self.every = every
        self.save_replay_buffer = save_replay_buffer
        self._last_saved = -1
        self.seconds = 0.0
        """Wall time spent writing checkpoints so far."""

    def _on_training_start(self) -> None:
        self._last_saved = self.model.num_timesteps

    def _on_rollout_start(self) -> None:
        if self.model.num_timesteps - self._last_saved >= self.every:
            self.save()

    def _on_step(self) -> bool:
        return True

    def save(self) -> None:
        """Write the checkpoint at the model's current step count (the training state first, the model last;
        a Ctrl-C meanwhile is raised when the whole checkpoint is written)."""
        started = time.perf_counter()
        steps = self.model.num_timesteps
        paths = checkpoint_paths(self.run_dir, steps)
        with deferred_interrupt():
            state = TrainingState.capture(self.model)
            if state is not None:
                write_atomic(paths.state, pickle.dumps(state))
            if self.save_replay_buffer:
                buffer = io.BytesIO()
                self.model.save_replay_buffer(buffer)  # type: ignore[attr-defined]
                write_atomic(paths.replay_buffer, buffer.getvalue())
            save_model(self.model, self.model.get_vec_normalize_env(), paths.model, paths.vecnormalize)
        self._last_saved = steps
        self.seconds += time.perf_counter() - started


class RolloutTimer(BaseCallback):
    """Wall time of the rollouts and of the updates between them, for ``agents.train.TrainResult.phases``.

    First in the callback list, so that what the other callbacks do at a rollout's start or at a step
    (checkpoints, validations) falls inside the measured rollout windows; ``excluded()`` (their total
    seconds so far) is read at each window's ends and its growth left out of the rollout time.
    """

    def __init__(self, excluded: Callable[[], float]) -> None:
        super().__init__()
        self.excluded = excluded
        self.rollout_seconds = 0.0
        """Time inside rollouts so far (the env steps and the policy's forward passes), ``excluded`` left out."""
        self.update_seconds = 0.0
        """Time from each rollout's end to the next rollout's start or the end of training (the update and its
        logging)."""
        self.last_end: float | None = None
        """When the last rollout ended (None before the first, and again once training ended)."""
        self._started, self._excluded_at_start = 0.0, 0.0

    def _on_rollout_start(self) -> None:
        self._started = time.perf_counter()
        if self.last_end is not None:
            self.update_seconds += self._started - self.last_end
        self._excluded_at_start = self.excluded()

    def _on_rollout_end(self) -> None:
        self.last_end = time.perf_counter()
        self.rollout_seconds += self.last_end - self._started - (self.excluded() - self._excluded_at_start)

    def _on_training_end(self) -> None:  # the last update, after the last rollout
        if self.last_end is not None:
            self.update_seconds += time.perf_counter() - self.last_end
            self.last_end = None

    def _on_step(self) -> bool:
        return True


class ReferenceEvalCallback(BaseCallback):
    """Log the agent's objective relative to the paper policy on validation seeds, every ``every`` env steps.

    TensorBoard keys: ``eval/<metric>``, ``eval/reference_<metric>``, ``eval/ratio`` (agent over
    paper policy; < 1 means the agent is better). Each evaluation is also appended as one JSON line
    to ``run_dir/evaluations.jsonl`` (with the process's CPU time so far, the budget spent) and
    printed as one plain line on stderr. When the ratio is the best so far, the model is saved as
    ``best_model.zip`` (statistics in ``best_vecnormalize.pkl``). ``train`` adds a last evaluation
    of the final model.

    With ``restore_above`` r >= 1, an evaluation whose ratio exceeds r times the best so far puts the best
    model back (``restore_best``: its policy, its optimizer state and its normalizer statistics) and training
    goes on from there; the row says ``"restored": true``. A fine-tuning that leaves a warm start for the
    worse then starts again from the best point instead of wandering (docs/rl/index.md, "Warm start").
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any],
        seeds: Sequence[int],
        metric: str,
        every: int,
        run_dir: Path,
        uses_masks: bool,
        restore_above: float = 0.0,
    ) -> None:
        super().__init__()
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.seeds = list(seeds)
        self.metric = metric
        self.every = every
        self.run_dir = Path(run_dir)
        self.uses_masks = uses_masks
        self.restore_above = restore_above
        self.reference = baselines.reference(env_id)
        self._reference_result: EvaluationResult | None = None
        self._last_evaluated = 0
        self.best_ratio = float("inf")
        """The lowest ratio so far (the model saved as ``best_model.zip``)."""
        self.history: list[dict[str, Any]] = []
        """Every evaluation so far (the rows of ``evaluations.jsonl``)."""
        self.initial_row: dict[str, Any] | None = None
        """A ``measure`` of the policy before the first update (a warm start's clone), recorded as the run's
        first evaluation when training starts, so that it competes for ``best_model.zip``."""
        self.seconds = 0.0
        """Wall time of the validations so far (the paper policy's included) and of saving ``best_model.zip``."""

    def _on_training_start(self) -> None:
        self._last_evaluated = self.model.num_timesteps
        rows = read_evaluations(self.run_dir)  # a resumed run keeps its best model
        self.best_ratio = min((float(r["ratio"]) for r in rows), default=float("inf"))
        if self.initial_row is not None and not any(r["timesteps"] == self.initial_row["timesteps"] for r in rows):
            self._record(self.initial_row)

    def _on_step(self) -> bool:
        if self.model.num_timesteps - self._last_evaluated >= self.every:
            self.evaluate_now()
        return True

    def measure(self, model: BaseAlgorithm) -> dict[str, Any]:
        """``model`` and the paper policy on the validation seeds: the row of one evaluation (nothing logged)."""
        began = time.perf_counter()
        if self._reference_result is None:
            # in the env's default action mode, as the held-out assessment plays it (the same episodes): in
            # an action mode such as "exponent" the paper policy would act through a search of that mode
            reference_kwargs = baseline_kwargs(self.env_kwargs)
            self._reference_result = evaluate_fast(self.env_id, self.reference, self.seeds, **reference_kwargs)
        started = time.perf_counter()
        agent = AgentContender("agent", model, model.get_vec_normalize_env(), self.uses_masks)
        rows = play_batched(agent.act_batch, self.env_id, self.seeds, self.env_kwargs)
        mine = np.array([row[self.metric] for row in rows])
        theirs = self._reference_result.values(self.metric)
        self.seconds += time.perf_counter() - began
        return {
            "timesteps": int(model.num_timesteps),
            "metric": self.metric,
            "mean": float(mine.mean()),
            "reference": self.reference,
            "reference_mean": float(theirs.mean()),
            "ratio": float(mine.mean() / theirs.mean()),
            "validation_seeds": [self.seeds[0], self.seeds[-1]],
            "seconds": time.perf_counter() - started,
            "process_cpu_seconds": time.process_time(),
        }

    def evaluate_now(self) -> dict[str, Any]:
        """Evaluate the current policy and the paper policy on the validation seeds; log and return the row."""
        self._last_evaluated = self.model.num_timesteps
        return self._record(self.measure(self.model))

    def restore_best(self) -> None:
        """Load ``best_model.zip`` into the model being trained (policy and optimizer state, SB3's
        ``set_parameters``) and ``best_vecnormalize.pkl``'s statistics into its normalizer."""
        started = time.perf_counter()
        self.model.set_parameters(str(self.run_dir / BEST_MODEL), exact_match=True, device=self.model.device)
        normalizer = self.model.get_vec_normalize_env()
        best = load_normalizer(self.run_dir / BEST_VECNORMALIZE)
        if normalizer is not None and best is not None:
            for statistics in ("obs_rms", "ret_rms"):  # obs_rms only where observations are normalised
                if statistics in vars(best):  # not getattr: an unpickled normalizer has no venv to ask
                    setattr(normalizer, statistics, vars(best)[statistics])
        self.seconds += time.perf_counter() - started

    def _record(self, row: dict[str, Any]) -> dict[str, Any]:
        """Keep the current model as ``best_model.zip`` if ``row`` is the best so far; log and append ``row``."""
        if row["ratio"] < self.best_ratio:
            started = time.perf_counter()
            self.best_ratio = row["ratio"]
            save_model(
                self.model,
                self.model.get_vec_normalize_env(),
                self.run_dir / BEST_MODEL,
                self.run_dir / BEST_VECNORMALIZE,
            )
            self.seconds += time.perf_counter() - started
        self.logger.record(f"eval/{self.metric}", row["mean"])
        self.logger.record(f"eval/reference_{self.metric}", row["reference_mean"])
        self.logger.record("eval/ratio", row["ratio"])
        print(
            f"eval {row['timesteps']} steps: {self.metric} {row['mean']:.6g} vs {self.reference} "
            f"{row['reference_mean']:.6g}, ratio {row['ratio']:.4f} (best {self.best_ratio:.4f}; "
            f"{len(self.seeds)} validation seeds; {row['process_cpu_seconds'] / 60:.1f} CPU-min)",
            file=sys.stderr,
            flush=True,
        )
        if self.restore_above and row["ratio"] > self.best_ratio * self.restore_above:
            row = {**row, "restored": True}
            self.restore_best()
            print(
                f"ratio {row['ratio']:.4f} > {self.restore_above:g} x best {self.best_ratio:.4f}: "
                "training goes on from the best model",
                file=sys.stderr,
                flush=True,
            )
        self.history.append(row)
        path = self.run_dir / EVALUATIONS
        previous = path.read_bytes() if path.is_file() else b""
        write_atomic(path, previous + (json.dumps(row) + "\n").encode())
        return row
