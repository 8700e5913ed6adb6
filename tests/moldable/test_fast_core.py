"""The compiled env core equals the reference core (pure simulator) step by step
(docs/architecture.md: "Simulator, env, baseline, fast path")."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedenv.moldable import MoldableEnv
from schedenv.moldable.core import ReferenceCore
from schedenv.moldable.fast import FastCore
from schedenv.moldable.kernel import (
    A_JOB,
    NEXT_ARRIVAL,
    Q_A,
    Q_AT_COUNT,
    Q_COLUMNS,
    Q_FASTEST,
    Q_FASTEST_COUNT,
    Q_JOB,
    Q_L,
    Q_LOG_AT_COUNT,
    Q_N_MIN,
    Q_SIGMA,
    Q_TABLE,
    QUEUE_START,
    R_BY_END,
    R_END,
    checked_action,
    fallback_action,
    log1p_float32,
    runtime_rows,
    scan_counts,
)
from schedenv.moldable.workload import CirneWorkload, MoldableJobSet, downey_jobs, parse_jobs

TABLE1 = [{"runtimes": {1: 10, 2: 5}}, {"runtimes": {1: 10, 2: 7}}, {"runtimes": {1: 10, 2: 9}}]


def mixed_jobs() -> MoldableJobSet:
    """Downey jobs in every branch of the speedup (sigma <, =, > 1 and > 2; A fractional and at m),
    runtime tables with gaps, simultaneous submits, and more jobs at t = 0 than the queue's first capacity."""
    rng = np.random.default_rng(5)
    jobs: list[dict] = [{"submit": 0.0, "L": 50.0 + k, "A": 1.0 + k % 7, "sigma": 0.5} for k in range(70)]
    for _ in range(60):
        submit, work, parallelism = float(rng.integers(0, 40)) * 25.0, rng.uniform(10, 3000), rng.uniform(1, 12)
        sigma = rng.choice([0.0, 0.3, 1.0, 1.7, 2.5, 4.0])
        jobs.append({"submit": submit, "L": float(work), "A": float(parallelism), "sigma": float(sigma)})
    for k in range(20):
        table = {1: 400.0 + k, 3: 200.0, 8: 90.0} if k % 2 else {2: 300.0, 4: 160.0, 12: 160.0}
        jobs.append({"submit": 10.0 * k, "runtimes": table, "requested": 4 if k % 2 == 0 else 3})
    return parse_jobs(jobs, 12)


def job_sets() -> list[tuple[str, MoldableJobSet, int, float, int]]:
    """(name, jobs, max_jobs, time_scale, max_running); at most 12 jobs run in "mixed" (m = 12)."""
    cirne = CirneWorkload(arrival_interval=150.0).sample(np.random.default_rng(2), 120, 32)
    return [
        ("table1", parse_jobs(TABLE1, 3), 3, 10.0, 16),
        ("mixed", mixed_jobs(), 4, 300.0, 16),
        ("mixed-release-3", mixed_jobs(), 4, 300.0, 3),
        ("cirne-window-8", cirne, 8, 150.0, 16),
        ("cirne-window-1", cirne, 1, 150.0, 0),
    ]


def choose(mask: np.ndarray, rng: np.random.Generator, wait_bias: float) -> int:
    """A random allowed action; waits with probability ``wait_bias`` when waiting is allowed."""
    if mask[-1] and rng.random() < wait_bias:
        return mask.size - 1
    return int(rng.choice(np.flatnonzero(mask)))


def assert_same_view(fast: FastCore, reference: ReferenceCore) -> None:
    a, b = fast.state, reference.state
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and not x.flags.writeable, field.name
            np.testing.assert_array_equal(x, y, err_msg=field.name)
        else:
            assert x == y, field.name


