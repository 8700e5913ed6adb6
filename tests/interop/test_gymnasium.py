"""Gymnasium's ``check_env`` with its default arguments on every env by id (docs/interop/gymnasium.md).

The defaults make the env once per declared render mode, "human" included: without pygame it must
print the "ansi" text rather than fail (``schedenv.display``).
"""

from __future__ import annotations

import sys
import warnings

import pytest

import schedenv
from tests.interop.examples import run_example


def test_check_env_with_default_arguments_passes_on_every_id(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)  # a plain install, whatever this machine has
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_example("gymnasium_check_env.py")
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "check_env" in line] == [
        f"{env_id} passes check_env" for env_id in schedenv.ENV_IDS
    ]
    # the checker's only remark: observation bounds are infinite (sizes and ages are unbounded)
    remarks = {str(w.message) for w in caught if "gymnasium" in w.filename or "WARN" in str(w.message)}
    assert all("infinity" in remark for remark in remarks), remarks
