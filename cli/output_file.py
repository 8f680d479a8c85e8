"""An output file the user named (``--html FILE``, ``--output-state FILE``, ``metadata --out``'s files).

What is at the path is written, never replaced by something else: a regular file is replaced whole (a
temporary beside it, renamed over it: never half written, even on Ctrl-C, see :mod:`.interrupt`); a link
is followed and its target replaced so (the link stays a link, as ``cmd > link`` leaves it); a FIFO or a
device (``/dev/stdout``, ``/dev/null``, a named pipe another program reads) is written straight through,
as a shell's ``>`` would, since renaming a file over it would take its place and write nothing where
the user meant. A path that cannot be written is bad input (exit 2), named in the message — a full
device or a reader that went away as much as a missing folder — and never followed by "wrote".
"""

from __future__ import annotations

import os
import stat

from drasat.cli.render.text import echo
from drasat.models.errors import InputError

from .interrupt import write_atomically

__all__ = ["folder_problem", "write_output"]


def write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path`` as the module says; ``-`` is standard output, as kubectl reads it,
    never a file named ``-``. No folder is created: a missing one is most often a typo, and writing
    there would put the output where the user did not look."""
    if path == "-":
        echo(text, nl=False)
        return
    problem = folder_problem(os.path.dirname(path) or ".")
    if problem is not None:
        raise InputError(f"cannot write {path}: {problem}")
    try:
        _write(path, text.encode())
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def folder_problem(folder: str) -> str | None:
    """Why no file can be made in ``folder`` (missing, or a file where a folder should be), or None."""
    try:
        if stat.S_ISDIR(os.stat(folder).st_mode):
            return None
    except NotADirectoryError:  # a file further up: name it, not the folder below it
        return folder_problem(os.path.dirname(folder))
    except FileNotFoundError:
        return f"there is no folder {folder} (drasat creates none)"
    return f"{folder} is a file, not a folder"


def _write(path: str, data: bytes) -> None:
    try:
        found = os.stat(path)  # through any link
    except FileNotFoundError:  # a new file, or a link to one
        _check_link_target(path)
        write_atomically(path, data)
        return
    if stat.S_ISDIR(found.st_mode):
        raise InputError(f"cannot write {path}: it is a folder")
    if stat.S_ISREG(found.st_mode) and _named(found, os.path.realpath(path)):
        write_atomically(path, data)
    else:  # a FIFO or a device; or a file only an open descriptor names (/dev/stdout > file): no name to rename to
        _write_through(path, data)


def _check_link_target(path: str) -> None:
    """A dangling link makes its target, in a folder that exists."""
    if os.path.islink(path):
        target = os.path.realpath(path)
        problem = folder_problem(os.path.dirname(target))
        if problem is not None:
            raise InputError(f"cannot write {path}: it links to {target}, and {problem}")


def _named(found: os.stat_result, path: str) -> bool:
    """Whether ``path`` (where the links lead) is the file found: not so for what only /proc's links reach."""
    try:
        return os.path.samestat(found, os.stat(path))
    except OSError:
        return False


def _write_through(path: str, data: bytes) -> None:
    """Every byte written to what is at ``path`` (a pipe or a device may take them a part at a time)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)
