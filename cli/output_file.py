"""An output file the user named (``--html FILE``, ``--output-state FILE``).

What is at the path is written, never replaced by something else: a regular file is replaced whole (a
temporary beside it, renamed over it: never half written, even on Ctrl-C; its mode and owner kept; see
:mod:`.atomic_file`); a link is followed and its target replaced so (the link stays a link, as ``cmd > link``
leaves it); a FIFO or a device (``/dev/null``, a named pipe another program reads) is written straight
through, as a shell's ``>`` would, since renaming a file over it would take its place and write nothing where
the user meant. A path that names a descriptor drasat already has open (``/dev/stdout``, ``/dev/stderr``,
``/dev/fd/N``, ``/proc/self/fd/N``, as typed, before any link is resolved) is written to that descriptor
as it stands, never opened anew nor renamed over: through ``/proc`` it leads to whatever the shell opened,
a file ``>>`` appends to, a file a group of commands shares — replacing that would throw away what others
wrote there. ``/dev/stdout`` is written as ``-`` is (see :mod:`.standard_output`: a reader gone ends the run
quietly, 141). A path that cannot be written is bad input (exit 2), named in the message — a full device or a
reader that went away as much as a missing folder — and never followed by "wrote".

The files ``metadata --out`` names itself below the folder given are not written here: see :mod:`.output_tree`.
"""

from __future__ import annotations

import os
import re
import stat
import sys

from drasat.cli.render.text import echo
from drasat.models.errors import InputError

from .atomic_file import write_atomically

__all__ = ["folder_problem", "write_output"]


def write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path`` as the module says; ``-`` is standard output, as kubectl reads it,
    never a file named ``-``. No folder is created: a missing one is most often a typo, and writing
    there would put the output where the user did not look."""
    descriptor = _open_descriptor(path)
    if descriptor == STDOUT:
        echo(text, nl=False)
        return
    problem = None if descriptor is not None else folder_problem(os.path.dirname(path) or ".")
    if problem is not None:
        raise InputError(f"cannot write {path}: {problem}")
    try:
        if descriptor is None:
            _write(path, text.encode())
        else:
            sys.stderr.flush()  # what drasat said before goes first, when the descriptor is (a copy of) stderr
            _write_all(descriptor, text.encode())
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


STDOUT = 1
_STANDARD = {"-": STDOUT, "/dev/stdin": 0, "/dev/stdout": STDOUT, "/dev/stderr": 2}
_NUMBERED = re.compile(r"/(?:dev|proc/self)/fd/(\d+)")


def _open_descriptor(path: str) -> int | None:
    """The descriptor ``path`` names as typed (``-`` is standard output), or None for a path to open. A number
    must be a descriptor the command was given (inherited from the shell, as ``3>file`` gives one): drasat's
    own (its signal watcher's pipe) are not inheritable, and writing there would lose the output unseen."""
    numbered = _NUMBERED.fullmatch(path)
    if numbered is None:
        return _STANDARD.get(path)
    descriptor = int(numbered.group(1))
    try:
        given = descriptor <= 2 or os.get_inheritable(descriptor)
    except OSError:
        given = False
    if not given:
        raise InputError(f"cannot write {path}: Bad file descriptor")
    return descriptor


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
    else:  # a FIFO or a device; or a file only /proc's links reach (a deleted one): no name to rename to
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
    """What is at ``path`` (a FIFO, a device), opened as a shell's ``>`` opens it, written through."""
    descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        _write_all(descriptor, data)
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, data: bytes) -> None:
    """Every byte, however few each write takes (a pipe or a device may take them a part at a time)."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]
