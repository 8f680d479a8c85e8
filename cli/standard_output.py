"""Standard output that cannot be written: an error on stderr for every command, or quiet for a reader gone.

``drasat inventory -o json > /dev/full`` must not end as if the answer had been delivered, nor with a
traceback. Everything a command prints reaches ``sys.stdout`` — drasat's :func:`~.render.text.echo`,
and click's own help and usage — so :func:`answer_written` makes that stream say when a write fails,
and flushes it at the end of the run (Python's own flush at exit reports a failure as "Exception
ignored" and exits 120). The failure becomes :class:`StandardOutputFailed`, not an ``OSError``: click
takes every ``EPIPE`` for a broken pipe and ends the run with exit 1 itself, and lets any other
``OSError`` through as a traceback.

A full disk, an I/O error: ``error: writing standard output: No space left on device``, exit 2 — the
exit status of a path the user gave that cannot be written (``--html /dev/full`` says the same), not 1,
which says "no allocation exists" and would make a script conclude something about the cluster. A
reader that went away (``drasat ... | head -1``): nothing on stderr, exit 141 (128 + SIGPIPE), what
kubectl's and any C program's shell reports, as 130 is for Ctrl-C.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import NoReturn

from drasat.cli.render.text import echo

EXIT_UNWRITABLE = 2  # as for any output path that cannot be written
EXIT_BROKEN_PIPE = 128 + 13  # 141: as a process ended by SIGPIPE (13), which Python ignores


class StandardOutputFailed(Exception):
    """A write to standard output failed (``error``); only :func:`answer_written` handles it."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class _Guarded(io.TextIOWrapper):
    """Standard output whose failed writes and flushes are :class:`StandardOutputFailed`."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as exc:
            raise StandardOutputFailed(exc) from exc

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            raise StandardOutputFailed(exc) from exc


class _Closed(io.TextIOBase):
    """Standard output closed before the run (``>&-``): Python leaves ``sys.stdout`` None, and click then
    drops what is printed; here a write fails as the closed descriptor would (a run that prints nothing
    there still succeeds)."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise StandardOutputFailed(OSError(errno.EBADF, os.strerror(errno.EBADF)))


@contextlib.contextmanager
def answer_written() -> Iterator[None]:
    """Within the block, standard output says when it cannot be written; at its end it is flushed, and a
    failure (then or before) ends the run as the module says."""
    _guard()
    try:
        try:
            yield
        finally:
            sys.stdout.flush()
    except StandardOutputFailed as failure:
        _give_up(failure.error)


def _guard() -> None:
    """``sys.stdout`` as a :class:`_Guarded` stream on the same buffer, encoding and error handling."""
    out = sys.stdout
    if out is None:
        sys.stdout = _Closed()
        return
    if not isinstance(out, io.TextIOWrapper):  # a test runner's
        return
    out.flush()
    sys.stdout = _Guarded(
        out.buffer,
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
        write_through=out.write_through,
    )


def _give_up(error: OSError) -> NoReturn:
    """End the run; what is still buffered goes to the null device, so that the flush at exit fails no more."""
    with contextlib.suppress(OSError):
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, sys.stdout.fileno())
    if error.errno == errno.EPIPE:
        sys.exit(EXIT_BROKEN_PIPE)
    with contextlib.suppress(OSError):  # a standard error that fails too leaves only the exit status
        echo(f"error: writing standard output: {error.strerror or error}", err=True)
    sys.exit(EXIT_UNWRITABLE)
