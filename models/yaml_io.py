"""Parsing manifest text safely: YAML/JSON parsing, nesting and expansion limits (the text itself is read,
capped and decoded by :mod:`.input_text`).

Everything here turns hostile or broken input into :class:`InputProblem` values with a
file name, a document index and, for syntax errors, a line and column — never an
exception. The parser is PyYAML's safe loader (the C one when libyaml is there)
with changes that make it read manifests the way ``kubectl`` does:

- timestamps stay text (``creationTimestamp: 2024-01-01T00:00:00Z`` is a string in
  the API, and a label value ``2024-01-01`` must not turn into a date);
- a key given twice in one mapping is an error (``kubectl apply`` rejects it too,
  and silently keeping the last value hides mistakes);
- documents nested more than :data:`MAX_DEPTH` levels deep are refused: by libyaml's own
  limit inside the parse where it has one (PyYAML >= 6.0.4), else by a scan before the
  C loader sees them (its recursive composer would overflow the C stack and crash the
  process); the message names the document and line;
- after parsing, a document may expand to at most :data:`MAX_NODES` values and
  :data:`MAX_EXPANDED_BYTES` of text, counting every use of a YAML alias: that
  stops "billion laughs" alias bombs and self-referencing aliases, which would
  otherwise exhaust memory later, when the document is validated or printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, cast

import yaml

from .collector import collector_paused
from .errors import InputProblem, Location
from .fast_parse import FastStream, fast_json, fast_stream
from .json_list import json_list
from .yaml_construct import FALL_BACK, construct
from .yaml_split import Piece

MAX_NODES = 2_000_000
MAX_EXPANDED_BYTES = 128 * 1024 * 1024
MAX_DEPTH = 1000
_QUICK_DEPTH_BOUND = 2000
_FIRST_CHARACTER = re.compile(r"\S")
_LEADING = re.compile(r"^[ \t?:-]*", re.MULTILINE)

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _ManifestLoader(_BaseLoader):
    """Safe loading, timestamps as text, duplicate keys rejected."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"the key {key_node.value!r} appears twice",
                        key_node.start_mark,
                    )
                seen[key_node.value] = key_node
        return super().construct_mapping(node, deep=deep)

    # The composer asks these three for every node. PyYAML's versions also serve path resolvers,
    # which safe loading never has; these give the same tags without that work.
    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            return plain_tag(value) if implicit[0] else "tag:yaml.org,2002:str"
        return "tag:yaml.org,2002:seq" if kind is yaml.SequenceNode else "tag:yaml.org,2002:map"

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


_IMPLICIT: dict[str, list[tuple[str, Any]]] = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()  # type: ignore[attr-defined]
}
_ManifestLoader.yaml_implicit_resolvers = _IMPLICIT
_NUMBER_READER = _ManifestLoader("")  # reads a number's text only (see _not_a_number)


def reference_scalar(token: str) -> Any:
    """A plain scalar as drasat's loader reads it (raises yaml.YAMLError where it cannot)."""
    return yaml.load(f"- {token}\n", Loader=_ManifestLoader)[0]


def plain_tag(value: str) -> str:
    """The tag drasat's loader gives a plain (unquoted) scalar: PyYAML's, with timestamps kept as text, and
    text where PyYAML's number pattern matches what is no number (:func:`_not_a_number`)."""
    for tag, regexp in _IMPLICIT.get(value[:1], ()):
        if regexp.match(value):
            return "tag:yaml.org,2002:str" if "_" in value and _not_a_number(tag, value) else tag
    return "tag:yaml.org,2002:str"


_NUMBERS = {
    "tag:yaml.org,2002:int": yaml.constructor.SafeConstructor.construct_yaml_int,
    "tag:yaml.org,2002:float": yaml.constructor.SafeConstructor.construct_yaml_float,
}


def _not_a_number(tag: str, value: str) -> bool:
    """Whether PyYAML's int or float pattern matched a scalar its constructor cannot read (``0b_``, ``0x_``,
    ``._``: only underscores where the digits go), which it would fail on with a bare ValueError. Kubernetes'
    YAML reader takes such a scalar as text; so does drasat. Only scalars with underscores can be such."""
    construct = _NUMBERS.get(tag)
    if construct is None:
        return False
    try:
        construct(_NUMBER_READER, yaml.ScalarNode(tag, value))
    except ValueError:
        return True
    return False


