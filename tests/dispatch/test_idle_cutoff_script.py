"""``benchmarks/dispatch_idle_cutoff.py``: TAGS with a central first stage whose first cutoff depends on the
long-job host (docs/baselines/dispatch.md, "Cutoffs for cycle stealing")."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import pytest

import schedenv  # noqa: F401 - registers the env ids

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import dispatch_cutoffs
import dispatch_idle_cutoff

KWARGS = dispatch_cutoffs.preset_kwargs(n_arrivals=3_000, load=0.5)


def test_one_cutoff_for_both_states_is_tags_cq_tuned_exactly() -> None:
    """No step down (the idle rung is the tuned one): the rule is ``tags-cq-tuned``, seed for seed, through
    the evaluation loop against the compiled fast path; a step down changes the episodes."""
    (same, lower) = dispatch_idle_cutoff.idle_cutoff_rows(KWARGS, 3, [0, 2])
    idle, busy, ratio, per_seed, wins = same
    assert idle == busy and ratio == 1.0 and per_seed.mean == 1.0 and per_seed.ci95 == 0.0 and wins == 0
    assert lower[0] < lower[1] == busy and lower[2] != 1.0


def test_the_rule_lowers_the_cutoff_exactly_while_the_long_job_host_idles() -> None:
    env = gym.make("schedenv/Dispatch-v0", **KWARGS)
    inner = env.unwrapped
    policy = dispatch_idle_cutoff.IdleHostCutoff(idle_index=3, busy_index=6)
    observation, _ = env.reset(seed=4)
    policy.reset(env)
    seen = {True: 0, False: 0}
    for _ in range(2_000):
        action = policy.act(observation, env)
        destination, limit = inner.decode_action(int(action))
        if not inner.pending_job.hosts:  # a new job: the central queue, with the state's rung
            idle = not inner.state.busy[1] and inner.state.queue_length[1] == 0
            assert (destination, limit) == (inner.central, 3 if idle else 6)
            seen[idle] += 1
        else:  # a killed job: on to the long-job host, with no limit
            assert destination == 1 and limit == len(inner.time_limits) - 1
        observation, _, terminated, _, _ = env.step(action)
        assert not terminated
    assert min(seen.values()) > 100


def test_the_table_has_a_row_per_step_and_refuses_bad_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch_idle_cutoff.main(["--seeds", "2", "--n-arrivals", "2000", "--below", "1,2"]) == 0
    rows = [
        line.split(" | ") for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "/ 2 |" in line
    ]
    idle = [float(row[0].strip("| ").replace(",", "")) for row in rows]
    busy = {row[1] for row in rows}
    assert len(rows) == 2 and len(busy) == 1 and idle[0] > idle[1]  # one and two rungs below the tuned one
    with pytest.raises(SystemExit):
        dispatch_idle_cutoff.main(["--seeds", "2", "--n-arrivals", "2000", "--below", "99"])
    assert "--below 99 is not allowed" in capsys.readouterr().err
