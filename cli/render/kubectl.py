"""Printing API objects the kubectl way: ``-o yaml|json|name|jsonpath=TEMPLATE``.

Commands that print objects (solve, schedule) build a v1 ``List`` and hand it here;
tables stay with each command. ``name`` prints ``resource.group/name`` per object as
``kubectl get -o name`` does. ``jsonpath=`` takes kubectl's template syntax —
``{.items[*].metadata.name}``, ``{range .items[*]}{.metadata.name}{"\\n"}{end}`` —
whose expressions are JSONPath evaluated by ``jsonpath-ng``; the template around them
(literal text, ``{range}``/``{end}``, quoted strings) is kubectl's own small language,
read here.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import click
import yaml

from drasat.models.errors import InputError

LIST_FORMS = ("yaml", "json", "name")
_PLURAL = {"ResourceClaim": "resourceclaim.resource.k8s.io", "Pod": "pod"}
_TOKEN = re.compile(r"""\{\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^{}]*))\s*\}""")


class OutputFormat(click.ParamType):
    """``yaml``, ``json``, ``name``, ``jsonpath=TEMPLATE``, or one of the command's table forms."""

    name = "format"

    def __init__(self, tables: tuple[str, ...]) -> None:
        self.tables = tables

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text in (*LIST_FORMS, *self.tables):
            return text
        if text.startswith("jsonpath="):
            try:
                _parse(text.partition("=")[2])
            except InputError as exc:
                self.fail(str(exc), param, ctx)
            return text
        choices = ", ".join([*LIST_FORMS, *self.tables, "jsonpath=TEMPLATE"])
        self.fail(f"{text!r} is not an output format: choose {choices}", param, ctx)


def render_list(items: list[dict[str, Any]], output: str) -> str:
    """The objects as kubectl prints a List in ``output`` (one of :data:`LIST_FORMS` or jsonpath=...)."""
    listing = {"apiVersion": "v1", "kind": "List", "items": items}
    if output == "json":
        return json.dumps(listing, indent=2) + "\n"
    if output == "yaml":
        return yaml.safe_dump(listing, sort_keys=False)
    if output == "name":
        return "".join(
            f"{_PLURAL.get(i.get('kind', ''), str(i.get('kind', '')).lower())}/"
            f"{i.get('metadata', {}).get('name', '')}\n"
            for i in items
        )
    return _expand(_parse(output.partition("=")[2]), listing)


Part = tuple[str, str]  # ("text", literal) | ("path", jsonpath) | ("range", jsonpath) | ("end", "")


def _parse(template: str) -> list[Part]:
    """kubectl's template: literal text, {"quoted"}, {expression}, {range expression} ... {end}."""
    parts: list[Part] = []
    at = 0
    for match in _TOKEN.finditer(template):
        parts.append(("text", template[at : match.start()]))
        double, single, expression = match.groups()
        if double is not None or single is not None:
            literal = double if double is not None else single.replace("\\'", "'").replace('"', '\\"')
            try:
                parts.append(("text", json.loads(f'"{literal}"', strict=False)))
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"jsonpath template {template!r}: the quoted text {match.group(0)} is not valid ({exc.msg})"
                ) from None
        elif expression.strip() == "end":
            parts.append(("end", ""))
        elif expression.strip().startswith("range "):
            parts.append(("range", _compiled_text(expression.strip()[6:])))
        else:
            parts.append(("path", _compiled_text(expression)))
        at = match.end()
    parts.append(("text", template[at:]))
    if sum(k == "range" for k, _ in parts) != sum(k == "end" for k, _ in parts):
        raise InputError(f"jsonpath template {template!r}: every {{range}} needs an {{end}}")
    if not any(k == "path" or k == "range" for k, _ in parts):
        raise InputError(f"jsonpath template {template!r} has no {{expression}}, e.g. {{.items[*].metadata.name}}")
    return [p for p in parts if p != ("text", "")]


def _compiled_text(expression: str) -> str:
    """A kubectl expression as jsonpath-ng reads it ('.items[*]' -> '$.items[*]'), checked now."""
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError

    text = expression.strip()
    path = "$" + text if text.startswith((".", "[")) else text or "$"
    try:
        _parsed(path)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # noqa: BLE001  (ply raises plain Exception)
        raise InputError(f"jsonpath expression {expression!r} is not valid: {exc}") from None
    return path


def _values(path: str, data: Any) -> list[Any]:
    return [match.value for match in _parsed(path).find(data)]


@functools.lru_cache(maxsize=64)
def _parsed(path: str) -> Any:
    """A JSONPath parsed once, however many items a {range} applies it to."""
    from jsonpath_ng.ext import parse

    return parse(path)


def _expand(parts: list[Part], data: Any) -> str:
    """Text for ``parts`` against ``data``: expressions print their values joined by spaces (as kubectl)."""
    out: list[str] = []
    i = 0
    while i < len(parts):
        kind, value = parts[i]
        if kind == "text":
            out.append(value)
        elif kind == "path":
            out.append(" ".join(_scalar(v) for v in _values(value, data)))
        elif kind == "range":
            body, i = _body(parts, i)
            out.extend(_expand(body, item) for item in _values(value, data))
        i += 1
    return "".join(out)


def _body(parts: list[Part], start: int) -> tuple[list[Part], int]:
    """The parts between a range at ``start`` and its matching end, and the end's index."""
    depth = 0
    for j in range(start + 1, len(parts)):
        depth += {"range": 1, "end": -1}.get(parts[j][0], 0)
        if depth < 0:
            return parts[start + 1 : j], j
    raise InputError("jsonpath template: {range} without {end}")


def _scalar(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
