"""Simulation against queueing theory (statistical tolerances stated per test; seeds fixed).

Kept apart from the seeded golden numbers in ``test_env.py`` (docs/architecture.md:
"Simulator, env, baseline, fast path").
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines.dispatch import TagsSlowdown
from schedenv.analysis.queueing import mg1_slowdown, mg1_waiting_time
from schedenv.analysis.tags import tags_optimal_cutoffs
from schedenv.evaluation import evaluate
from schedenv.workloads import BoundedPareto, Exponential

ENV_ID = "schedenv/Dispatch-v0"
MODERATE = BoundedPareto(1.0, 100.0, 1.2)
"""C² ≈ 3.4: heavy-ish but converging within 10^4 arrivals."""


def test_random_with_exponential_sizes_is_mm1_per_host() -> None:
    # Each host is M/M/1 at load 0.5: T = E[X] / (1 - rho) = 2. Tolerance 6% (observed CI ≈ 3%).
    result = evaluate(
        ENV_ID,
        "random",
        seeds=range(3),
        keep_records=False,
        size_dist=Exponential(1.0),
        load=0.5,
        n_arrivals=20000,
        max_jobs=0,
    )
    assert result.summary["mean_response_time"].mean == pytest.approx(2.0, rel=0.06)


def test_pollaczek_khinchine_matches_a_single_fcfs_host() -> None:
    # M/G/1 FCFS with C² ≈ 3.4 at load 0.5: E[W] and E[W/X] within 15% (observed CI ≈ 7%).
    rate = 0.5 / MODERATE.mean
    result = evaluate(
        ENV_ID,
        "central-queue",
        seeds=range(3),
        keep_records=False,
        n_hosts=1,
        size_dist=MODERATE,
        load=0.5,
        n_arrivals=20000,
        max_jobs=0,
    )
    assert result.summary["mean_queueing_time"].mean == pytest.approx(mg1_waiting_time(rate, MODERATE), rel=0.15)
    assert result.summary["mean_queueing_slowdown"].mean == pytest.approx(mg1_slowdown(rate, MODERATE), rel=0.15)


@pytest.mark.parametrize("load", [0.3, 0.5])
def test_tags_analysis_matches_simulation(load: float) -> None:
    # Host loads and excess need no approximation: within 6% (host 2's load is carried by few big
    # jobs, observed CI ≈ 3%) and 3%. Queueing time and slowdown use the
    # Poisson approximation into host 2, an upper bound (§5.1): simulation <= analysis + 15%, and
    # within 20% of it (observed: within 3%).
    analysis = tags_optimal_cutoffs(MODERATE, load, 2)
    result = evaluate(
        ENV_ID,
        TagsSlowdown(),
        seeds=range(3),
        keep_records=False,
        size_dist=MODERATE,
        load=load,
        n_arrivals=15000,
        time_limits=analysis.cutoffs,
        max_jobs=0,
    )
    summary = result.summary
    for host in range(2):
        assert summary[f"host_load_{host}"].mean == pytest.approx(analysis.host_loads[host], rel=0.06)
    assert summary["excess"].mean == pytest.approx(analysis.excess, rel=0.03)
    for metric, value in (
        ("mean_queueing_time", analysis.mean_waiting_time),
        ("mean_queueing_slowdown", analysis.mean_slowdown),
    ):
        assert summary[metric].mean <= value * 1.15
        assert summary[metric].mean == pytest.approx(value, rel=0.2)


def test_central_queue_and_least_work_remaining_complete_every_job_at_the_same_time() -> None:
    # §1, Fig. 2 (proof in [12]): the two policies are equivalent on any arrival sequence.
    kwargs = dict(size_known=True, n_hosts=3, load=0.8, n_arrivals=2000, size_dist=BoundedPareto(1.0, 1e4, 1.1))
    lwr = evaluate(ENV_ID, "least-work-remaining", seeds=[11], **kwargs).episodes[0].records
    central = evaluate(ENV_ID, "central-queue", seeds=[11], **kwargs).episodes[0].records
    first = {r.job_id: r.completion for r in lwr}
    second = {r.job_id: r.completion for r in central}
    assert first.keys() == second.keys() and len(first) == 2000
    ids = sorted(first)
    np.testing.assert_allclose([first[i] for i in ids], [second[i] for i in ids], rtol=1e-9)
