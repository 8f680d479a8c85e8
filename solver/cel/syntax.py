"""Parse a selector once, engine-neutrally, into a small AST that analysis can walk.

celpy's Lark grammar is the parser (pure Python, always installed). Its tree is deep
and positional; :func:`parse` turns it into :class:`Node` objects shaped like CEL's own
AST (calls for operators, selects, indexes, literals, macros) with the offsets that
cel-go uses in error messages. Optional syntax (``x.?f``, ``m[?k]``), which the grammar
lacks, is blanked out before parsing and recorded on the nodes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput

from . import grammar
from .errors import CelCompileError, compilation_failed, issue
from .parse_limits import recursion_problem
from .stack import deep

MAX_CODE_POINTS = 100_000  # cel-go's default expressionSizeCodePointLimit (Kubernetes keeps it)
_PASS_THROUGH = {
    "member",
    "relation",
    "addition",
    "multiplication",
    "unary",
    "primary",
    "expr",
    "conditionalor",
    "conditionaland",
}
_BINARY = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}
MACROS = {"all", "exists", "exists_one", "map", "filter"}
NAMESPACED = {
    ("cel", "bind"),
    ("optional", "of"),
    ("optional", "none"),
    ("optional", "ofNonZeroValue"),
    ("strings", "quote"),
}


@dataclass(eq=False)
class Node:
    """One CEL AST node. ``pos`` is where cel-go reports problems with it."""

    kind: str  # ident literal select index call list map struct
    pos: int
    start: int
    end: int
    name: str = ""  # identifier, field, function or literal type
    value: Any = None  # literal value
    args: list[Node] = field(default_factory=list)
    target: Node | None = None  # operand of select/index, receiver of a member call
    optional: bool = False  # x.?f or m[?k]
    tree: Any = None  # the Lark node, for the celpy engine
    parens: int = 0  # how many parentheses enclose it (each is a nested expression)

    def children(self) -> list[Node]:
        return ([self.target] if self.target is not None else []) + self.args


@dataclass
class Parsed:
    """A parsed expression: the AST and the text the offsets refer to."""

    text: str
    root: Node
    optional_marks: frozenset[int]
    tree: Any = None  # the Lark tree, which the celpy engine evaluates


def parse(text: str) -> Parsed:
    """Parse ``text``; raises :class:`CelCompileError` for syntax errors and cel-go's parser limits."""
    size = len(text)
    if size > MAX_CODE_POINTS:
        raise CelCompileError(
            compilation_failed(
                issue(text, None, f"expression code point size exceeds limit: size: {size}, limit {MAX_CODE_POINTS}")
            ),
            text,
        )
    masked, marks = mask_optional(text)
    try:
        tree = _parser().parse(masked)
    except LarkError as exc:
        raise CelCompileError(compilation_failed(_syntax_issue(text, exc)), text) from None
    try:
        root = _Builder(text, marks).build(tree)
    except RecursionError:
        root = None
    problem = "max recursion depth exceeded" if root is None else recursion_problem(root)
    if problem is not None or root is None:
        raise CelCompileError(compilation_failed(f"ERROR: <input>:-1:0: {problem}"), text)
    return Parsed(text, root, frozenset(marks), tree)


_PARSER: lark.Lark | None = None
_PARSER_LOCK = threading.Lock()


def _parser() -> lark.Lark:
    """celpy's grammar as a parser, loaded once (see :mod:`.grammar`)."""
    global _PARSER
    with _PARSER_LOCK:
        if _PARSER is None:
            _PARSER = grammar.parser()
        return _PARSER


def _syntax_issue(text: str, exc: LarkError) -> str:
    if not isinstance(exc, UnexpectedInput) or exc.pos_in_stream is None:
        return issue(text, None, "Syntax error: " + str(exc).splitlines()[0])
    offset = exc.pos_in_stream
    if isinstance(exc, UnexpectedCharacters):
        return issue(text, offset, f"Syntax error: token recognition error at: '{text[offset : offset + 1]}'")
    found = text[offset : offset + 1] or "<EOF>"
    return issue(text, offset, f"Syntax error: unexpected input at '{found}'")


