"""Backends that run independent tasks: a local process pool (default) or a Ray cluster.

Both take a top-level function and a list of picklable tasks and yield ``(index, result)`` as
tasks finish, in completion order, so the caller can cache and show progress as it goes. The
numbers cannot depend on the backend: a task's result depends only on its arguments (every
random draw comes from the seeds inside it). The RL harness can run training sweeps (one task per
seed or config) through the same ``run_tasks``.

- ``local``: ``workers`` processes (``spawn``, so that no thread or lock state of the parent is
  inherited); ``workers=1`` runs in this process, in order. The workers die with their parent, even
  when it is killed with ``kill -9`` (no cleanup code runs then): on Linux each worker asks the
  kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``), elsewhere a daemon thread
  in each worker polls the parent's pid once a second. Multiprocessing's resource tracker then
  exits as well, since the last process holding its pipe is gone.
- ``ray``: joins the cluster at ``address`` (``"auto"``, ``"ray://host:10001"``, ...) or starts a
  local Ray instance with ``workers`` CPUs when ``address`` is None, and shuts the local one down
  afterwards. Every node must have schedenv installed (the tasks import it). The local instance dies
  with its driver, even on ``kill -9``: Ray itself kills its GCS server, raylet and workers then
  (it starts them with ``PR_SET_PDEATHSIG``), and ``schedenv.reaper`` kills the raylet's two agents,
  which would otherwise linger for a minute; a cluster joined at ``address`` is left alone.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

from schedenv import reaper as reaper_module
from schedenv.validation import check_choice, check_int

BACKENDS: tuple[str, ...] = ("local", "ray")

Task = TypeVar("Task")


def run_tasks(
    function: Callable[[Task], Any],
    tasks: Sequence[Task],
    *,
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
) -> Iterator[tuple[int, Any]]:
    """Run ``function(task)`` for every task; yields ``(index into tasks, result)`` as each finishes."""
    check_choice("backend", backend, BACKENDS)
    check_int("workers", workers)
    if address is not None and backend != "ray":
        raise ValueError(f"address={address!r} is only used with backend='ray', not backend={backend!r}")
    if not tasks:
        return iter(())
    if backend == "ray":
        return _run_ray(function, tasks, workers, address)
    return _run_local(function, tasks, workers)


def _run_local(function: Callable[[Task], Any], tasks: Sequence[Task], workers: int) -> Iterator[tuple[int, Any]]:
    if workers == 1:
        for index, task in enumerate(tasks):
            yield index, function(task)
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)),
        mp_context=context,
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )
    try:
        pending: dict[Future[Any], int] = {pool.submit(function, task): index for index, task in enumerate(tasks)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
    finally:
        # On an interrupt, queued tasks are dropped and running ones are not waited for.
        pool.shutdown(wait=False, cancel_futures=True)


_PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal this process receives when its parent dies (linux/prctl.h)."""


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this process when ``parent`` (the pool's owner) dies.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, then one check that the parent did not die before
    the call. Other systems: a daemon thread that exits the process once its parent pid changes.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:
                os._exit(1)
            return
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def ray_available() -> bool:
    """Whether the ``ray`` package (the ``dist`` extra) can be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _run_ray(
    function: Callable[[Task], Any], tasks: Sequence[Task], workers: int, address: str | None
) -> Iterator[tuple[int, Any]]:
    try:
        import ray
    except ImportError as error:
        raise ValueError(
            f"backend='ray' needs the ray package ({error}); install the dist extra: pip install -e '.[dist]'"
        ) from error
    started_here = not ray.is_initialized()
    reaper = None
    if started_here:
        if address is None:
            before = reaper_module.children(os.getpid())
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
            reaper = reaper_module.start(reaper_module.children(os.getpid()) - before)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(function)
        pending = {remote.remote(task): index for index, task in enumerate(tasks)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for reference in done:
                yield pending.pop(reference), ray.get(reference)
    finally:
        if started_here:
            ray.shutdown()
            reaper_module.release(reaper)
