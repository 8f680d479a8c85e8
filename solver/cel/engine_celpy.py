"""The pure-Python engine: celpy's tree-walking evaluator, made to behave like Kubernetes.

celpy parses and evaluates CEL but lacks what DRA selectors need, so this module adds:
a compile-time checker (:mod:`.checker`), ``cel.bind``, the strings extension, optional
values, Kubernetes' empty-map default for unknown domains, CEL's error-absorbing
short-circuit ``&&``/``||``, exact ``has()``, and Kubernetes' run-time cost limit.

Kubernetes stops an evaluation whose actual cost passes 1,000,000 units. An
expression whose worst-case estimate (:mod:`.cost`) is within that limit can never
reach it on devices the API server accepts, so it runs to the end (bounded by its
estimate). One whose estimate is higher would have been refused by the API server
("too complex") and reaches an allocator only from an older cluster; it is stopped
at a cheap budget -- 10,000 comprehension iterations (cel-cpp's) or 250,000 tree
steps -- so hostile input stays fast. A wall-clock backstop catches anything the
counters miss. All are counted in the evaluator itself, so they work on any thread.
"""

from __future__ import annotations

import time
from typing import Any

import lark
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator

from drasat.models.quantity import Quantity
from drasat.models.semver import Semver

from . import library as lib
from .analysis import DriverTest, analyse
from .celpy_values import NONE, DefaultMap, OptionalValue, functions, to_cel, to_plain, to_result
from .checker import checked
from .cost import MAX_COST, estimate
from .device import CelDevice, convert
from .errors import COST_EXCEEDED, CelRuntimeError, missing_key, non_bool_result
from .signatures import type_name
from .stack import deep
from .syntax import MACROS, Node, decode_string, parse

NAME = "celpy"
UNBOUNDED = 40 * MAX_COST  # within the estimate: a step or an iteration costs at least 1/40 of a unit
MAX_ITERATIONS = 10_000  # over the estimate: cel-expr-python's fixed comprehension budget
MAX_STEPS = 250_000  # over the estimate: tree nodes visited (realistic selectors: ~100)
MAX_SECONDS = 30.0  # backstop for anything the counters miss (typical: < 1 ms)
_PASS = frozenset(
    ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member")
)


def available() -> bool:
    try:
        import celpy  # noqa: F401
    except ImportError:
        return False
    return True


class _Exhausted(Exception):
    """The evaluation used up its budget (never caught by celpy, which catches narrower types)."""


class _Budget:
    __slots__ = ("steps", "iterations", "deadline", "max_steps", "max_iterations")

    def __init__(self, within_limit: bool) -> None:
        self.steps = self.iterations = 0
        self.max_steps, self.max_iterations = (UNBOUNDED, UNBOUNDED) if within_limit else (MAX_STEPS, MAX_ITERATIONS)
        self.deadline = time.monotonic() + MAX_SECONDS

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps or (self.steps & 1023 == 0 and time.monotonic() > self.deadline):
            raise _Exhausted()

    def iteration(self) -> None:
        self.iterations += 1
        if self.iterations >= self.max_iterations:
            raise _Exhausted()


class Program:
    """A parsed and checked expression; ``result`` is its checked type in cel-go's spelling."""

    __slots__ = ("tree", "optional", "driver", "result", "within_limit")

    def __init__(
        self,
        tree: lark.Tree,
        optional: frozenset[int],
        driver: DriverTest | None,
        result: str,
        within_limit: bool = True,
    ) -> None:
        self.tree, self.optional, self.driver, self.result = tree, optional, driver, result
        self.within_limit = within_limit


