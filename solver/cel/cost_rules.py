"""What each CEL construct costs in cel-go's estimate, with Kubernetes' call costs first.

:mod:`.cost` walks the expression; this module holds the per-construct rules: the
comprehension loops the macros expand to, Kubernetes' ``library.CostEstimator`` and the
DRA ``includes`` estimate, and cel-go's own ``functionCost`` table. Each rule returns
the call's cost (arguments included, receiver excluded) and, where cel-go tracks it,
the size of its result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cost import ONE, U64, UNKNOWN, ZERO, Entry, Range, ceil_u64, device_size, fixed
from .signatures import Q, S, Type
from .syntax import Node

if TYPE_CHECKING:
    from .cost import Coster

_ACCU = "@result"
_STRING_FACTOR, _REGEX_FACTOR = 0.1, 0.25
_INCLUDES_MAX = 48  # ResourceSliceMaxAttributeValuesPerDevice
_NOMINAL = frozenset(
    {
        "sign",
        "asInteger",
        "isInteger",
        "asApproximateFloat",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "add",
        "sub",
        "major",
        "minor",
        "patch",
    }
)
_ORDERING = ("_<_", "_<=_", "_>_", "_>=_")


def comprehension(c: Coster, node: Node) -> Range:
    """A macro as the loop it expands to: range, accumulator, per-element condition and step."""
    assert node.target is not None
    rng, var, bodies = node.target, node.args[0].name, node.args[1:]
    total = c.cost(rng)
    builds_list = node.name in ("map", "filter")
    if builds_list:
        total = total + fixed(10)  # the accumulator starts as []
        c.push(_ACCU, None, ZERO, Entry("list", ONE, ZERO))
    else:
        c.push(_ACCU, None, ONE, None)
    entry = c.entry(rng)
    container = entry.kind if entry is not None else c.kind(rng)
    step_name = "@items" if container == "list" else "@keys"
    size = None if entry is None else (entry.val if container == "list" else entry.key)
    c.push(var, (c.path(rng) or []) + [step_name], size, None)
    body = [c.cost(b) for b in bodies]
    loop, step, result, step_entry = _expanded(c, node, body)
    c.pop(var)
    c.pop(_ACCU)
    count = c.known(rng)
    total = total + result + count.times(step + loop)
    if builds_list:
        c.sizes[id(node)] = count
        c.entries[id(node)] = step_entry if step_entry is not None else Entry("list", ONE, ZERO)
    else:
        c.sizes[id(node)] = ONE
    return total


def _expanded(c: Coster, node: Node, body: list[Range]) -> tuple[Range, Range, Range, Entry | None]:
    """Loop condition, step and result costs of the expansion, and the entry size of the list built."""
    name = node.name
    if name in ("all", "exists"):  # @not_strictly_false(accu) / (!accu); accu && body / accu || body
        return fixed(2 if name == "all" else 3), Range(1, 1 + body[-1].hi), ONE, None
    if name == "exists_one":  # body ? accu + 1 : accu; result accu == 1
        return ZERO, body[-1] + Range(1, 2), fixed(2), None
    if name == "filter":  # body ? accu + [x] : accu
        item = ZERO.union(c.known(node.args[0]))
        return ZERO, body[0] + Range(1, 13), ONE, Entry("list", ONE, item)
    item = ZERO.union(c.known(node.args[-1]))  # map: accu + [f], or p ? accu + [f] : accu
    add = fixed(12) + body[-1]
    step = add if len(body) == 1 else body[0] + add.union(ONE)
    return ZERO, step, ONE, Entry("list", ONE, item)


def call_cost(c: Coster, node: Node) -> Range:
    """A function or operator call: receiver, then the union over every overload that matched."""
    total = c.cost(node.target) if node.target is not None else ZERO
    costs = [c.cost(a) for a in node.args]
    if node.name in ("_&&_", "_||_"):  # short-circuit: at least the first operand, at most all of them
        hi = ZERO
        for cost in costs:
            hi = hi + cost
        return total + Range(costs[0].lo, hi.hi)
    args = ZERO
    for cost in costs:
        args = args + cost
    fn: Range | None = None
    size: Range | None = None
    for params in c.overloads.get(id(node), [()]):
        cost, result = _overload(c, node, params, costs, args)
        fn = cost if fn is None else fn.union(cost)
        if result is not None:
            size = result if size is None else size.union(result)
    if size is None:
        size = c.size(node)
    if size is not None:
        c.sizes[id(node)] = size
    return total + (fn if fn is not None else ONE + args)


def _overload(
    c: Coster, node: Node, params: tuple[Type, ...], costs: list[Range], args: Range
) -> tuple[Range, Range | None]:
    kubernetes = _kubernetes(c, node)
    if kubernetes is not None:
        return kubernetes[0] + args, kubernetes[1]
    return _cel(c, node, params, costs, args)


def _kubernetes(c: Coster, node: Node) -> tuple[Range, Range | None] | None:
    """``draCostEstimator`` and ``library.CostEstimator.EstimateCallCost`` (arguments not included)."""
    name, target, a = node.name, node.target, node.args
    if name == "includes" and target is not None:
        return fixed(_INCLUDES_MAX), None
    if name in _NOMINAL:
        return ONE, None
    if name == "_==_" and len(a) == 2:
        left, right = c.types.get(id(a[0])), c.types.get(id(a[1]))
        return (ONE, None) if left == right and left in (Q, S) else None
    return _string_method(c, name, target, a) if target is not None else None


def _string_method(c: Coster, name: str, target: Node, a: list[Node]) -> tuple[Range, Range | None] | None:
    """The Kubernetes string library's methods on ``target``: their cost and the size of what they return
    (None: not one of them)."""
    size = c.known(target)
    if name in ("indexOf", "lastIndexOf"):  # on strings here (the lists library is not declared)
        return size.factor(_STRING_FACTOR), None
    if name in ("lowerAscii", "upperAscii", "substring", "trim"):
        return size.factor(_STRING_FACTOR), size
    if name == "replace" and len(a) >= 2:
        return size.factor(2 * _STRING_FACTOR), _replaced(size, c.known(a[0]), c.known(a[1]))
    if name == "split":
        limit = size.hi
        if len(a) > 1 and a[1].kind == "literal" and a[1].name == "int":
            limit = a[1].value % 2**64
        return size.factor(2 * _STRING_FACTOR), Range(0, limit)
    if name == "join":
        joined = _joined(c, target, size)
        if a:
            separators = Range(max(size.lo - 1, 0), max(size.hi - 1, 0))
            joined = joined + c.known(a[0]).times(separators)
        return joined.factor(_STRING_FACTOR), joined
    return None


def _joined(c: Coster, target: Node, size: Range) -> Range:
    t = c.types.get(id(target))
    if not (isinstance(t, tuple) and t[0] == "list"):
        return ZERO
    path = c.path(target)
    element = device_size(path + ["@items"]) if path else None
    return size.times(element or UNKNOWN)


def _replaced(size: Range, old: Range, new: Range) -> Range:
    """The apiserver library's bound on the length of ``s.replace(old, new)``: the longest result
    replaces the shortest ``old`` by the longest ``new`` as often as it can, the shortest the reverse."""
    count_hi, kept_hi = _replacements(size.hi, old.lo, new.hi <= old.lo)
    count_lo, kept_lo = _replacements(size.lo, old.hi, old.hi <= new.lo)
    return Range(count_lo, count_hi).times(new) + Range(kept_lo, kept_hi)


def _replacements(length: int, old: int, same_length: bool) -> tuple[int, int]:
    """How many replacements, and how much of the original string is kept, for one bound."""
    if old == 0:  # replacing "" surrounds every character
        return (length + 1 if length < U64 else length), length
    if same_length:  # the replacement does not change the length (in this bound's direction)
        return 0, length
    return ceil_u64(length / old), 0


def _cel(
    c: Coster, node: Node, params: tuple[Type, ...], costs: list[Range], args: Range
) -> tuple[Range, Range | None]:
    """cel-go's ``functionCost`` table; anything else costs one unit plus its arguments."""
    name, target, a = node.name, node.target, node.args
    converted = _conversion(c, name, params, a, args)
    if converted is not None:
        return converted
    if name in ("startsWith", "endsWith") and target is not None and len(a) == 1:
        return c.known(a[0]).factor(_STRING_FACTOR) + args, None
    if name == "@in" and len(params) == 2 and isinstance(params[1], tuple) and params[1][0] == "list":
        return c.known(a[1]) + args, None
    if name == "matches" and target is not None and len(a) == 1:
        text = (c.known(target) + ONE).factor(_STRING_FACTOR)
        return text.times(c.known(a[0]).factor(_REGEX_FACTOR)) + args, None
    if name == "contains" and target is not None and len(a) == 1:
        return c.known(target).factor(_STRING_FACTOR).times(c.known(a[0]).factor(_STRING_FACTOR)) + args, None
    if name == "_?_:_":
        return _conditional(c, node, costs)
    if name == "_+_" and params and (params[0] in ("string", "bytes") or isinstance(params[0], tuple)):
        return _concatenation(c, node, params, args)
    if name in ("_==_", "_!=_") or (name in _ORDERING and params and params[0] in ("string", "bytes")):
        smallest = min(c.known(a[0]).hi, c.known(a[1]).hi)
        return Range(1 if smallest > 0 else 0, smallest).factor(_STRING_FACTOR) + args, None
    return ONE + args, None


