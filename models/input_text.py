"""An input's text: which files a command line names, each read once, and the text of each, read from a file
or a stream within a size limit and decoded as UTF-8.

A 10,000-node cluster as ``kubectl get -o yaml`` prints it is about 240 MB, so the limit is the
caller's (``--max-input-size``) with a default far above that; what bounds memory beyond the text's
size are the limits on each document (:mod:`.yaml_io`: nesting and expansion). Everything here turns
a missing, unreadable, oversized, binary or non-UTF-8 input into a :class:`InputProblem`, never an exception.

Folders are read recursively, links followed (a link to a folder elsewhere is read as part of the
folder that holds it). Two paths to one file or folder — a link beside its target (``current`` ->
``v2``), the same file given twice, a file inside a folder also given — would read its objects twice:
unnamed objects (``generateName``) doubled, every problem said twice. The real file is read once, by the
path that reaches it without a link where there is one, and each path passed over is named in a notice
(:class:`ReadOnce`). A link to a folder it is in (a symbolic link loop) is a problem named by the link;
nothing is passed over silently, FIFOs, sockets and devices in a folder included.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .errors import InputProblem, Location

MAX_INPUT_BYTES = 1024 * 1024 * 1024
"""The largest file (or stdin) read unless the caller says otherwise (``--max-input-size``): a 10,000-node
cluster as ``kubectl get -o yaml`` prints it is about 240 MB. What bounds memory beyond the text's size
are the limits on each document (:mod:`.yaml_io`)."""


def read_file(path: str, max_bytes: int = MAX_INPUT_BYTES) -> tuple[str | None, InputProblem | None]:
    """The text of a file, or a problem (missing, unreadable, too large, binary, not UTF-8); a regular file
    too large is refused before it is read, a FIFO or device once ``max_bytes`` have come."""
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
            if size is not None and size > max_bytes:
                return None, InputProblem(Location(path), too_large(max_bytes))
            raw = handle.read() if size is not None else read_at_most(handle, max_bytes + 1)
    except OSError as exc:
        return None, InputProblem(Location(path), f"cannot read the file: {exc.strerror or exc}")
    return decode(raw, path, max_bytes)


def read_at_most(stream: Any, limit: int) -> bytes:
    """Up to ``limit`` bytes of a stream, read a MiB at a time (``read(limit)`` would first allocate all of
    ``limit``, a GiB by default, for a pipe that sends a few kilobytes)."""
    chunks, left = [], limit
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks) if len(chunks) != 1 else chunks[0]


def too_large(max_bytes: int) -> str:
    """Why an input over ``max_bytes`` is refused, and how to read it anyway."""
    from .quantity import BINARY_SI, canonical

    mib, rest = divmod(max_bytes, 1024 * 1024)
    size = f"{mib} MiB" if mib and not rest else f"{max_bytes} bytes"
    return (
        f"is larger than {size}; drasat reads inputs up to that size (raise it with --max-input-size, "
        f"e.g. --max-input-size {canonical(Fraction(2 * max_bytes), BINARY_SI)}, or split the input into several files)"
    )


def decode(raw: bytes, name: str, max_bytes: int = MAX_INPUT_BYTES) -> tuple[str | None, InputProblem | None]:
    """UTF-8 text (a byte-order mark is allowed), or a problem that says why not."""
    where = Location(name)
    if len(raw) > max_bytes:
        return None, InputProblem(where, too_large(max_bytes))
    if b"\x00" in raw[:8192] and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, InputProblem(where, "looks like a binary file (it contains NUL bytes), not YAML or JSON")
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, InputProblem(
            where,
            f"is not UTF-8 text: byte 0x{raw[exc.start]:02x} on line {line} cannot be decoded (save the file as UTF-8)",
        )


EXTENSIONS = (".yaml", ".yml", ".json")


@dataclass
class Walked:
    """A folder's manifest files in reading order, its problems, and notices of what was passed over."""

    files: list[str] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


