"""One gate for sampled values (``schedenv.validation.check_sampled``): a user's distribution or
generator that returns NaN, 0, a negative, inf or an integer beyond float range is refused at the
first reset, naming the argument and the value, in every family. Before the gate, NaN hung the
Malleable env, 0 divided by zero, negatives completed jobs before they arrived and inf gave NaN
rewards. Each family's probes run in a subprocess with a timeout, so a regression to a hang fails."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from schedenv.validation import check_sampled
from schedenv.workloads import Distribution, Exponential, draw_sizes

BAD_VALUES = ["float('nan')", "0.0", "-1.0", "float('inf')", "10**400"]

PROBE = """
import json, dataclasses, numpy as np, gymnasium as gym
import schedenv
from schedenv.workloads import Distribution
from schedenv.moldable.workload import CirneWorkload

class Bad(Distribution):
    def __init__(self, value): self.value = value
    def sample(self, rng, size=None):
        draws = [1.0] * (size or 1)
        draws[-1] = self.value
        return draws if size is not None else draws[0]
    mean = property(lambda self: 1.0)
    variance = property(lambda self: 1.0)
    def cdf(self, x): return np.minimum(np.asarray(x, dtype=float), 1.0)

@dataclasses.dataclass(frozen=True)
class BadCirne(CirneWorkload):
    value: object = 0.0
    def sample(self, rng, n_jobs, n_procs):
        jobs = super().sample(rng, n_jobs, n_procs)
        L = np.array(jobs.L, dtype=object)
        L[-1] = self.value
        return dataclasses.replace(jobs, L=L, size=L)

def make(family, value):
    if family == "Malleable":
        return gym.make("schedenv/Malleable-v0", mode="online", n_arrivals=50, size_dist=Bad(value))
    if family == "Dispatch":
        return gym.make("schedenv/Dispatch-v0", n_arrivals=50, size_dist=Bad(value))
    if family == "MultiserverJob-size":
        return gym.make("schedenv/MultiserverJob-v0", n_arrivals=50, size_dist=Bad(value))
    if family == "MultiserverJob-duration":
        return gym.make("schedenv/MultiserverJob-v0", n_arrivals=50, duration_dist=Bad(value))
    return gym.make("schedenv/Moldable-v0", n_jobs=20, workload=BadCirne(value=value))

messages = []
for value in VALUES:
    try:
        env = make(FAMILY, value)
        env.reset(seed=0)
        for _ in range(200):
            _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                break
        messages.append("no error")
    except ValueError as error:
        messages.append(str(error))
print(json.dumps(messages))
"""

FAMILIES = ["Malleable", "Dispatch", "MultiserverJob-size", "MultiserverJob-duration", "Moldable"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_refuses_bad_draws_within_seconds(family: str) -> None:
    script = f"FAMILY = {family!r}\nVALUES = [{', '.join(BAD_VALUES)}]\n" + textwrap.dedent(PROBE)
    # 120 s covers a first Numba compile; a hang (NaN sizes looped forever in Malleable) fails here.
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    messages = json.loads(done.stdout.strip().splitlines()[-1])
    argument = {"MultiserverJob-duration": "duration_dist", "Moldable": "workload"}.get(family, "size_dist")
    shown = ["nan", "0.0", "-1.0", "inf", "not an array of numbers"]
    for message, value in zip(messages, shown, strict=True):
        assert message.startswith(argument), message
        assert value in message, message
        assert "SCALE_RANGE" in message, message


def test_gate_names_the_argument_the_value_and_the_index() -> None:
    with pytest.raises(ValueError, match=r"^size_dist from 'law' returned -2\.0 \(draw 1\); every draw must be"):
        check_sampled("size_dist", [1.0, -2.0, 3.0], 3, source="law")
    with pytest.raises(ValueError, match=r"returned 2 values of shape \(2,\) when asked for 3"):
        check_sampled("size_dist", [1.0, 2.0], 3)
    with pytest.raises(ValueError, match=r"returned 1e-300 \(draw 0\)"):
        check_sampled("size_dist", [1e-300], 1)
    assert check_sampled("size_dist", [1, 2.5], 2).tolist() == [1.0, 2.5]


def test_draw_sizes_passes_good_draws_unchanged() -> None:
    law = Exponential(2.0)
    expected = law.sample(np.random.default_rng(7), 5)
    assert draw_sizes("size_dist", law, np.random.default_rng(7), 5).tolist() == expected.tolist()
    assert isinstance(law, Distribution)
