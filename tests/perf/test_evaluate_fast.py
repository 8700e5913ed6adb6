"""evaluate_fast: the compiled path behind the evaluate API, with a fallback for uncovered contenders."""

from __future__ import annotations

import numpy as np


def test_evaluate_fast_equals_evaluate_and_falls_back_for_uncovered_contenders() -> None:
    from schedenv.evaluation import evaluate
    from schedenv.fastpath import evaluate_fast
    from schedenv.workloads import Amdahl

    kwargs = {"mode": "online", "n_arrivals": 300, "load": 0.8, "speedup": 0.6}
    fast = evaluate_fast("schedenv/Malleable-v0", "hesrpt", range(3), **kwargs)
    plain = evaluate("schedenv/Malleable-v0", "hesrpt", range(3), **kwargs)
    np.testing.assert_allclose(fast.values("mean_slowdown"), plain.values("mean_slowdown"), rtol=1e-9)
    np.testing.assert_allclose(fast.values("return"), plain.values("return"), rtol=1e-9)
    # Amdahl has no compiled path: the same call goes through evaluate and keeps working.
    amdahl = evaluate_fast("schedenv/Malleable-v0", "equi", range(2), n_jobs=4, speedup=Amdahl(0.9))
    assert amdahl.values("mean_slowdown").shape == (2,)
