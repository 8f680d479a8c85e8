"""Tables as kubectl prints them: one line per row, whole cells, upper-case headers, wide-only columns."""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from .text import Rendered, echo, printable


@dataclass
class TextColumn:
    """One column of a :class:`TextTable`: its header, its cells top to bottom, and whether only ``-o wide``
    shows it (kubectl's column priority: what does not fit an 80-column terminal waits for wide)."""

    header: str
    cells: list[str] = field(default_factory=list)
    wide: bool = False


class TextTable:
    """A table of text cells, printed as kubectl prints one (see :func:`table_text`)."""

    def __init__(self, title: str = "", show_lines: bool = False) -> None:
        self.title = printable(title)  # a caption for the caller (kubectl's tables have none)
        self.show_lines = show_lines
        self.columns: list[TextColumn] = []

    def add_column(self, header: str, *, wide: bool = False, **_rich_options: Any) -> None:
        """A column on the right; ``wide``: shown by ``-o wide`` only."""
        self.columns.append(TextColumn(printable(header, cell=True), wide=wide))

    def add_row(self, *cells: str) -> None:
        """A row; missing cells are empty."""
        if len(cells) > len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for a table of {len(self.columns)} columns")
        for column, cell in zip(self.columns, (*cells, *[""] * (len(self.columns) - len(cells)))):
            column.cells.append(printable(cell, cell=True))  # names from the input: no control character


HEADERS: ContextVar[bool] = ContextVar("HEADERS", default=True)
"""Whether tables print their header row: ``--no-headers`` (set by the output options of the running command)."""


def table_text(
    table: TextTable | Any,
    encoding: str | None = None,
    *,
    terminal: bool | None = None,
    wide: bool = True,
    upper: bool = True,
    header_alone: bool = False,
) -> Rendered:
    """kubectl's table, the same on a terminal and through a pipe: an upper-case header row (none with
    ``--no-headers``), then one line per row, columns aligned by three spaces, nothing cut, folded or boxed —
    a name stays one piece for ``awk``, ``grep`` and copying, and a script sees what a person saw.
    ``wide`` False leaves out the columns only ``-o wide`` shows. ``encoding`` and ``terminal`` are accepted
    for older callers and change nothing; ``upper`` False keeps headers as written (custom-columns'). A table
    without rows is nothing at all, as kubectl prints no lone header (:func:`echo_table` says "No resources
    found" on stderr), unless ``header_alone`` (custom-columns', whose printer kubectl lets print it). The
    cells were made printable when added (:mod:`.text`)."""
    del encoding, terminal
    return Rendered(plain_table(table, wide=wide, headers=HEADERS.get(), upper=upper, header_alone=header_alone))


def plain_table(
    table: TextTable | Any, *, wide: bool = True, headers: bool = True, upper: bool = True, header_alone: bool = False
) -> str:
    """The rows of ``table`` (a :class:`TextTable`, or anything with ``columns`` of ``header`` and ``cells``,
    such as rich's ``Table``) in kubectl's plain form; headers upper-cased as kubectl's are; without rows,
    the header alone only if ``header_alone``."""
    shown = [c for c in table.columns if wide or not getattr(c, "wide", False)]
    columns = [[printable(str(cell), cell=True) for cell in column.cells] for column in shown]
    body = [list(row) for row in zip(*columns)]
    if not body and not header_alone:
        return ""
    titles = [printable(str(c.header), cell=True) for c in shown]
    rows = [[t.upper() for t in titles] if upper else titles, *body] if headers else body
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(shown))]
    return "".join("   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n" for row in rows)


def rows_table(columns: tuple[tuple[str, bool], ...], rows: Sequence[Sequence[str]], wide: bool) -> str:
    """A kubectl table of ``rows`` under ``columns`` (header, wide-only); nothing at all when there are no
    rows, as kubectl prints no lone header (it says "No resources found" on stderr)."""
    table = TextTable()
    for header, only_wide in columns:
        table.add_column(header, wide=only_wide)
    for row in rows:
        table.add_row(*row)
    return str(table_text(table, wide=wide))


TABLE_FORMS = ("table", "wide")
"""The ``-o`` forms kubectl calls human-readable: the only ones it says "No resources found" for."""


def no_resources(namespace: str | None = None) -> str:
    """kubectl get's words when it printed nothing: "No resources found in NS namespace." when it listed one
    namespace (drasat's ``-n NS``), else "No resources found" (cluster-scoped kinds, every namespace)."""
    return f"No resources found in {namespace} namespace." if namespace else "No resources found"


def echo_table(text: str, output: str, namespace: str | None = None) -> None:
    """A command's answer in ``output`` on stdout; a table form that came out empty (no rows, and so no lone
    header) prints nothing there and :func:`no_resources` on stderr, as ``kubectl get`` does — yaml and json
    print their empty List themselves."""
    if text:
        echo(text, nl=False)
    elif output in TABLE_FORMS:
        echo(no_resources(namespace), err=True)
