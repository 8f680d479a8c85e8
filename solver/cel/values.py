"""What a derived attribute may evaluate to, checked once for both engines.

A DRA derived attribute (``derivedAttributes[].expression``, the DRADerivedAttributes
feature) becomes a virtual device attribute that ``matchAttribute`` and
``distinctAttribute`` compare, so its value must be something a device attribute can
hold: a string, int, bool or semantic version, or -- with DRAListTypeAttributes -- a
non-empty list of one of those. Selectors, by contrast, must be bool.

The rule is applied twice, as Kubernetes applies it: on the checked type at compile
time (``double``, ``map(...)``, ``list(double)`` can never be right) and on the value at
run time (a ``dyn`` expression can still produce anything). Engines hand over their
result as plain Python -- ``int``, ``bool``, ``str``, :class:`Semver`, ``list`` -- and
anything else as :class:`Foreign`, which keeps only the CEL type name for the message.
"""

from __future__ import annotations

from drasat.models.semver import Semver

from .errors import CelRuntimeError
from .stack import deep

Scalar = int | bool | str | Semver
Value = Scalar | list[Scalar]

_SCALAR_TYPES = ("string", "int", "bool", "kubernetes.Semver")


class Foreign:
    """A result value of a type no attribute can hold (double, map, bytes, null, ...): its CEL name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def static_error(type_name: str, lists: bool) -> str | None:
    """Why an expression of checked type ``type_name`` can never be a derived attribute, or None.

    ``dyn`` (and ``list(dyn)`` with lists) passes: only the value can tell.
    """
    is_list = type_name.startswith("list(")
    if (
        type_name == "dyn"
        or type_name in _SCALAR_TYPES
        or (lists and is_list and type_name[5:-1] in _SCALAR_TYPES + ("dyn",))
    ):
        return None
    return f"derived attribute must evaluate to {_allowed(lists)}, not {type_name}{_gate(type_name, lists, True)}"


def checked(value: object, lists: bool) -> Value:
    """``value`` if a derived attribute may hold it (versions without build metadata); else a runtime error.

    Build metadata is dropped because the cel-expr engine's version carrier cannot keep
    it (semver equality ignores it); dropping it here makes both engines give one answer.
    """
    if isinstance(value, list):
        if lists:
            return _checked_list(value)
    elif value_type(value) in _SCALAR_TYPES:
        return _scalar(value)  # type: ignore[arg-type]
    kind = value_type(value)
    raise CelRuntimeError(
        f"derived attribute value has type {kind}: it must be a {_allowed(lists)}{_gate(kind, lists, False)}"
    )


def _checked_list(value: list[object]) -> list[Scalar]:
    """A list value: non-empty, and all of one scalar type (as an attribute's ints/strings/... field)."""
    if not value:
        raise CelRuntimeError("derived attribute value is an empty list: a list value needs at least one element")
    kinds = {value_type(v) for v in value}
    if len(kinds) > 1:
        raise CelRuntimeError(
            f"derived attribute value is a list mixing {' and '.join(sorted(kinds))}: "
            "all elements of a list value must have one type"
        )
    if kinds.pop() not in _SCALAR_TYPES:
        raise CelRuntimeError(f"derived attribute value has type {value_type(value)}: it must be a {_allowed(True)}")
    return [_scalar(v) for v in value]  # type: ignore[arg-type]


def _allowed(lists: bool) -> str:
    return "string, int, bool, version or a list of those" if lists else "string, int, bool or version"


def _gate(type_name: str, lists: bool, dyn: bool) -> str:
    """A hint when a list is wrong only because list values are not enabled (``dyn``: elements may still fit)."""
    fits = _SCALAR_TYPES + ("dyn",) if dyn else _SCALAR_TYPES
    if not lists and type_name.startswith("list(") and type_name[5:-1] in fits:
        return " (list values need the DRAListTypeAttributes feature)"
    return ""


def _scalar(value: Scalar) -> Scalar:
    if isinstance(value, Semver) and value.build:
        return Semver(value.major, value.minor, value.patch, value.prerelease)
    return value


@deep
def value_type(value: object) -> str:
    """The CEL name of a result value's type; a list is named by its element type when it has one."""
    if isinstance(value, Foreign):
        return value.name
    if isinstance(value, list):
        kinds = {value_type(v) for v in value}
        return f"list({kinds.pop()})" if len(kinds) == 1 else "list(dyn)"
    for kind, name in (
        (bool, "bool"),
        (int, "int"),
        (str, "string"),
        (Semver, "kubernetes.Semver"),
        (float, "double"),
        (bytes, "bytes"),
        (dict, "map"),
    ):
        if isinstance(value, kind):
            return name
    return "null_type" if value is None else type(value).__name__
