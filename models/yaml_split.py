"""Where the documents of a YAML stream begin and end, found without parsing it.

helm, kustomize and ``kubectl get`` of several kinds print one object per document, ``---``
between them: a 1,000-node cluster is 14,000 documents. The fast parser reads each document
on its own (and PyYAML, the reference, reads only those the fast one must leave to it), so
the stream is cut where YAML itself cuts it: a line that starts with ``---`` or ``...``
followed by a space, a tab or the line's end, in the first column. Such a line ends any
block scalar, plain scalar or block collection before it, in YAML 1.1 (PyYAML) as in 1.2
(yaml-rs); inside a quoted string or a flow collection it is an error, which the piece's
own parse then finds, and PyYAML reports with its line.

Documents are counted as PyYAML counts them: the text before the first ``---`` is a
document only if it holds more than comments and blank lines, each ``---`` starts one
(empty: null), ``...`` ends one. Anything else about the stream's structure — a
directive (``%YAML``), content on a marker's line (``--- |``), content after ``...``
without a ``---``, carriage returns — makes :func:`split_stream` return None: PyYAML
reads such a stream whole, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKERS = (re.compile(r"\n(---)(?=[ \t\n]|\Z)([^\n]*)"), re.compile(r"\n(\.\.\.)(?=[ \t\n]|\Z)([^\n]*)"))
"""A document marker line, matched from the newline before it: each pattern starts with four literal
characters, so the scan of 30 MB skips ahead (one pattern for both starts with one, and stops at every line)."""
_FIRST_MARKER = re.compile(r"(---|\.\.\.)(?=[ \t\n]|\Z)([^\n]*)")
_MARKER_REST = re.compile(r"[ \t]*(?:#.*)?")
"""What may follow a marker on its line for the stream to be cut here: blanks, a comment."""
_CONTENT = re.compile(r"^[ \t]*[^\s#]", re.MULTILINE)
"""A line that is more than blanks and a comment."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One document of a stream: its content ``text[start:end]`` (marker lines left out), and the
    window ``text[window_start:window_end]`` — from its own marker line through the one that ends it —
    in which PyYAML reads exactly this document as it reads it in the whole stream; ``line`` is the
    0-based line of ``window_start``, so PyYAML's line numbers can be made the stream's."""

    index: int
    start: int
    end: int
    window_start: int
    window_end: int
    line: int
    empty: bool = False  # an explicit document with nothing in it: null, as PyYAML reads it


def split_stream(text: str) -> list[Piece] | None:
    """The documents of ``text`` in order, or None where the stream's structure is PyYAML's to read."""
    # YAML's other line breaks (\r, NEL, LS, PS) move PyYAML's line numbers and may start a marker line.
    if any(c in text for c in "\r\x85\u2028\u2029") or ("%" in text and (text.startswith("%") or "\n%" in text)):
        return None  # (a directive: looked for only where there is a '%', found at once where there is none)
    markers = _markers(text)
    if any(_MARKER_REST.fullmatch(rest) is None for _, _, _, rest in markers):
        return None
    pieces: list[Piece] = []
    opened: tuple[int, int, int] | None = None  # (window_start, start, line) of the open document
    line, counted = 0, 0
    if _has_content(text, 0, markers[0][0] if markers else len(text)):
        opened = (0, 0, 0)
    for number, (start, end, kind, _) in enumerate(markers):
        line, counted = line + text.count("\n", counted, start), start
        after = end + 1 if end < len(text) else end  # past the marker line's newline
        if opened is not None:
            pieces.append(_piece(text, len(pieces), opened, start, after))
        elif kind == "..." and not pieces:
            return None  # '...' before any document: PyYAML's error
        if kind == "---":
            opened = (start, after, line)
            continue
        opened = None
        following = markers[number + 1][0] if number + 1 < len(markers) else len(text)
        if _has_content(text, after, following):
            return None  # content after '...' without a '---': PyYAML's error
    if opened is not None:
        pieces.append(_piece(text, len(pieces), opened, len(text), len(text)))
    return pieces


def _markers(text: str) -> list[tuple[int, int, str, str]]:
    """Each marker line's start and end, its marker and the rest of its line, in order."""
    first = _FIRST_MARKER.match(text)
    found = [(0, first.end(), first.group(1), first.group(2))] if first is not None else []
    found += [(m.start() + 1, m.end(), m.group(1), m.group(2)) for pattern in _MARKERS for m in pattern.finditer(text)]
    return sorted(found)


def _piece(text: str, index: int, opened: tuple[int, int, int], end: int, window_end: int) -> Piece:
    window_start, start, line = opened
    return Piece(index, start, end, window_start, window_end, line, not _has_content(text, start, end))


def _has_content(text: str, start: int, end: int) -> bool:
    return start < end and _CONTENT.search(text, start, end) is not None


_ITEMS_KEY = re.compile(r"\nitems:[ \t]*(?:#[^\n]*)?\n")
"""The ``items:`` key on a line of its own in the first column (matched from the newline before it)."""
_COLUMN_ZERO = re.compile(r"\n[^\s#]")
"""A line whose first character is content, in the first column (from the newline before it: a literal
start, so the scan of 30 MB is quick)."""


def split_list_items(text: str, start: int, end: int) -> tuple[str, list[tuple[int, int]]] | None:
    """A ``kind: List`` document ``text[start:end]`` as ``kubectl get -o yaml`` prints it, cut into its frame
    (the document with ``items: []`` for its ``items:`` block) and the spans of the items (each from its ``- `` line), or
    None where it is not printed so.

    The block is the ``items:`` key in the first column and the lines after it up to the next one with
    content in the first column that is not a ``- `` entry: each entry's own lines are indented (or blank, or
    comments), so each entry, read alone as a one-entry sequence, is what it is in the document — the
    sequence stands in the first column either way. Whatever this cut gets wrong reads as an error (a
    quoted string or flow collection cut open) or as a frame that is no mapping, and the caller then reads
    the document whole."""
    if text.startswith("items:", start) or (start and text[start - 1] != "\n"):
        return None  # (kubectl prints a List's apiVersion before its items)
    keys = list(_ITEMS_KEY.finditer(text, max(start - 1, 0), end))
    if len(keys) != 1:
        return None
    first = block_end = keys[0].end()
    spans: list[tuple[int, int]] = []
    for line in _COLUMN_ZERO.finditer(text, first - 1, end):
        at = line.start() + 1
        if text.startswith(("- ", "-\n"), at):
            if spans:
                spans[-1] = (spans[-1][0], at)
            elif _has_content(text, first, at):
                return None  # content before the first entry
            spans.append((at, end))
            continue
        block_end = at
        break
    else:
        block_end = end
    if not spans:
        return None
    spans[-1] = (spans[-1][0], block_end)
    frame = text[start : keys[0].start() + 1] + "items: []\n" + text[block_end:end]  # the key where it stood
    if "\n-" in "\n" + text[block_end:end]:
        return None  # an entry after the block's end: not kubectl's shape
    return frame, spans
