"""Text and picture renderings of the malleable env (``render_mode`` "ansi" and "rgb_array")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from schedenv.display import RENDER_JOBS, agg_figure, figure_rgb
from schedenv.malleable.sim import MalleableState


def render_text(state: MalleableState, window: np.ndarray, n_servers: float) -> str:
    """A table of the jobs in the window: id, size, remaining, age; plus the count outside it."""
    lines = [f"t = {state.time:.6g}   jobs = {state.n_jobs}   N = {n_servers:g}   completed = {state.n_completed}"]
    lines.append(f"{'slot':>4} {'job':>6} {'size':>12} {'remaining':>12} {'age':>12}")
    for slot, index in enumerate(window):
        lines.append(
            f"{slot:>4} {state.job_id[index]:>6} {state.size[index]:>12.6g} "
            f"{state.remaining[index]:>12.6g} {state.time - state.arrival[index]:>12.6g}"
        )
    outside = state.n_jobs - window.size
    if outside:
        lines.append(f"... {outside} more jobs outside the window")
    return "\n".join(lines)


Interval = tuple[float, float, np.ndarray, np.ndarray]
"""One decision epoch of the allocation history: start, end, the job ids and their fractions theta."""


def allocation_bars(history: Iterable[Interval]) -> list[tuple[float, float, float, float, int]]:
    """The bars of the allocation chart: (start, width, bottom, height, job id; -1 for the grey rest).

    Each epoch gets one bar per job for its first ``RENDER_JOBS`` jobs and one grey bar for the rest,
    so the chart of ``RENDER_WINDOW`` epochs has a bounded number of bars whatever the queue length.
    """
    bars = []
    for start, end, job_ids, theta in history:
        shares = theta[:RENDER_JOBS].tolist()
        tops = np.cumsum(theta[:RENDER_JOBS]).tolist()
        for job, share, top in zip(job_ids[:RENDER_JOBS].tolist(), shares, tops, strict=True):
            bars.append((start, end - start, top - share, share, int(job)))
        rest = float(theta[RENDER_JOBS:].sum())
        if rest > 0:
            bars.append((start, end - start, tops[-1], rest, -1))
    return bars


def render_allocation(history: Sequence[Interval], now: float) -> np.ndarray:
    """Stacked allocation over time: each interval's fractions theta, one colour per job (``allocation_bars``)."""
    import matplotlib

    figure = agg_figure(6, 3)
    axes = figure.add_subplot()
    colours = matplotlib.colormaps["tab20"]
    for start, width, bottom, height, job in allocation_bars(history):
        colour = "lightgrey" if job < 0 else colours(job % 20)
        axes.bar(start, height, width=width, bottom=bottom, align="edge", color=colour)
    first = history[0][0] if history else 0.0
    axes.set_xlim(first, max(now, first + 1e-12))
    axes.set_ylim(0.0, 1.0)
    axes.set_xlabel("time")
    axes.set_ylabel("fraction of servers")
    return figure_rgb(figure)