class _Evaluator(Evaluator):
    """celpy's interpreter with Kubernetes' semantics where they differ."""

    def __init__(self, program: Program, activation: Activation, device: Any) -> None:
        super().__init__(program.tree, activation)
        self.optional = program.optional
        self.locals: dict[str, Any] = {"device": device}
        self.budget = _Budget(program.within_limit)

    @deep
    def _visit_tree(self, tree: lark.Tree) -> Any:
        self.budget.step()
        while tree.data in _PASS and len(tree.children) == 1 and isinstance(tree.children[0], lark.Tree):
            tree = tree.children[0]
        return getattr(self, tree.data)(tree)

    def literal(self, tree: lark.Tree) -> Any:
        token = tree.children[0]
        if isinstance(token, lark.Token) and token.type == "MLSTRING_LIT":
            return celtypes.StringType(decode_string(token))
        return super().literal(tree)

    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        if name in self.locals:
            return self.locals[name]
        return super().ident_value(name, root_scope)

    # --- logic -----------------------------------------------------------------------
    def _logical(self, tree: lark.Tree, stop: bool) -> Any:
        kind, terms = tree.data, []
        while tree.data == kind and len(tree.children) == 2:
            terms.append(tree.children[1])
            tree = tree.children[0]
        terms.append(tree)
        error = None
        for term in reversed(terms):
            value = self.visit(term)
            if isinstance(value, celtypes.BoolType):
                if bool(value) is stop:
                    return celtypes.BoolType(stop)
            elif error is None:
                error = value if isinstance(value, CELEvalError) else CELEvalError(lib.NO_SUCH_OVERLOAD)
        return error if error is not None else celtypes.BoolType(not stop)

    def conditionaland(self, tree: lark.Tree) -> Any:
        return self._logical(tree, False)

    def conditionalor(self, tree: lark.Tree) -> Any:
        return self._logical(tree, True)

    def unary(self, tree: lark.Tree) -> Any:
        ops = []
        while len(tree.children) == 2:
            ops.append("!_" if tree.children[0].data == "unary_not" else "-_")
            tree = tree.children[1]
        value = self.visit(tree)
        for op in reversed(ops):
            if isinstance(value, CELEvalError):
                return value
            if op == "!_" and not isinstance(value, celtypes.BoolType):
                return CELEvalError(lib.NO_SUCH_OVERLOAD)
            try:
                value = self.activation.resolve_function(op)(value)
            except (TypeError, ValueError, OverflowError):
                return CELEvalError(lib.NO_SUCH_OVERLOAD if op == "!_" else "integer overflow")
        return value

    # --- selection -------------------------------------------------------------------
    def member_dot(self, tree: lark.Tree) -> Any:
        operand = self.visit(tree.children[0])
        return self._lookup(operand, celtypes.StringType(str(tree.children[1])), id(tree) in self.optional)

    def member_index(self, tree: lark.Tree) -> Any:
        operand, key = self.visit(tree.children[0]), self.visit(tree.children[1])
        if isinstance(key, CELEvalError):
            return key
        return self._lookup(operand, key, id(tree) in self.optional)

    def _lookup(self, operand: Any, key: Any, optional: bool) -> Any:
        if isinstance(operand, CELEvalError):
            return operand
        if isinstance(operand, OptionalValue):
            if not operand.present:
                return operand
            operand, optional = operand.value, True
        if isinstance(operand, DefaultMap):
            value = operand[key]
        elif isinstance(operand, dict):
            if key not in operand:
                return NONE if optional else CELEvalError(missing_key(key))
            value = operand[key]
        elif isinstance(operand, list) and isinstance(key, int) and not isinstance(key, celtypes.BoolType):
            if not 0 <= key < len(operand):
                return NONE if optional else CELEvalError(f"index out of bounds: {key}")
            value = operand[key]
        else:
            return CELEvalError(lib.NO_SUCH_OVERLOAD)
        return OptionalValue(True, value) if optional else value

    def macro_has_eval(self, exprlist: lark.Tree) -> Any:
        select = exprlist.children[0]
        while select.data != "member_dot" and len(select.children) == 1:
            select = select.children[0]
        operand = self.visit(select.children[0])
        if isinstance(operand, CELEvalError):
            return operand
        if isinstance(operand, DefaultMap):
            return celtypes.BoolType(True)  # Kubernetes' lookup always finds a domain
        if isinstance(operand, dict):
            return celtypes.BoolType(str(select.children[1]) in operand)
        return CELEvalError(lib.NO_SUCH_OVERLOAD)

    # --- calls and macros ------------------------------------------------------------
    def member_dot_arg(self, tree: lark.Tree) -> Any:
        target, name = tree.children[0], str(tree.children[1])
        args = tree.children[2].children if len(tree.children) == 3 else []
        namespace = _namespace(target)
        if namespace == "cel" and name == "bind":
            return self._bind(args)
        if namespace == "optional":
            return self._optional(name, args)
        if name in MACROS:
            return self._macro(name, target, args)
        return super().member_dot_arg(tree)

    def _with(self, name: str, value: Any, body: lark.Tree) -> Any:
        saved = self.locals.get(name, _UNSET)
        self.locals[name] = value
        try:
            return self.visit(body)
        finally:
            if saved is _UNSET:
                del self.locals[name]
            else:
                self.locals[name] = saved

    def _bind(self, args: list[lark.Tree]) -> Any:
        var, init, body = args
        return self._with(_ident_name(var), self.visit(init), body)

    def _optional(self, name: str, args: list[lark.Tree]) -> Any:
        values = [self.visit(a) for a in args]
        for v in values:
            if isinstance(v, CELEvalError):
                return v
        if name == "none":
            return NONE
        if name == "ofNonZeroValue" and not to_plain(values[0]):
            return NONE
        return OptionalValue(True, values[0])

    def _macro(self, name: str, target: lark.Tree, args: list[lark.Tree]) -> Any:
        items = self.visit(target)
        if isinstance(items, CELEvalError):
            return items
        if not isinstance(items, (list, dict)):
            return CELEvalError(lib.NO_SUCH_OVERLOAD)
        var, bodies = _ident_name(args[0]), args[1:]
        if name in ("all", "exists"):
            return self._quantifier(var, list(items), bodies[0], stop=(name == "exists"))
        results = self._collected(name, var, list(items), bodies)
        if isinstance(results, CELEvalError):
            return results
        if name == "exists_one":
            return celtypes.BoolType(len(results) == 1)
        return celtypes.ListType(results)

    def _collected(self, name: str, var: str, items: list[Any], bodies: list[lark.Tree]) -> list[Any] | CELEvalError:
        """``map`` (with its optional filter), ``filter`` and ``exists_one``: what each keeps of ``items``, in
        order, or the first error a body gives (each item counts against the budget, as cel-go counts it)."""
        results = []
        for item in items:
            self.budget.iteration()
            values = [self._with(var, item, body) for body in bodies]
            for v in values:
                if isinstance(v, CELEvalError):
                    return v
            if name == "map" and (len(values) == 1 or _truth(values[0])):
                results.append(values[-1])
            elif name in ("filter", "exists_one"):
                if not isinstance(values[0], celtypes.BoolType):
                    return CELEvalError(lib.NO_SUCH_OVERLOAD)
                if values[0]:
                    results.append(item)
        return results

    def _quantifier(self, var: str, items: list[Any], body: lark.Tree, stop: bool) -> Any:
        error = None
        for item in items:
            self.budget.iteration()
            value = self._with(var, item, body)
            if isinstance(value, celtypes.BoolType):
                if bool(value) is stop:
                    return celtypes.BoolType(stop)
            elif error is None:
                error = value if isinstance(value, CELEvalError) else CELEvalError(lib.NO_SUCH_OVERLOAD)
        return error if error is not None else celtypes.BoolType(not stop)


