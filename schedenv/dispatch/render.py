"""Text and picture renderings of the dispatch env (``render_mode`` "ansi" and "rgb_array")."""

from __future__ import annotations

import math

import numpy as np

from schedenv.dispatch.sim import DispatchSim
from schedenv.display import agg_figure, figure_rgb


def _limit_text(limit: float) -> str:
    return "inf" if math.isinf(limit) else f"{limit:.3g}"


def render_text(sim: DispatchSim) -> str:
    """One line per host (running job, its limit and elapsed time, queue length) and the central queue."""
    lines = [f"t = {sim.time:.6g}   jobs = {len(sim.present)}   completed = {sim.tally.n_completed}"]
    for host, job in enumerate(sim.running):
        if job is None:
            lines.append(f"host {host}: idle")
            continue
        elapsed = sim.time - sim.run_start[host]
        lines.append(
            f"host {host}: job {job.job_id} running {elapsed:.4g} of limit {_limit_text(sim.limits[job.limit])}, "
            f"{len(sim.queues[host])} queued"
        )
    lines.append(f"central queue: {len(sim.central)} jobs")
    if sim.pending is not None:
        job = sim.pending
        known = "none" if job.exceeded < 0 else f"> {_limit_text(sim.limits[job.exceeded])}"
        lines.append(f"deciding: job {job.job_id}, age {sim.time - job.arrival:.4g}, size {known}, hosts {job.hosts}")
    return "\n".join(lines)


def render_queues(sim: DispatchSim) -> np.ndarray:
    """Bars of the jobs at each host (running + queued) and at the central queue, as an RGB array."""
    figure = agg_figure(5, 3)
    axes = figure.add_subplot()
    h = sim.params.n_hosts
    running = [0 if job is None else 1 for job in sim.running] + [0]
    queued = [len(q) for q in sim.queues] + [len(sim.central)]
    labels = [f"host {i}" for i in range(h)] + ["central"]
    axes.bar(labels, running, color="tab:orange", label="running")
    axes.bar(labels, queued, bottom=running, color="tab:blue", label="queued")
    axes.set_ylabel("jobs")
    axes.set_title(f"t = {sim.time:.4g}")
    axes.legend(loc="upper right")
    return figure_rgb(figure)
