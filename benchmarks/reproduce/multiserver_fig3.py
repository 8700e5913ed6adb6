"""Reproduce Fig. 3 of Grosof, Scully, Harchol-Balter, Scheller-Wolf (POMACS 2022): the ratio of
E[T] to the resource-pooled SRPT-1 for k = 8, needs uniform on {1, 2, 4, 8}, exponential sizes.

The paper simulates 10^7 arrivals per point; by default we run 10^6 per (load, seed) with
the compiled fast path (``--arrivals`` raises it). Ratios are taken per seed against SRPT-1 run
on the same job stream.
"""

from __future__ import annotations

import sys
from pathlib import Path

import baselines
from schedenv.workloads import Distribution, Exponential

# benchmarks/ is not a package: the sweep code is the module beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _claims import CheckedClaim, claim
from multiserver_sweeps import Sweep, sweep, sweep_settings, write_figure

FIGURE = "multiserver-fig3"
DESCRIPTION = (
    "Fig. 3 (k = 8, needs uniform on {1, 2, 4, 8}, exponential sizes): the ratio E[T] / E[T^SRPT-1] of "
    "ServerFilling-SRPT converges to 1 as rho -> 1 (Theorem 4.2), while the ratios of ServerFilling and "
    "MaxWeight stay far from 1 and grow; ServerFilling-SRPT is best at every load."
)
POLICIES = ["serverfilling-srpt", "serverfilling", "maxweight"]
LOADS = [0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99]
QUICK_LOADS = [0.5, 0.8, 0.9, 0.95]


def ratio_verdicts(result: Sweep, prefix: str) -> list[CheckedClaim]:
    """The claims of Figs. 3 and 4, checked on the sweep (claim ids start with ``prefix``)."""
    reference, loads = "serverfilling-srpt", result.loads
    ratios = {p: [result.ratio(p, x).mean for x in loads] for p in result.policies}
    best = all(ratios[reference][i] <= min(r[i] for r in ratios.values()) for i in range(len(loads)))
    peak = max(range(len(loads)), key=lambda i: ratios[reference][i])
    falling = peak < len(loads) - 1 and ratios[reference][-1] < ratios[reference][peak]
    verdicts = [
        claim(f"{prefix}-best", best, "ServerFilling-SRPT has the smallest ratio at every load."),
        claim(
            f"{prefix}-ratio-to-1",
            falling,
            f"ServerFilling-SRPT's ratio falls toward 1 (Theorem 4.2): it peaks at rho = {loads[peak]:g} "
            f"({ratios[reference][peak]:.3g}) and falls to {ratios[reference][-1]:.3g} at rho = {loads[-1]:g}.",
        ),
    ]
    for policy in result.policies:
        if policy != reference:
            verdicts.append(
                claim(
                    f"{prefix}-{policy}-grows",
                    ratios[policy][-1] > ratios[policy][0],
                    f"{policy}'s ratio stays far from 1 and grows: {ratios[policy][0]:.3g} at rho = {loads[0]:g}, "
                    f"{ratios[policy][-1]:.3g} at rho = {loads[-1]:g}.",
                )
            )
    within = all(result.ratio(reference, x).mean <= bound for x, bound in zip(loads, bounds(result), strict=True))
    verdicts.append(
        claim(
            f"{prefix}-thm41",
            within,
            "ServerFilling-SRPT's ratio lies below Theorem 4.1's bound at every load (the last column: "
            "(E[T^SRPT-1] + gap) / E[T^SRPT-1] with the Schrage-Miller mean; smallest bound / ratio "
            f"{min(b / result.ratio(reference, x).mean for x, b in zip(loads, bounds(result), strict=True)):.3g}).",
        )
    )
    return verdicts


def bounds(result: Sweep) -> list[float]:
    """Theorem 4.1 as a ratio to the Schrage-Miller mean, per load."""
    return [(result.schrage_miller[x] + result.gap_bound[x]) / result.schrage_miller[x] for x in result.loads]


def run(argv: list[str] | None, figure: str, description: str, size_dist: Distribution, script: str) -> int:
    """Shared by Figs. 3 and 4, which differ only in the size law (claim ids: "fig3-...", "fig4-...")."""
    settings = sweep_settings(argv, description, LOADS, QUICK_LOADS)
    policies = {name: baselines.make(name) for name in POLICIES}
    result = sweep(policies, settings.loads, settings.n_arrivals, settings.seeds, size_dist=size_dist)
    verdicts = ratio_verdicts(result, figure.removeprefix("multiserver-"))
    print(write_figure(result, figure, description, script, argv, "ratio", verdicts, settings.out))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(argv, FIGURE, DESCRIPTION, Exponential(1.0), "multiserver_fig3.py")


if __name__ == "__main__":
    raise SystemExit(main())
