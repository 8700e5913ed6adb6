"""Standard Workload Format (SWF) traces: reader, writer and replay (docs/envs/index.md).

The SWF of the Parallel Workloads Archive (Chapin et al. 1999; Feitelson et al. 2014) is a text
file with one job per line and 18 whitespace-separated fields; ``-1`` marks a missing value and
lines starting with ``;`` are header comments (``; MaxProcs: 128`` and the like). The fields, in
order, are :data:`SWF_FIELDS`.

``read_swf``/``parse_swf`` return an :class:`SWFTrace` (an ``(n, 18)`` float array plus the header);
``write_swf`` writes one back (integral values without a decimal point, so a trace read and written
again is unchanged up to whitespace); ``trace_from_records`` turns a simulation's finished-job
records into a trace, so a schedule can be inspected with the archive's tools; ``replay_jobs``
(or ``read_replay``, streamed from a file) extracts the submit times, run times and processor counts
that an env replays, treating malformed fields as :data:`SWF_POLICY` says.

>>> trace = parse_swf("; MaxProcs: 8\\n1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\\n")
>>> trace.max_procs, len(trace), float(trace.column("run_time")[0])
(8, 1, 100.0)
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import warnings
from array import array
from collections.abc import Iterable, Iterator, Sequence
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
        return _header_max_procs(self.header)


def _header_max_procs(header: dict[str, str]) -> int | None:
    for key in ("MaxProcs", "MaxNodes"):
        value = header.get(key, "").split()
        if value and value[0].lstrip("-").isdigit() and int(value[0]) > 0:
            return int(value[0])
    return None


def parse_swf(text: str) -> SWFTrace:
    """Parse SWF ``text``: header comments into ``header``, each job line into a row."""
    header: dict[str, str] = {}
    rows = [_parse_line(line, raw, number) for number, raw, line in _job_lines(text.splitlines(), header)]
    data = np.array(rows, dtype=np.float64).reshape(len(rows), len(SWF_FIELDS))
    return SWFTrace(data, header)


def _job_lines(lines: Iterable[str], header: dict[str, str]) -> Iterator[tuple[int, str, str]]:
    """(line number, raw line, stripped line) of each job line; header comments go into ``header`` as they come."""
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(";"):
            match = _HEADER_LINE.match(line)
            if match:
                header.setdefault(match.group(1).strip(), match.group(2))
            continue
        yield number, raw, line


def _parse_line(line: str, raw: str, number: int) -> list[float]:
    """The 18 numbers of the job line ``line`` (``raw`` and ``number`` for the error message)."""
    parts = line.split()
    if len(parts) != len(SWF_FIELDS):
        raise ValueError(f"SWF line {number} has {len(parts)} fields; the format has {len(SWF_FIELDS)}: {raw!r}")
    try:
        return [float(part) for part in parts]
    except ValueError as error:
        raise ValueError(f"SWF line {number} holds a non-numeric field: {raw!r}") from error


GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of a gzip file (RFC 1952, §2.3.1)."""


def open_text(path: str | os.PathLike[str]) -> io.TextIOBase:
    """``path`` opened for reading as UTF-8 text (undecodable bytes replaced), gunzipped on the fly
    when it is gzip-compressed, as the Parallel Workloads Archive ships its logs (``*.swf.gz``).

    Compression is recognised by content (the gzip magic bytes), not by name, so a renamed file reads too.
    """
    with open(path, "rb") as probe:
        compressed = probe.read(2) == GZIP_MAGIC
    if compressed:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_swf(path: str | os.PathLike[str]) -> SWFTrace:
    """Read the SWF file at ``path``, plain or gzip-compressed (see :func:`parse_swf`)."""
    with open_text(path) as handle:
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


MAX_SWF_TIME = 1e12
"""Largest submit or run time (seconds, about 31,700 years) a replayed SWF job may have: float64 sums of
such times keep sub-millisecond resolution (1e12 x 2.2e-16 s), larger ones would not (a submit time of
1e300 once reached a division by zero in the Moldable simulator)."""

