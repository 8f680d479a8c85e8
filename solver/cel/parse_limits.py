"""cel-go's parser recursion limits, which Kubernetes leaves at their defaults (250).

cel-go counts nesting twice while parsing, and refuses an expression when either count
passes ``maxRecursionDepth``:

* an ANTLR parse listener counts, per grammar rule, how many invocations of that rule
  are open at once ("expression recursion limit exceeded: 250"). Left-recursive rules
  grow by one per operator of a chain: ``a + b + c`` keeps four ``calc`` contexts open
  while parsing ``c``, ``x.f().g()`` keeps three ``member`` contexts; and contexts stay
  open while a nested expression inside them is parsed, so ``1 + (1 + (1 + ...))``
  opens three ``calc`` contexts per level;
* the AST builder counts nested visits of operators, selections, indexes, member calls
  and ternaries ("max recursion depth exceeded"); ``&&``, ``||``, ``!``, ``-``, global
  calls and literals do not count.

:class:`_Listener` replays CEL.g4's rule invocations over drasat's AST (which keeps how
many parentheses wrap each node) to count the first; :func:`recursion_problem` walks
the AST for the second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .stack import deep

if TYPE_CHECKING:
    from .syntax import Node

MAX_RECURSION_DEPTH = 250
_CALC = frozenset({"_+_", "_-_", "_*_", "_/_", "_%_"})
_RELATION = frozenset({"_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_", "@in"})
_NAMESPACED_CALLS = frozenset({"cel.bind", "optional.of", "optional.none", "optional.ofNonZeroValue", "strings.quote"})


def recursion_problem(root: Node) -> str | None:
    """cel-go's message when ``root`` nests deeper than the parser allows, else None."""
    try:
        _Listener().expr(root, _Open())
    except _TooDeep:
        return f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"
    visitor = 0
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, visits = stack.pop()
        visits += _visits(node)
        visitor = max(visitor, visits)
        stack.extend((child, visits) for child in node.children())
    if visitor > MAX_RECURSION_DEPTH:
        return "max recursion depth exceeded"
    return None


class _TooDeep(Exception):
    pass


class _Open(dict):
    """Open rule contexts per grammar rule; ``with_`` returns a copy with more of one rule."""

    def with_(self, rule: str, more: int = 1) -> _Open:
        opened = _Open(self)
        opened[rule] = opened.get(rule, 0) + more
        if opened[rule] > MAX_RECURSION_DEPTH:
            raise _TooDeep()
        return opened


class _Listener:
    """CEL.g4's rules as the parser enters them: expr, conditionalOr, conditionalAnd, relation,
    calc (left-recursive), unary, member (left-recursive), primary, and the nested expressions
    of parentheses, arguments, list elements and map entries."""

    @deep
    def expr(self, node: Node, open_: _Open, parens: int | None = None) -> None:
        opened = open_.with_("expr")
        if (node.parens if parens is None else parens) == 0 and _is_call(node, {"_?_:_"}):
            cond, yes, no = node.args
            self.logical(cond, opened)
            self.logical(yes, opened)
            self.expr(no, opened)
            return
        self.logical(node, opened, parens)

    def logical(self, node: Node, open_: _Open, parens: int | None = None) -> None:
        opened = open_.with_("conditionalOr").with_("conditionalAnd")
        bare = (node.parens if parens is None else parens) == 0
        terms = node.args if bare and _is_call(node, {"_&&_", "_||_"}) else [node]
        for term in terms:  # a chain of && or || is one invocation: no nesting
            self.chain(term, opened, "relation", _RELATION, self.calc, parens if term is node else None)

    def calc(self, node: Node, open_: _Open, parens: int | None = None) -> None:
        self.chain(node, open_, "calc", _CALC, self.unary, parens)

    @deep
    def chain(
        self, node: Node, open_: _Open, rule: str, family: frozenset[str], operand: Any, parens: int | None = None
    ) -> None:
        """A left-recursive binary rule: one context per operator stays open until the chain ends."""
        opened = open_.with_(rule)
        spine: list[Node] = []
        left = node
        while _is_call(left, family) and (
            not spine and (node.parens if parens is None else parens) == 0 or spine and left.parens == 0
        ):
            spine.append(left)
            left = left.args[0]
        if not spine:
            operand(node, opened, parens)
            return
        operand(left, opened, None)
        for op in reversed(spine):
            opened = opened.with_(rule)
            self.chain(op.args[1], opened, rule, family, operand)

    def unary(self, node: Node, open_: _Open, parens: int | None = None) -> None:
        opened = open_.with_("unary")
        while (node.parens if parens is None else parens) == 0 and _is_call(node, {"!_", "-_"}):
            node, parens = node.args[0], None
        self.member(node, opened, parens)

    def member(self, node: Node, open_: _Open, parens: int | None = None) -> None:
        opened = open_.with_("member")
        spine: list[Node] = []
        inner: Node | None = node
        while (
            inner is not None
            and _is_member(inner)
            and ((node.parens if parens is None else parens) == 0 if inner is node else inner.parens == 0)
        ):
            spine.append(inner)
            inner = inner.target
        if inner is None:  # cel.bind(...): the namespace is an identifier
            self.primary_leaf(opened)
        else:
            self.primary(inner, opened, parens if inner is node else None)
        for op in reversed(spine):
            opened = opened.with_("member")
            for arg in op.args:
                self.expr(arg, opened)

    def primary(self, node: Node, open_: _Open, parens: int | None = None) -> None:
        opened = open_.with_("primary")
        wrapped = node.parens if parens is None else parens
        if wrapped:  # ( expr )
            self.expr(node, opened, wrapped - 1)
        elif node.kind == "list":
            for element in node.args:
                self.expr(element, opened.with_("listInit").with_("optExpr"))
        elif node.kind == "map":
            for entry in node.args:
                self.expr(entry, opened.with_("mapInitializerList").with_("optExpr"))
        elif node.kind == "call":  # a global call
            for arg in node.args:
                self.expr(arg, opened.with_("exprList"))

    def primary_leaf(self, open_: _Open) -> None:
        open_.with_("primary")


def _is_call(node: Node, names: frozenset[str] | set[str]) -> bool:
    return node.kind == "call" and node.target is None and node.name in names


def _is_member(node: Node) -> bool:
    return node.kind in ("select", "index") or (
        node.kind == "call" and (node.target is not None or node.name in _NAMESPACED_CALLS)
    )


def _visits(node: Node) -> int:
    """Whether the AST builder counts this node (one more level of its recursion)."""
    if _is_member(node):
        return 1
    return int(
        node.kind == "call"
        and node.target is None
        and (node.name in _CALC or node.name in _RELATION or node.name == "_?_:_")
    )
