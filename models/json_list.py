"""A big JSON List (``kubectl get -o json``) cut into its frame and its items, each item still text.

Parsed whole, a 1,000-node cluster's 28 MB of JSON is 300 MB of Python values held at once, beside the
models built from them. Here Python's own JSON scanner walks the top-level object one value at a time
(``raw_decode``, each item's value let go at once: a third of orjson's time for the whole text) to find
where each item of ``items`` begins and ends; the loader then reads each item (orjson) as it builds
it. Anything but one plain object — a key twice at the top, text after it, an error — is left to the
whole-text path (:func:`~.fast_parse.fast_json`, else json), which says what is wrong as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import fast_parse
from .fast_parse import Deferred, _has_long_number, _module

_SCANNER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


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
    while True:
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
