"""A static type checker for the pure-Python engine, modelled on cel's own checker.

celpy has no checker: undeclared names, ``quantity("1") == 1`` or a selector of type
``int`` would only fail (or even pass) at run time. Kubernetes rejects them at compile
time, so this module infers types over the neutral AST with the same declarations the
cel-expr engine's check environment uses, and reports the first problem in cel's words.
Anything it cannot type is ``dyn`` and left to run time, as cel does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import CelCompileError, compilation_failed, issue
from .signatures import OVERLOADS, Type, is_assignable, type_name
from .stack import deep
from .syntax import MACROS, Node, Parsed

DYN: Type = "dyn"
DEVICE_FIELDS: dict[str, Type] = {
    "driver": "string",
    "allowMultipleAllocations": "bool",
    "attributes": ("map", "string", ("map", "string", DYN)),
    "capacity": ("map", "string", ("map", "string", DYN)),
}
_TYPE_IDENTS = {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"}
Scope = dict[str, Type]


class _Problem(Exception):
    def __init__(self, node: Node, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = node.pos if offset is None else offset


def check(parsed: Parsed) -> Type:
    """The expression's static type; raises :class:`CelCompileError` like Kubernetes' compiler.

    Whether the type suits the use (bool for a selector, a scalar for a derived attribute)
    is the evaluator's rule, not the checker's: one compiled program serves both uses.
    """
    return checked(parsed).types[id(parsed.root)]


@dataclass
class Checked:
    """What the checker learnt about every node: its type and, for calls, the overloads
    (parameter lists) that matched -- the cost estimator needs both, as cel-go's does."""

    types: dict[int, Type] = field(default_factory=dict)
    overloads: dict[int, list[tuple[Type, ...]]] = field(default_factory=dict)


def checked(parsed: Parsed) -> Checked:
    """Type every node of ``parsed``; raises :class:`CelCompileError` like :func:`check`."""
    checker = _Checker()
    try:
        checker.type_of(parsed.root, {})
    except _Problem as problem:
        detail = compilation_failed(issue(parsed.text, problem.offset, str(problem)))
        raise CelCompileError(detail, parsed.text) from None
    return checker.found


