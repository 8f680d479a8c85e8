"""A progress bar on stderr for long runs — for people only.

Shown only when stderr is a terminal and the output is for people: a pipe, a CI log or
``-o json`` gets not one byte of it (a bar in a log is noise, and tools read stderr
too). The bar is transient: it disappears when the run ends, leaving the terminal as
the command's own output left it. Solver code reports steps through a plain callback
(``progress(done, total)``), so it knows nothing of terminals.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import IO, Any

MACHINE_FORMATS = ("json", "yaml", "name")


def wanted(output: str | None = None, stream: IO[str] | None = None) -> bool:
    """Whether a bar may be shown: stderr is a terminal and ``output`` is not for tools."""
    stream = stream or sys.stderr
    if output is not None and (output in MACHINE_FORMATS or output.startswith("jsonpath=")):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Bar:
    """``with Bar("scheduling pods", output=output) as bar: ... bar.update(done, total)``; a no-op when
    :func:`wanted` says no."""

    def __init__(self, description: str, *, output: str | None = None, stream: IO[str] | None = None) -> None:
        self.description = description
        self.stream = stream or sys.stderr
        self.enabled = wanted(output, self.stream)
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Bar:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(file=self.stream, force_terminal=True)
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=None)
        return self

    def update(self, done: int, total: int | None = None, what: str | None = None) -> None:
        """``done`` of ``total`` steps finished (``what``: the step now running, shown beside the bar)."""
        if self._progress is not None and self._task is not None:
            from rich.markup import escape

            from drasat.cli.render.text import printable

            description = escape(printable(f"{self.description}: {what}" if what else self.description))
            self._progress.update(self._task, completed=done, total=total, description=description)

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()


class Status:
    """One transient line on a terminal for a search that improves its answer (``schedule --batch``): pods
    placed so far, the bound and the time left; a no-op where :func:`wanted` says no."""

    def __init__(self, *, output: str | None = None, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = wanted(output, self.stream)
        self._live: Any = None

    def __enter__(self) -> Status:
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream, force_terminal=True, highlight=False)
            self._live = Live("", console=console, transient=True)
            self._live.start()
        return self

    def batch(self, placed: int, bound: int | None, seconds_left: float) -> None:
        """The joint placement's progress callback."""
        if self._live is not None:
            of = f" (bound {bound:,})" if bound is not None else ""
            self._live.update(f"batch: {placed:,} pods placed so far{of}, {seconds_left:.0f} s left")

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.stop()