@pytest.mark.parametrize("wait_bias", [0.0, 0.3, 0.8])
@pytest.mark.parametrize("case", range(5))
def test_fast_core_matches_the_reference_step_by_step(case: int, wait_bias: float) -> None:
    name, jobs, max_jobs, scale, max_running = job_sets()[case]
    fast, reference = FastCore(jobs, max_jobs, scale, max_running), ReferenceCore(jobs, max_jobs, scale, max_running)
    rng = np.random.default_rng(case)
    steps = 0
    while True:
        # Dynamics are the same arithmetic in the same order: exact. The observation's log1p and sums
        # (numpy's pairwise sum vs a loop) may differ in the last bit of float64: float32 rounding.
        np.testing.assert_allclose(fast.observation(), reference.observation(), rtol=1e-6, atol=0, err_msg=name)
        np.testing.assert_array_equal(fast.mask, reference.mask, err_msg=name)
        assert (fast.time, fast.n_queued, fast.n_running, fast.free, fast.window_size, fast.done) == (
            reference.time, reference.n_queued, reference.n_running, reference.free, reference.window_size,
            reference.done,
        )  # fmt: skip
        assert fast.total_objective == reference.total_objective
        assert_same_view(fast, reference)
        if reference.done:
            break
        action = choose(reference.mask, rng, wait_bias)
        a, b = fast.step(action), reference.step(action)
        assert (a.elapsed, a.accrued_objective) == (b.elapsed, b.accrued_objective)
        assert a.completed == b.completed
        steps += 1
    assert reference.sim.state.n_completed == jobs.n_jobs and steps >= jobs.n_jobs


def test_runtime_rows_and_features_equal_the_job_sets_exactly() -> None:
    """Rows computed at arrival in the kernel are bit-identical to ``MoldableJobSet.runtime_rows``."""
    rng = np.random.default_rng(0)
    n, m = 400, 64
    A = np.concatenate([rng.uniform(1, m, n - 4), [1.0, 1.5, 32.0, 64.0]])
    sigma = rng.choice([0.0, 0.25, 1.0, 1.5, 2.0, 3.0, 10.0], n)
    jobs = downey_jobs(np.zeros(n), rng.uniform(1, 1e5, n), A, sigma, m)
    fast, reference = FastCore(jobs, 8, 1.0), ReferenceCore(jobs, 8, 1.0)
    a, b = fast.state, reference.state
    np.testing.assert_array_equal(a.queue_runtime, b.queue_runtime)
    np.testing.assert_array_equal(a.queue_n_min, b.queue_n_min)
    assert a.queue_runtime.shape == (n, m)


def forward_scan(L: float, A: float, sigma: float, m: int) -> tuple[float, int, int]:
    """(fastest, its first count, n_min) of a Downey job found as the kernel first did: every count up to
    ``_counts_to_scan``'s bound in increasing order (the runtimes of all m counts, ``runtime_rows``)."""
    row = np.zeros((1, Q_COLUMNS))
    row[0, Q_TABLE], row[0, Q_L], row[0, Q_A], row[0, Q_SIGMA] = -1.0, L, A, sigma
    last_rising = max(A, 2.0 * A - 1.0) if sigma <= 1.0 else A + A * sigma - sigma
    last = int(min(float(m), math.floor(last_rising) + 1.0))
    runtimes = runtime_rows(row, np.zeros((0, m)), m)[0, :last]
    finite = np.flatnonzero(runtimes < np.inf)
    first = int(np.argmin(runtimes))  # numpy's argmin: the first of equal minima, as the strict < scan
    return float(runtimes[first]), first + 1, int(finite[0]) + 1 if finite.size else 0


def downward_scan(L: float, A: float, sigma: float, m: int) -> tuple[float, int, int]:
    row = np.zeros(Q_COLUMNS)
    row[Q_TABLE], row[Q_L], row[Q_A], row[Q_SIGMA] = -1.0, L, A, sigma
    fastest, count, n_min = scan_counts(row, m, np.zeros((0, m)))
    return float(fastest), int(count), int(n_min)


# parameters where the computed runtimes are flat to a few rounding errors (sigma near 0, the ends of the
# rising branches, A at and near integers) or at the ends of their ranges
EDGE_SIGMAS = [
    0.0,
    1e-300,
    1e-17,
    1e-16,
    3e-16,
    1e-15,
    1e-13,
    1e-9,
    0.5,
    1.0 - 2**-53,
    1.0,
    1.0 + 2**-52,
    2.0,
    1e3,
    1e100,
]
EDGE_AS = [1.0, 1.0 + 2**-52, 1.5, 2.0, 7.0 - 1e-13, 7.0, 7.0 + 1e-13, 31.5, 64.0, 64.5, 127.0, 1e5, 1e100]


