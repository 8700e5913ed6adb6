"""Text and picture renderings of the moldable env (``render_mode`` "ansi" and "rgb_array")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedenv.display import agg_figure, figure_rgb
from schedenv.moldable.sim import MoldableJobRecord, MoldableView


def render_text(view: MoldableView) -> str:
    """The window's queued jobs (slot, job, wait, n_min, fastest runtime) and the running jobs."""
    lines = [
        f"t = {view.time:.6g}   free = {view.free}/{view.n_procs}   queued = {view.n_queued}   "
        f"running = {view.running_job.size}   to arrive = {view.n_pending}"
    ]
    lines.append(f"{'slot':>4} {'job':>6} {'waited':>12} {'n_min':>6} {'T(n_min)':>12} {'T(m)':>12}")
    for slot in range(view.window_size):
        row = view.queue_runtime[slot]
        n_min = int(view.queue_n_min[slot])
        lines.append(
            f"{slot:>4} {int(view.queue_job[slot]):>6} {view.time - view.queue_submit[slot]:>12.6g} "
            f"{n_min:>6} {row[n_min - 1]:>12.6g} {row[-1]:>12.6g}"
        )
    if view.n_queued > view.window_size:
        lines.append(f"... {view.n_queued - view.window_size} more queued jobs outside the window")
    for job, procs, end in zip(view.running_job, view.running_procs, view.running_end, strict=True):
        lines.append(f"running job {int(job):>6} on {int(procs):>4} processors until {end:.6g}")
    return "\n".join(lines)


def render_gantt(records: Sequence[MoldableJobRecord], view: MoldableView) -> np.ndarray:
    """Busy processors over time (the finished jobs given, e.g. the last ``RENDER_WINDOW``, and the
    running ones) as an RGB array."""
    starts = [r.start for r in records] + view.running_start.tolist()
    ends = [r.completion for r in records] + view.running_end.tolist()
    procs = [r.procs for r in records] + view.running_procs.tolist()
    figure = agg_figure(6, 3)
    axes = figure.add_subplot()
    if starts:
        times = np.unique(np.concatenate([starts, ends, [view.time]]))
        busy = np.zeros(times.size)
        for start, end, count in zip(starts, ends, procs, strict=True):
            busy[(times >= start) & (times < end)] += count
        axes.step(times, busy, where="post", color="tab:blue")
        axes.fill_between(times, busy, step="post", alpha=0.3, color="tab:blue")
    axes.axvline(view.time, color="tab:red", linewidth=0.8)
    axes.set_ylim(0, view.n_procs)
    axes.set_xlabel("time (s)")
    axes.set_ylabel("busy processors")
    return figure_rgb(figure)
