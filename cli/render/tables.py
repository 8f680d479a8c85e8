"""Human rendering of allocations (tables), kept apart from the commands' logic."""

from __future__ import annotations

import io
import re
import shutil
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .text import Rendered, printable, rendered

if TYPE_CHECKING:
    from rich.box import Box
    from rich.table import Table

    from drasat.solver.report.comparison import Comparison, SideResult


@dataclass
class TextColumn:
    """One column of a :class:`TextTable`: its header and its cells, top to bottom."""

    header: str
    cells: list[str] = field(default_factory=list)


class TextTable:
    """A table of text cells, built with the part of rich's ``Table`` interface drasat uses.

    Piped, a table prints in kubectl's plain form, which needs nothing of rich; rich (about a
    twentieth of a second of start-up) is imported only when a terminal shows the table.
    """

    def __init__(self, title: str = "", show_lines: bool = False) -> None:
        self.title = printable(title)
        self.show_lines = show_lines
        self.columns: list[TextColumn] = []

    def add_column(self, header: str, **_rich_options: Any) -> None:
        """A column on the right (rich's options, such as ``overflow``, are set at printing)."""
        self.columns.append(TextColumn(printable(header, cell=True)))

    def add_row(self, *cells: str) -> None:
        """A row; missing cells are empty, as in rich."""
        if len(cells) > len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for a table of {len(self.columns)} columns")
        for column, cell in zip(self.columns, (*cells, *[""] * (len(self.columns) - len(cells)))):
            column.cells.append(printable(cell, cell=True))  # names from the input: no control character

    def rich(self) -> Table:
        """The same table as rich's, to draw on a terminal."""
        from rich.table import Table
        from rich.text import Text

        title = Text(self.title, style="table.title") if self.title else None  # Text: no markup
        table = Table(title=title, show_lines=self.show_lines)
        for column in self.columns:
            table.add_column(Text(column.header))
        for row in zip(*(column.cells for column in self.columns)):
            table.add_row(*(Text(cell) for cell in row))  # Text: a "[red]" in a name is no markup
        return table


def table_text(table: TextTable | Table, encoding: str | None = None, *, terminal: bool | None = None) -> Rendered:
    """A table for the output. Piped (the default off a terminal), kubectl's plain form: upper-case
    headers, columns aligned by spaces, nothing cut or wrapped — a name must stay one piece for
    ``awk``, ``grep`` and copying. On a terminal: rich's boxes, a bold header, and the terminal's width
    (cells fold rather than lose characters); a console that cannot print box-drawing characters
    (cp1252, ascii) gets boxes drawn with ``+``, ``-`` and ``|``. ``encoding``: stdout's. The cells were made
    printable when added (:mod:`.text`), so the result is :class:`~.text.Rendered`: printed as it is."""
    if terminal is None:
        terminal = _is_terminal(sys.stdout)
    if not terminal:
        return Rendered(plain_table(table))
    from rich.console import Console

    drawn = table.rich() if isinstance(table, TextTable) else table
    drawn.box = _box(encoding or getattr(sys.stdout, "encoding", None) or "utf-8")
    drawn.header_style = "bold"
    for column in drawn.columns:
        column.overflow = "fold"
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=shutil.get_terminal_size().columns).print(drawn)
    return Rendered(buffer.getvalue())


def plain_table(table: TextTable | Table) -> str:
    """kubectl's table: an upper-case header row, then the rows, columns three spaces apart, no title.
    A header that names something in its own spelling (capitals, parentheses) is kept as written."""
    headers = [_header(str(column.header)) for column in table.columns]
    columns = [[printable(str(cell), cell=True) for cell in column.cells] for column in table.columns]
    rows = [headers, *zip(*columns)] if columns else [headers]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    return "".join("   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n" for row in rows)


