"""kubectl's ``-o jsonpath=TEMPLATE``: its template language, read here, around JSONPath expressions that
``jsonpath-ng`` evaluates — with kubectl's strictness on top.

The template is literal text, ``{"quoted"}`` text, ``{expression}`` and ``{range expression}`` ... ``{end}``.
kubectl parses it before it asks the server anything (a broken template is refused as "error parsing
jsonpath TEMPLATE, unclosed action"). ``kubectl get -o jsonpath`` allows missing keys
(``--allow-missing-template-keys`` is true by default): a field no value has prints nothing, so a script can
read an optional label. An index or a slice past a list's end is an error whatever that flag says: "error
executing jsonpath ... array index out of bounds", exit 1 (``custom-columns`` prints ``<none>`` there too:
:func:`values` is that lenient reading).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import click

from drasat.models.errors import DrasatError, InputError

Part = tuple[str, str]  # ("text", literal) | ("path", jsonpath) | ("range", jsonpath) | ("end", "")

_TOKEN = re.compile(r"""\{\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^{}]*))\s*\}""")


class TemplateError(DrasatError, click.ClickException):
    """A template that parsed but cannot be executed on the answer (a key missing, an index out of range):
    kubectl's "error executing jsonpath", exit 1. A ClickException too, so that a command which renders its
    answer outside its own error handling still ends with the one ``error:`` line, never a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.exit_code = 1  # kubectl's, for a template that cannot be executed

    def show(self, file: Any = None) -> None:
        from .text import echo

        echo(f"error: {self}", err=True)


class _Missing(Exception):
    """A step of a JSONPath found nothing where kubectl requires something (its words as the message)."""


def parse_template(template: str) -> list[Part]:
    """kubectl's template: literal text, {"quoted"}, {expression}, {range expression} ... {end}."""
    parts: list[Part] = []
    at = 0
    for match in _TOKEN.finditer(template):
        _refuse_unclosed(template, at, match.start())
        parts.append(("text", template[at : match.start()]))
        parts.append(_part(template, match))
        at = match.end()
    _refuse_unclosed(template, at, len(template))
    parts.append(("text", template[at:]))
    if sum(k == "range" for k, _ in parts) != sum(k == "end" for k, _ in parts):
        raise InputError(f"jsonpath template {template!r}: every {{range}} needs an {{end}}")
    if not any(k == "path" or k == "range" for k, _ in parts):
        raise InputError(f"jsonpath template {template!r} has no {{expression}}, e.g. {{.items[*].metadata.name}}")
    return [p for p in parts if p != ("text", "")]


def _part(template: str, match: re.Match[str]) -> Part:
    """One ``{...}`` of the template: quoted text, end, range or an expression."""
    double, single, expression = match.groups()
    if double is not None or single is not None:
        literal = double if double is not None else single.replace("\\'", "'").replace('"', '\\"')
        try:
            return ("text", json.loads(f'"{literal}"', strict=False))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"jsonpath template {template!r}: the quoted text {match.group(0)} is not valid ({exc.msg})"
            ) from None
    if expression.strip() == "end":
        return ("end", "")
    if expression.strip().startswith("range "):
        return ("range", compiled_text(expression.strip()[6:]))
    return ("path", compiled_text(expression))


def _refuse_unclosed(template: str, start: int, end: int) -> None:
    """Literal text (``template[start:end]``) with a ``{`` in it: an action that never closes, refused in
    kubectl's parser's words ("error parsing jsonpath {.items[, unterminated array")."""
    opened = template.find("{", start, end)
    if opened < 0:
        return
    action = template[opened:]
    if "[?(" in action and ")" not in action.partition("[?(")[2]:
        why = "unterminated filter"
    elif action.count("[") > action.count("]"):
        why = "unterminated array"
    elif action.count('"') % 2 or action.count("'") % 2:
        why = "unterminated quoted string"
    else:
        why = "unclosed action"
    raise InputError(f"error parsing jsonpath {template}, {why}")


_ESCAPED_DOTS = re.compile(r"(?<=\.)((?:[\w/-]|\\\.)*\\\.(?:[\w/-]|\\\.)*)")
"""A field name with escaped dots, as kubectl reads a label key: ``.labels.app\\.kubernetes\\.io/name``."""


