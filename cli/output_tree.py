"""The files ``metadata --out DIR`` names itself below DIR: regular files or nothing, reached through no link.

DIR is the user's, opened as typed (a link followed, as for any path the user gives). Below it every name is
drasat's own, so nothing there is written through or followed, as :mod:`.output_file` does for a path the
user typed: a FIFO planted in the tree would hang the run for ever, a link (to a folder or a file) would send
the file elsewhere. A FIFO, a device, a link, a file where a folder goes: refused, naming the path (exit 2).

Checking the tree first (:func:`problem_below`, so that a refusal comes before anything is written) and then
writing by path would leave a window: a folder swapped for a link in between sends the file elsewhere. So the
write looks nothing up by path: from DIR's descriptor each folder is made and opened relative to the one above
it (``os.open(..., dir_fd=...)`` with ``O_NOFOLLOW | O_DIRECTORY``, which fails on a link), and the file is made
and renamed in the last folder held open (:func:`.atomic_file.replace_in`, which refuses anything but a regular
file there and never follows a link).
"""

from __future__ import annotations

import contextlib
import os
import stat

from drasat.models.errors import InputError

from .atomic_file import NotRegular, kind_of, replace_in

__all__ = ["problem_below", "write_below"]


class _Refused(Exception):
    """A folder of the tree is not one (its message says which and what it is)."""


def problem_below(out_dir: str, relative: str) -> str | None:
    """Why the file ``relative`` below ``out_dir`` cannot be written as the module says, or None; what does
    not exist yet is no problem (it is made)."""
    parts = _parts(relative)
    path = out_dir
    for depth, part in enumerate(parts):
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):  # not made yet (or DIR itself is wrong: the caller's to say)
            return None
        folder = depth < len(parts) - 1
        if not (stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)):
            return _refusal(path, mode, folder)
    return None


def write_below(out_dir: str, relative: str, text: str) -> None:
    """Write the file ``relative`` below ``out_dir`` (made if missing, with the folders it needs), replaced
    whole as :func:`.atomic_file.replace_in` replaces it; InputError naming the path when it cannot be."""
    target = os.path.join(out_dir, relative)
    *folders, name = _parts(relative)
    try:
        os.makedirs(out_dir, exist_ok=True)
        descriptor = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for depth, folder in enumerate(folders):
                shown = os.path.join(out_dir, *folders[: depth + 1])
                descriptor, above = _enter(descriptor, folder, shown), descriptor
                os.close(above)
            replace_in(descriptor, name, text.encode())
        finally:
            os.close(descriptor)
    except NotRegular as refused:
        raise InputError(f"cannot write {target}: {_refusal(target, refused.mode, False)}") from None
    except _Refused as refused:
        raise InputError(f"cannot write {target}: {refused}") from None
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None


def _parts(relative: str) -> list[str]:
    """The names in ``relative``; none of them may lead anywhere but down (the callers' names never do)."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"not a path below a folder: {relative!r}")
    return parts


def _enter(above: int, name: str, shown: str) -> int:
    """The folder ``name`` in the open folder ``above``, made if missing, opened only if it is a folder."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, dir_fd=above)
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=above)
    except OSError as exc:  # ELOOP for a link, ENOTDIR for anything else that is no folder
        try:
            mode = os.stat(name, dir_fd=above, follow_symlinks=False).st_mode
        except OSError:
            raise exc from None
        if stat.S_ISDIR(mode):  # a folder after all (swapped back meanwhile, or unreadable): the error as it is
            raise
        raise _Refused(_refusal(shown, mode, True)) from None


def _refusal(path: str, mode: int, folder: bool) -> str:
    """Why ``path`` (a folder of the tree, or else its file) is refused, being of ``mode``."""
    if stat.S_ISLNK(mode):
        return f"{path} is a link (drasat follows none below --out)"
    return f"{path} is {kind_of(mode)}, not {'a folder' if folder else 'a regular file'}"
