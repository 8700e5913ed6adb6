"""Training callbacks: evaluation against the family's paper policy, and atomic checkpoints.

``ReferenceEvalCallback`` runs the current policy through ``schedenv.evaluation.evaluate`` on
fixed seeds (disjoint from the training seeds) and logs its objective, the paper policy's
(``baselines.reference(env_id)``, evaluated once on the same seeds) and their ratio: the number
an RL result on these problems is judged by (DESIGN §6).
"""

from __future__ import annotations

import io
import json
import pickle
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecNormalize

import baselines
from agents.contender import AgentContender
from agents.runs import EVALUATIONS, checkpoint_paths, write_atomic
from schedenv.evaluation import EvaluationResult, evaluate


def save_model(model: Any, normalizer: VecNormalize | None, model_path: Path, vecnormalize_path: Path) -> None:
    """Save statistics, then the model, each atomically (the model's presence marks completeness)."""
    if normalizer is not None:
        write_atomic(vecnormalize_path, pickle.dumps(normalizer))
    buffer = io.BytesIO()
    model.save(buffer)
    write_atomic(model_path, buffer.getvalue())


class AtomicCheckpointCallback(BaseCallback):
    """Every ``every`` env steps, a complete checkpoint in ``run_dir/checkpoints`` (see ``agents.runs``)."""

    def __init__(self, run_dir: Path, every: int, n_envs: int, save_replay_buffer: bool) -> None:
        super().__init__()
        self.run_dir = Path(run_dir)
        self.every_calls = max(every // n_envs, 1)
        self.save_replay_buffer = save_replay_buffer

    def _on_step(self) -> bool:
        if self.n_calls % self.every_calls == 0:
            self.save()
        return True

    def save(self) -> None:
        """Write the checkpoint at the model's current step count."""
        paths = checkpoint_paths(self.run_dir, self.model.num_timesteps)
        if self.save_replay_buffer:
            buffer = io.BytesIO()
            self.model.save_replay_buffer(buffer)  # type: ignore[attr-defined]
            write_atomic(paths.replay_buffer, buffer.getvalue())
        save_model(self.model, self.model.get_vec_normalize_env(), paths.model, paths.vecnormalize)


class ReferenceEvalCallback(BaseCallback):
    """Log the agent's objective relative to the paper policy on fixed seeds, every ``every`` env steps.

    TensorBoard keys: ``eval/<metric>``, ``eval/reference_<metric>``, ``eval/ratio`` (agent over
    paper policy; < 1 means the agent is better). Each evaluation is also appended as one JSON line
    to ``run_dir/evaluations.jsonl``, with the process's CPU time so far (the CPU budget spent).
    ``train`` adds a last evaluation of the final model.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any],
        seeds: Sequence[int],
        metric: str,
        every: int,
        n_envs: int,
        run_dir: Path,
        uses_masks: bool,
    ) -> None:
        super().__init__()
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.seeds = list(seeds)
        self.metric = metric
        self.every_calls = max(every // n_envs, 1)
        self.run_dir = Path(run_dir)
        self.uses_masks = uses_masks
        self.reference = baselines.reference(env_id)
        self._reference_result: EvaluationResult | None = None
        self.history: list[dict[str, Any]] = []
        """Every evaluation so far (the rows of ``evaluations.jsonl``)."""

    def _on_step(self) -> bool:
        if self.n_calls % self.every_calls == 0:
            self.evaluate_now()
        return True

    def evaluate_now(self) -> dict[str, Any]:
        """Evaluate the current policy and the paper policy on the fixed seeds; log and return the row."""
        if self._reference_result is None:
            self._reference_result = evaluate(
                self.env_id, self.reference, self.seeds, keep_records=False, **self.env_kwargs
            )
        started = time.perf_counter()
        agent = AgentContender("agent", self.model, self.model.get_vec_normalize_env(), self.uses_masks)
        result = evaluate(self.env_id, agent, self.seeds, keep_records=False, **self.env_kwargs)
        mine = result.summary[self.metric]
        row = {
            "timesteps": int(self.model.num_timesteps),
            "metric": self.metric,
            "mean": mine.mean,
            "ci95": mine.ci95,
            "reference": self.reference,
            "reference_mean": self._reference_result.summary[self.metric].mean,
            "ratio": result.compare(self._reference_result, self.metric).ratio,
            "seconds": time.perf_counter() - started,
            "process_cpu_seconds": time.process_time(),
        }
        self.logger.record(f"eval/{self.metric}", row["mean"])
        self.logger.record(f"eval/reference_{self.metric}", row["reference_mean"])
        self.logger.record("eval/ratio", row["ratio"])
        if self.verbose:
            print(
                f"eval @ {row['timesteps']}: {self.metric} {mine} vs {self.reference} {row['reference_mean']:.6g}"
                f" (ratio {row['ratio']:.4f})"
            )
        self.history.append(row)
        path = self.run_dir / EVALUATIONS
        previous = path.read_bytes() if path.is_file() else b""
        write_atomic(path, previous + (json.dumps(row) + "\n").encode())
        return row