@dataclass
class ReadOnce:
    """The files and folders taken so far, by real path, with the path each is read by."""

    files: dict[str, str] = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)

    def take_file(self, path: str) -> str | None:
        """None when ``path`` is to be read now; else the notice that it was passed over, and why."""
        real = os.path.realpath(path)
        first = self.files.get(real)
        if first is not None:
            return passed_over(path, first, link=_is_link(path))
        self.files[real] = path
        return None

    def walk(self, directory: str) -> Walked:
        """The manifest files below ``directory`` not taken yet (sorted, hidden ones left out)."""
        walked = Walked()
        top = os.path.realpath(directory)
        first = self.folders.get(top)
        if first is not None:
            walked.notices.append(passed_over(directory, first, link=_is_link(directory)))
            return walked
        self.folders[top] = directory

        def unreadable(exc: OSError) -> None:
            where = Location(exc.filename or directory)
            walked.problems.append(InputProblem(where, f"cannot read this directory: {exc.strerror or exc}"))

        found: list[str] = []
        for root, dirs, files in os.walk(directory, onerror=unreadable, followlinks=True):
            dirs[:] = [
                d
                for d in sorted(dirs)
                if not d.startswith(".") and self._enter(os.path.join(root, d), top, directory, walked)
            ]
            for name in sorted(files):
                if not name.startswith(".") and name.lower().endswith(EXTENSIONS):
                    path = os.path.join(root, name)
                    if self._take_walked_file(path, top, directory, walked):
                        found.append(path)
        regular = {path for path in found if _regular_or_unknown(path)}
        walked.notices += [
            f"{path}: skipped, not a regular file (a FIFO, socket or device may never end); "
            "name it on the command line to read it"
            for path in sorted(set(found) - regular)
        ]
        walked.files = sorted(regular)  # sorted whole paths, as drasat always read a folder: input order counts
        return walked

    def _enter(self, path: str, top: str, directory: str, walked: Walked) -> bool:
        """Whether the walk goes into the folder ``path``: not when it was taken already, when a link leads
        to a folder this walk reaches without it, or when it is a link to a folder it is in (a loop)."""
        real, root = os.path.realpath(path), os.path.realpath(os.path.dirname(path))
        link = os.path.islink(path)
        if link and (root == real or root.startswith(real.rstrip(os.sep) + os.sep)):
            walked.problems.append(
                InputProblem(
                    Location(path),
                    f"links to {self.folders.get(real, real)}, a folder it is in (a symbolic link loop); "
                    "drasat does not follow it",
                )
            )
            return False
        first = self.folders.get(real) or (_reached_within(real, top, directory) if link else None)
        if first is not None:
            walked.notices.append(passed_over(path, first, link=link))
            return False
        self.folders[real] = path
        return True

    def _take_walked_file(self, path: str, top: str, directory: str, walked: Walked) -> bool:
        """Whether the walk reads ``path``: not when it was taken already, or when it is a link to a manifest
        this walk reads without it."""
        real = os.path.realpath(path)
        link = os.path.islink(path)
        first = self.files.get(real)
        if first is None and link and real.lower().endswith(EXTENSIONS):
            first = _reached_within(real, top, directory)
        if first is not None:
            walked.notices.append(passed_over(path, first, link=link))
            return False
        self.files[real] = path
        return True


def passed_over(path: str, first: str, *, link: bool = False) -> str:
    """The notice for ``path``, not read because its file or folder is read as ``first``."""
    if link:
        return f"{path}: links to {first}, which is read; passed over"
    if path == first:
        return f"{path}: read already; passed over"
    return f"{path}: read already as {first}; passed over"


def _reached_within(real: str, top: str, directory: str) -> str | None:
    """The path the walk of ``directory`` (real path ``top``) reads ``real`` by without following a link,
    or None when it does not reach it so (outside the folder, or below a hidden name)."""
    if not real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    inside = os.path.relpath(real, top)
    if any(part.startswith(".") for part in inside.split(os.sep)):
        return None
    return os.path.join(directory, inside)


def _is_link(path: str) -> bool:
    """Whether ``path`` as given is a symbolic link (``current/`` is: the slash only says it leads to a folder)."""
    return os.path.islink(path.rstrip(os.sep) or path)


def _regular_or_unknown(path: str) -> bool:
    """Whether ``path`` is a regular file, or cannot be looked at (reading it then reports why)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True
