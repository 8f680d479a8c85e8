"""cel-go's parser recursion limits, which Kubernetes leaves at their defaults (250).

cel-go counts nesting twice while parsing, and refuses an expression when either count
passes ``maxRecursionDepth``:

* an ANTLR parse listener counts, per grammar rule, how many invocations of that rule
  are open at once ("expression recursion limit exceeded: 250"). Left-recursive rules
  grow by one per operator of a chain: ``a + b + c`` keeps three ``calc`` contexts open
  while parsing ``c``, ``x.f().g()`` keeps three ``member`` contexts;
* the AST builder counts nested visits of operators, selections, indexes, member calls
  and ternaries ("max recursion depth exceeded"); ``&&``, ``||``, ``!``, ``-``, global
  calls and literals do not count.

This module computes both from drasat's AST. The listener count is exact for the
shapes that reach the limit in practice -- chains of one operator, chains of member
calls, nested parentheses, arguments and list elements -- and does not add up mixed
shapes (a chain inside the argument of another chain), where it may accept an
expression cel-go refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .syntax import Node

MAX_RECURSION_DEPTH = 250
_CALC = frozenset({"_+_", "_-_", "_*_", "_/_", "_%_"})
_RELATION = frozenset({"_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_", "@in"})
_NAMESPACED_CALLS = frozenset({"cel.bind", "optional.of", "optional.none", "optional.ofNonZeroValue",
                               "strings.quote"})


def recursion_problem(root: "Node") -> str | None:
    """cel-go's message when ``root`` nests deeper than the parser allows, else None."""
    listener = visitor = 0
    stack: list[tuple[Node, int, int]] = [(root, 1 + root.parens, 0)]
    while stack:
        node, exprs, visits = stack.pop()
        visits += _visits(node)
        listener = max(listener, exprs, _chain(node))
        visitor = max(visitor, visits)
        for child, nested in _children(node):
            stack.append((child, exprs + nested + child.parens, visits))
    if listener > MAX_RECURSION_DEPTH:
        return f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"
    if visitor > MAX_RECURSION_DEPTH:
        return "max recursion depth exceeded"
    return None


def _is_member(node: "Node") -> bool:
    return node.kind in ("select", "index") or (node.kind == "call" and (
        node.target is not None or node.name in _NAMESPACED_CALLS))


def _visits(node: "Node") -> int:
    """Whether the AST builder counts this node (one more level of its recursion)."""
    if _is_member(node):
        return 1
    return int(node.kind == "call" and node.target is None and (node.name in _CALC or node.name in _RELATION
                                                                 or node.name == "_?_:_"))


def _children(node: "Node") -> list[tuple["Node", int]]:
    """Each child and whether ANTLR parses it as a new ``expr`` (arguments, elements, keys, the else branch)."""
    if node.kind == "call" and node.target is None and (node.name in _CALC or node.name in _RELATION
                                                        or node.name in ("_&&_", "_||_", "!_", "-_")):
        return [(a, 0) for a in node.args]
    if node.kind == "call" and node.name == "_?_:_":
        return [(node.args[0], 0), (node.args[1], 0), (node.args[2], 1)]
    out = [(node.target, 0)] if node.target is not None else []
    return out + [(a, 1) for a in node.args]


def _chain(node: "Node") -> int:
    """Open contexts of a left-recursive rule at the end of the chain that ends at ``node``."""
    if node.kind == "call" and node.target is None and (node.name in _CALC or node.name in _RELATION):
        family = _CALC if node.name in _CALC else _RELATION
        ops, left = 0, node
        while left.kind == "call" and left.target is None and left.name in family and (ops == 0 or not left.parens):
            ops, left = ops + 1, left.args[0]
        return ops + 2   # the rule's invocation, one context per operator, the last right operand
    if _is_member(node):
        ops = 0
        member: Node | None = node
        while member is not None and _is_member(member) and (ops == 0 or not member.parens):
            ops, member = ops + 1, member.target
        return ops + 1   # the rule's invocation and one context per postfix operator
    return 0
