"""Kubernetes' worst-case cost estimate of a DRA selector, as the API server computes it.

The API server rejects a selector whose estimated cost exceeds
``CELSelectorExpressionMaxCost`` (1,000,000) with "too complex, exceeds cost limit"
(``pkg/apis/resource/validation``). The estimate is cel-go's ``checker.Cost`` with
Kubernetes' estimator: the DRA size estimator, which knows how long driver names,
domains, ids and attribute values can be and how many attributes a device has, and
the apiserver library's call costs (``library.CostEstimator``). This module ports
both over drasat's neutral AST, using the types and overloads the checker found.

Macros are costed in their expanded form, as cel-go sees them: ``all`` is a loop
whose condition is ``@not_strictly_false(accu)`` and whose step is ``accu && body``,
and so on; ``cel.bind`` is an empty-range comprehension. Only the upper bound
matters for the limit, but lower bounds are kept where cel-go derives sizes from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .checker import Checked, checked
from .errors import CelCompileError
from .stack import deep
from .syntax import MACROS, Node, parse

#: ``resourceapi.CELSelectorExpressionMaxCost``: the estimated and the run-time limit.
MAX_COST = 1_000_000
U64 = 2**64 - 1
_STRING_FACTOR, _REGEX_FACTOR = 0.1, 0.25  # cel-go's StringTraversal / RegexStringLength factors
_LIST_BASE, _MAP_BASE, _STRUCT_BASE = 10, 30, 40
_MAX_LIST_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice (includes)
_SCALARS = frozenset({"bool", "int", "uint", "double", "google.protobuf.Timestamp", "google.protobuf.Duration"})


@dataclass(frozen=True)
class Range:
    """cel-go's SizeEstimate / CostEstimate: a [lo, hi] range that saturates at 2**64-1."""

    lo: int
    hi: int

    def __add__(self, other: Range) -> Range:
        return Range(min(U64, self.lo + other.lo), min(U64, self.hi + other.hi))

    def times(self, other: Range) -> Range:
        return Range(min(U64, self.lo * other.lo), min(U64, self.hi * other.hi))

    def factor(self, per_unit: float) -> Range:
        return Range(ceil_u64(self.lo * per_unit), ceil_u64(self.hi * per_unit))

    def union(self, other: Range) -> Range:
        return Range(min(self.lo, other.lo), max(self.hi, other.hi))


def ceil_u64(value: float) -> int:
    return U64 if value >= 2.0**64 else int(math.ceil(value))


def fixed(n: int) -> Range:
    return Range(n, n)


ZERO, ONE, UNKNOWN = fixed(0), fixed(1), Range(0, U64)


@dataclass(frozen=True)
class Entry:
    """Sizes of a container literal's keys and values (cel-go's entrySizeEstimate)."""

    kind: str  # "list" or "map"
    key: Range
    val: Range

    def union(self, other: Entry | None) -> Entry | None:
        return None if other is None else Entry(self.kind, self.key.union(other.key), self.val.union(other.val))


@dataclass
class _Local:
    path: list[str] | None
    size: Range | None
    entry: Entry | None


# --- the DRA size estimator: how big each part of ``device`` can be ---------------------------
@dataclass
class _Decl:
    max_elements: int
    fields: dict[str, _Decl] = field(default_factory=dict)
    key: _Decl | None = None
    elem: _Decl | None = None


_ATTRIBUTE = _Decl(64)  # DeviceAttributeMaxValueLength (list attributes: max(64, 48))
_DOMAIN, _ID = _Decl(63), _Decl(32)  # DeviceMaxDomainLength, DeviceMaxIDLength
_PER_DEVICE = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_DEVICE = _Decl(
    0,
    fields={
        "driver": _Decl(63),
        "allowMultipleAllocations": _Decl(1),
        "attributes": _Decl(_PER_DEVICE, key=_DOMAIN, elem=_Decl(_PER_DEVICE, key=_ID, elem=_ATTRIBUTE)),
        "capacity": _Decl(_PER_DEVICE, key=_DOMAIN, elem=_Decl(_PER_DEVICE, key=_ID, elem=_Decl(0))),
    },
)


def device_size(path: list[str] | None) -> Range | None:
    """The DRA sizeEstimator: the maximum size reachable through ``device`` along ``path``."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for step in path[1:]:
        nxt = node.elem if step in ("@items", "@values") else node.key if step == "@keys" else None
        if step not in ("@items", "@values", "@keys"):
            nxt = node.fields.get(step)
            if nxt is None and node.elem is _ATTRIBUTE:
                nxt = _ATTRIBUTE
        if nxt is None:
            return None
        node = nxt
    return Range(0, node.max_elements)


def estimate(root: Node, found: Checked) -> int:
    """The worst-case cost of the checked expression, as ``env.EstimateCost`` reports ``Max``."""
    return Coster(found).cost(root).hi


def estimated_cost(text: str) -> int | None:
    """The worst-case cost of ``text``, or None when it does not parse or type-check here
    (then the compile error is the problem to report, not the cost)."""
    try:
        parsed = parse(text)
        return estimate(parsed.root, checked(parsed))
    except CelCompileError:
        return None


def cost_problem(text: str) -> str | None:
    """Kubernetes' "too complex" verdict for ``text``, with the numbers, or None within the limit."""
    cost = estimated_cost(text)
    if cost is None or cost <= MAX_COST:
        return None
    return f"Forbidden: too complex, exceeds cost limit (estimated worst-case cost {cost}, limit {MAX_COST})"