assert None not in _IMPLICIT and not _BaseLoader.yaml_path_resolvers  # type: ignore[attr-defined]


@dataclass
class Document:
    """One parsed document of a stream, or the problem that stopped it."""

    index: int
    data: Any = None
    problem: InputProblem | None = None
    fits_int64: bool = False
    """Every whole number in ``data`` is known to fit in int64 (the parser saw each one's text): the loader's
    walk over every value looking for bigger ones is skipped."""
    again: Callable[[], Document | None] | None = None
    """For a List whose items are still text (:class:`~.fast_parse.Deferred`): the document read whole, for
    when an item cannot be read alone (:class:`~.fast_parse.ReadAgain`); it may be the error that ends the
    stream."""


def _json_list(text: str, name: str, listed: dict[str, Any]) -> Iterator[Document]:
    """A big JSON List whose items are still text (:mod:`.json_list`): one object as far as its cut could
    tell. Where it is read whole again, what the reference reads after that document is read too: a
    ``---`` and another List, a second object on its own line, an error."""
    whole, asked = parse_documents(text, name), False

    def again() -> Document | None:
        nonlocal asked
        asked = True
        return next(whole, None)

    yield Document(0, listed, fits_int64=True, again=again)
    if asked:
        yield from whole


def parse_documents(text: str, name: str, *, deferring: bool = False) -> Iterator[Document]:
    """The documents of a YAML (or JSON) stream in order; a syntax error ends the stream. Once a JSON
    text is parsed, the generator holds it no longer. With ``deferring``, a big ``kind: List`` document's
    items may come as text to be read one by one (see :attr:`Document.again`): only the loader asks so."""
    first = _FIRST_CHARACTER.search(text)
    listed = json_list(text) if deferring and first is not None and first.group() == "{" else None
    if listed is not None:
        yield from _json_list(text, name, listed)
        return
    if first is not None and first.group() in ("{", "["):
        with collector_paused(FREEZE_AFTER):
            fast = fast_json(text)
        if fast is not None:
            del text
            yield Document(0, fast, fits_int64=True)  # fast_json takes no number of 19 digits or more
            return
        try:
            with collector_paused(FREEZE_AFTER):
                data = json.loads(text)  # JSON has no aliases: it holds no more than its text
            del text
            yield Document(0, data)
            return
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and _json_lines_like(text, first.start(), exc.pos):
                # newline-delimited JSON, as `jq -c '.items[]'` prints: one document per line
                yield from _json_lines(text, name)
                return
        except RecursionError:
            pass  # too deep for json: YAML reports it properly
    stream = fast_stream(text)
    if stream is None:
        yield from _reference(text, name, len(text))
        return
    yield from _split(stream, text, name, deferring)


def _split(stream: FastStream, text: str, name: str, deferring: bool = False) -> Iterator[Document]:
    """The documents of a stream the fast path split: each read fast where it can be, else by PyYAML alone."""
    reread: list[Document] = []  # a List read whole again (its Document.again), then any error right after it

    def again(piece: Piece) -> Document | None:
        reread[:] = _whole(stream, text, name, piece)
        return reread[0] if reread else None

    for piece in stream.pieces:
        listed = stream.list_value(piece) if deferring else None
        if listed is not None:
            yield Document(piece.index, listed, fits_int64=stream.fits_int64, again=partial(again, piece))
            if any(document.problem is not None for document in reread):  # the error that ends the stream
                yield from reread[1:]
                return
            continue
        for document in _whole(stream, text, name, piece):
            yield document
            if document.problem is not None:
                return


def _whole(stream: FastStream, text: str, name: str, piece: Piece) -> list[Document]:
    """One document of the stream, read fast where it can be, else by PyYAML; and after it the error that
    ends the stream, where PyYAML finds one right after the document (``{...} x``: text after a flow
    collection that is the whole document), as it does reading the whole stream."""
    with collector_paused(FREEZE_AFTER):
        fast = stream.value(piece)
    if fast is not None:
        return [Document(piece.index, fast[0], fits_int64=stream.fits_int64)]  # no aliases: no bigger than its text
    # PyYAML reads this one document from its own marker line through the next: the tokens it
    # meets are the whole stream's, so are its values, messages and (shifted) line numbers.
    window = text[piece.window_start : piece.window_end]
    read = _reference(window, name, len(text), first=piece.index, line=piece.line)
    document = next(read, None)
    if document is None or document.problem is not None:
        return [] if document is None else [document]
    after = next(read, None)
    return [document, after] if after is not None and after.problem is not None else [document]