_UNSET = object()


def _truth(value: Any) -> bool:
    return isinstance(value, celtypes.BoolType) and bool(value)


def _ident_name(tree: lark.Tree) -> str:
    tokens = [t for t in tree.scan_values(lambda v: isinstance(v, lark.Token) and v.type == "IDENT")]
    return str(tokens[0])


def _namespace(tree: lark.Tree) -> str | None:
    while len(tree.children) == 1 and isinstance(tree.children[0], lark.Tree):
        tree = tree.children[0]
    if tree.data == "ident":
        return str(tree.children[0])
    return None


class CelpyEngine:
    """Compiles with the neutral parser and checker; evaluates with celpy's interpreter."""

    name = NAME

    def __init__(self) -> None:
        self._activation = Activation(functions=functions())

    def compile(self, text: str) -> Program:
        parsed = parse(text)
        analysis = analyse(parsed)  # the memory bound and the driver test; not the cel-expr rewrite
        found = checked(parsed)
        result = type_name(found.types[id(parsed.root)])
        optional = frozenset(id(n.tree) for n in _walk(parsed.root) if n.optional)
        within = estimate(parsed.root, found) <= MAX_COST
        return Program(parsed.tree, optional, analysis.driver, result, within)

    def prepare(self, device: CelDevice) -> celtypes.MapType:
        data = convert(device)

        def section(values: dict[str, dict[str, Any]]) -> DefaultMap:
            return DefaultMap({celtypes.StringType(d): to_cel(ids) for d, ids in values.items()})

        return celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(data.driver),
                celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(data.allow_multiple_allocations),
                celtypes.StringType("attributes"): section(data.attributes),
                celtypes.StringType("capacity"): section(data.capacity),
            }
        )

    def evaluate(self, program: Program, device: celtypes.MapType) -> bool:
        value = self._run(program, device)
        if isinstance(value, celtypes.BoolType):
            return bool(value)
        raise CelRuntimeError(non_bool_result(_type_name(value)))

    def value(self, program: Program, device: celtypes.MapType) -> Any:
        """The result in the neutral form :func:`.values.checked` takes (a derived attribute's value)."""
        return to_result(self._run(program, device))

    def _run(self, program: Program, device: celtypes.MapType) -> Any:
        evaluator = _Evaluator(program, self._activation, device)
        try:
            value = evaluator.visit(program.tree)
        except _Exhausted:
            raise CelRuntimeError(COST_EXCEEDED) from None
        except RecursionError:
            raise CelRuntimeError("max recursion depth exceeded") from None
        if isinstance(value, CELEvalError):
            raise CelRuntimeError(_error_text(value))
        return value


def _walk(root: Node) -> list[Node]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children())
    return out


def _error_text(error: CELEvalError) -> str:
    text = str(error.args[0]) if error.args else "evaluation error"
    if text in ("modulus or divide by zero",):
        return "division by zero"
    if text == "return error for overflow":
        return "integer overflow"
    if text.startswith("found no matching overload"):
        return lib.NO_SUCH_OVERLOAD
    return text


def _type_name(value: Any) -> str:
    if isinstance(value, celtypes.UintType):
        return "uint"
    if isinstance(value, (Quantity, Semver)) or not isinstance(value, OptionalValue):
        return lib.type_name(to_plain(value))
    return "optional_type"