@pytest.mark.parametrize("m", [1, 2, 3, 64, 128, 1000])
def test_the_downward_scan_finds_what_the_forward_scan_finds(m: int) -> None:
    """``scan_counts`` (from the last count down, stopping early) gives the fastest runtime, its first count
    and n_min of the scan over every count, bit for bit, on parameters where runtimes are flat to rounding."""
    for sigma in EDGE_SIGMAS:
        for A in EDGE_AS:
            for L in (1e-100, 1.0, 12345.678, 1e100):
                assert downward_scan(L, A, sigma, m) == forward_scan(L, A, sigma, m), (L, A, sigma, m)


@settings(max_examples=300, deadline=None)
@given(
    L=st.floats(1e-6, 1e12),
    A=st.one_of(st.floats(1.0, 300.0), st.integers(1, 300).map(float)),
    sigma=st.one_of(st.floats(0.0, 3.0), st.floats(0.0, 1e-12), st.sampled_from([0.0, 1.0, 2.0])),
    m=st.sampled_from([1, 5, 64, 128, 256]),
)
def test_the_downward_scan_equals_the_forward_scan_on_random_jobs(L: float, A: float, sigma: float, m: int) -> None:
    assert downward_scan(L, A, sigma, m) == forward_scan(L, A, sigma, m)


def test_fast_core_refuses_what_does_not_fit_and_changes_nothing() -> None:
    jobs = parse_jobs(TABLE1, 3)
    core = FastCore(jobs, 3, 10.0)
    before_obs, before_mask, before_view = core.observation(), core.mask.copy(), core.state
    # count 3 is not in the tables; slot 3 is outside the window; waiting cannot move time; out of range
    for action in (2, 9, core.mask.size - 1, -5, core.mask.size):
        with pytest.raises(ValueError, match="does not fit"):
            core.step(action)
    np.testing.assert_array_equal(core.observation(), before_obs)
    np.testing.assert_array_equal(core.mask, before_mask)
    after = core.state
    np.testing.assert_array_equal(after.queue_job, before_view.queue_job)
    assert (after.time, after.free) == (before_view.time, before_view.free)


def test_env_runs_the_fast_core_with_the_references_trajectory() -> None:
    """The env (fast core) gives the reference core's rewards and records under a baseline."""
    from baselines.moldable import POLICIES

    env = MoldableEnv(n_procs=16, n_jobs=40, arrival_interval=100.0, max_jobs=6)
    policy = POLICIES["sbmfair-easy"]()
    obs, info = env.reset(seed=4)
    policy.reset(env)
    reference = ReferenceCore(env.job_set, env.max_jobs, env.time_scale)
    done = False
    while not done:
        action = policy.act(obs, env)
        obs, reward, done, _, info = env.step(action)
        outcome = reference.step(action)
        assert reward == -outcome.accrued_objective and info["completed"] == outcome.completed
        np.testing.assert_allclose(obs, reference.observation(), rtol=1e-6, atol=0)
    assert reference.done and len(env.records) == 40


def test_fastest_count_and_n_min_equal_a_scan_of_every_count() -> None:
    """The kernel scans a Downey job's counts only up to its constant-speedup count; its fastest count (the
    smallest reaching the least runtime) and n_min equal those of all m counts, at the branch boundaries too."""
    m = 64
    A = np.array([1.0, 1.5, 2.0, 7.0, 7.5, 10.25, 32.0, 32.5, 63.0, 64.0, 80.0, 3.0, 12.0, 40.0, 21.0, 5.5])
    sigma = np.array([0.0, 0.5, 1.0, 1.0, 0.3, 1.0, 0.7, 1.0, 0.2, 1.0, 0.5, 2.0, 1.5, 3.0, 10.0, 1.25])
    jobs = downey_jobs(np.zeros(A.size), np.full(A.size, 1e4), A, sigma, m)
    core = FastCore(jobs, 4, 1.0)
    queue = core.queued_rows()[: core.n_queued]
    rows = jobs.runtime_rows(queue[:, Q_JOB].astype(np.int64))
    np.testing.assert_array_equal(queue[:, Q_FASTEST_COUNT], np.argmin(rows, axis=1) + 1)
    np.testing.assert_array_equal(queue[:, Q_FASTEST], rows.min(axis=1))
    np.testing.assert_array_equal(queue[:, Q_N_MIN], np.argmax(np.isfinite(rows), axis=1) + 1)


