"""HRF paper Fig. 5: the effect of alpha on ATT, AWT and ART (threshold = 0.9), HRF-FCFS and HRF-EASY.

Full run (10 seeds, the paper's 8 alphas, 3 loads): ``.venv/bin/python benchmarks/reproduce/moldable_fig5.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from moldable_common import run_sweep

from baselines.moldable import ALPHA_GRID

FIGURE = "hrf-fig5"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 5: with threshold = 0.9, a larger alpha (processor budget) raises AWT and "
    "lowers ART for both HRF-FCFS and HRF-Bf; ATT of HRF-FCFS is U-shaped at light/middle load and rises at heavy "
    "load; HRF-Bf prefers larger alpha under heavier load."
)


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
    )


if __name__ == "__main__":
    raise SystemExit(main())
