"""Values and functions of the celpy engine: conversions, Kubernetes maps, the function table.

celpy computes with its own ``celtypes`` (``IntType``, ``StringType``...); the shared
library works on plain Python. Every function here converts at the boundary and turns a
:class:`LibError` into a ``CELEvalError`` *value*, so that ``&&``/``||`` can absorb it
as CEL requires. CEL equality and ordering replace celpy's own, which differ from cel-go
(celpy errors on ``1 == "1"`` and accepts ``true == 1``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import re2
from celpy import celtypes
from celpy.evaluation import CELEvalError

from drasat.models.quantity import Quantity
from drasat.models.semver import Semver

from . import library as lib
from . import strings_ext
from .values import Foreign

_TO_CEL: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (bool, celtypes.BoolType),
    (int, celtypes.IntType),
    (float, celtypes.DoubleType),
    (str, celtypes.StringType),
    (bytes, celtypes.BytesType),
)


class DefaultMap(celtypes.MapType):
    """Kubernetes' outer attribute/capacity map: an unknown domain reads as an empty map.

    Membership (``in``), ``size`` and iteration still see only the real domains.
    """

    def __missing__(self, key: Any) -> celtypes.MapType:
        return celtypes.MapType()


class OptionalValue:
    """A CEL ``optional_type`` value (celpy has none)."""

    __slots__ = ("present", "value")

    def __init__(self, present: bool, value: Any = None) -> None:
        self.present, self.value = present, value

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, OptionalValue)
            and self.present == other.present
            and (not self.present or lib.cel_equal(to_plain(self.value), to_plain(other.value)))
        )

    __hash__ = None  # type: ignore[assignment]


NONE = OptionalValue(False)


def to_plain(value: Any) -> Any:
    """celtypes -> plain Python (bool before int: celpy's BoolType is an int)."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.BytesType):
        return bytes(value)
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {to_plain(k): to_plain(v) for k, v in value.items()}
    return value


def to_cel(value: Any) -> Any:
    """plain Python -> celtypes; Quantity, Semver and other objects pass unchanged."""
    for kind, make in _TO_CEL:
        if isinstance(value, kind):
            return make(value)
    if isinstance(value, list):
        return celtypes.ListType([to_cel(v) for v in value])
    if isinstance(value, dict):
        return celtypes.MapType({to_cel(k): to_cel(v) for k, v in value.items()})
    return value


_FOREIGN: tuple[tuple[type, str], ...] = (
    (celtypes.UintType, "uint"),
    (celtypes.DoubleType, "double"),
    (celtypes.BytesType, "bytes"),
    (dict, "map"),
    (Quantity, "kubernetes.Quantity"),
    (OptionalValue, "optional_type"),
    (celtypes.TimestampType, "google.protobuf.Timestamp"),
    (celtypes.DurationType, "google.protobuf.Duration"),
    (type, "type"),
)


def to_result(value: Any) -> Any:
    """A result as plain Python for :func:`.values.checked`; kinds no attribute holds as :class:`Foreign`.

    bool and uint are told apart before int (celpy's ``BoolType`` and ``UintType`` are
    Python ints), and a map is only named, never converted.
    """
    if isinstance(value, (bool, celtypes.BoolType)):
        return bool(value)
    for kind, name in _FOREIGN:
        if isinstance(value, kind):
            return Foreign(name)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        return [to_result(v) for v in value]
    if value is None:
        return Foreign("null_type")
    return value if isinstance(value, Semver) else Foreign(type(value).__name__)


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    """A library function as a celpy function: errors in, errors out, as values."""

    def call(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        try:
            return to_cel(function(*(to_plain(a) for a in args)))
        except lib.LibError as exc:
            return CELEvalError(str(exc))

    call.__name__ = getattr(function, "__name__", "function")
    return call


def _not(function: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda a, b: not function(a, b)


def _ordering(test: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    return lambda a, b: test(lib.cel_compare(a, b))


def _member_of(item: Any, container: Any) -> bool:
    """CEL ``in``: list membership by CEL equality, map key presence."""
    if isinstance(container, list):
        return any(lib.cel_equal(item, c) for c in container)
    if isinstance(container, dict):
        return any(lib.cel_equal(item, k) for k in container)
    raise lib.LibError(lib.NO_SUCH_OVERLOAD)


def _compare(a: Any, b: Any) -> bool:
    return lib.cel_equal(a, b)


def _optional_fn(name: str) -> Callable[..., Any]:
    """hasValue / value / orValue / or on :class:`OptionalValue`."""

    def call(opt: Any, *args: Any) -> Any:
        if isinstance(opt, CELEvalError):
            return opt
        if not isinstance(opt, OptionalValue):
            return CELEvalError(lib.NO_SUCH_OVERLOAD)
        if name == "hasValue":
            return celtypes.BoolType(opt.present)
        if name == "value":
            return opt.value if opt.present else CELEvalError("optional.none() dereference")
        if name == "orValue":
            return opt.value if opt.present else args[0]
        return opt if opt.present else args[0]

    return call


def _string(value: Any) -> Any:
    """``string()``: like celpy's, but Kubernetes' Quantity and Semver have no conversion."""
    if isinstance(value, CELEvalError):
        return value
    if isinstance(value, (Quantity, Semver, OptionalValue)):
        return CELEvalError(lib.NO_SUCH_OVERLOAD)
    return celtypes.StringType(value)


_QUIET = re2.Options()
_QUIET.log_errors = False  # RE2 would log every bad pattern to stderr from C++, past Python's logging


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _QUIET)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        reason = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise lib.LibError(f"invalid regular expression: {reason}") from None


def _matches(text: Any, pattern: Any) -> bool:
    """``matches``, replacing celpy's: no log line per bad pattern, and cel-expr's words for the error."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise lib.LibError(lib.NO_SUCH_OVERLOAD)
    return _regex(pattern).search(text) is not None


def functions() -> dict[str, Callable[..., Any]]:
    """The celpy function table: operators, Kubernetes libraries, strings, optionals."""
    table: dict[str, Callable[..., Any]] = {
        "_==_": _compare,
        "_!=_": _not(_compare),
        "_in_": _member_of,
        "_<_": _ordering(lambda c: c < 0),
        "_<=_": _ordering(lambda c: c <= 0),
        "_>_": _ordering(lambda c: c > 0),
        "_>=_": _ordering(lambda c: c >= 0),
        "quantity": lib.quantity,
        "isQuantity": lib.is_quantity,
        "isInteger": lib.is_integer,
        "asInteger": lib.as_integer,
        "asApproximateFloat": lib.as_approximate_float,
        "add": lib.add,
        "sub": lib.sub,
        "compareTo": lib.compare_to,
        "isGreaterThan": lambda a, b: lib.compare_to(a, b) > 0,
        "isLessThan": lambda a, b: lib.compare_to(a, b) < 0,
        "semver": lib.semver,
        "isSemver": lib.is_semver,
        "includes": lib.includes,
        "major": lambda v: lib.semver_part(v, "major"),
        "minor": lambda v: lib.semver_part(v, "minor"),
        "patch": lambda v: lib.semver_part(v, "patch"),
        "matches": _matches,
    }
    table.update(strings_ext.FUNCTIONS)
    wrapped = {name: _wrap(fn) for name, fn in table.items()}
    for name in ("hasValue", "value", "orValue", "or"):
        wrapped[name] = _optional_fn(name)
    wrapped["string"] = _string
    return wrapped