def _reference(text: str, name: str, text_length: int, first: int = 0, line: int = 0) -> Iterator[Document]:
    """The documents of ``text`` as PyYAML reads them, numbered from ``first``; ``line`` is the line of the
    stream that ``text`` starts on (for messages); ``text_length`` the whole stream's (for the expansion limit)."""
    index = first
    try:
        if not _parser_limits_depth() and _depth_bound(text) > _QUICK_DEPTH_BOUND and _deeper_than(text, MAX_DEPTH):
            yield Document(index, problem=InputProblem(Location(name, index), _too_deep()))
            return
        documents = yaml.compose_all(text, Loader=_ManifestLoader)
        constructor = _ManifestLoader("")
        while True:
            with collector_paused(FREEZE_AFTER):
                node = next(documents, _END)
                if node is _END:
                    return
                data, used_alias = construct(cast(yaml.Node, node), constructor)
                if data is FALL_BACK:
                    data, used_alias = constructor.construct_document(node), True
            # Without an alias a document holds no more values than its text has characters.
            yield _checked(Document(index, data), name, text_length) if used_alias else Document(index, data)
            index += 1
    except yaml.MarkedYAMLError as exc:
        yield Document(index, problem=InputProblem(Location(name, index), _describe(exc, line)))
    except yaml.YAMLError as exc:
        yield Document(index, problem=InputProblem(Location(name, index), f"is not valid YAML: {exc}"))
    except RecursionError:
        yield Document(index, problem=InputProblem(Location(name, index), "is nested too deeply to read"))


_END = object()


def _json_lines_like(text: str, start: int, extra: int) -> bool:
    """Whether a text whose first JSON value (from ``start``) is followed by more (at ``extra``) is
    newline-delimited JSON: that value alone on its line, and no line a YAML document marker. Otherwise YAML
    reads it, as JSON is YAML: JSON documents between ``---`` lines are a stream, and a pretty-printed value
    with something after it is an error YAML reports where it stands (not "line 1 is not JSON")."""
    line_end = text.find("\n", start)
    if line_end < 0 or line_end > extra or text[line_end:extra].strip():
        return False  # the value spans lines, or something follows it on its line
    markers = ("\n---", "\n...")
    return not any(re.search(rf"{re.escape(m)}(?:[ \t\r]|\n|$)", text) for m in markers if m in text)


def _json_lines(text: str, name: str) -> Iterator[Document]:
    """One document per non-empty line; a line that is not JSON ends the stream with its line number."""
    index = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            detail = f"{exc.msg}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            yield Document(
                index,
                problem=InputProblem(
                    Location(name, index),
                    f"line {number} is not JSON: {detail} (newline-delimited JSON, one object a line)",
                ),
            )
            return
        yield Document(index, data)
        index += 1


FREEZE_AFTER = 200_000
"""New tracked objects past which a load's pause (:func:`~.collector.collector_paused`) freezes them: after a
large load (millions of values) even the first collection once the collector is back walks all of them --
seconds -- and the parsed data holds no reference cycles worth collecting."""


def _depth_bound(text: str) -> int:
    """A cheap upper bound of the nesting depth.

    Block levels need indentation, dashes or '?'/':' indicators at the start of a
    line; flow levels need an opening bracket, and an empty ``[]`` or ``{}`` can
    only ever be the innermost level.
    """
    leading = max((len(m) for m in _LEADING.findall(text)), default=0)
    opens = text.count("[") + text.count("{") - text.count("[]") - text.count("{}")
    return 2 * (leading + 1) + opens + 1


