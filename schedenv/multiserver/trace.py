"""Replay real traces in the multiserver-job queue: the Alibaba GPU trace of 2023 and SWF files.

SWF (the Parallel Workloads Archive's Standard Workload Format, read by ``schedenv.traces``):
server need = the requested processors (the allocated ones when the request is missing), scaled
to k servers as ceil(procs k / MaxProcs) and rounded up to the nearest divisor of k, so that the
paper's policies apply (ServerFilling when k is a power of two, DivisorFilling otherwise);
duration = run time; arrival = submit time. Malformed fields follow ``schedenv.traces.SWF_POLICY``
(records the archive marks invalid are skipped and counted in a warning; values no model can
represent are refused with the line number). Arrival times are then scaled to the requested load.

The trace (``cluster-trace-gpu-v2023``, file ``openb_pod_list_default.csv`` of alibaba/clusterdata;
Weng et al., "Beware of Fragmentation", USENIX ATC 2023) ships with the package, gzip-compressed,
as ``schedenv/data/alibaba-gpu-2023-default.csv.gz``; ``schedenv/data/README.md`` gives its source
and its terms of use (study or research only, not the MIT licence). Mapping to the model of
Grosof et al. 2022 §3.1:

- server need k_j = ``num_gpu``; tasks with ``num_gpu`` = 0 (CPU only) are dropped, and a
  GPU-sharing task (``gpu_milli`` < 1000) holds one whole GPU (the model has no fractional need);
- arrival = ``creation_time``; duration d_j = ``deletion_time - scheduled_time``; tasks never
  scheduled (no ``scheduled_time``, the "Pending" ones) are dropped. Tasks still "Running" at the
  snapshot end there (their durations are censored), as in the trace;
- the trace's own load on one 8-GPU node is about 2, so arrival times are scaled by one constant
  factor to give the requested load rho = lambda E[S] on ``n_servers`` GPUs (the order and relative
  spacing of arrivals, i.e. the burstiness, are kept).
"""

from __future__ import annotations

import csv
import gzip
import io
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from schedenv.traces import GZIP_MAGIC, SWF_FIELDS, open_text, read_replay
from schedenv.validation import check_int, check_positive

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

ALIBABA_GPU_TRACE = files("schedenv") / "data" / "alibaba-gpu-2023-default.csv.gz"
"""The trace shipped as package data, found through ``importlib.resources`` (in any working directory)."""


def read_alibaba_gpu_trace(path: str | Path | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrival times (s, from 0, sorted), GPU needs and durations (s) of the trace's GPU tasks.

    ``path`` defaults to the copy shipped with the package; another copy of the CSV file may be
    given, plain or gzip-compressed (a name ending in ``.gz``).
    """
    source: Traversable | Path = ALIBABA_GPU_TRACE if path is None else Path(path)
    if path is None and not source.is_file():
        raise FileNotFoundError(f"the Alibaba GPU trace shipped with schedenv is missing ({source}): a broken install")
    if not source.is_file():
        raise FileNotFoundError(
            f"Alibaba GPU trace file {str(path)!r} not found; give the path of its CSV file (plain or .gz), or no "
            "path (trace='alibaba' in the env) for the copy shipped with schedenv"
        )
    data = source.read_bytes()
    text = (gzip.decompress(data) if data[:2] == GZIP_MAGIC else data).decode("utf-8-sig")
    arrivals, needs, durations = [], [], []
    for row in csv.DictReader(io.StringIO(text, newline="")):
        gpus = int(row["num_gpu"] or 0)
        if gpus == 0 or not row["scheduled_time"] or not row["deletion_time"]:
            continue
        duration = float(row["deletion_time"]) - float(row["scheduled_time"])
        if duration <= 0:
            continue
        arrivals.append(float(row["creation_time"]))
        needs.append(gpus)
        durations.append(duration)
    arrival = np.asarray(arrivals)
    order = np.argsort(arrival, kind="stable")
    return arrival[order] - arrival[order][0], np.asarray(needs, dtype=np.int64)[order], np.asarray(durations)[order]


def scale_to_load(
    arrivals: np.ndarray, needs: np.ndarray, durations: np.ndarray, n_servers: int, load: float
) -> np.ndarray:
    """Arrival times multiplied by the one factor that makes the job set's load ``load``.

    The load of a finite job set is its total size sum_j k_j d_j / k over its arrival span, the
    empirical lambda E[S] (§3.1).
    """
    k = check_int("n_servers", n_servers)
    rho = check_positive("load", load)
    span = float(arrivals[-1] - arrivals[0])
    if span <= 0:
        raise ValueError("the replayed tasks all arrive at once; there is no arrival rate to scale")
    total_size = float((needs * durations).sum()) / k
    return arrivals[0] + (arrivals - arrivals[0]) * (total_size / (rho * span))


def read_swf_jobs(path: str | Path, n_servers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrival times (from 0, sorted), server needs scaled to ``n_servers`` and durations of an SWF trace.

    The file is streamed, and malformed fields are treated as ``schedenv.traces.SWF_POLICY`` says
    (the same policy as the Moldable replay; processor counts above MaxProcs are refused, not clamped).
    """
    k = check_int("n_servers", n_servers)
    replay = read_replay(path, processors="requested")
    max_procs = replay.max_procs or int(replay.procs.max())
    divisors = np.array([d for d in range(1, k + 1) if k % d == 0])
    wanted = np.ceil(replay.procs * k / max_procs)
    needs = divisors[np.searchsorted(divisors, wanted)]
    return replay.submit, needs.astype(np.int64), replay.run_time


ALIBABA_COLUMNS = ("creation_time", "scheduled_time", "deletion_time", "num_gpu")
"""The columns of the Alibaba GPU CSV that the replay reads."""


def trace_format(trace: str) -> str:
    """``"swf"`` or ``"alibaba"``: the format of the trace file at ``trace`` (plain or gzip), by content.

    An SWF file's first line is a ``;`` header comment or a job line of 18 numbers; the Alibaba CSV's
    is a header naming ``ALIBABA_COLUMNS``. Any other file is refused naming what was found, so a
    wrong file fails here rather than deep in a reader (``KeyError: 'num_gpu'``).
    """
    if not Path(trace).is_file():
        raise FileNotFoundError(
            f"trace file {trace!r} not found; give 'alibaba', or the path of an SWF file or of the Alibaba GPU CSV "
            "(plain or .gz)"
        )
    try:
        with open_text(trace) as handle:
            first = next((line.strip() for line in handle if line.strip()), "")
    except (OSError, EOFError) as error:  # a truncated or corrupt gzip stream
        raise ValueError(f"trace={trace!r} is not allowed: it cannot be read ({error})") from error
    first = first.lstrip("\ufeff")
    fields = first.split()
    if first.startswith(";") or (len(fields) == len(SWF_FIELDS) and all(_is_number(f) for f in fields)):
        return "swf"
    if all(column in first.split(",") for column in ALIBABA_COLUMNS):
        return "alibaba"
    raise ValueError(
        f"trace={trace!r} is not allowed: its first line {first[:80]!r} is neither SWF (';' header comments or job "
        f"lines of {len(SWF_FIELDS)} numbers, plain or .gz) nor the Alibaba GPU CSV (a header with the columns "
        f"{list(ALIBABA_COLUMNS)})"
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
