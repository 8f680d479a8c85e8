"""A big JSON List (``kubectl get -o json``) cut into its frame and its items, each item still text.

Parsed whole, a 1,000-node cluster's 28 MB of JSON is 300 MB of Python values held at once, beside the
models built from them. Here the top-level object is walked one value at a time to find where each item
of ``items`` begins and ends; the loader then reads each item (orjson) as it builds it. kubectl prints
every object's keys sorted, so each item opens with ``apiVersion``, ``kind`` and ``metadata``: where the
first one does, the next item is found by that opening after ``}`` and a comma (a regular expression,
a fifth of the time of Python's own JSON scanner, which builds every value it passes and was used for
every item before), else by the scanner (``raw_decode``). A cut in the wrong place (an object nested in
an item that opens the same way) leaves a piece that is not one whole JSON value: reading it raises
:class:`~.fast_parse.ReadAgain` and the document is read whole. Every piece is read before any of them
is kept, so the pieces kept are exactly the items: each starts where the one before it ended, and a JSON
value ends at one place only. Anything but one plain object — a key twice at the top, text after it, an
error — is left to the whole-text path (:func:`~.fast_parse.fast_json`, else json), which says what is
wrong as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import fast_parse
from .fast_parse import Deferred, _has_long_number, _module

_SCANNER = json.JSONDecoder()
_S = r"[ \t\n\r]*"
"""JSON's whitespace, any amount of it."""
_SPACE = re.compile(_S)
_OPENING = re.compile(
    rf'\{{{_S}"apiVersion"{_S}:{_S}"[^"\\]*"{_S},{_S}"kind"{_S}:{_S}"[^"\\]*"{_S},{_S}"metadata"{_S}:'
)
"""How an item that kubectl printed begins (its keys sorted)."""
_NEXT = re.compile(rf"\}}{_S},{_S}({_OPENING.pattern})")
"""The end of one item and the beginning of the next, as kubectl prints them."""


def json_list(text: str) -> dict[str, Any] | None:
    """The top-level object of ``text`` with its ``items`` as :class:`Deferred` JSON, or None where the
    whole-text path reads it (small, no orjson, numbers beyond 64 bits, not one object with items)."""
    if len(text) < fast_parse.FAST_FROM_BYTES or _module("orjson") is None or _has_long_number(text):
        return None
    try:
        frame = _frame(text)
    except (ValueError, IndexError, RecursionError):  # json.JSONDecodeError is a ValueError
        return None
    return frame if frame is not None and isinstance(frame.get("items"), list) and frame["items"] else None


def _frame(text: str) -> dict[str, Any] | None:
    at = _skip(text, 0)
    if text[at] != "{":
        return None
    frame: dict[str, Any] = {}
    while True:
        at = _skip(text, at + 1)
        key, at = _SCANNER.raw_decode(text, at) if text[at] == '"' else (None, at)
        if not isinstance(key, str) or key in frame:
            return None  # not a key, or a key twice: json's and orjson's whole-text reading decide
        at = _skip(text, at)
        if text[at] != ":":
            return None
        at = _skip(text, at + 1)
        if key == "items" and text[at] == "[":
            frame[key], at = _items(text, at)
        else:
            frame[key], at = _SCANNER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at] == "}":
            break
        if text[at] != ",":
            return None
    return frame if _skip(text, at + 1) == len(text) else None


def _items(text: str, at: int) -> tuple[list[Deferred], int]:
    """The items of the array opening at ``at``, as spans of text, and the offset past its ``]``."""
    items: list[Deferred] = []
    at = _skip(text, at + 1)
    if text[at] == "]":
        return items, at + 1
    cutting = _OPENING.match(text, at) is not None
    while True:
        cut = _NEXT.search(text, at) if cutting else None
        if cut is not None:  # checked when the item is read (see the module's docstring)
            items.append(Deferred(text, at, cut.start() + 1, json=True))
            at = cut.start(1)
            continue
        cutting = False  # no kubectl-shaped item further on: not searched for again at every item
        _, end = _SCANNER.raw_decode(text, at)  # its value is let go at once: only the span is kept
        items.append(Deferred(text, at, end, json=True))
        at = _skip(text, end)
        if text[at] == "]":
            return items, at + 1
        if text[at] != ",":
            raise ValueError("not an array")
        at = _skip(text, at + 1)


def _skip(text: str, at: int) -> int:
    """The offset of the first character at or after ``at`` that is not JSON's whitespace."""
    match = _SPACE.match(text, at)
    return match.end() if match is not None else at
