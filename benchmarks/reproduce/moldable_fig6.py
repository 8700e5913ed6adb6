"""HRF paper Fig. 6: the effect of threshold on ATT, AWT and ART (alpha = 1), HRF-FCFS and HRF-EASY.

Full run (10 seeds, thresholds 0.1 to 1, 3 loads): ``.venv/bin/python benchmarks/reproduce/moldable_fig6.py``.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Sequence

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _claims import CheckedClaim, claim
from moldable_common import Curves, run_sweep, trend_claim

FIGURE = "hrf-fig6"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 6: with alpha = 1, a larger threshold raises AWT and lowers ART for both "
    "HRF-FCFS and HRF-Bf; ATT fluctuates for threshold < 0.3 and is stable above it."
)
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


STABLE_SPREAD = 0.10
"""ATT counts as stable above threshold 0.3 if its range there is at most this fraction of its mean."""


def _steps(values: list[float]) -> list[float]:
    return [abs(b - a) / a for a, b in itertools.pairwise(values)]


def fig6_claims(curves: Curves, swept: Sequence[float]) -> list[CheckedClaim]:
    """§6.2's reading of Fig. 6 (alpha 1), checked on the threshold curves."""
    low = [i for i, t in enumerate(swept) if t <= 0.3]
    high = [i for i, t in enumerate(swept) if t > 0.3]
    verdicts, stable = [], 0
    for (load, policy), entry in curves.items():
        att = entry["ATT"]
        below = max(_steps([att[i] for i in low]), default=0.0)
        above_values = [att[i] for i in high]
        spread = (max(above_values) - min(above_values)) / float(np.mean(above_values))
        ok = spread <= STABLE_SPREAD and max(_steps(above_values), default=0.0) < below
        stable += ok
        verdicts.append(
            f"{load} {policy}: largest step {below:.1%} up to 0.3, {max(_steps(above_values), default=0.0):.1%} "
            f"above; range above 0.3 {spread:.1%} of its mean"
        )
    return [
        trend_claim("fig6-awt-rises", curves, "AWT", True, swept, "threshold"),
        trend_claim("fig6-art-falls", curves, "ART", False, swept, "threshold"),
        claim(
            "fig6-att-stable-above-0.3",
            "holds" if stable == len(curves) else ("partly" if stable else "does not hold"),
            "ATT fluctuates for threshold < 0.3 and is stable above it (read as: its largest relative step between "
            "neighbouring thresholds is smaller above 0.3 than up to 0.3, and its range above 0.3 is at most "
            f"{STABLE_SPREAD:.0%} of its mean): " + "; ".join(verdicts) + ".",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    return run_sweep(
        argv,
        figure=FIGURE,
        description=DESCRIPTION,
        title="HRF Fig. 6 — threshold sweep (alpha 1)",
        parameter="threshold",
        values=THRESHOLDS,
        quick_values=(0.1, 0.4, 1.0),
        fixed=1.0,
        checks=fig6_claims,
    )


if __name__ == "__main__":
    raise SystemExit(main())