class Coster:
    def __init__(self, found: Checked) -> None:
        self.types, self.overloads = found.types, found.overloads
        self.paths: dict[int, list[str]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, Entry] = {}
        self.locals: dict[str, list[_Local]] = {}

    # --- bookkeeping -------------------------------------------------------------------
    def kind(self, node: Node) -> str:
        t = self.types.get(id(node), "dyn")
        if isinstance(t, tuple):
            return t[0]
        return "struct" if "." in t else t

    def path(self, node: Node) -> list[str] | None:
        if node.kind == "ident" and self.locals.get(node.name):
            return self.locals[node.name][-1].path
        return self.paths.get(id(node))

    def size(self, node: Node) -> Range | None:
        """cel-go's computeSize: remembered, literal, estimated from the path, scalar, or a variable's."""
        if id(node) in self.sizes:
            return self.sizes[id(node)]
        literal = _literal_size(node)
        if literal is not None:
            return literal
        estimated = device_size(self.path(node))
        if estimated is not None:
            self.sizes[id(node)] = estimated
            return estimated
        t = self.types.get(id(node))
        if t in _SCALARS or (isinstance(t, tuple) and t[0] == "optional_type" and t[1] in _SCALARS):
            return ONE
        if node.kind == "ident" and self.locals.get(node.name):
            return self.locals[node.name][-1].size
        return None

    def known(self, node: Node) -> Range:
        return self.size(node) or UNKNOWN

    def entry(self, node: Node) -> Entry | None:
        if id(node) in self.entries:
            return self.entries[id(node)]
        if node.kind == "ident" and self.locals.get(node.name):
            return self.locals[node.name][-1].entry
        return None

    def push(self, name: str, path: list[str] | None, size: Range | None, entry: Entry | None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    # --- expressions ---------------------------------------------------------------------
    @deep
    def cost(self, node: Node) -> Range:
        if node.kind == "literal":
            return ZERO
        if node.kind == "ident":
            self.paths[id(node)] = self.path(node) or [node.name]
            return ONE
        if node.kind == "select":
            return self._select(node)
        if node.kind == "index":
            return self._index(node)
        if node.kind == "list":
            return self._list(node)
        if node.kind == "map":
            return self._map(node)
        if node.kind == "struct":
            return fixed(_STRUCT_BASE)
        return self._call(node)

    def _select(self, node: Node) -> Range:
        assert node.target is not None
        total = self.cost(node.target)
        if node.optional:  # x.?f is the call _?._(x, "f")
            return total + ONE
        if self.kind(node.target) in ("map", "struct", "A", "B"):
            total = total + ONE
        base = self.path(node.target)
        self.paths[id(node)] = (base or []) + [node.name]
        return total

    def _index(self, node: Node) -> Range:
        assert node.target is not None
        total = self.cost(node.target) + self.cost(node.args[0]) + ONE
        if node.optional:
            return total
        step = "@items" if self.kind(node.target) == "list" else "@values"
        self.paths[id(node)] = (self.path(node.target) or []) + [step]
        entry = self.entry(node.target)
        size = entry.val if entry is not None else self.size(node)
        if size is not None:
            self.sizes[id(node)] = size
        return total

    def _list(self, node: Node) -> Range:
        total, item = fixed(_LIST_BASE), Range(U64, 0) if node.args else ZERO
        for element in node.args:
            total = total + self.cost(element)
            item = item.union(self.known(element))
        self.entries[id(node)] = Entry("list", ONE, item)
        return total

    def _map(self, node: Node) -> Range:
        total = fixed(_MAP_BASE)
        keys = values = Range(U64, 0) if node.args else ZERO
        for k, v in zip(node.args[0::2], node.args[1::2]):
            total = total + self.cost(k) + self.cost(v)
            keys, values = keys.union(self.known(k)), values.union(self.known(v))
        self.entries[id(node)] = Entry("map", keys, values)
        return total

    def _call(self, node: Node) -> Range:
        name = node.name
        if name == "has" and node.target is None and node.args and node.args[0].target is not None:
            return self.cost(node.args[0].target)  # PresenceTestHasCost(false) in Kubernetes
        if name == "cel.bind" and len(node.args) == 3 and node.args[0].kind == "ident":
            return self._bind(node)
        if name in MACROS and node.target is not None and len(node.args) in (2, 3) and node.args[0].kind == "ident":
            return comprehension(self, node)
        if name == "dyn" and node.target is None and len(node.args) == 1:
            total = self.cost(node.args[0]) + ONE
            self._copy(node, node.args[0])
            return total
        return call_cost(self, node)

    def _bind(self, node: Node) -> Range:
        var, init, body = node.args
        total = fixed(_LIST_BASE) + self.cost(init)  # the empty iteration range is still built
        self.push(var.name, self.path(init), self.size(init), self.entry(init))
        total = total + self.cost(body)
        self.pop(var.name)
        self._copy(node, body)
        return total

    def _copy(self, dst: Node, src: Node) -> None:
        size, entry = self.size(src), self.entry(src)
        if size is not None:
            self.sizes[id(dst)] = size
        if entry is not None:
            self.entries[id(dst)] = entry


def _literal_size(node: Node) -> Range | None:
    if node.kind == "literal":
        if node.name in ("string", "bytes"):
            return fixed(len(node.value))
        return ONE
    if node.kind == "list":
        return fixed(len(node.args))
    if node.kind == "map":
        return fixed(len(node.args) // 2)
    return None


# The per-construct rules need the classes above; they live in their own module.
from .cost_rules import call_cost, comprehension  # noqa: E402