def _header(text: str) -> str:
    return text.upper() if re.fullmatch(r"[a-z0-9 /()-]*", text) else text


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def allocation_table(claims: list[dict[str, Any]], *, encoding: str | None = None, wide: bool = False) -> str:
    """One row per allocated device: claim, request, device, and what else the result carries
    (``wide``: each of those in a column of its own, share IDs whole, and the claim's node selector)."""
    table = TextTable(title="Allocation", show_lines=False)
    for column in ("claim", "request", "driver", "pool", "device", *(WIDE if wide else ("details",))):
        table.add_column(column)
    for claim in claims:
        name = claim["metadata"].get("name", "")
        if claim["metadata"].get("namespace"):
            name = f"{claim['metadata']['namespace']}/{name}"
        allocation = claim["status"]["allocation"]
        selector = _selector(allocation["nodeSelector"]) if allocation.get("nodeSelector") else ""
        for result in allocation.get("devices", {}).get("results", []):
            table.add_row(
                name,
                result["request"],
                result["driver"],
                result["pool"],
                result["device"],
                *(_wide(result, selector) if wide else (_details(result),)),
            )
        if selector and not wide:
            table.add_row(name, "", "", "", "", f"node selector: {selector}")
    return table_text(table, encoding=encoding)


WIDE = ("admin", "share id", "consumed", "binding conditions", "tolerations", "node selector")


def _wide(result: dict[str, Any], selector: str) -> tuple[str, ...]:
    consumed = ",".join(f"{k}={v}" for k, v in (result.get("consumedCapacity") or {}).items())
    tolerations = ",".join(f"{t.get('key', '')}:{t.get('effect', '')}" for t in result.get("tolerations") or [])
    return (
        "true" if result.get("adminAccess") else "",
        result.get("shareID") or "",
        consumed,
        ",".join(result.get("bindingConditions") or []),
        tolerations,
        selector,
    )


def _box(encoding: str) -> Box:
    from rich import box

    try:
        "┏━┳┓┃┡╇┩└┴┘│─".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return box.ASCII
    return box.HEAVY_HEAD


def _details(result: dict[str, Any]) -> str:
    parts = []
    if result.get("adminAccess"):
        parts.append("admin access")
    if result.get("shareID"):
        parts.append(f"share {result['shareID'][:8]}")
    if result.get("consumedCapacity"):
        parts.append("consumes " + ", ".join(f"{k}={v}" for k, v in result["consumedCapacity"].items()))
    if result.get("bindingConditions"):
        parts.append("binding conditions " + ", ".join(result["bindingConditions"]))
    return "; ".join(parts)


def _selector(selector: dict[str, Any]) -> str:
    terms = []
    for term in selector.get("nodeSelectorTerms", []):
        reqs = [
            f"{r['key']} {r['operator']} {','.join(r.get('values', []))}"
            for r in term.get("matchExpressions", []) + term.get("matchFields", [])
        ]
        terms.append(" and ".join(reqs))
    return " or ".join(terms)


def comparison_table(comparison: Comparison) -> str:
    """Greedy and CP-SAT side by side: verdict, time, statistics, then the devices per request."""
    sides = (comparison.greedy, comparison.cp_sat)
    table = TextTable(title=f"greedy (Kubernetes) vs CP-SAT on node {comparison.node}", show_lines=False)
    table.add_column("")
    table.add_column("greedy (Kubernetes' first fit)")
    table.add_column(f"CP-SAT ({comparison.cp_sat.objective})")
    table.add_row("node", comparison.node, comparison.node)  # the plain form has no title
    table.add_row("verdict", *(_verdict(side) for side in sides))
    table.add_row("wall time", *(f"{side.seconds * 1000:.1f} ms" for side in sides))
    table.add_row("search", *(_statistics(side.statistics) for side in sides))
    for claim in comparison.claims:
        requests = sorted(set(comparison.greedy.devices.get(claim, {})) | set(comparison.cp_sat.devices.get(claim, {})))
        for request in requests:
            table.add_row(
                f"{claim} / {request}",
                *(
                    ", ".join(d.rsplit("/", 1)[-1] for d in side.devices.get(claim, {}).get(request, [])) or "-"
                    for side in sides
                ),
            )
    verdict = "identical choices" if comparison.identical else "the choices differ:"
    return rendered(
        table_text(table), *(f"{line}\n" for line in [verdict, *(f"  {d}" for d in comparison.differences)])
    )


def _verdict(side: SideResult) -> str:
    return side.verdict if not side.message else f"{side.verdict}: {side.message}"


def _statistics(statistics: dict[str, Any]) -> str:
    parts = [f"{key} {value}" for key, value in statistics.items() if key != "notes"]
    return ", ".join(parts) or "-"
