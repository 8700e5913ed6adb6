"""Progress of long runs: tqdm's bar on a terminal, whole lines in a log.

The leaderboard and the paper-figure scripts (``schedenv reproduce``) report progress through
``progress_bar``. On a terminal that is tqdm's bar. When stderr is not a terminal (a log file, CI,
a pipe), the bar's carriage-return redraws would pile up into one unreadable line, so each
finished step prints one plain line instead::

    leaderboard quick: 3/12 cell (25%), 00:14 elapsed, about 00:42 left, k8-exp-load0.7 maxweight
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator, Sized
from typing import Any, Protocol

from tqdm import tqdm


class Progress(Protocol):
    """The calls of tqdm that both kinds of progress answer."""

    def __iter__(self) -> Iterator[Any]: ...

    def __enter__(self) -> Progress: ...

    def __exit__(self, *exc: object) -> None: ...

    def update(self, n: int = 1) -> object: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...

    def write(self, s: str) -> None: ...

    def close(self) -> None: ...


class LineProgress:
    """tqdm's calls, printing one line to stderr per ``update`` and ``write``'s messages as they come."""

    def __init__(
        self,
        iterable: Iterable[Any] | None = None,
        *,
        total: int | None = None,
        desc: str = "",
        unit: str = "it",
        initial: int = 0,
        disable: bool = False,
    ) -> None:
        self.iterable = iterable
        self.total = len(iterable) if total is None and isinstance(iterable, Sized) else total
        self.n = self.initial = initial
        self.desc, self.unit, self.disable = desc, unit, disable
        self.postfix = ""
        self.start = time.perf_counter()

    def __iter__(self) -> Iterator[Any]:
        if self.iterable is None:
            raise TypeError("this progress was made without an iterable; call update() per step instead")
        for item in self.iterable:
            yield item
            self.update()

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def line(self) -> str:
        """``<desc>: <n>/<total> <unit> (<percent>), <elapsed> elapsed, about <time> left, <postfix>``."""
        elapsed = time.perf_counter() - self.start
        if self.total:
            parts = [f"{self.desc}: {self.n}/{self.total} {self.unit} ({100 * self.n / self.total:.0f}%)"]
        else:
            parts = [f"{self.desc}: {self.n} {self.unit}"]
        parts.append(f"{tqdm.format_interval(elapsed)} elapsed")
        if self.total and self.initial < self.n < self.total:
            left = elapsed / (self.n - self.initial) * (self.total - self.n)
            parts.append(f"about {tqdm.format_interval(left)} left")
        if self.postfix:
            parts.append(self.postfix)
        return ", ".join(parts)

    def update(self, n: int = 1) -> None:
        self.n += n
        if not self.disable:
            self.write(self.line())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = s

    def write(self, s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    def close(self) -> None:
        """Nothing to clear: every line printed is complete."""


_quiet = False


def set_quiet(quiet: bool) -> None:
    """Silence (True) or restore (False) every progress bar of this process: the commands' ``--quiet``."""
    global _quiet
    _quiet = quiet


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str,
    unit: str = "it",
    initial: int = 0,
    disable: bool = False,
) -> Progress:
    """A tqdm bar when stderr is a terminal, else a ``LineProgress``; the arguments are tqdm's.

    Iterate over it (``for x in progress_bar(xs, desc=...)``), or call ``update()`` per finished
    step and ``close()`` at the end; print messages through its ``write`` so that a bar stays whole.
    After ``set_quiet(True)`` (a command's ``--quiet``) every bar is disabled.
    """
    disable = disable or _quiet
    if sys.stderr.isatty():
        return tqdm(iterable, total=total, desc=desc, unit=unit, initial=initial, disable=disable)
    return LineProgress(iterable, total=total, desc=desc, unit=unit, initial=initial, disable=disable)