SWF_POLICY = """\
field (replayed jobs)       value                                  policy
--------------------------  -------------------------------------  ------------------------------------------
any line                    not 18 fields, or a non-number         refuse (ValueError with the line number)
submit, run time, procs,    NaN or +/-inf                          refuse (ValueError with the line number)
  status
submit time                 -1 (missing)                           skip and count
submit time                 other negative, or > MAX_SWF_TIME      refuse (ValueError with the line number)
status                      5 (cancelled)                          skip and count
run time                    -1 (missing) or 0 (never ran)          skip and count
run time                    other negative, or > MAX_SWF_TIME      refuse (ValueError with the line number)
processor count             -1 or 0 in both allocated and          skip and count
                              requested (missing)
processor count             other negative, or not an integer      refuse (ValueError with the line number)
processor count             above the header's MaxProcs            refuse (ValueError with the line number)
"""
"""What the SWF replay does with each malformed field, the same for every family that replays SWF
(``MoldableEnv(trace=...)``, ``MultiserverJobEnv(trace=...)``). Values the archive uses to mark a
record invalid (-1, 0 processors or run time, status 5) are skipped, and the counts are reported
once per read in a ``SWFSkipWarning``; values no model can represent are refused with the line
number, never clamped or rounded (a count of 2.5 or above MaxProcs says the file is wrong)."""

_SKIP_REASONS = (
    "cancelled (status 5)",
    "missing submit time",
    "missing run time",
    "zero run time",
    "missing processors",
)


class SWFSkipWarning(UserWarning):
    """Some jobs of an SWF file were skipped because the archive marks them invalid (see ``SWF_POLICY``)."""


@dataclass(frozen=True)
class ReplayJobs:
    """The jobs of a trace that can be replayed, with submit times shifted to start at 0."""

    job_number: np.ndarray
    submit: np.ndarray
    run_time: np.ndarray
    procs: np.ndarray
    """The processor count (the preferred field, allocated or requested, else the other one)."""
    skipped: int
    """Jobs left out because the archive marks them invalid (see ``SWF_POLICY``)."""
    skip_counts: dict[str, int] = field(default_factory=dict)
    """``skipped`` by reason."""
    max_procs: int | None = None
    """The machine size from the trace's ``MaxProcs`` header, if present."""


_SUBMIT, _RUN, _ALLOCATED, _REQUESTED, _STATUS = (
    SWF_FIELDS.index(name)
    for name in ("submit_time", "run_time", "allocated_processors", "requested_processors", "status")
)


