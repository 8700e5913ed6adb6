"""Runs are never overwritten and faults leave the previous good state usable (``agents.train``).

A finished run is refused without ``--resume`` or ``--overwrite``; ``--resume`` continues from the
newest readable checkpoint or the final model, never from scratch over a model; a kill or a full disk
in the middle of a write leaves no torn file. Tiny trainings (256 steps) in temporary folders.
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")

from agents import runs  # noqa: E402  (after the importorskip)
from agents.cli import INTERRUPTED  # noqa: E402  (after the importorskip)
from agents.train import TrainConfig, check_device, train  # noqa: E402  (after the importorskip)
from schedenv.cli import main  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CONFIG = TrainConfig(
    env_kwargs={"jobs": [1, 2, 4], "max_jobs": 3},
    timesteps=256,
    n_envs=4,
    eval_episodes=1,
    checkpoint_every=64,
    algo_kwargs={"n_steps": 16, "batch_size": 64},
    tensorboard=False,
    progress_bar=False,
)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 256-step run with checkpoints at 64, 128, 192 and 256 steps."""
    out = tmp_path_factory.mktemp("finished") / "run"
    train(CONFIG, out, command="test")
    return out


@pytest.fixture
def run(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


def _bytes(run: Path) -> dict[str, bytes]:
    return {name: (run / name).read_bytes() for name in (runs.MODEL, runs.BEST_MODEL, runs.VECNORMALIZE)}


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*") if p.is_file())  # write_atomic's temporary names


def test_a_finished_run_is_refused_unless_resume_or_overwrite(run: Path) -> None:
    before = _bytes(run)
    with pytest.raises(ValueError, match=r"already holds a training run; pass --resume .* --overwrite"):
        train(CONFIG, run, command="test")
    assert _bytes(run) == before
    with pytest.raises(ValueError, match="resume and overwrite exclude each other"):
        train(CONFIG, run, resume=True, overwrite=True)
    (run / "notes.txt").write_text("mine")
    result = train(CONFIG, run, overwrite=True, command="test")
    assert result.start_timesteps == 0 and result.model.num_timesteps == 256
    assert [c.steps for c in runs.checkpoints(run)] == [64, 128, 192, 256]
    assert len(runs.read_evaluations(run)) == 1  # the old run's rows are gone, not appended to
    assert (run / "notes.txt").read_text() == "mine"  # only the run's own files are deleted


def test_the_cli_refuses_a_finished_run_in_one_line(run: Path, capsys: pytest.CaptureFixture) -> None:
    before = _bytes(run)
    assert main(["train", "--env", "schedenv/Malleable-v0", "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedenv: error: ") and "pass --resume to continue it, --overwrite to replace it" in err
    assert _bytes(run) == before


def test_resume_without_checkpoints_leaves_model_byte_identical(run: Path) -> None:
    before = _bytes(run)
    shutil.rmtree(run / runs.CHECKPOINTS)
    result = train(CONFIG, run, resume=True, command="test")
    assert result.start_timesteps == 256  # continued from model.zip, not from scratch
    assert _bytes(run) == before


def test_resume_without_checkpoints_continues_from_the_final_model(run: Path) -> None:
    shutil.rmtree(run / runs.CHECKPOINTS)
    result = train(TrainConfig(**{**CONFIG.__dict__, "timesteps": 320}), run, resume=True, command="test")
    assert (result.start_timesteps, result.model.num_timesteps) == (256, 320)


def test_a_corrupt_newest_checkpoint_falls_back_to_the_previous(run: Path) -> None:
    (run / runs.CHECKPOINTS / "step_256.zip").write_bytes(b"not a zip")
    (run / runs.MODEL).unlink()
    with pytest.warns(UserWarning, match=r"step_256\.zip cannot be read .*falling back to the one before"):
        result = train(CONFIG, run, resume=True, command="test")
    assert (result.start_timesteps, result.model.num_timesteps) == (192, 256)


def test_all_models_unreadable_is_refused_not_restarted(run: Path) -> None:
    for checkpoint in runs.resume_candidates(run):
        checkpoint.model.write_bytes(b"\x00" * 10)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="refusing to train from scratch over them"):
        train(CONFIG, run, resume=True, command="test")


def test_a_kill_during_a_checkpoint_write_leaves_the_previous_checkpoint_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "killed"
    rename = os.replace

    def killed_at_192(source: str, target: str) -> None:  # the data is written, the process dies before the rename
        if Path(target).name == "step_192.zip":
            raise KeyboardInterrupt
        rename(source, target)

    monkeypatch.setattr(runs.os, "replace", killed_at_192)
    with pytest.raises(KeyboardInterrupt):
        train(CONFIG, out, command="test")
    monkeypatch.setattr(runs.os, "replace", rename)
    assert _leftovers(out) == []
    assert [c.steps for c in runs.checkpoints(out)] == [64, 128]
    result = train(CONFIG, out, resume=True, command="test")
    assert (result.start_timesteps, result.model.num_timesteps) == (128, 256)


def test_a_full_disk_leaves_the_previous_model_usable(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _bytes(run)
    fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle: int, mode: str) -> None:
            self.file = fdopen(handle, mode)

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, data: bytes) -> int:
            self.file.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(runs.os, "fdopen", FullDisk)
    with pytest.raises(OSError, match="No space left on device"):
        train(TrainConfig(**{**CONFIG.__dict__, "timesteps": 320}), run, resume=True, command="test")
    monkeypatch.setattr(runs.os, "fdopen", fdopen)
    assert _leftovers(run) == []
    assert _bytes(run) == before
    result = train(TrainConfig(**{**CONFIG.__dict__, "timesteps": 320}), run, resume=True, command="test")
    assert result.start_timesteps == 256


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_device_cuda_without_cuda_is_refused_and_not_recorded(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match="--device cuda is not allowed here: torch finds no CUDA device"):
        check_device("cuda")
    out = tmp_path / "cuda"
    status = main(["train", "--env", "schedenv/Malleable-v0", "--device", "cuda", "--out", str(out)])
    assert status == 2
    assert "schedenv: error: --device cuda is not allowed here" in capsys.readouterr().err
    assert not (out / runs.PROVENANCE).exists()


