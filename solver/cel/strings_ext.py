"""CEL's strings extension (cel-go ``ext.Strings`` version 2), for the pure-Python engine.

cel-expr-python ships the extension natively; celpy has none of it. Indexes count
Unicode code points, as in cel-go. Only the functions Kubernetes' stored-expression
environment offers are here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .library import NO_SUCH_OVERLOAD, LibError


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise LibError(NO_SUCH_OVERLOAD)
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LibError(NO_SUCH_OVERLOAD)
    return value


def _index(value: Any, limit: int) -> int:
    i = _int(value)
    if i < 0 or i > limit:
        raise LibError(f"index out of range: {i}")
    return i


def char_at(s: Any, i: Any) -> str:
    text = _str(s)
    index = _index(i, len(text))
    return text[index : index + 1]


def index_of(s: Any, sub: Any, start: Any = 0) -> int:
    text, needle = _str(s), _str(sub)
    begin = _index(start, len(text))
    return text.find(needle, begin)


def last_index_of(s: Any, sub: Any, last: Any = None) -> int:
    text, needle = _str(s), _str(sub)
    end = len(text) if last is None else _index(last, len(text))
    return text.rfind(needle, 0, end + len(needle))


def lower_ascii(s: Any) -> str:
    return "".join(c.lower() if c.isascii() else c for c in _str(s))


def upper_ascii(s: Any) -> str:
    return "".join(c.upper() if c.isascii() else c for c in _str(s))


def replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    count = _int(n)
    return _str(s).replace(_str(old), _str(new), count if count >= 0 else -1)


def split(s: Any, sep: Any, n: Any = -1) -> list[str]:
    """Go's ``strings.SplitN``: ``n == 0`` gives no parts, ``n < 0`` all of them."""
    text, separator, count = _str(s), _str(sep), _int(n)
    if count == 0:
        return []
    if separator == "":
        parts = list(text)
        if 0 < count < len(parts):
            parts = parts[: count - 1] + ["".join(parts[count - 1 :])]
        return parts
    return text.split(separator, count - 1 if count > 0 else -1)


def substring(s: Any, start: Any, end: Any = None) -> str:
    text = _str(s)
    begin = _index(start, len(text))
    stop = len(text) if end is None else _index(end, len(text))
    if stop < begin:
        raise LibError(f"invalid substring range. start: {begin}, end: {stop}")
    return text[begin:stop]


def trim(s: Any) -> str:
    return _str(s).strip()


def join(items: Any, sep: Any = "") -> str:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise LibError(NO_SUCH_OVERLOAD)
    return _str(sep).join(items)


#: Member functions by CEL name (the receiver is the first argument).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": char_at,
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii,
    "replace": replace,
    "split": split,
    "substring": substring,
    "trim": trim,
    "join": join,
}
