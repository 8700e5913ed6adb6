"""HRF paper Fig. 5: the effect of alpha on ATT, AWT and ART (threshold = 0.9), HRF-FCFS and HRF-EASY.

Full run (10 seeds, the paper's 8 alphas, 3 loads): ``.venv/bin/python benchmarks/reproduce/moldable_fig5.py``.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _claims import CheckedClaim, claim
from moldable_common import Curves, run_sweep, trend_claim

from baselines.moldable import ALPHA_GRID

FIGURE = "hrf-fig5"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 5: with threshold = 0.9, a larger alpha (processor budget) raises AWT and "
    "lowers ART for both HRF-FCFS and HRF-Bf; ATT of HRF-FCFS is U-shaped at light/middle load and rises at heavy "
    "load; HRF-Bf prefers larger alpha under heavier load."
)


def _argmin(values: list[float], swept: Sequence[float]) -> float:
    return swept[min(range(len(values)), key=values.__getitem__)]


def _monotone(values: list[float], rising: bool) -> bool:
    return all((b >= a) if rising else (b <= a) for a, b in itertools.pairwise(values))


def fig5_claims(curves: Curves, swept: Sequence[float]) -> list[CheckedClaim]:
    """§6.2's reading of Fig. 5 (threshold 0.9), checked on the alpha curves."""
    att = {key: entry["ATT"] for key, entry in curves.items()}
    fcfs_min = {load: _argmin(att[(load, "hrf-fcfs")], swept) for load in ("light", "middle")}
    easy_min = {load: _argmin(att[(load, "hrf-easy")], swept) for load in ("light", "middle", "heavy")}
    easy_falls = {load: _monotone(att[(load, "hrf-easy")], rising=False) for load in ("middle", "heavy")}
    u_shaped = swept[0] < easy_min["light"] < swept[-1]
    return [
        trend_claim("fig5-awt-rises", curves, "AWT", True, swept, "alpha"),
        trend_claim("fig5-art-falls", curves, "ART", False, swept, "alpha"),
        claim(
            "fig5-fcfs-att-minimum",
            fcfs_min == {"light": 0.8, "middle": 0.7},
            "HRF-FCFS's ATT is least at alpha 0.8 (light load) and 0.7 (middle load): least at "
            + ", ".join(f"{a:g} ({load})" for load, a in fcfs_min.items())
            + ".",
        ),
        claim(
            "fig5-fcfs-att-heavy-rises",
            _monotone(att[("heavy", "hrf-fcfs")], rising=True),
            "HRF-FCFS's ATT rises monotonously with alpha at heavy load: "
            + " -> ".join(f"{v:,.0f}" for v in att[("heavy", "hrf-fcfs")])
            + ".",
        ),
        claim(
            "fig5-easy-att-shape",
            "holds"
            if u_shaped and all(easy_falls.values())
            else ("partly" if u_shaped or any(easy_falls.values()) else "does not hold"),
            "HRF-EASY's ATT first falls then rises with alpha at light load, and falls monotonously at middle and "
            f"heavy load: least at alpha {easy_min['light']:g} (light), {easy_min['middle']:g} (middle), "
            f"{easy_min['heavy']:g} (heavy); monotonously falling at middle: "
            f"{'yes' if easy_falls['middle'] else 'no'}, at heavy: {'yes' if easy_falls['heavy'] else 'no'}.",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    return run_sweep(
        argv,
        figure=FIGURE,
        description=DESCRIPTION,
        title="HRF Fig. 5 — alpha sweep (threshold 0.9)",
        parameter="alpha",
        values=ALPHA_GRID,
        quick_values=(0.5, 0.8, 1.2),
        fixed=0.9,
        checks=fig5_claims,
    )


if __name__ == "__main__":
    raise SystemExit(main())
