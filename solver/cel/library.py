"""Kubernetes' CEL additions for DRA, on plain Python values, shared by both engines.

The quantity and semver libraries (apiserver ``pkg/cel/library``), DRA's ``includes``,
CEL equality and ordering, and the strings extension. Values here are plain Python:
``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``dict``, ``None``,
:class:`Quantity` and :class:`Semver`; each engine converts its own carriers at the
boundary. Failures raise :class:`LibError` with the text Kubernetes would report.
"""

from __future__ import annotations

import math
import re
from typing import Any

from drasat.models.quantity import Quantity, QuantityError
from drasat.models.semver import Semver, SemverError

from .stack import deep

#: Kubernetes' ``ResourceSliceMaxAttributeValuesPerDevice``: ``includes`` scans no further.
INCLUDES_MAX = 48
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# resource.Quantity's own pattern; text that fails it gets ErrFormatWrong, the rest ErrSuffix.
_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_SPLIT = re.compile(_SPLIT_RE)


class LibError(Exception):
    """A library function failed; the message is Kubernetes' wording."""


NO_SUCH_OVERLOAD = "no such overload"


# --- equality and ordering -----------------------------------------------------------
@deep
def cel_equal(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality: numbers compare by value, other kinds only with their own."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        return all(any(cel_equal(k, k2) and cel_equal(v, b[k2]) for k2 in b) for k, v in a.items())
    return type(a) is type(b) and a == b


def cel_compare(a: Any, b: Any) -> int:
    """CEL ordering for ``<``: numbers across kinds, otherwise both of one orderable kind."""
    numeric = (int, float)
    if isinstance(a, bool) != isinstance(b, bool):
        raise LibError(NO_SUCH_OVERLOAD)
    if not (isinstance(a, numeric) and isinstance(b, numeric)):
        if type(a) is not type(b) or isinstance(a, (list, dict, Quantity, Semver)) or a is None:
            raise LibError(NO_SUCH_OVERLOAD)
    return (a > b) - (a < b)


def includes(target: Any, arg: Any) -> bool:
    """DRA's ``<target>.includes(<arg>)``: list membership, or equality for a scalar target."""
    if isinstance(target, list):
        for index, item in enumerate(target):
            if index >= INCLUDES_MAX:
                raise LibError(f"'includes' function cannot be applied to lists longer than {INCLUDES_MAX} values")
            if cel_equal(item, arg):
                return True
        return False
    return cel_equal(target, arg)


def type_name(value: Any) -> str:
    """The CEL name of a plain value's type, for error messages."""
    names = (
        (bool, "bool"),
        (int, "int"),
        (float, "double"),
        (str, "string"),
        (bytes, "bytes"),
        (list, "list"),
        (dict, "map"),
        (Quantity, "kubernetes.Quantity"),
        (Semver, "kubernetes.Semver"),
    )
    if value is None:
        return "null_type"
    for kind, name in names:
        if isinstance(value, kind):
            return name
    return type(value).__name__


# --- quantity -------------------------------------------------------------------------
def quantity(text: Any) -> Quantity:
    """``quantity(s)``: Kubernetes' ``ParseQuantity``."""
    if not isinstance(text, str):
        raise LibError(NO_SUCH_OVERLOAD)
    try:
        return Quantity.parse(text)
    except QuantityError:
        if _SPLIT.match(text):
            raise LibError("unable to parse quantity's suffix") from None
        raise LibError(f"quantities must match the regular expression '{_SPLIT_RE}'") from None


def is_quantity(text: Any) -> bool:
    try:
        quantity(text)
    except LibError:
        if not isinstance(text, str):
            raise
        return False
    return True


def _q(value: Any) -> Quantity:
    if not isinstance(value, Quantity):
        raise LibError(NO_SUCH_OVERLOAD)
    return value


def is_integer(value: Any) -> bool:
    """``isInteger()``: ``AsInt64`` would succeed (integral and within int64)."""
    v = _q(value).value
    return v.denominator == 1 and _INT64_MIN <= v.numerator <= _INT64_MAX


def as_integer(value: Any) -> int:
    if not is_integer(value):
        raise LibError("cannot convert value to integer")
    return int(_q(value).value)


def as_approximate_float(value: Any) -> float:
    v = _q(value).value
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def add(value: Any, other: Any) -> Quantity:
    """``add(q)`` or ``add(int)``."""
    return Quantity(_q(value).value + _operand(other), _q(value).format)


def sub(value: Any, other: Any) -> Quantity:
    return Quantity(_q(value).value - _operand(other), _q(value).format)


def _operand(other: Any) -> Any:
    if isinstance(other, Quantity):
        return other.value
    if isinstance(other, int) and not isinstance(other, bool):
        return other
    raise LibError(NO_SUCH_OVERLOAD)


def compare_to(a: Any, b: Any) -> int:
    """``compareTo`` for two quantities or two semvers (-1, 0, 1)."""
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.value > b.value) - (a.value < b.value)
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    raise LibError(NO_SUCH_OVERLOAD)


# --- semver ---------------------------------------------------------------------------
def semver(text: Any, normalize: Any = False) -> Semver:
    """``semver(s)`` / ``semver(s, normalize)``."""
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise LibError(NO_SUCH_OVERLOAD)
    try:
        return Semver.parse(text, normalize=normalize)
    except SemverError as exc:
        raise LibError(str(exc)) from None


def is_semver(text: Any, normalize: Any = False) -> bool:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise LibError(NO_SUCH_OVERLOAD)
    try:
        Semver.parse(text, normalize=normalize)
    except SemverError:
        return False
    return True


def semver_part(value: Any, part: str) -> int:
    """``major()``, ``minor()``, ``patch()``."""
    if not isinstance(value, Semver):
        raise LibError(NO_SUCH_OVERLOAD)
    return int(getattr(value, part))
