"""RL Zoo: train with agents/configs/zoo/ppo.yml, enjoy, then score the run (docs/interop/rl-zoo.md).

The commands are the lines of examples/interop/rl_zoo.sh, which the docs page shows, run from a
temporary folder (the Zoo writes its logs under ``-f``) with the hyperparameter file of this checkout.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from tests.interop.examples import EXAMPLES, ROOT, python_argv, run_command

pytest.importorskip("rl_zoo3", reason="the RL Zoo is not installed (pip install rl_zoo3; in the dev extra)")

CONF = "agents/configs/zoo/ppo.yml"
RUN = Path("logs/ppo/schedenv-Malleable-v0_1")


def _commands() -> list[str]:
    lines = (EXAMPLES / "rl_zoo.sh").read_text().splitlines()
    return [line.replace(CONF, str(ROOT / CONF)) for line in lines if line and not line.startswith("#")]


@pytest.fixture(scope="module")
def zoo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the Zoo trained in (train and enjoy already run, from the snippet's first two lines)."""
    folder = tmp_path_factory.mktemp("zoo")
    train, _, _ = _commands()
    run_command(python_argv(train), folder, timeout=300)
    return folder


def test_train_reads_the_shipped_hyperparameters_and_enjoy_replays_the_agent(zoo_run: Path) -> None:
    run = zoo_run / RUN
    assert (run / "schedenv-Malleable-v0.zip").is_file() and (
        run / "schedenv-Malleable-v0" / "vecnormalize.pkl"
    ).is_file()
    saved = yaml.unsafe_load((run / "schedenv-Malleable-v0" / "config.yml").read_text())  # the Zoo's OrderedDict
    used = dict(saved)
    assert used["n_steps"] == 16 and used["gamma"] == 1.0 and used["n_envs"] == 256  # agents/configs/malleable_ppo.yaml
    assert used["env_kwargs"] == {"n_jobs": 8, "max_jobs": 8, "speedup": 0.5, "objective": "slowdown"}

    _, enjoy, _ = _commands()
    out = run_command(python_argv(enjoy), zoo_run, timeout=300).stdout
    assert "Mean episode length: 8.00 +/- 0.00" in out  # 8 jobs: one decision per departure
    assert "slot    job" in out  # render_mode="human" without pygame: the "ansi" text on stdout


def test_schedenv_evaluate_scores_the_zoo_run(zoo_run: Path) -> None:
    if importlib.util.find_spec("agents.sources") is None:
        pytest.skip("this schedenv cannot load an RL Zoo run folder yet: `evaluate --agent` needs agents.sources")
    *_, evaluate = _commands()
    out = run_command(python_argv(evaluate), zoo_run, timeout=300).stdout
    assert "schedenv/Malleable-v0" in out and "hesrpt" in out  # the agent against the paper's policy, on its env
