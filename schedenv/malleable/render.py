"""Text and picture renderings of the malleable env (``render_mode`` "ansi" and "rgb_array")."""

from __future__ import annotations

import numpy as np

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


def render_allocation(history: list[tuple[float, float, np.ndarray, np.ndarray]], now: float) -> np.ndarray:
    """Stacked allocation over time: each interval's fractions theta, one colour per job."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 3), dpi=80)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    colours = matplotlib.colormaps["tab20"]
    for start, end, job_ids, theta in history:
        bottom = 0.0
        for job, share in zip(job_ids, theta, strict=True):
            axes.bar(start, share, width=end - start, bottom=bottom, align="edge", color=colours(int(job) % 20))
            bottom += float(share)
    axes.set_xlim(0.0, max(now, 1e-12))
    axes.set_ylim(0.0, 1.0)
    axes.set_xlabel("time")
    axes.set_ylabel("fraction of servers")
    figure.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
