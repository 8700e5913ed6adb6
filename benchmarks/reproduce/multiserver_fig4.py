"""Reproduce Fig. 4 of Grosof, Scully, Harchol-Balter, Scheller-Wolf (POMACS 2022): the ratio of
E[T] to SRPT-1 under high-variance sizes (hyperexponential, C^2 = 10, balanced means), k = 8,
needs uniform on {1, 2, 4, 8}.

The paper simulates 10^7 arrivals per point; by default we run 10^6 per (load, seed)
(``--arrivals`` raises it). The sweep and the verdicts are those of ``multiserver_fig3.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from schedenv.workloads import HyperExponential

# benchmarks/ is not a package: reuse the Fig. 3 sweep from the script beside this one.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from multiserver_fig3 import run

FIGURE = "multiserver-fig4"
DESCRIPTION = (
    "Fig. 4 (k = 8, needs uniform on {1, 2, 4, 8}, hyperexponential sizes with C^2 = 10): the ratio "
    "E[T] / E[T^SRPT-1] of ServerFilling-SRPT again converges smoothly to 1, while the ratios of MaxWeight "
    "and ServerFilling diverge rapidly."
)


def main(argv: list[str] | None = None) -> int:
    return run(argv, FIGURE, DESCRIPTION, HyperExponential(1.0, 10.0), "multiserver_fig4.py")


if __name__ == "__main__":
    raise SystemExit(main())
