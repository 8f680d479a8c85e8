"""Values of the cel-expr engine: carriers for Quantity and Semver, and results back to Python.

The run environment carries Quantity and Semver as tagged ``bytes`` (a distinct run-time
kind that attributes never produce), so evaluation needs no protobuf messages and the
library overloads can tell them apart by kind. This module converts plain values to and
from those carriers, adapts the shared library's functions to them, and turns a
result ``cel.Value`` into the engine-neutral form :mod:`.values` checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from drasat.models.quantity import Quantity
from drasat.models.semver import Semver

from . import library as lib
from .values import Foreign

_Q, _S = b"\xff\xfeQ", b"\xff\xfeS"  # no NUL: cel-expr cuts bytes at NUL

PLAIN = frozenset((str, int, bool, float))


def encode(value: Any) -> Any:
    """A plain value as the run environment carries it."""
    if type(value) in PLAIN:
        return value
    if isinstance(value, Quantity):
        return _encode_quantity(value.value.numerator, value.value.denominator)
    if isinstance(value, Semver):
        return _encode_semver(value)
    if isinstance(value, list):
        return [encode(v) for v in value]
    return value


@lru_cache(maxsize=65536)
def _encode_quantity(numerator: int, denominator: int) -> bytes:
    """Keyed by the two ints: hashing them is much cheaper than hashing a Fraction."""
    return _Q + (f"{numerator}" if denominator == 1 else f"{numerator}/{denominator}").encode()


@lru_cache(maxsize=65536)
def _encode_semver(value: Semver) -> bytes:
    return _S + Semver(value.major, value.minor, value.patch, value.prerelease).text.encode()


@lru_cache(maxsize=65536)
def _decode_bytes(raw: bytes) -> Any:
    if raw.startswith(_Q):
        return Quantity.parse(raw[len(_Q) :].decode()) if b"/" not in raw else _fraction(raw)
    if raw.startswith(_S):
        return Semver.parse(raw[len(_S) :].decode())
    return raw


def _fraction(raw: bytes) -> Quantity:
    from fractions import Fraction

    return Quantity(Fraction(raw[len(_Q) :].decode()))


def decode(value: Any) -> Any:
    """A run-environment value back to a plain one (bytes carriers -> Quantity/Semver)."""
    if isinstance(value, (bytes, bytearray)):
        return _decode_bytes(bytes(value))
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def adapt(function: Callable[..., Any]) -> Callable[..., Any]:
    """Adapt a library function: decode arguments, encode the result, LibError -> CEL error."""

    def call(*args: Any) -> Any:
        try:
            return encode(function(*(decode(a) for a in args)))
        except lib.LibError as exc:
            raise ValueError(str(exc)) from None

    call.__name__ = function.__name__
    return call


def go_type(name: str) -> str:
    """cel-cpp's type names (``LIST<INT>``) in cel-go's spelling (``list(int)``)."""
    special = {
        "NULL": "null_type",
        "DURATION": "google.protobuf.Duration",
        "TIMESTAMP": "google.protobuf.Timestamp",
        "optional_type": "optional_type",
    }
    out = re.sub(
        r"[A-Za-z_][A-Za-z_0-9.]*",
        lambda m: special.get(m.group(0), m.group(0).lower() if m.group(0).isupper() else m.group(0)),
        name,
    )
    return out.replace("<", "(").replace(">", ")")


def to_value(value: Any) -> Any:
    """A result ``cel.Value`` as plain Python for :func:`.values.checked`; other kinds as :class:`Foreign`.

    Lists are walked item by item (``plain_value`` would lose the int/uint distinction).
    Errors are the caller's business; the one ``ERROR`` kind that reaches this function is
    an optional value, which cel-expr-python reports so because Python cannot read it.
    """
    kind = value.type().name()
    if kind in ("INT", "BOOL", "STRING"):
        return value.value()
    if kind == "BYTES":
        decoded = decode(value.value())
        return decoded if isinstance(decoded, Semver) else Foreign(lib.type_name(decoded))
    if kind.startswith("LIST"):
        return [to_value(item) for item in value.value()]
    if kind == "ERROR":
        return Foreign("optional_type")
    return Foreign(go_type(kind).split("(")[0])
