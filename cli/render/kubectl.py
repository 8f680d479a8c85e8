"""Printing API objects the kubectl way: ``-o yaml|json|name|jsonpath=TEMPLATE|custom-columns=SPEC``.

Every command hands its objects here (solve and schedule their claims and pods, the reports their own
kinds) as a v1 ``List``; tables stay with each command. ``name`` prints ``resource.group/name`` per object
as ``kubectl get -o name`` does. ``custom-columns=NAME:.metadata.name,NODE:.spec.nodeName`` is a table of
one row per object, a JSONPath per column (kubectl's syntax, ``<none>`` where a path finds nothing);
``--no-headers`` leaves out the header row of it and of every table. ``jsonpath=`` takes kubectl's template syntax —
``{.items[*].metadata.name}``, ``{range .items[*]}{.metadata.name}{"\\n"}{end}`` —
whose expressions are JSONPath evaluated by ``jsonpath-ng``; the template around them
(literal text, ``{range}``/``{end}``, quoted strings) is kubectl's own small language,
read in :mod:`.jsonpath`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click
import yaml

from drasat.models.errors import InputError

from .jsonpath import compiled_text, expand_template, parse_template, scalar, values

F = TypeVar("F", bound=Callable[..., Any])

LIST_FORMS = ("yaml", "json", "name")
CUSTOM_COLUMNS = "custom-columns="


class OutputFormat(click.ParamType):
    """``yaml``, ``json``, ``name``, ``jsonpath=TEMPLATE``, ``custom-columns=SPEC``, or one of the command's
    table forms (``table``, ``wide``, ``text``)."""

    name = "format"

    def __init__(self, tables: tuple[str, ...]) -> None:
        self.tables = tables

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text in (*LIST_FORMS, *self.tables):
            return text
        if text.startswith("jsonpath="):
            try:
                parse_template(text.partition("=")[2])
            except InputError as exc:
                self.fail(str(exc), param, ctx)
            return text
        if text.startswith(CUSTOM_COLUMNS):
            try:
                _columns(text[len(CUSTOM_COLUMNS) :])
            except InputError as exc:
                self.fail(str(exc), param, ctx)
            return text
        choices = ", ".join([*self.tables, *LIST_FORMS, "jsonpath=TEMPLATE", "custom-columns=SPEC"])
        self.fail(f"{text!r} is not an output format: choose {choices}", param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        """The forms, for ``-o <TAB>`` (a template or spec is the user's to write after the ``=``)."""
        from click.shell_completion import CompletionItem

        forms = (*self.tables, *LIST_FORMS, "jsonpath=", CUSTOM_COLUMNS)
        return [CompletionItem(form) for form in forms if form.startswith(incomplete)]


def output_options(tables: tuple[str, ...], default: str, help: str) -> Callable[[F], F]:
    """``-o/--output`` (the command's table forms, then kubectl's object forms) and ``--no-headers``."""

    def decorate(function: F) -> F:
        function = click.option(
            "--no-headers",
            is_flag=True,
            expose_value=False,
            callback=_set_headers,
            help="Print tables (and custom-columns) without their header row.",
        )(function)
        return click.option(
            "-o",
            "--output",
            type=OutputFormat(tables),
            default=default,
            show_default=True,
            metavar="FORMAT",
            help=help + " Also name, jsonpath=TEMPLATE and custom-columns=SPEC (see below).",
        )(function)

    return decorate


def report_output_option(texts: tuple[str, ...], help: str) -> Callable[[F], F]:
    """``-o/--output`` of a command whose answer is one report (validate, explain, taint-impact): its text
    form(s), then ``yaml``, ``json`` (the report as data) and ``name`` (kind.group/NAME of what it is about)."""
    return click.option(
        "-o",
        "--output",
        type=click.Choice([*texts, *LIST_FORMS]),
        default=texts[0],
        show_default=True,
        help=help,
    )


def render_data(data: Any, output: str, names: list[dict[str, Any]]) -> str:
    """A report in ``output`` (yaml, json, or name: one line per object in ``names``, as :func:`resource_name`)."""
    return render_answer(Answer(_no_table, data, [], names), output)


@dataclass(frozen=True)
class Answer:
    """A command's answer in every form of ``-o``: ``table(wide)`` prints table and wide; ``document`` is what
    yaml, json and jsonpath print; ``rows`` the objects custom-columns prints a row each for (the document's
    items, or the document alone when it is one object); ``named`` the objects ``-o name`` lists — what the
    answer is about (compare names the claims compared, fit the nodes that take pods), as kubectl lists the
    rows of its table."""

    table: Callable[[bool], str]
    document: Any
    rows: list[dict[str, Any]]
    named: list[dict[str, Any]]


def report_answer(kind: str, name: str, data: dict[str, Any], table: Callable[[bool], str], named: list) -> Answer:
    """A one-report answer (fit, defrag, compare...): yaml/json print it as one object (:func:`report_object`),
    printed alone as ``kubectl get KIND NAME`` prints one object, and custom-columns is its one row."""
    item = report_object(kind, name, data)
    return Answer(table, item, [item], named)


def named_object(kind: str, label: str) -> dict[str, Any]:
    """What ``-o name`` needs of an object known by its label (``namespace/name`` or ``name``): kubectl's name
    form has no namespace (``pod/web-0``)."""
    return {"kind": kind, "metadata": {"name": label.rsplit("/", 1)[-1]}}


def render_answer(answer: Answer, output: str) -> str:
    """``answer`` in ``output``: a table form, or one of kubectl's object forms."""
    if output in ("table", "wide"):
        return answer.table(output == "wide")
    if output == "json":
        return json.dumps(answer.document, indent=2) + "\n"
    if output == "yaml":
        return yaml.safe_dump(answer.document, sort_keys=False)
    if output == "name":
        return "".join(f"{resource_name(item)}\n" for item in answer.named)
    if output.startswith(CUSTOM_COLUMNS):
        return custom_columns(answer.rows, output[len(CUSTOM_COLUMNS) :])
    return expand_template(output.partition("=")[2], answer.document)


def _no_table(_wide: bool) -> str:
    raise AssertionError("a report printed as data has no table form")  # pragma: no cover


def forms_epilog(
    objects: str,
    *,
    document: str = "",
    rows: str = "object",
    named: str = "object",
    example: tuple[str, str] = (".items[*].metadata.name", "NAME:.metadata.name,KIND:.kind"),
) -> str:
    """The epilog paragraph that teaches kubectl's output forms (kept out of the option's help: click would
    wrap ``custom-columns`` at its hyphen). ``objects``: what the List holds, e.g. "the allocated claims";
    ``document``: what yaml/json print when it is not a v1 List of them; ``rows``: what custom-columns prints
    a row per; ``named``: what -o name lists; ``example``: a JSONPath and a custom-columns spec that find something in this command's answer."""
    path, columns = example
    return f"""\b
Output forms (-o), as kubectl's:
  yaml, json            {document or "a v1 List of " + objects}
  name                  kind.group/NAME per {named}
  jsonpath=TEMPLATE     e.g. -o jsonpath='{{{path}}}'
  custom-columns=SPEC   HEADER:JSONPATH per column, one row per {rows}, e.g.
                        -o custom-columns={columns}
  --no-headers          tables and custom-columns without their header row
"""


def report_epilog(kind: str, named: str, example: tuple[str, str]) -> str:
    """:func:`forms_epilog` for a command whose answer is one report object (see :func:`report_answer`) under a
    headline (see ``capacity.print_answer``)."""
    forms = forms_epilog("", document=f"one {kind} object", rows="answer", named=named, example=example)
    return forms + "                        (the headline then goes to stderr, as in yaml, json)\n"


def _set_headers(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    from .tables import HEADERS

    HEADERS.set(not value)


def render_list(items: list[dict[str, Any]], output: str, *, single: bool = False) -> str:
    """The objects as kubectl prints a List in ``output`` (one of :data:`LIST_FORMS`, jsonpath=...,
    custom-columns=...). ``single``: one object asked for by name prints alone, not in a List, as
    ``kubectl get KIND NAME`` does."""
    return render_answer(Answer(_no_table, as_list(items, single=single), items, items), output)


def as_list(items: list[dict[str, Any]], *, single: bool = False) -> dict[str, Any]:
    """The items as a v1 List, as ``kubectl get`` prints several objects (``single``: one object alone)."""
    return items[0] if single and len(items) == 1 else {"apiVersion": "v1", "kind": "List", "items": items}


REPORT_API_VERSION = "drasat/v1alpha1"
"""The apiVersion of drasat's report objects (no API server serves them: they are drasat's answers, shaped
as kubectl's objects so that ``-o name``, ``jsonpath`` and ``custom-columns`` read them as any other)."""


def report_object(kind: str, name: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as a kubectl-like object: apiVersion, kind, metadata.name, then its own fields."""
    return {"apiVersion": REPORT_API_VERSION, "kind": kind, "metadata": {"name": name}, **data}


_GROUPS = {
    kind: "resource.k8s.io"
    for kind in (
        "ResourceClaim",
        "ResourceClaimTemplate",
        "ResourceSlice",
        "DeviceClass",
        "DeviceTaintRule",
        "ResourcePoolStatusRequest",
    )
}
"""The API group of kinds an object may come without apiVersion for (as kubectl finds it by the kind)."""


def resource_name(item: dict[str, Any]) -> str:
    """``kind.group/name`` as ``kubectl get -o name`` spells it: pod/web-0, resourceclaim.resource.k8s.io/gpu."""
    kind = str(item.get("kind", ""))
    api_version = str(item.get("apiVersion", ""))
    group = api_version.split("/")[0] if "/" in api_version else _GROUPS.get(kind, "")
    kind = kind.lower()
    return f"{kind}{'.' + group if group else ''}/{(item.get('metadata') or {}).get('name', '')}"


def custom_columns(items: list[dict[str, Any]], spec: str) -> str:
    """kubectl's ``-o custom-columns``: headers as written, a value per path and object (several joined by
    commas, ``<none>`` when the path finds nothing), columns aligned as every drasat table."""
    from .tables import TextTable, table_text

    table = TextTable()
    columns = _columns(spec)
    for header, _ in columns:
        table.add_column(header)
    for item in items:
        table.add_row(*(",".join(scalar(v) for v in values(path, item)) or "<none>" for _, path in columns))
    return table_text(table, upper=False, header_alone=True)


def _columns(spec: str) -> list[tuple[str, str]]:
    """``HEADER:PATH,...`` as kubectl reads it: each part split at its first colon; a path may be written
    ``.metadata.name``, ``{.metadata.name}`` or ``metadata.name``."""
    columns = []
    for part in spec.split(","):
        header, colon, path = part.partition(":")
        if not colon or not path or not header:
            raise InputError(
                f"custom-columns: unexpected spec {part!r}, expected <header>:<json-path-expr>, "
                "e.g. custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"
            )
        path = path.strip()
        if path.startswith("{") and path.endswith("}"):
            path = path[1:-1]
        if not path.startswith((".", "[")):
            path = "." + path
        try:
            columns.append((header, compiled_text(path)))
        except InputError as exc:
            raise InputError(f"custom-columns: column {header}: {exc}") from None
    return columns