def test_ctrl_c_prints_one_resume_line_and_exits_130(tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    command = [
        sys.executable, "-m", "schedenv.cli", "train", "--env", "schedenv/Malleable-v0", "--env-kwargs",
        '{"jobs": [1, 2, 4], "max_jobs": 3}', "--timesteps", "10000000", "--n-envs", "4", "--out", str(out),
        "--hyperparams", "checkpoint_every=64", "n_steps=16", "tensorboard=false",
    ]  # fmt: skip
    # A test run started in the background (``cmd &`` without job control) ignores SIGINT, and a child
    # inherits that: Python then never raises KeyboardInterrupt. The child gets the default back.
    restore = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=restore
    )
    try:
        deadline = time.monotonic() + 120
        while not runs.checkpoints(out) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert runs.checkpoints(out), "training never wrote a checkpoint"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == INTERRUPTED
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"interrupted; resume with: schedenv train --out {out} --resume"


def test_a_ctrl_c_during_a_save_is_raised_when_the_save_is_complete(tmp_path: Path) -> None:
    """agents.runs.deferred_interrupt: SIGINT inside the block is held, then raised as KeyboardInterrupt."""
    written = tmp_path / "model.zip"
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in `schedenv train` (any runner)
    try:
        with pytest.raises(KeyboardInterrupt), runs.deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)  # delivered now, in the middle of the "save"
            runs.write_atomic(written, b"whole")
        assert written.read_bytes() == b"whole"  # the write after the signal still happened
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's handler is back
        with runs.deferred_interrupt():  # no signal: nothing raised
            runs.write_atomic(written, b"again")
        assert written.read_bytes() == b"again"
    finally:
        signal.signal(signal.SIGINT, previous)


def test_deferred_interrupt_leaves_an_ignored_sigint_ignored() -> None:
    """A process started in the background ignores SIGINT: the block must not turn it back on."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with runs.deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
