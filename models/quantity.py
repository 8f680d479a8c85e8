"""Kubernetes ``resource.Quantity``: exact parsing, arithmetic and canonical formatting.

Capacities, counters and capacity requests are all quantities. Sums and comparisons
must be exact (``1Gi`` is ``1024Mi`` is ``1073741824``), so the value is kept as a
``Fraction``; floats never enter. Output uses Kubernetes' canonical form
(``1536Mi``, ``500m``, ``1k``) so that what drasat prints is what ``kubectl`` prints.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache, total_ordering
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from .wording import describe

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL.items()}
_BINARY_BY_EXP = {v // 10: k for k, v in _BINARY.items()}
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_GRAMMAR = re.compile(rf"^({_NUMBER})(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_NANO = Fraction(1, 10**9)
MAX_LENGTH = 64  # longer strings are rejected before the regex runs

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


@total_ordering
class Quantity:
    """An exact Kubernetes quantity: a ``Fraction`` value and the format it was written in."""

    __slots__ = ("value", "format")

    def __init__(self, value: Fraction | int, format: str = DECIMAL_SI) -> None:
        self.value = Fraction(value)
        self.format = format

    @classmethod
    def parse(cls, text: str | int | float) -> Quantity:
        """Parse a quantity written as Kubernetes accepts it (a bare number counts)."""
        if isinstance(text, bool):
            raise QuantityError(f"quantities must be numbers or strings, not {text!r}")
        if isinstance(text, (int, float)):
            text = repr(text) if isinstance(text, float) else str(text)
        return _parse_cached(text)

    # --- arithmetic and comparison -------------------------------------------------
    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + _value(other), self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.value - _value(other), self.format)

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.format)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.value == other.value
        if isinstance(other, (int, Fraction)):
            return self.value == other
        return NotImplemented

    def __lt__(self, other: Quantity | int | Fraction) -> bool:
        return self.value < _value(other)

    def __hash__(self) -> int:
        return hash(self.value)

    def ceil_int(self) -> int:
        """Kubernetes ``Quantity.Value()``: rounded up to an integer."""
        return math.ceil(self.value)

    def milli_value(self) -> int:
        """Kubernetes ``Quantity.MilliValue()``: thousandths, rounded up."""
        return math.ceil(self.value * 1000)

    def is_integer(self) -> bool:
        return self.value.denominator == 1

    def is_zero(self) -> bool:
        return self.value == 0

    # --- formatting ------------------------------------------------------------------
    def __str__(self) -> str:
        return canonical(self.value, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """Accept strings and bare numbers (as the API server does); dump canonically."""

        def validate(v: Any) -> Quantity:
            if type(v) is str:  # nearly every one: straight to the cache (a fleet has 300,000 of them)
                return _parse_cached(v)
            if isinstance(v, Quantity):
                return v
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                return cls.parse(v)
            raise QuantityError(f"a quantity must be a string or a number, not {describe(v)}")

        return core_schema.no_info_plain_validator_function(
            validate,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="always"),
            json_schema_input_schema=core_schema.str_schema(),
        )


def _value(q: Quantity | int | Fraction) -> Fraction:
    return q.value if isinstance(q, Quantity) else Fraction(q)


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    if len(text) > MAX_LENGTH:
        raise QuantityError(f"quantity {text[:20]!r}... is longer than {MAX_LENGTH} characters")
    match = _GRAMMAR.match(text.strip() if text.strip() == text else "\0")
    if not match:
        raise QuantityError(
            f"{text!r} is not a quantity (expected a number with an optional "
            "suffix such as Ki, Mi, Gi, m, k, M, G or an exponent like e3)"
        )
    number, suffix = match.group(1), match.group(2) or ""
    value = Fraction(number)
    if suffix in _BINARY:
        value *= 2 ** _BINARY[suffix]
        fmt = BINARY_SI
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
        fmt = DECIMAL_SI
    else:
        exponent = int(suffix[1:])
        if abs(exponent) > 1000:
            raise QuantityError(f"quantity {text!r} has an exponent out of range")
        value *= Fraction(10) ** exponent
        fmt = DECIMAL_EXPONENT
    # Kubernetes keeps at most nano precision and rounds finer values up (away from zero).
    if (value / _NANO).denominator != 1:
        nanos = math.ceil(abs(value) / _NANO)
        value = nanos * _NANO * (1 if value >= 0 else -1)
    return Quantity(value, fmt)


def canonical(value: Fraction, fmt: str = DECIMAL_SI) -> str:
    """Kubernetes' ``CanonicalizeBytes``: the shortest exact form in the given format family."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI and abs(value) >= 1024 and value.denominator == 1:
        mantissa, exponent = int(value), 0
        while mantissa % 1024 == 0 and exponent < 6:
            mantissa //= 1024
            exponent += 1
        return f"{mantissa}{_BINARY_BY_EXP.get(exponent, '')}"
    mantissa, exponent = _base10(value, unbounded=fmt == DECIMAL_EXPONENT)
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}" if exponent == 0 else f"{mantissa}e{exponent}"
    if exponent in _DECIMAL_BY_EXP:
        return f"{mantissa}{_DECIMAL_BY_EXP[exponent]}"
    return f"{mantissa}e{exponent}"


def _base10(value: Fraction, unbounded: bool = False) -> tuple[int, int]:
    """An integer mantissa and an exponent that is a multiple of 3, exponent as large as possible.

    Suffixes stop at ``E`` (10^18); the exponent form has no such limit (Go moves every factor
    of ten into it: ``4e25`` is ``40e24``, never ``40000000e18``)."""
    exponent = 0
    while value.denominator != 1:
        value *= 1000
        exponent -= 3
    mantissa = int(value)
    while mantissa != 0 and mantissa % 1000 == 0 and (unbounded or exponent < 18):
        mantissa //= 1000
        exponent += 3
    return mantissa, exponent
