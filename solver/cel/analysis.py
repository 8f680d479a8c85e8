"""What a selector reads, how it must be rewritten for cel-expr, and whether it is too costly.

Three questions answered once per expression, from the engine-neutral AST:

* **Needs** -- which domains and attributes of the device the expression can touch, so
  the cel-expr engine converts only those into its C++ values (conversion is most of
  the cost of a cold evaluation).
* **Rewrite** -- Kubernetes' outer attribute and capacity maps return an empty map for
  an unknown domain; a plain CEL map fails instead. Lookups ``device.attributes[d]`` are
  rewritten to ``device.attributes[?d].orValue({})`` (exact for computed keys too), and
  ``has(device.attributes.x)``, always true in Kubernetes, to ``true``.
* **Memory** -- neither engine bounds memory: a chain of ``cel.bind(a, a + a, ...)`` or
  nested ``replace`` builds gigabytes within the iteration budget. A coarse size and work
  estimate rejects such expressions at compile time (drasat's own guard; Kubernetes'
  exact cost estimate, which ``drasat validate`` applies, is :mod:`.cost`). Realistic
  selectors are orders of magnitude below the limits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import CelCompileError, compilation_failed, issue
from .stack import deep
from .syntax import MACROS, Node, Parsed

SECTIONS = ("attributes", "capacity")
DEVICE_FIELDS = ("driver", "allowMultipleAllocations") + SECTIONS
# Kubernetes' data bounds: 64-byte values, 48 list values, 32 attributes and capacities.
_VALUE_SIZE, _LIST_ITEMS, _DEVICE_SIZE = 64 * 48, 48, 32 * 64 * 48
MAX_VALUE_SIZE = 8 * 2**20
MAX_WORK = 10**8
_ITERATIONS = 10_000
ALL = None  # "every id of the domain" / "every domain"
#: drasat's own compile-time refusal of expressions that could exhaust memory; where Kubernetes'
#: estimate refuses them too, ``drasat validate`` reports Kubernetes' words instead.
MEMORY_GUARD = "estimated cost exceeds the limit"


@dataclass(frozen=True)
class Needs:
    """Parts of the device an expression may read; ``full`` means all of it."""

    full: bool
    attributes: dict[str, frozenset[str] | None] | None
    capacity: dict[str, frozenset[str] | None] | None
    fields: frozenset[str] = frozenset(DEVICE_FIELDS)  # top-level fields read


@dataclass(frozen=True)
class Analysis:
    parsed: Parsed
    needs: Needs
    rewritten: str
    driver: DriverTest | None = None


@dataclass(frozen=True)
class DriverTest:
    """``device.driver == "x"`` as a top-level conjunct: decided in Python, before any engine.

    Exact: in CEL ``false && e`` is false whatever ``e`` does (even an error), so a device
    of another driver is rejected outright; when the driver test is the whole selector
    (the usual DeviceClass selector) a device of that driver is accepted outright.
    """

    driver: str
    alone: bool


def driver_test(root: Node) -> DriverTest | None:
    """The driver a selector requires through a top-level ``device.driver == "lit"``, if any."""
    if _shadows_device(root):
        return None
    conjuncts = root.args if root.kind == "call" and root.name == "_&&_" else [root]
    for node in conjuncts:
        if node.kind == "call" and node.name == "_==_" and node.target is None and len(node.args) == 2:
            for left, right in (node.args, node.args[::-1]):
                if access_path(left) == ["driver"] and right.kind == "literal" and right.name == "string":
                    return DriverTest(right.value, len(conjuncts) == 1)
    return None


FULL = Needs(True, ALL, ALL, frozenset(DEVICE_FIELDS))


Fold = Callable[[Node], "str | None"]


def analyse(parsed: Parsed, fold: Fold | None = None) -> Analysis:
    """Needs, cel-expr rewrite and the cost check; raises :class:`CelCompileError` if too costly.

    ``fold`` may replace a call with constant arguments (``quantity("1Gi")``) by a literal
    in the rewritten text, saving a call into Python on every evaluation.
    """
    _check_cost(parsed)
    if _shadows_device(parsed.root):
        return Analysis(parsed, FULL, parsed.text, None)
    collector = _NeedCollector()
    collector.visit(parsed.root)
    return Analysis(
        parsed, collector.result(), _Rewriter(parsed.text, fold).render(parsed.root), driver_test(parsed.root)
    )


def access_path(node: Node) -> list[str] | None:
    """``device.attributes["d"].x`` -> ``["attributes", "d", "x"]``; None if not such a literal chain."""
    steps: list[str] = []
    while True:
        if node.kind == "select":
            steps.append(node.name)
        elif node.kind == "index" and node.args[0].kind == "literal" and node.args[0].name == "string":
            steps.append(node.args[0].value)
        elif node.kind == "ident" and node.name == "device":
            return steps[::-1]
        else:
            return None
        node = node.target  # type: ignore[assignment]


def _shadows_device(root: Node) -> bool:
    """A macro or cel.bind variable named ``device`` would make the path analysis wrong."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "call" and (node.name in MACROS or node.name == "cel.bind"):
            if node.args and node.args[0].kind == "ident" and node.args[0].name == "device":
                return True
        stack.extend(node.children())
    return False