def compiled_text(expression: str) -> str:
    """A kubectl expression as jsonpath-ng reads it ('.items[*]' -> '$.items[*]', an escaped dot's field
    quoted: '.labels.app\\.kubernetes\\.io/name' -> ".labels.'app.kubernetes.io/name'"), checked now."""
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError

    text = _ESCAPED_DOTS.sub(lambda m: "'" + m[1].replace("\\.", ".") + "'", expression.strip())
    path = "$" + text if text.startswith((".", "[")) else text or "$"
    try:
        _parsed(path)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # noqa: BLE001  (ply raises plain Exception)
        raise InputError(f"jsonpath expression {expression!r} is not valid: {exc}") from None
    return path


def values(path: str, data: Any) -> list[Any]:
    """What ``path`` finds in ``data``, nothing where it finds nothing (custom-columns' reading)."""
    return [match.value for match in _parsed(path).find(data)]


@functools.lru_cache(maxsize=64)
def _parsed(path: str) -> Any:
    """A JSONPath parsed once, however many items a {range} applies it to."""
    from jsonpath_ng.ext import parse

    return parse(path)


def expand_template(template: str, data: Any) -> str:
    """The template's text for ``data``, as ``kubectl get -o jsonpath=TEMPLATE`` prints it; a key no value
    has or an index out of range is a :class:`TemplateError` in kubectl's words, and nothing is printed."""
    try:
        return _expand(parse_template(template), data)
    except _Missing as exc:
        raise TemplateError(
            f"error executing jsonpath {json.dumps(template, ensure_ascii=False)}: Error executing template: {exc}."
        ) from None


def _expand(parts: list[Part], data: Any) -> str:
    """Text for ``parts`` against ``data``: expressions print their values joined by spaces (as kubectl)."""
    out: list[str] = []
    i = 0
    while i < len(parts):
        kind, value = parts[i]
        if kind == "text":
            out.append(value)
        elif kind == "path":
            out.append(" ".join(scalar(v) for v in _strict_values(value, data)))
        elif kind == "range":
            body, i = _body(parts, i)
            out.extend(_expand(body, item) for item in _strict_values(value, data))
        i += 1
    return "".join(out)


def _strict_values(path: str, data: Any) -> list[Any]:
    """:func:`values`, with kubectl's bounds checks (see :func:`_found`)."""
    from jsonpath_ng.jsonpath import DatumInContext

    return [match.value for match in _found(_parsed(path), DatumInContext.wrap(data))]


def _found(path: Any, datum: Any) -> list[Any]:
    """jsonpath-ng's matches of ``path``, step by step as kubectl walks it: an index or a slice past the end
    of a list is "array index out of bounds" (a missing field finds nothing and says nothing)."""
    from jsonpath_ng.jsonpath import Child, Index, Slice

    if not isinstance(path, Child):
        return list(path.find(datum))
    before = _found(path.left, datum)
    step = path.right
    for found in before:
        if isinstance(step, Index) and len(step.indices) == 1:
            _check_index(step.indices[0], found.value)
        elif isinstance(step, Slice):
            _check_slice(step.start, step.end, found.value)
    return [match for found in before for match in _found(step, found)]


def _check_index(index: int, value: Any) -> None:
    """kubectl's bounds check of ``[index]`` on a list (a negative index counts from the end)."""
    if isinstance(value, list):
        at = index + len(value) if index < 0 else index
        if not 0 <= at < len(value):
            raise _Missing(f"array index out of bounds: index {at}, length {len(value)}")


def _check_slice(start: int | None, end: int | None, value: Any) -> None:
    """kubectl's checks of ``[start:end]`` on a list (its evalArray): an empty slice passes, a start or an
    end past the list is out of bounds, a start after the end is refused."""
    if not isinstance(value, list):
        return
    length = len(value)
    first = 0 if start is None else start + length if start < 0 else start
    last = length if end is None else end + length if end < 0 or end == 0 and start is None else end
    if first == last:
        return
    if not 0 <= first < length:
        raise _Missing(f"array index out of bounds: index {first}, length {length}")
    if not 0 <= last <= length:
        raise _Missing(f"array index out of bounds: index {last - 1}, length {length}")
    if first > last:
        raise _Missing(f"starting index {first} is greater than ending index {last}")


def _body(parts: list[Part], start: int) -> tuple[list[Part], int]:
    """The parts between a range at ``start`` and its matching end, and the end's index."""
    depth = 0
    for j in range(start + 1, len(parts)):
        depth += {"range": 1, "end": -1}.get(parts[j][0], 0)
        if depth < 0:
            return parts[start + 1 : j], j
    raise InputError("jsonpath template: {range} without {end}")


def scalar(value: Any) -> str:
    """One value as kubectl prints it in a template or a column: objects and lists as compact JSON."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
