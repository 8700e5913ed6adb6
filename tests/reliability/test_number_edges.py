"""Number edge cases: integers beyond float range, subnormal fractions, inf inside a limit ladder and a
speedup callable that raises each give a clear error or a finite result."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401  (registers the env ids)
from schedenv.cli import main
from schedenv.workloads import CustomSpeedup, Exponential


def test_an_integer_beyond_float_range_is_refused_naming_it(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match=r"^mean=1000\d+ is not allowed; it lies beyond the float64 range"):
        Exponential(10**400)
    with pytest.raises(ValueError, match=r"load=1000\d+ is not allowed; it lies beyond the float64 range"):
        gym.make("schedenv/Dispatch-v0", load=10**400)
    big = "1" + "0" * 400
    status = main(
        ["evaluate", "--env", "schedenv/Dispatch-v0", "--env-kwargs", '{"load": ' + big + "}", "--episodes", "1"]
    )
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and "beyond the float64 range" in err


@pytest.mark.parametrize("weights", [[5e-324, 0.0, 0.0], [1e-310, 1e-310, 0.0]])
def test_subnormal_fractions_count_as_all_zero_not_inf(weights: list[float]) -> None:
    env = gym.make("schedenv/Malleable-v0", jobs=[1.0, 2.0], allocation="fractions", max_jobs=2, speedup=1.0)
    env.reset(seed=0)
    zero = gym.make("schedenv/Malleable-v0", jobs=[1.0, 2.0], allocation="fractions", max_jobs=2, speedup=1.0)
    zero.reset(seed=0)
    observation, reward, *_, info = env.step(np.array(weights))
    expected_observation, expected_reward, *_, expected_info = zero.step(np.zeros(3))  # EQUI
    assert np.isfinite(reward) and reward == expected_reward and info["time"] == expected_info["time"]
    np.testing.assert_array_equal(observation, expected_observation)


@pytest.mark.parametrize("limits", [[1.0, float("inf"), float("inf")], [float("inf"), float("inf")]])
def test_inf_before_the_last_time_limit_is_refused(limits: list[float]) -> None:
    with pytest.raises(ValueError, match=r"time_limits\[[01]\]=inf: only the last limit may be inf"):
        gym.make("schedenv/Dispatch-v0", time_limits=limits)
    assert gym.make("schedenv/Dispatch-v0", time_limits=[1.0, float("inf")]).unwrapped.n_limits == 2


def test_a_speedup_that_raises_is_named_with_its_k_and_the_cause_chained() -> None:
    table = {0.0: 0.0}

    def lookup(k: float) -> float:
        return table[k]

    with pytest.raises(
        ValueError, match=r"speedup 'custom' \(<function .*lookup.*\) fails at k=0\.001: KeyError"
    ) as error:
        CustomSpeedup(lookup)
    assert isinstance(error.value.__cause__, KeyError)

    def breaks_late(k: float) -> float:
        if k == 7.5:
            raise KeyError(k)
        return min(k, 4.0)

    speedup = CustomSpeedup(breaks_late, max_servers=8.0)
    with pytest.raises(ValueError, match=r"fails at k=7\.5: KeyError") as error:
        speedup(np.array([1.0, 7.5]))
    assert isinstance(error.value.__cause__, KeyError)
