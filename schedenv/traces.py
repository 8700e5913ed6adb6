"""Standard Workload Format (SWF) traces: reader, writer and replay (DESIGN §1, §4).

The SWF of the Parallel Workloads Archive (Chapin et al. 1999; Feitelson et al. 2014) is a text
file with one job per line and 18 whitespace-separated fields; ``-1`` marks a missing value and
lines starting with ``;`` are header comments (``; MaxProcs: 128`` and the like). The fields, in
order, are :data:`SWF_FIELDS`.

``read_swf``/``parse_swf`` return an :class:`SWFTrace` (an ``(n, 18)`` float array plus the header);
``write_swf`` writes one back (integral values without a decimal point, so a trace read and written
again is unchanged up to whitespace); ``trace_from_records`` turns a simulation's finished-job
records into a trace, so a schedule can be inspected with the archive's tools; ``replay_jobs``
extracts the submit times, run times and processor counts that an env replays.

>>> trace = parse_swf("; MaxProcs: 8\\n1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\\n")
>>> trace.max_procs, len(trace), float(trace.column("run_time")[0])
(8, 1, 100.0)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SWF_FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)
"""The 18 SWF fields in file order (Parallel Workloads Archive, "The Standard Workload Format")."""

_HEADER_LINE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9 _-]*?)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class SWFTrace:
    """A parsed SWF trace: ``data`` is ``(n_jobs, 18)`` float64 (``-1`` = missing)."""

    data: np.ndarray
    header: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        data = np.asarray(self.data, dtype=np.float64)
        if data.ndim != 2 or data.shape[1] != len(SWF_FIELDS):
            raise ValueError(f"SWF data must have shape (n_jobs, {len(SWF_FIELDS)}), got {data.shape}")
        object.__setattr__(self, "data", data)

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def column(self, name: str) -> np.ndarray:
        """The values of field ``name`` (one of :data:`SWF_FIELDS`) for every job."""
        if name not in SWF_FIELDS:
            from schedenv.validation import suggest

            raise ValueError(f"unknown SWF field {name!r}{suggest(name, SWF_FIELDS)}; fields: {list(SWF_FIELDS)}")
        return self.data[:, SWF_FIELDS.index(name)]

    @property
    def max_procs(self) -> int | None:
        """The machine size from the ``MaxProcs`` (or ``MaxNodes``) header, if present."""
        for key in ("MaxProcs", "MaxNodes"):
            value = self.header.get(key, "").split()
            if value and value[0].lstrip("-").isdigit() and int(value[0]) > 0:
                return int(value[0])
        return None


def parse_swf(text: str) -> SWFTrace:
    """Parse SWF ``text``: header comments into ``header``, each job line into a row."""
    header: dict[str, str] = {}
    rows: list[list[float]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(";"):
            match = _HEADER_LINE.match(line)
            if match:
                header.setdefault(match.group(1).strip(), match.group(2))
            continue
        parts = line.split()
        if len(parts) != len(SWF_FIELDS):
            raise ValueError(f"SWF line {number} has {len(parts)} fields; the format has {len(SWF_FIELDS)}: {raw!r}")
        try:
            rows.append([float(part) for part in parts])
        except ValueError as error:
            raise ValueError(f"SWF line {number} holds a non-numeric field: {raw!r}") from error
    data = np.array(rows, dtype=np.float64).reshape(len(rows), len(SWF_FIELDS))
    return SWFTrace(data, header)


def read_swf(path: str | os.PathLike[str]) -> SWFTrace:
    """Read the SWF file at ``path`` (see :func:`parse_swf`)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_swf(handle.read())


def format_swf(trace: SWFTrace) -> str:
    """The SWF text of ``trace``: its header as ``; Key: value`` comments, then one line per job."""
    lines = [f"; {key}: {value}" for key, value in trace.header.items()]
    lines.extend(" ".join(_format_value(value) for value in row) for row in trace.data)
    return "\n".join(lines) + "\n"


def write_swf(path: str | os.PathLike[str], trace: SWFTrace) -> None:
    """Write ``trace`` to ``path`` in SWF."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(format_swf(trace))


def trace_from_records(records: Sequence[Any], max_procs: int | None = None) -> SWFTrace:
    """An SWF trace of finished moldable jobs (records with arrival, start, completion, procs).

    Job numbers are ``job_id + 1`` (SWF counts from 1); the allocated and requested processors
    are both the count the job ran with; fields the simulation does not know are ``-1``.
    """
    data = np.full((len(records), len(SWF_FIELDS)), -1.0)
    for row, record in zip(data, records, strict=True):
        row[0] = record.job_id + 1
        row[1] = record.arrival
        row[2] = record.start - record.arrival
        row[3] = record.completion - record.start
        row[4] = row[7] = record.procs
        row[10] = 1
    header = {"Version": "2.2", "Note": "written by schedenv from simulated job records"}
    if max_procs is not None:
        header["MaxProcs"] = str(int(max_procs))
    return SWFTrace(data, header)


@dataclass(frozen=True)
class ReplayJobs:
    """The jobs of a trace that can be replayed, with submit times shifted to start at 0."""

    job_number: np.ndarray
    submit: np.ndarray
    run_time: np.ndarray
    procs: np.ndarray
    """Allocated processors (the requested count when the allocated one is missing)."""
    skipped: int
    """Jobs left out because their run time or processor count is missing or not positive."""


def replay_jobs(trace: SWFTrace, n_jobs: int | None = None) -> ReplayJobs:
    """The first ``n_jobs`` replayable jobs of ``trace`` in submit order (all when None).

    A job is replayable when its run time and its processor count (allocated, else requested)
    are positive: the archive marks failed or cancelled-before-start jobs with 0 or -1 there.
    """
    run_time = trace.column("run_time")
    procs = trace.column("allocated_processors").copy()
    missing = procs <= 0
    procs[missing] = trace.column("requested_processors")[missing]
    usable = (run_time > 0) & (procs > 0) & (trace.column("submit_time") >= 0)
    order = np.flatnonzero(usable)
    order = order[np.argsort(trace.column("submit_time")[order], kind="stable")]
    if n_jobs is not None:
        order = order[:n_jobs]
    if order.size == 0:
        raise ValueError("the trace has no replayable job (each needs a positive run time and processor count)")
    submit = trace.column("submit_time")[order]
    return ReplayJobs(
        job_number=trace.column("job_number")[order].astype(np.int64),
        submit=submit - submit[0],
        run_time=run_time[order].copy(),
        procs=procs[order].astype(np.int64),
        skipped=int((~usable).sum()),
    )


def _format_value(value: float) -> str:
    if np.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(float(value))