class _Checker:
    def __init__(self) -> None:
        self.found = Checked()

    @deep
    def type_of(self, node: Node, scope: Scope) -> Type:
        handler = getattr(self, "_" + node.kind)
        result: Type = handler(node, scope)
        self.found.types[id(node)] = result
        return result

    def _literal(self, node: Node, scope: Scope) -> Type:
        return "null_type" if node.name == "null" else node.name

    def _ident(self, node: Node, scope: Scope) -> Type:
        if node.name in scope:
            return scope[node.name]
        if node.name == "device":
            return "kubernetes.DRADevice"
        if node.name in _TYPE_IDENTS:
            return ("type", node.name)
        raise _Problem(node, f"undeclared reference to '{node.name}' (in container '')")

    def _struct(self, node: Node, scope: Scope) -> Type:
        raise _Problem(node, "message construction is not supported in DRA selectors")

    def _list(self, node: Node, scope: Scope) -> Type:
        items = [self.type_of(a, scope) for a in node.args]
        return ("list", _join(items))

    def _map(self, node: Node, scope: Scope) -> Type:
        keys = [self.type_of(a, scope) for a in node.args[0::2]]
        values = [self.type_of(a, scope) for a in node.args[1::2]]
        return ("map", _join(keys), _join(values))

    def _select(self, node: Node, scope: Scope) -> Type:
        assert node.target is not None
        operand = self.type_of(node.target, scope)
        optional = node.optional
        if isinstance(operand, tuple) and operand[0] == "optional_type":
            operand, optional = operand[1], True
        field = self._field(node, operand)
        return ("optional_type", field) if optional else field

    def _field(self, node: Node, operand: Type) -> Type:
        if operand == "kubernetes.DRADevice":
            if node.name not in DEVICE_FIELDS:
                raise _Problem(node, f"undefined field '{node.name}' not found in struct 'kubernetes.DRADevice'")
            return DEVICE_FIELDS[node.name]
        if operand == DYN:
            return DYN
        if isinstance(operand, tuple) and operand[0] == "map":
            return operand[2]
        raise _Problem(node, f"expression of type '{type_name(operand)}' cannot be the operand of a select operation")

    def _index(self, node: Node, scope: Scope) -> Type:
        assert node.target is not None
        operand, key = self.type_of(node.target, scope), self.type_of(node.args[0], scope)
        optional = node.optional
        if isinstance(operand, tuple) and operand[0] == "optional_type":
            operand, optional = operand[1], True
        result = self._resolve(node, "_[_]", [operand, key])
        return ("optional_type", result) if optional else result

    def _call(self, node: Node, scope: Scope) -> Type:
        if node.name == "has" and node.target is None:
            return self._has(node, scope)
        if node.name == "cel.bind" and len(node.args) == 3:
            var, init, body = node.args
            if var.kind != "ident":
                raise _Problem(var, "cel.bind() variable name must be a simple identifier")
            return self.type_of(body, dict(scope, **{var.name: self.type_of(init, scope)}))
        if node.name in MACROS and node.target is not None and len(node.args) in (2, 3):
            return self._macro(node, scope)
        if node.name in ("_&&_", "_||_"):
            return self._logical(node, scope)
        args = [self.type_of(a, scope) for a in node.children()]
        return self._resolve(node, node.name, args, member=node.target is not None)

    def _has(self, node: Node, scope: Scope) -> Type:
        if len(node.args) != 1 or node.args[0].kind != "select":
            offset = node.args[0].pos if node.args else node.pos
            raise _Problem(node, "has() argument must be a field selection", offset)
        self.type_of(node.args[0], scope)
        return "bool"

    def _logical(self, node: Node, scope: Scope) -> Type:
        types = [self.type_of(a, scope) for a in node.args]
        for t in types:
            if t not in ("bool", DYN):
                listed = ", ".join(type_name(x) for x in types[:2])
                raise _Problem(node, f"found no matching overload for '{node.name}' applied to '({listed})'")
        return "bool"

    def _macro(self, node: Node, scope: Scope) -> Type:
        assert node.target is not None
        var = node.args[0]
        if var.kind != "ident":
            raise _Problem(var, "argument must be a simple name")
        element = self._range_element(node.target, scope)
        inner = dict(scope, **{var.name: element})
        bodies = [self.type_of(a, inner) for a in node.args[1:]]
        if node.name == "map":
            if len(bodies) == 2:
                self._require_bool(node, bodies[0], "_&&_")
            return ("list", bodies[-1])
        self._require_bool(node, bodies[0], "_&&_" if node.name == "all" else "_||_")
        return ("list", element) if node.name == "filter" else "bool"

    def _range_element(self, target: Node, scope: Scope) -> Type:
        kind = self.type_of(target, scope)
        if kind == DYN:
            return DYN
        if isinstance(kind, tuple) and kind[0] in ("list", "map"):
            return kind[1]
        raise _Problem(
            target,
            f"expression of type '{type_name(kind)}' cannot be the range of a "
            "comprehension (must be list, map, or dynamic)",
            target.start,
        )

    def _require_bool(self, node: Node, body: Type, op: str) -> None:
        if body not in ("bool", DYN):
            raise _Problem(node, f"found no matching overload for '{op}' applied to '(bool, {type_name(body)})'")

    def _resolve(self, node: Node, name: str, args: list[Type], member: bool = False) -> Type:
        overloads = OVERLOADS.get(name)
        if overloads is None:
            raise _Problem(node, f"undeclared reference to '{name}' (in container '')")
        results, matched = [], []
        for params, result, is_member in overloads:
            if is_member != member and not name.startswith(("_", "@")):
                continue
            bound = _match(params, args)
            if bound is not None:
                results.append(_substitute(result, bound))
                matched.append(params)
        self.found.overloads[id(node)] = matched
        if not results:
            listed = ", ".join(type_name(a) for a in args)
            raise _Problem(node, f"found no matching overload for '{name}' applied to '({listed})'")
        return results[0] if all(r == results[0] for r in results) else DYN


def _join(types: list[Type]) -> Type:
    """A literal list/map's element type: the common type, or dyn when elements differ."""
    if not types:
        return DYN
    return types[0] if all(t == types[0] for t in types) else DYN


def _match(params: tuple[Type, ...], args: list[Type]) -> dict[str, Type] | None:
    if len(params) != len(args):
        return None
    bound: dict[str, Type] = {}
    for param, arg in zip(params, args):
        if not is_assignable(param, arg, bound):
            return None
    return bound


@deep
def _substitute(result: Type, bound: dict[str, Type]) -> Type:
    if isinstance(result, tuple):
        return (result[0],) + tuple(_substitute(p, bound) for p in result[1:])
    return bound.get(result, DYN) if result in ("A", "B") else result
