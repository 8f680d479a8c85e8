"""Function signatures of Kubernetes' DRA CEL environment, for the pure-Python checker.

The same declarations the cel-expr engine gives its check environment: the standard
library, the strings extension (version 2), optional values, and Kubernetes' quantity,
semver and ``includes`` functions. Types are cel's names (``int``, ``list(string)``);
``A`` and ``B`` are type parameters.
"""

from __future__ import annotations

from .stack import deep

Type = str | tuple
Overload = tuple[tuple[Type, ...], Type, bool]  # params (receiver first), result, member?

TS, DUR = "google.protobuf.Timestamp", "google.protobuf.Duration"
Q, S = "kubernetes.Quantity", "kubernetes.Semver"
_A, _B = "A", "B"


def _list(t: Type) -> Type:
    return ("list", t)


OVERLOADS: dict[str, list[Overload]] = {}


def _add(name: str, params: tuple[Type, ...], result: Type, member: bool = False) -> None:
    OVERLOADS.setdefault(name, []).append((params, result, member))


def _standard() -> None:
    for op in ("_==_", "_!=_"):
        _add(op, (_A, _A), "bool")
    for op in ("_<_", "_<=_", "_>_", "_>=_"):
        for t in ("int", "uint", "double", "string", "bytes", "bool", TS, DUR):
            _add(op, (t, t), "bool")
    for t in ("int", "uint", "double"):
        for op in ("_+_", "_-_", "_*_", "_/_"):
            _add(op, (t, t), t)
    for t in ("int", "uint"):
        _add("_%_", (t, t), t)
    for t in ("string", "bytes", DUR):
        _add("_+_", (t, t), t)
    _add("_+_", (_list(_A), _list(_A)), _list(_A))
    _add("_+_", (TS, DUR), TS)
    _add("_+_", (DUR, TS), TS)
    _add("_-_", (TS, TS), DUR)
    _add("_-_", (TS, DUR), TS)
    _add("_-_", (DUR, DUR), DUR)
    _add("-_", ("int",), "int")
    _add("-_", ("double",), "double")
    _add("!_", ("bool",), "bool")
    _add("_?_:_", ("bool", _A, _A), _A)
    _add("@in", (_A, _list(_A)), "bool")
    _add("@in", (_A, ("map", _A, _B)), "bool")
    _add("_[_]", (_list(_A), "int"), _A)
    _add("_[_]", (_list(_A), "uint"), _A)
    _add("_[_]", (("map", _A, _B), _A), _B)
    sized: tuple[Type, ...] = ("string", "bytes", _list(_A), ("map", _A, _B))
    for sized_type in sized:
        _add("size", (sized_type,), "int")
        _add("size", (sized_type,), "int", member=True)


def _conversions() -> None:
    for target, sources in (
        ("int", ("int", "uint", "double", "string", TS)),
        ("uint", ("int", "uint", "double", "string")),
        ("double", ("int", "uint", "double", "string")),
        ("string", ("int", "uint", "double", "string", "bytes", "bool", TS, DUR)),
        ("bytes", ("bytes", "string")),
        ("bool", ("bool", "string")),
        (TS, ("string", "int", TS)),
        (DUR, ("string", DUR)),
    ):
        name = {TS: "timestamp", DUR: "duration"}.get(target, target)
        for source in sources:
            _add(name, (source,), target)
    _add("dyn", (_A,), "dyn")
    _add("type", (_A,), ("type", _A))
    for name in ("getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear"):
        _add(name, (TS,), "int", member=True)
        _add(name, (TS, "string"), "int", member=True)
    for name in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
        _add(name, (TS,), "int", member=True)
        _add(name, (TS, "string"), "int", member=True)
        _add(name, (DUR,), "int", member=True)


def _strings() -> None:
    for name in ("contains", "startsWith", "endsWith", "matches"):
        _add(name, ("string", "string"), "bool", member=True)
    _add("matches", ("string", "string"), "bool")
    _add("charAt", ("string", "int"), "string", member=True)
    for name in ("indexOf", "lastIndexOf"):
        _add(name, ("string", "string"), "int", member=True)
        _add(name, ("string", "string", "int"), "int", member=True)
    for name in ("lowerAscii", "upperAscii", "trim"):
        _add(name, ("string",), "string", member=True)
    _add("replace", ("string", "string", "string"), "string", member=True)
    _add("replace", ("string", "string", "string", "int"), "string", member=True)
    _add("split", ("string", "string"), _list("string"), member=True)
    _add("split", ("string", "string", "int"), _list("string"), member=True)
    _add("substring", ("string", "int"), "string", member=True)
    _add("substring", ("string", "int", "int"), "string", member=True)
    _add("join", (_list("string"),), "string", member=True)
    _add("join", (_list("string"), "string"), "string", member=True)


def _kubernetes() -> None:
    _add("quantity", ("string",), Q)
    _add("isQuantity", ("string",), "bool")
    _add("isInteger", (Q,), "bool", member=True)
    _add("asInteger", (Q,), "int", member=True)
    _add("asApproximateFloat", (Q,), "double", member=True)
    for name in ("add", "sub"):
        _add(name, (Q, Q), Q, member=True)
        _add(name, (Q, "int"), Q, member=True)
    for t in (Q, S):
        _add("compareTo", (t, t), "int", member=True)
        _add("isGreaterThan", (t, t), "bool", member=True)
        _add("isLessThan", (t, t), "bool", member=True)
    _add("semver", ("string",), S)
    _add("semver", ("string", "bool"), S)
    _add("isSemver", ("string",), "bool")
    _add("isSemver", ("string", "bool"), "bool")
    for name in ("major", "minor", "patch"):
        _add(name, (S,), "int", member=True)
    _add("includes", ("dyn", "dyn"), "bool", member=True)


def _optional() -> None:
    opt = ("optional_type", _A)
    _add("optional.of", (_A,), opt)
    _add("optional.ofNonZeroValue", (_A,), opt)
    _add("optional.none", (), ("optional_type", "dyn"))
    _add("hasValue", (opt,), "bool", member=True)
    _add("value", (opt,), _A, member=True)
    _add("orValue", (opt, _A), _A, member=True)
    _add("or", (opt, opt), opt, member=True)


for _part in (_standard, _conversions, _strings, _kubernetes, _optional):
    _part()


@deep
def is_assignable(param: Type, arg: Type, bound: dict[str, Type]) -> bool:
    """Whether ``arg`` fits ``param``, binding type parameters as cel's checker does."""
    if arg == "dyn" or param == "dyn":
        return True
    if param in (_A, _B):
        if param not in bound or bound[param] == "dyn":
            bound[param] = arg
            return True
        return _unify(bound[param], arg)
    if isinstance(param, tuple) and isinstance(arg, tuple):
        return (
            param[0] == arg[0]
            and len(param) == len(arg)
            and all(is_assignable(p, a, bound) for p, a in zip(param[1:], arg[1:]))
        )
    return param == arg


@deep
def _unify(a: Type, b: Type) -> bool:
    if a == "dyn" or b == "dyn":
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[0] == b[0] and len(a) == len(b) and all(_unify(x, y) for x, y in zip(a[1:], b[1:]))
    return a == b


@deep
def type_name(t: Type) -> str:
    """cel's spelling of a type: ``list(int)``, ``map(string, dyn)``."""
    if isinstance(t, tuple):
        return f"{t[0]}({', '.join(type_name(p) for p in t[1:])})"
    return "dyn" if t in (_A, _B) else t
