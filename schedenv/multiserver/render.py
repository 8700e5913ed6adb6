"""Text and picture renderings of the multiserver-job env (``render_mode`` "ansi" and "rgb_array")."""

from __future__ import annotations

import numpy as np

from schedenv.display import agg_figure, figure_rgb
from schedenv.multiserver.sim import MultiserverState


def render_text(state: MultiserverState, window: np.ndarray, selected: np.ndarray, scale: float) -> str:
    """A table of the window's jobs (need, remaining size, age, flags) and the count outside it."""
    busy = int(state.server_need[state.in_service].sum())
    lines = [
        f"t = {state.time:.6g}   jobs = {state.n_jobs}   k = {state.n_servers}   "
        f"busy (last interval) = {busy}   completed = {state.n_completed}"
    ]
    lines.append(f"{'slot':>4} {'job':>6} {'need':>5} {'remaining':>12} {'age':>12} {'sel':>4} {'srv':>4}")
    remaining, age = state.remaining_size, state.age
    for slot, index in enumerate(window.tolist()):
        lines.append(
            f"{slot:>4} {state.job_id[index]:>6} {state.server_need[index]:>5} {remaining[index]:>12.6g} "
            f"{age[index]:>12.6g} {'x' if selected[index] else '':>4} {'x' if state.in_service[index] else '':>4}"
        )
    outside = state.n_jobs - window.size
    if outside:
        lines.append(f"... {outside} more jobs outside the window")
    return "\n".join(lines)


def render_servers(state: MultiserverState, window: np.ndarray) -> np.ndarray:
    """Top: the k servers, coloured by the job holding them in the last interval. Bottom: the
    window's remaining sizes as bars whose width is the need."""
    import matplotlib

    figure = agg_figure(6, 4)
    top, bottom = figure.subplots(2, 1, gridspec_kw={"height_ratios": [1, 3]})
    colours = matplotlib.colormaps["tab20"]
    start = 0
    for index in np.flatnonzero(state.in_service).tolist():
        need = int(state.server_need[index])
        top.barh(0, need, left=start, color=colours(int(state.job_id[index]) % 20), edgecolor="black")
        start += need
    top.set_xlim(0, state.n_servers)
    top.set_yticks([])
    top.set_title(f"servers at t = {state.time:.4g}")
    remaining = state.remaining_size
    left = 0.0
    for index in window.tolist():
        need = int(state.server_need[index])
        bottom.bar(left, remaining[index], width=need, align="edge", color=colours(int(state.job_id[index]) % 20))
        left += need
    bottom.set_xlabel("window jobs (bar width = server need)")
    bottom.set_ylabel("remaining size")
    return figure_rgb(figure)