@pytest.mark.parametrize("case", [1, 3])
def test_running_jobs_by_end_time_stay_in_stable_argsort_order(case: int) -> None:
    """``R_BY_END`` lists the running rows as numpy's stable argsort of their end times after every step
    (ties by row: the "mixed" set starts jobs of equal runtimes at the same instant)."""
    _, jobs, max_jobs, scale, max_running = job_sets()[case]
    core = FastCore(jobs, max_jobs, scale, max_running)
    rng = np.random.default_rng(case)
    ties = 0
    while not core.done:
        n = core.n_running
        ends = core._running[:n, R_END]
        np.testing.assert_array_equal(core._running[:n, R_BY_END], np.argsort(ends, kind="stable"))
        ties += n - np.unique(ends).size
        core.step(choose(core.mask, rng, 0.3))
    if case == 1:
        assert ties > 0  # the tie rule was exercised


def test_checked_action_is_the_mask_and_fallback_of_every_action_in_every_state() -> None:
    """The batched step reads validity and fallback off the state (``checked_action``); it equals the
    written mask and ``_fallback`` over it for every action: Downey and table jobs with gaps, padding
    slots, window jobs that fit on no count, states that cannot wait, and the finished episode (mask all ones)."""
    seen = {"cannot wait": 0, "a window job fits nowhere": 0, "padding": 0}
    for case, (_, jobs, max_jobs, scale, max_running) in enumerate(job_sets()):
        core, rng = FastCore(jobs, max_jobs, scale, max_running), np.random.default_rng(case)
        while True:
            mask = core.mask.copy()
            seen["cannot wait"] += not mask[-1] and not core.done
            rows = mask[:-1].reshape(max_jobs, core.n_procs)[: core.window_size]
            seen["a window job fits nowhere"] += not core.done and not rows.any(axis=1).all()
            seen["padding"] += core.window_size < max_jobs
            for action in range(mask.size):
                expected = (action, False) if mask[action] else (fallback_action(action, mask, core.n_procs), True)
                assert checked_action(action, core._ints, core.queued_rows(), core._tables) == expected, (case, action)
            if core.done:
                break
            core.step(choose(mask, rng, 0.3))
    assert min(seen.values()) > 0, seen


def test_log1p_float32_rounds_as_libms_log1p_on_every_kind_of_value() -> None:
    """``log1p_float32`` stands for ``math.log1p`` in the float32 observation: equal after rounding on a
    million values over the features' range, on special values, and on values whose log1p lies within a
    few ulps of a float32 rounding boundary (where its fallback must take over)."""
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.random(300_000) * scale for scale in (1e-3, 0.05, 1.0, 5.0)])
    values = np.concatenate([values, 10.0 ** rng.uniform(-12, 12, 100_000), [0.0, 0.01, 0.75, 1.0, 2.0**53]])
    # boundaries: halfway between neighbouring float32 values, pulled back through expm1 and nudged by ulps
    low = rng.uniform(0.01, 8.0, 20_000).astype(np.float32)
    middle = (low.astype(np.float64) + np.nextafter(low, np.float32(np.inf)).astype(np.float64)) / 2.0
    near = np.expm1(middle)[:, None] + np.spacing(np.expm1(middle))[:, None] * np.arange(-4, 5)
    values = np.concatenate([values, near.ravel()])
    expected = np.array([math.log1p(x) for x in values.tolist()]).astype(np.float32)  # numpy's may differ by an ulp
    got = np.array([log1p_float32(x) for x in values.tolist()]).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.int32), expected.view(np.int32))
    for special in (np.inf, -0.5):
        assert np.float32(log1p_float32(special)) == np.float32(math.log1p(special))
    assert np.isnan(log1p_float32(np.nan))


