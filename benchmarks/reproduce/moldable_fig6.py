"""HRF paper Fig. 6: the effect of threshold on ATT, AWT and ART (alpha = 1), HRF-FCFS and HRF-EASY.

Full run (10 seeds, thresholds 0.1 to 1, 3 loads): ``.venv/bin/python benchmarks/reproduce/moldable_fig6.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from moldable_common import run_sweep

FIGURE = "hrf-fig6"
DESCRIPTION = (
    "HRF paper (Wu et al., CF'15) Fig. 6: with alpha = 1, a larger threshold raises AWT and lowers ART for both "
    "HRF-FCFS and HRF-Bf; ATT fluctuates for threshold < 0.3 and is stable above it."
)
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


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
    )


if __name__ == "__main__":
    raise SystemExit(main())