@cache
def _parser_limits_depth() -> bool:
    """Whether the loader's parser refuses nesting past :data:`MAX_DEPTH` itself, flow and block alike.

    libyaml as PyYAML >= 6.0.4 ships it does, without recursing: then the depth is checked inside the parse
    (and the document named), and no text is scanned twice. A loader without such a limit (an older libyaml,
    or PyYAML's pure-Python one) gets the scan of :func:`_deeper_than` before it composes, as its composer
    recurses once per level and would overflow the C stack."""
    for probe in ("[" * (MAX_DEPTH + 1), "- " * (MAX_DEPTH + 1) + "x\n"):
        try:
            for _ in yaml.parse(probe, Loader=_ManifestLoader):
                pass
        except yaml.YAMLError as exc:
            if "nesting depth" in str(exc):
                continue
        return False
    return True


def _deeper_than(text: str, limit: int) -> bool:
    """Whether the stream nests deeper than ``limit``, from the parser's events (for a parser that does not
    limit nesting itself: :func:`_parser_limits_depth`).

    libyaml's parser does not recurse, and stopping at ``limit`` keeps its cost for
    deeply nested flow collections (quadratic in the depth) small.
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_ManifestLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False  # a syntax error is reported by the loader
    return False


def _describe(exc: yaml.MarkedYAMLError, line: int = 0) -> str:
    """A YAML error as one sentence with a 1-based line and column (``line``: lines before the text read)."""
    mark = exc.problem_mark or exc.context_mark
    where = f" at line {mark.line + 1 + line}, column {mark.column + 1}" if mark else ""
    what = exc.problem or exc.context or "syntax error"
    if "nesting depth" in what:  # the parser's own limit (libyaml's, as PyYAML >= 6.0.4 ships it)
        return _too_deep(where)
    context = f" ({exc.context})" if exc.context and exc.problem else ""
    return f"YAML error{where}: {what}{context}"


def _too_deep(where: str = "") -> str:
    return f"is nested more than {MAX_DEPTH} levels deep{where}; drasat does not read it"


def _checked(document: Document, name: str, text_length: int) -> Document:
    """The document, or a problem if it expands beyond the limits (alias bombs, self-references).

    Without aliases a document cannot hold more values than its text has
    characters, so the node limit grows with the text: large alias-free manifests
    always pass, while an expansion far beyond the text's size is refused.
    """
    excess = expansion_excess(document.data, max_nodes=max(MAX_NODES, text_length))
    if excess:
        return Document(document.index, problem=InputProblem(Location(name, document.index), excess))
    return document


def expansion_excess(data: Any, max_nodes: int = MAX_NODES, max_bytes: int = MAX_EXPANDED_BYTES) -> str | None:
    """Why ``data`` is too large once every alias is expanded, or None when it is within the limits.

    A YAML alias makes one Python container appear in many places, so each distinct
    container's expanded size is computed once and reused: the walk costs the size of
    the text, not of the expansion (an alias bomb of 10**9 values is refused at once).
    It is iterative, so deep nesting cannot overflow the stack, and a container that
    contains itself (an alias to its own anchor) expands without end.
    """
    message = (
        f"expands to more than {max_nodes:,} values or {max_bytes // (1024 * 1024)} MiB of text "
        "(YAML aliases used many times or referring to themselves?); drasat does not read it"
    )
    totals: dict[int, tuple[int, int]] = {}  # id of a container -> its expanded (values, text bytes)
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        item, finished = stack.pop()
        if not isinstance(item, (dict, list)) or (not finished and id(item) in totals):
            continue
        if finished:
            nodes, size = 1, 0
            for child in _members(item):
                child_nodes, child_size = totals.get(id(child)) or _leaf(child)
                nodes, size = nodes + child_nodes, size + child_size
            totals[id(item)] = (nodes, size)
            open_.discard(id(item))
            if nodes > max_nodes or size > max_bytes:
                return message
            continue
        if id(item) in open_:
            return message  # it contains itself
        open_.add(id(item))
        stack.append((item, True))
        stack.extend((child, False) for child in _members(item) if isinstance(child, (dict, list)))
    return None


def _members(container: dict[Any, Any] | list[Any]) -> list[Any]:
    return [*container.keys(), *container.values()] if isinstance(container, dict) else container


def _leaf(value: Any) -> tuple[int, int]:
    return 1, len(value) if isinstance(value, str) else 0