def mask_optional(text: str) -> tuple[str, set[int]]:
    """Blank the ``?`` of ``.?`` and ``[?`` outside strings and comments; return their offsets."""
    chars, marks, i, n = list(text), set(), 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _skip_string(text, i)
            continue
        if c == "/" and text.startswith("//", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c in ".[" and i + 1 < n and text[i + 1] == "?":
            chars[i + 1] = " "
            marks.add(i + 1)
        i += 1
    return "".join(chars), marks


def _skip_string(text: str, i: int) -> int:
    """The offset just past the string literal opening at ``i`` (prefix letters already passed)."""
    raw = i > 0 and text[i - 1] in "rR" or (i > 1 and text[i - 2] in "rR" and text[i - 1] in "bB")
    quote = text[i] * 3 if text.startswith(text[i] * 3, i) else text[i]
    j = i + len(quote)
    while j < len(text):
        if not raw and text[j] == "\\":
            j += 2
            continue
        if text.startswith(quote, j):
            return j + len(quote)
        if len(quote) == 1 and text[j] == "\n":
            return j
        j += 1
    return j


class _Builder:
    """Lark tree -> :class:`Node`; left-recursive chains are walked iteratively."""

    def __init__(self, text: str, marks: set[int]) -> None:
        self.text, self.marks = text, marks

    def build(self, tree: lark.Tree) -> Node:
        return self.node(tree)

    @deep
    def node(self, tree: lark.Tree) -> Node:
        parens, outer = 0, tree
        while True:
            kind = tree.data
            if kind == "paren_expr":
                parens += 1
            elif kind in ("conditionalor", "conditionaland") and len(tree.children) == 2:
                return self._chain(tree, outer, parens)
            elif kind not in _PASS_THROUGH or len(tree.children) != 1 or not isinstance(tree.children[0], lark.Tree):
                break
            tree = tree.children[0]
        node = getattr(self, "_" + tree.data)(tree)
        if outer is not tree and not outer.meta.empty:
            node.start, node.end = outer.meta.start_pos, outer.meta.end_pos
        node.parens += parens
        return node

    def _span(self, tree: lark.Tree) -> tuple[int, int]:
        return (tree.meta.start_pos, tree.meta.end_pos) if not tree.meta.empty else (0, 0)

    def _chain(self, tree: lark.Tree, outer: lark.Tree, parens: int) -> Node:
        """``a && b && c`` as one n-ary call, as cel-go balances such chains."""
        kind, terms = tree.data, []
        while tree.data == kind and len(tree.children) == 2:
            terms.append(tree.children[1])
            tree = tree.children[0]
        terms.append(tree)
        args = [self.node(t) for t in reversed(terms)]
        name = "_&&_" if kind == "conditionaland" else "_||_"
        start, end = self._span(outer)
        op = self._operator(args[0].end)
        node = Node("call", op, start, end, name=name, args=args, tree=outer)
        node.parens = parens
        return node

    def _operator(self, after: int) -> int:
        """Offset of the first operator character after ``after`` (skipping blanks and comments)."""
        i, text = after, self.text
        while i < len(text):
            if text[i].isspace() or text[i] == ")":
                i += 1
            elif text.startswith("//", i):
                nl = text.find("\n", i)
                i = len(text) if nl < 0 else nl
            else:
                return i
        return after

    def _expr(self, tree: lark.Tree) -> Node:
        cond, yes, no = (self.node(c) for c in tree.children)
        start, end = self._span(tree)
        return Node("call", self.text.find("?", cond.end), start, end, name="_?_:_", args=[cond, yes, no], tree=tree)

    def _binary(self, tree: lark.Tree) -> Node:
        op_tree, right_tree = tree.children
        left, right = self.node(op_tree.children[0]), self.node(right_tree)
        start, end = self._span(tree)
        return Node(
            "call", self._operator(left.end), start, end, name=_BINARY[op_tree.data], args=[left, right], tree=tree
        )

    _relation = _addition = _multiplication = _binary

    def _unary(self, tree: lark.Tree) -> Node:
        op, operand = tree.children
        inner = self.node(operand)
        start, end = self._span(tree)
        name = "!_" if op.data == "unary_not" else "-_"
        return Node("call", start, start, end, name=name, args=[inner], tree=tree)

    def _member_dot(self, tree: lark.Tree) -> Node:
        operand, name = self.node(tree.children[0]), _token(tree, 1)
        dot = self.text.rfind(".", operand.end, _span_of(name)[1])
        start, end = self._span(tree)
        return Node(
            "select", dot, start, end, name=str(name), target=operand, optional=dot + 1 in self.marks, tree=tree
        )

    def _member_index(self, tree: lark.Tree) -> Node:
        operand, key = self.node(tree.children[0]), self.node(tree.children[1])
        bracket = self.text.find("[", operand.end)
        start, end = self._span(tree)
        return Node(
            "index", bracket, start, end, target=operand, args=[key], optional=bracket + 1 in self.marks, tree=tree
        )

    def _member_dot_arg(self, tree: lark.Tree) -> Node:
        operand, name = self.node(tree.children[0]), str(tree.children[1])
        args = [self.node(c) for c in tree.children[2].children] if len(tree.children) == 3 else []
        paren = self.text.find("(", _span_of(_token(tree, 1))[2])
        start, end = self._span(tree)
        if operand.kind == "ident" and (operand.name, name) in NAMESPACED:
            return Node("call", paren, start, end, name=f"{operand.name}.{name}", args=args, tree=tree)
        return Node("call", paren, start, end, name=name, target=operand, args=args, tree=tree)

    def _member_object(self, tree: lark.Tree) -> Node:
        start, end = self._span(tree)
        return Node("struct", start, start, end, tree=tree)

    def _ident_arg(self, tree: lark.Tree) -> Node:
        name = _token(tree, 0)
        args = [self.node(c) for c in tree.children[1].children] if len(tree.children) == 2 else []
        start, end = self._span(tree)
        return Node("call", self.text.find("(", _span_of(name)[2]), start, end, name=str(name), args=args, tree=tree)

    _dot_ident_arg = _ident_arg

    def _ident(self, tree: lark.Tree) -> Node:
        token = _token(tree, 0)
        return Node("ident", *_span_of(token), name=str(token), tree=tree)

    _dot_ident = _ident

    def _list_lit(self, tree: lark.Tree) -> Node:
        items = [self.node(c) for c in tree.children[0].children] if tree.children else []
        start, end = self._span(tree)
        return Node("list", start, start, end, args=items, tree=tree)

    def _map_lit(self, tree: lark.Tree) -> Node:
        items = [self.node(c) for c in tree.children[0].children] if tree.children else []
        start, end = self._span(tree)
        return Node("map", start, start, end, args=items, tree=tree)

    def _literal(self, tree: lark.Tree) -> Node:
        token = _token(tree, 0)
        kind, value = _literal_value(token)
        return Node("literal", *_span_of(token), name=kind, value=value, tree=tree)


def _token(tree: lark.Tree, index: int) -> lark.Token:
    token = tree.children[index]
    assert isinstance(token, lark.Token) and token.start_pos is not None
    return token


def _span_of(token: lark.Token) -> tuple[int, int, int]:
    """pos, start, end of a token (positions are always set by this module's lexer)."""
    start, end = token.start_pos or 0, token.end_pos or 0
    return start, start, end


def _literal_value(token: lark.Token) -> tuple[str, Any]:
    text = str(token)
    if token.type == "INT_LIT":
        return "int", int(text, 0) if not text.lstrip("-").startswith("0x") else int(text, 16)
    if token.type == "UINT_LIT":
        return "uint", int(text[:-1], 0) if "x" not in text else int(text[:-1], 16)
    if token.type == "FLOAT_LIT":
        return "double", float(text)
    if token.type in ("STRING_LIT", "MLSTRING_LIT"):
        return "string", decode_string(token)
    if token.type == "BYTES_LIT":
        from celpy.evaluation import celbytes

        return "bytes", bytes(celbytes(token))
    if token.type == "BOOL_LIT":
        return "bool", text == "true"
    return "null", None


def decode_string(token: lark.Token) -> str:
    """A string literal's value; celpy's ``celstr`` drops the newlines of cooked ``\"\"\"`` strings."""
    text = str(token)
    if "\\" not in text:  # no escape to resolve (the usual case): the text between the quotes
        body = text.lstrip("rR")
        quotes = 3 if body[:3] in ('"""', "'''") else 1
        return body[quotes:-quotes]
    from celpy.evaluation import celstr  # imported only for escapes: celpy is slow to import

    if text[:3] in ('"""', "'''"):
        return "\n".join(str(celstr(lark.Token("STRING_LIT", '"' + part + '"'))) for part in text[3:-3].split("\n"))
    return str(celstr(token))