@pytest.mark.parametrize("slot_kind", ["first", "last", "random"])
def test_queue_rows_stay_in_the_references_order_as_the_queue_start_moves(
    slot_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jobs started from window slot s move only the s rows before them (``kernel.live_queue``); the queue
    start moves down, back to row 0 when an arrival finds no row after the last job, and the queue grows
    when it is full from row 0. After every step the queued jobs are the reference simulator's, in its FCFS
    order, the jobs outside the window are the latest arrivals (what ``_observe`` sums the sizes of) and
    the observation and mask are the reference's. Starts from the window's first and last slots (the
    boundary with the jobs outside it) and random ones; a queue of 16 rows at first."""
    monkeypatch.setattr("schedenv.moldable.fast.initial_queue_rows", lambda n: 16)  # every case early
    jobs = CirneWorkload(arrival_interval=40.0).sample(np.random.default_rng(7), 160, 32)
    fast, reference = FastCore(jobs, 6, 40.0), ReferenceCore(jobs, 6, 40.0)
    rng = np.random.default_rng(3)
    order = fast._arrivals_i[:, A_JOB]
    starts, moved_back, grown, outside = 0, 0, 0, 0
    previous_start, capacity = 0, fast._queue.shape[0]
    while not reference.done:
        mask = reference.mask
        starting = np.flatnonzero(mask[:-1])
        if starting.size == 0:
            action = mask.size - 1
        else:
            slots = starting // fast.n_procs
            slot = {"first": slots.min(), "last": slots.max(), "random": rng.choice(slots)}[slot_kind]
            action = int(rng.choice(starting[slots == slot]))
        fast.step(action)
        reference.step(action)
        start, q, w = int(fast._ints[QUEUE_START]), fast.n_queued, fast.window_size
        starts += action != mask.size - 1
        moved_back += start < previous_start
        grown += fast._queue.shape[0] > capacity
        previous_start, capacity = start, fast._queue.shape[0]
        assert start + q <= fast._queue.shape[0]
        np.testing.assert_array_equal(fast.state.queue_job, reference.state.queue_job)
        arrived = int(fast._ints[NEXT_ARRIVAL])
        np.testing.assert_array_equal(fast.state.queue_job[w:], order[arrived - (q - w) : arrived])
        outside += q > w
        np.testing.assert_allclose(fast.observation(), reference.observation(), rtol=1e-6, atol=0)
        np.testing.assert_array_equal(fast.mask, reference.mask)
    assert starts == jobs.n_jobs and moved_back >= 2 and grown >= 2 and outside >= 100


def test_runtime_at_count_cache_holds_the_feature_of_its_count() -> None:
    """``_observe`` keeps each window row's runtime-at-count feature for its count (``Q_AT_COUNT``) and
    works it out again when the free processors change the count: after every step, each kept value is
    log1p_float32(T(count) / time_scale) of its count (0 for a count the job does not allow), and the
    observation's feature is the one of the current count. Kept values are reused and recomputed along
    the episode ("mixed": Downey jobs and runtime tables with gaps)."""
    _, jobs, max_jobs, scale, max_running = job_sets()[1]
    fast = FastCore(jobs, max_jobs, scale, max_running)
    rng = np.random.default_rng(1)
    reused = stale = 0
    kept_before: dict[int, float] = {}
    while not fast.done:
        fast.step(choose(fast.mask, rng, 0.5))
        rows, runtimes = fast.queued_rows(), fast.state.queue_runtime
        obs = fast.observation()
        for i in range(fast.window_size):
            count = min(int(rows[i, Q_FASTEST_COUNT]), max(fast.free, 1))
            kept = int(rows[i, Q_AT_COUNT])
            if kept:
                at = runtimes[i, kept - 1]
                assert rows[i, Q_LOG_AT_COUNT] == log1p_float32((0.0 if np.isinf(at) else at) / scale)
            if count != rows[i, Q_FASTEST_COUNT]:
                assert kept == count and obs[8 * i + 4] == np.float32(rows[i, Q_LOG_AT_COUNT])
                job = int(rows[i, Q_JOB])
                reused += kept_before.get(job) == count
            stale += kept != 0 and kept != count
        kept_before = {int(rows[i, Q_JOB]): int(rows[i, Q_AT_COUNT]) for i in range(fast.window_size)}
    assert reused >= 50 and stale >= 100