def _conversion(
    c: Coster, name: str, params: tuple[Type, ...], a: list[Node], args: Range
) -> tuple[Range, Range | None] | None:
    """``bytes(string)``, ``string(bytes)`` and ``strings.quote``: linear in the text, and the size of the
    result (a UTF-8 character is up to 4 bytes; quoting at most doubles it, plus the quotes)."""
    if name == "bytes" and params == ("string",):
        size = c.known(a[0])
        return size.factor(_STRING_FACTOR) + args, Range(size.lo, min(U64, size.hi * 4))
    if name == "string" and params == ("bytes",):
        size = c.known(a[0])
        return size.factor(_STRING_FACTOR) + args, Range(size.lo // 4, size.hi)
    if name == "strings.quote" and len(a) == 1:
        size = c.known(a[0])
        return size.factor(_STRING_FACTOR) + args, Range(size.lo + 2, min(U64, size.hi * 2 + 2))
    return None


def _conditional(c: Coster, node: Node, costs: list[Range]) -> tuple[Range, Range | None]:
    """``a ? b : c``: the condition, then the dearer branch; its size and entries either branch's."""
    a = node.args
    entry = c.entry(a[1])
    merged = entry.union(c.entry(a[2])) if entry is not None else None
    if merged is not None:
        c.entries[id(node)] = merged
    return costs[0] + costs[1].union(costs[2]), c.known(a[1]).union(c.known(a[2]))


def _concatenation(c: Coster, node: Node, params: tuple[Type, ...], args: Range) -> tuple[Range, Range | None]:
    left, right = node.args
    size = c.known(left) + c.known(right)
    entry = c.entry(left)
    merged = entry.union(c.entry(right)) if entry is not None else None
    if merged is not None:
        c.entries[id(node)] = merged
    if isinstance(params[0], tuple):  # list concatenation is O(1); its size is still tracked
        return ONE + args, size
    return size.factor(_STRING_FACTOR) + args, size
