"""RLlib PPO with a remote env runner, by id in Gymnasium's ``module:id`` form (docs/interop/rllib.md).

Run in a subprocess: Ray starts its own worker processes and keeps global state per driver.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.interop.examples import EXAMPLES, run_command


def test_one_training_iteration_with_a_remote_env_runner(tmp_path: Path) -> None:
    pytest.importorskip(
        "ray.rllib.algorithms.ppo",
        reason="RLlib is not importable (pip install 'schedenv[dist,dev]': ray and RLlib's dependencies)",
        exc_type=ImportError,
    )
    out = run_command([sys.executable, str(EXAMPLES / "rllib_ppo.py")], tmp_path, timeout=240).stdout
    sampled = re.search(r"env steps sampled: ([\d.]+)", out)
    assert sampled is not None, out[-2000:]
    assert float(sampled.group(1)) >= 128  # train_batch_size, collected by the remote runner
