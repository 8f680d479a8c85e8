"""An input's text: which files a command line names, each read once, and the text of each, read from a file
or a stream within a size limit and decoded as UTF-8.

A 10,000-node cluster as ``kubectl get -o yaml`` prints it is about 240 MB, so the limit is the
caller's (``--max-input-size``) with a default far above that; what bounds memory beyond the text's
size are the limits on each document (:mod:`.yaml_io`: nesting and expansion). Everything here turns
a missing, unreadable, oversized, binary or non-UTF-8 input into a :class:`InputProblem`, never an exception.

Folders are read recursively, links followed (a link to a folder elsewhere is read as part of the
folder that holds it). Two paths to one file or folder — a link beside its target (``current`` ->
``v2``), the same file given twice, a file inside a folder also given, two hard links to it — would read
its objects twice: unnamed objects (``generateName``) doubled, every problem said twice. Files and folders are
told apart by device and inode, which every path to one shares. The file is read once, by the
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


Identity = tuple[int, int] | str
"""A file or folder as the system knows it: device and inode, which every path to it shares (a symbolic link,
a hard link, a bind mount); its real path when it cannot be looked at (reading it then says why)."""


@dataclass(frozen=True)
class Entry:
    """What a path leads to: its identity, its status (None when it cannot be looked at), whether it is a link."""

    identity: Identity
    status: os.stat_result | None
    link: bool

    @classmethod
    def of(cls, path: str) -> Entry:
        """One ``lstat`` for a path that is no link (most are); a link's target is looked at too. ``current/``
        is a link: the slash only says it leads to a folder."""
        link = False
        try:
            status = os.lstat(path.rstrip(os.sep) or path)
            link = stat.S_ISLNK(status.st_mode)
            status = os.stat(path) if link else status
        except OSError:
            return cls(os.path.realpath(path), None, link)
        return cls((status.st_dev, status.st_ino), status, link)


@dataclass
class ReadOnce:
    """The files and folders taken so far, by identity (:data:`Identity`), with the path each is read by."""

    files: dict[Identity, str] = field(default_factory=dict)
    folders: dict[Identity, str] = field(default_factory=dict)

    def take_file(self, path: str) -> str | None:
        """None when ``path`` is to be read now; else the notice that it was passed over, and why."""
        entry = Entry.of(path)
        first = self.files.get(entry.identity)
        if first is not None:
            return passed_over(path, first, link=entry.link)
        self.files[entry.identity] = path
        return None

    def walk(self, directory: str) -> Walked:
        """The manifest files below ``directory`` not taken yet (sorted, hidden ones left out)."""
        walked = Walked()
        entry = Entry.of(directory)
        first = self.folders.get(entry.identity)
        if first is not None:
            walked.notices.append(passed_over(directory, first, link=entry.link, kind="folder"))
            return walked
        self.folders[entry.identity] = directory
        top = os.path.realpath(directory)

        def unreadable(exc: OSError) -> None:
            where = Location(exc.filename or directory)
            walked.problems.append(InputProblem(where, f"cannot read this directory: {exc.strerror or exc}"))

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
                        walked.files.append(path)
        walked.files.sort()  # sorted whole paths, as drasat always read a folder: input order counts
        return walked

    def _enter(self, path: str, top: str, directory: str, walked: Walked) -> bool:
        """Whether the walk goes into the folder ``path``: not when it was taken already, when a link leads
        to a folder this walk reaches without it, or when it is a link to a folder it is in (a loop)."""
        entry = Entry.of(path)
        real = os.path.realpath(path) if entry.link else ""
        if entry.link and _contains(real, os.path.realpath(os.path.dirname(path))):
            walked.problems.append(
                InputProblem(
                    Location(path),
                    f"links to {self.folders.get(entry.identity, real)}, a folder it is in (a symbolic link loop); "
                    "drasat does not follow it",
                )
            )
            return False
        first = self.folders.get(entry.identity) or (_reached_within(real, top, directory) if entry.link else None)
        if first is not None:
            walked.notices.append(passed_over(path, first, link=entry.link, kind="folder"))
            return False
        self.folders[entry.identity] = path
        return True

    def _take_walked_file(self, path: str, top: str, directory: str, walked: Walked) -> bool:
        """Whether the walk reads ``path``: not when it was taken already, when it is no regular file (a FIFO
        may never end), or when it is a link to a manifest this walk reads without it."""
        entry = Entry.of(path)
        first = self.files.get(entry.identity)
        if first is None and entry.status is not None and not stat.S_ISREG(entry.status.st_mode):
            walked.notices.append(
                f"{path}: skipped, not a regular file (a FIFO, socket or device may never end); "
                "name it on the command line to read it"
            )
            return False
        if first is None and entry.link:
            real = os.path.realpath(path)
            first = _reached_within(real, top, directory) if real.lower().endswith(EXTENSIONS) else None
        if first is not None:
            walked.notices.append(passed_over(path, first, link=entry.link))
            return False
        self.files[entry.identity] = path
        return True


def passed_over(path: str, first: str, *, link: bool = False, kind: str = "file") -> str:
    """The notice for ``path`` (a ``kind``), not read because it is read as ``first``. Paths to one file that
    no link explains (a hard link, a bind mount) are the same file, said so."""
    if path == first:
        return f"{path}: read already; passed over"
    if os.path.realpath(path) != os.path.realpath(first):
        return f"{path}: the same {kind} as {first}, read already; passed over"
    if link:
        return f"{path}: links to {first}, which is read; passed over"
    return f"{path}: read already as {first}; passed over"


def _contains(folder: str, path: str) -> bool:
    """Whether the real path ``path`` is the real folder ``folder`` or below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _reached_within(real: str, top: str, directory: str) -> str | None:
    """The path the walk of ``directory`` (real path ``top``) reads ``real`` by without following a link,
    or None when it does not reach it so (outside the folder, or below a hidden name)."""
    if not _contains(top, real) or real == top:
        return None
    inside = os.path.relpath(real, top)
    if any(part.startswith(".") for part in inside.split(os.sep)):
        return None
    return os.path.join(directory, inside)