class _NeedCollector:
    def __init__(self) -> None:
        self.full = False
        self.fields: set[str] = set()
        self.sections: dict[str, dict[str, set[str] | None] | None] = {s: {} for s in SECTIONS}

    def visit(self, node: Node) -> None:
        stack = [node]
        while stack:
            node = stack.pop()
            path = access_path(node) if node.kind in ("select", "index", "ident") else None
            if path is None:
                stack.extend(node.children())
            else:
                self.record(path)

    def record(self, path: list[str]) -> None:
        if not path:
            self.full = True
            return
        self.fields.add(path[0])
        if path[0] not in SECTIONS:
            return
        section = self.sections[path[0]]
        if section is None:
            return
        if len(path) == 1:
            self.sections[path[0]] = None
            return
        ids = section.setdefault(path[1], set())
        if len(path) == 2 or ids is None:
            section[path[1]] = None
        else:
            ids.add(path[2])

    def result(self) -> Needs:
        if self.full:
            return FULL

        def freeze(section: dict[str, set[str] | None] | None) -> dict[str, frozenset[str] | None] | None:
            if section is None:
                return None
            return {d: (None if ids is None else frozenset(ids)) for d, ids in section.items()}

        return Needs(
            False, freeze(self.sections["attributes"]), freeze(self.sections["capacity"]), frozenset(self.fields)
        )


def _is_section(node: Node | None) -> bool:
    return node is not None and access_path(node) in (["attributes"], ["capacity"])


class _Rewriter:
    """Re-prints the expression with Kubernetes' unknown-domain behaviour made explicit."""

    def __init__(self, text: str, fold: Fold | None = None) -> None:
        self.text, self.fold = text, fold

    @deep
    def render(self, node: Node) -> str:
        out = self._own(node)
        if out is not None:
            return out
        pieces, cursor = [], node.start
        for child in sorted(node.children(), key=lambda c: c.start):
            if not self._dirty(child) or child.start < cursor:
                continue
            pieces += [self.text[cursor : child.start], self.render(child)]
            cursor = child.end
        pieces.append(self.text[cursor : node.end])
        return "".join(pieces)

    def _own(self, node: Node) -> str | None:
        text = self.text
        if self.fold is not None and node.kind == "call":
            folded = self.fold(node)
            if folded is not None:
                return folded
        if node.kind == "call" and node.name == "has" and len(node.args) == 1:
            arg = node.args[0]
            if arg.kind == "select" and _is_section(arg.target):
                return "true"
        if node.kind not in ("index", "select") or not _is_section(node.target):
            return None
        if node.kind == "index":
            key = node.args[0]
            bracket = node.pos + 1 + (1 if node.optional else 0)
            lookup = (
                text[node.start : node.pos + 1]
                + "?"
                + text[bracket : key.start]
                + self.render(key)
                + text[key.end : node.end]
                + ".orValue(dyn({}))"
            )
        else:
            lookup = text[node.start : node.pos] + f'[?"{node.name}"].orValue(dyn({{}}))'
        # an optional lookup of a domain always finds one in Kubernetes: optional.of(...)
        return f"optional.of({lookup})" if node.optional else lookup

    def _dirty(self, node: Node) -> bool:
        stack = [node]
        while stack:
            n = stack.pop()
            if self._own(n) is not None:
                return True
            stack.extend(n.children())
        return False


