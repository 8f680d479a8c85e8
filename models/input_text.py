"""An input's text: read from a file or a stream within a size limit, and decoded as UTF-8.

A 10,000-node cluster as ``kubectl get -o yaml`` prints it is about 240 MB, so the limit is the
caller's (``--max-input-size``) with a default far above that; what bounds memory beyond the text's
size are the limits on each document (:mod:`.yaml_io`: nesting and expansion). Everything here turns
a missing, unreadable, oversized, binary or non-UTF-8 input into a :class:`InputProblem`, never an exception.
"""

from __future__ import annotations

import os
import stat
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