class _ReplayBuilder:
    """Applies ``SWF_POLICY`` row by row and keeps only the replayable jobs, in compact arrays."""

    def __init__(self, source: str, processors: str, max_procs: int | None) -> None:
        if processors not in ("allocated", "requested"):
            raise ValueError(f"processors={processors!r} is not allowed; choose 'allocated' or 'requested'")
        self.source, self.max_procs = source, max_procs
        self.first, self.second = (_ALLOCATED, _REQUESTED) if processors == "allocated" else (_REQUESTED, _ALLOCATED)
        self.columns = tuple(array("d") for _ in range(4))  # job number, submit, run time, processors
        self.counts = dict.fromkeys(_SKIP_REASONS, 0)
        self.total = 0

    def add(self, row: Sequence[float], where: str) -> None:
        self.total += 1
        for index in (_SUBMIT, _RUN, _ALLOCATED, _REQUESTED, _STATUS):
            if not math.isfinite(row[index]):
                raise self._refuse(where, SWF_FIELDS[index], row[index], "cannot be represented (not finite)")
        submit, run_time = row[_SUBMIT], row[_RUN]
        if submit != -1 and not 0 <= submit <= MAX_SWF_TIME:
            raise self._refuse(where, "submit_time", submit, f"must be -1 (missing) or in [0, {MAX_SWF_TIME:g}]")
        if run_time != -1 and not 0 <= run_time <= MAX_SWF_TIME:
            raise self._refuse(where, "run_time", run_time, f"must be -1 (missing) or in [0, {MAX_SWF_TIME:g}]")
        procs = 0.0
        for index in (self.first, self.second):
            value = row[index]
            if value not in (-1, 0) and (value < 0 or value != int(value)):
                raise self._refuse(where, SWF_FIELDS[index], value, "must be -1 (missing) or an integer >= 0")
            if procs <= 0 < value:
                procs = value
        if self.max_procs is not None and procs > self.max_procs:
            raise self._refuse(where, "processor count", procs, f"is above the header's MaxProcs={self.max_procs}")
        reason = (
            "cancelled (status 5)"
            if row[_STATUS] == 5
            else "missing submit time"
            if submit == -1
            else "missing run time"
            if run_time == -1
            else "zero run time"
            if run_time == 0
            else "missing processors"
            if procs <= 0
            else None
        )
        if reason is not None:
            self.counts[reason] += 1
            return
        for column, value in zip(self.columns, (row[0], submit, run_time, procs), strict=True):
            column.append(value)

    def _refuse(self, where: str, name: str, value: float, allowed: str) -> ValueError:
        return ValueError(f"{self.source} {where}: {name}={value!r} {allowed} (see schedenv.traces.SWF_POLICY)")

    def finish(self, n_jobs: int | None) -> ReplayJobs:
        skipped = sum(self.counts.values())
        if skipped:
            detail = ", ".join(f"{count} {reason}" for reason, count in self.counts.items() if count)
            warnings.warn(
                f"{self.source}: skipped {skipped} of {self.total} jobs that the archive marks invalid ({detail}); "
                "see schedenv.traces.SWF_POLICY",
                SWFSkipWarning,
                stacklevel=3,
            )
        number, submit, run_time, procs = (np.frombuffer(column, dtype=np.float64) for column in self.columns)
        order = np.argsort(submit, kind="stable")
        if n_jobs is not None:
            order = order[:n_jobs]
        if order.size == 0:
            raise ValueError(
                f"{self.source} has no replayable job (each needs a positive run time and processor count)"
            )
        kept = submit[order]
        return ReplayJobs(
            job_number=number[order].astype(np.int64),
            submit=kept - kept[0],
            run_time=run_time[order],
            procs=procs[order].astype(np.int64),
            skipped=skipped,
            skip_counts={reason: count for reason, count in self.counts.items() if count},
            max_procs=self.max_procs,
        )


def replay_jobs(trace: SWFTrace, n_jobs: int | None = None, *, processors: str = "allocated") -> ReplayJobs:
    """The first ``n_jobs`` replayable jobs of ``trace`` in submit order (all when None), by ``SWF_POLICY``.

    ``processors`` is the preferred processor field ("allocated": what the job ran on, as the
    Moldable replay wants; "requested": what it asked for); the other is used when it is missing.
    """
    builder = _ReplayBuilder("SWF trace", processors, trace.max_procs)
    for index, row in enumerate(trace.data):
        builder.add(row.tolist(), f"job row {index + 1}")
    return builder.finish(n_jobs)


def read_replay(
    path: str | os.PathLike[str], n_jobs: int | None = None, *, processors: str = "allocated"
) -> ReplayJobs:
    """``replay_jobs`` of the SWF file at ``path`` (plain or gzip-compressed), read line by line (streamed).

    Only the kept jobs' four columns are stored (32 bytes a job), so memory stays near the size of
    the replayed jobs rather than of the file. Header comments are read as they come; ``MaxProcs``
    (or ``MaxNodes``) bounds the processor counts of the job lines after it (the archive's files put
    the header first).
    """
    header: dict[str, str] = {}
    builder: _ReplayBuilder | None = None
    with open_text(path) as handle:
        for number, raw, line in _job_lines(handle, header):
            if builder is None:
                builder = _ReplayBuilder(f"SWF file {os.fspath(path)}", processors, _header_max_procs(header))
            builder.add(_parse_line(line, raw, number), f"line {number}")
    if builder is None:
        raise ValueError(f"SWF file {os.fspath(path)} has no job line")
    return builder.finish(n_jobs)


def _format_value(value: float) -> str:
    if np.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(float(value))