def _check_cost(parsed: Parsed) -> None:
    estimator = _Estimator()
    size = estimator.size(parsed.root, {}, 1)
    if max(size, estimator.biggest) > MAX_VALUE_SIZE or estimator.work > MAX_WORK:
        message = (
            f"{MEMORY_GUARD}: the expression can build values of about "
            f"{max(size, estimator.biggest)} bytes and do about {estimator.work} units of work"
        )
        raise CelCompileError(compilation_failed(issue(parsed.text, None, message)), parsed.text)


class _Estimator:
    """Upper bounds on value sizes (bytes or elements) and on the work of building them."""

    def __init__(self) -> None:
        self.work = 0
        self.biggest = 0

    @deep
    def size(self, node: Node, env: dict[str, int], loops: int) -> int:
        size = self._size(node, env, loops)
        self.biggest = max(self.biggest, size)
        if node.kind in ("call", "list", "map"):
            self.work += size * loops
        return size

    def _size(self, node: Node, env: dict[str, int], loops: int) -> int:
        if node.kind == "literal":
            return len(node.value) + 1 if node.name in ("string", "bytes") else 1
        if node.kind == "ident":
            return _DEVICE_SIZE if node.name == "device" else env.get(node.name, 1)
        if node.kind in ("select", "index"):
            path = access_path(node)
            if path is not None:
                return _DEVICE_SIZE if len(path) < 3 else _VALUE_SIZE
            return sum(self.size(c, env, loops) for c in node.children())
        if node.kind in ("list", "map"):
            return sum(self.size(c, env, loops) for c in node.args) + len(node.args)
        if node.kind == "call":
            return self._call(node, env, loops)
        return 1

    def _call(self, node: Node, env: dict[str, int], loops: int) -> int:
        name = node.name
        if name == "cel.bind" and len(node.args) == 3:
            inner = dict(env, **{node.args[0].name: self.size(node.args[1], env, loops)})
            return self.size(node.args[2], inner, loops)
        if name in MACROS and node.target is not None and node.args:
            return self._macro(node, env, loops)
        sizes = [self.size(c, env, loops) for c in node.children()]
        if name == "_?_:_":
            return max(sizes[1:])
        if name == "replace" and len(sizes) >= 3:
            return sizes[0] * (sizes[2] + 1)
        if name in ("join", "format") and len(sizes) >= 1:
            return sizes[0] * (1 + sum(sizes[1:]))
        if name == "split":
            return 2 * sizes[0] + 1
        return max(1, sum(sizes))

    def _macro(self, node: Node, env: dict[str, int], loops: int) -> int:
        target = node.target
        assert target is not None
        range_size = self.size(target, env, loops)
        count = (
            len(target.args)
            if target.kind == "list"
            else min(range_size, _LIST_ITEMS if access_path(target) else _ITERATIONS)
        )
        element = 64 if access_path(target) else range_size
        inner = dict(env, **{node.args[0].name: element})
        inner_loops = min(_ITERATIONS, loops * max(1, count))  # the budget caps all iterations together
        bodies = [self.size(a, inner, inner_loops) for a in node.args[1:]]
        if node.name == "map":
            return count * max(bodies, default=1)
        return range_size if node.name == "filter" else 1
