"""Human rendering of allocations (rich tables), kept apart from the commands' logic."""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from drasat.solver.comparison import Comparison, SideResult


def table_text(table: Table, encoding: str | None = None) -> str:
    """A rich table as text for the output, every column as wide as its widest cell (never cut or
    wrapped: a name must stay one piece to be copied); a console that cannot print box-drawing
    characters (cp1252, ascii) gets one drawn with ``+``, ``-`` and ``|``. ``encoding``: stdout's."""
    table.box = _box(encoding or getattr(sys.stdout, "encoding", None) or "utf-8")
    for column in table.columns:
        column.no_wrap = True
    buffer = io.StringIO()
    Console(file=buffer, width=table_width(table), force_terminal=False).print(table)
    return buffer.getvalue()


def table_width(table: Table) -> int:
    """Room for every column's widest cell, the borders and padding (rich shrinks columns to its width)."""
    widest = [max([len(str(column.header)), *(len(str(cell)) for cell in column.cells)], default=0)
              for column in table.columns]
    return max(sum(widest) + 3 * len(widest) + 1, len(str(table.title or "")))


def allocation_table(claims: list[dict[str, Any]], *, encoding: str | None = None) -> str:
    """One row per allocated device: claim, request, device, and what else the result carries."""
    table = Table(title="Allocation", show_lines=False)
    for column in ("claim", "request", "driver", "pool", "device", "details"):
        table.add_column(column)
    for claim in claims:
        name = claim["metadata"].get("name", "")
        if claim["metadata"].get("namespace"):
            name = f'{claim["metadata"]["namespace"]}/{name}'
        allocation = claim["status"]["allocation"]
        for result in allocation.get("devices", {}).get("results", []):
            table.add_row(name, result["request"], result["driver"], result["pool"], result["device"],
                          _details(result))
        selector = allocation.get("nodeSelector")
        if selector:
            table.add_row(name, "", "", "", "", f"node selector: {_selector(selector)}")
    return table_text(table, encoding=encoding)


def _box(encoding: str) -> box.Box:
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
        reqs = [f"{r['key']} {r['operator']} {','.join(r.get('values', []))}"
                for r in term.get("matchExpressions", []) + term.get("matchFields", [])]
        terms.append(" and ".join(reqs))
    return " or ".join(terms)


def comparison_table(comparison: Comparison) -> str:
    """Greedy and CP-SAT side by side: verdict, time, statistics, then the devices per request."""
    sides = (comparison.greedy, comparison.cp_sat)
    table = Table(title=f"greedy (Kubernetes) vs CP-SAT on node {comparison.node}", show_lines=False)
    table.add_column("")
    table.add_column("greedy (Kubernetes' first fit)")
    table.add_column(f"CP-SAT ({comparison.cp_sat.objective})")
    table.add_row("verdict", *(_verdict(side) for side in sides))
    table.add_row("wall time", *(f"{side.seconds * 1000:.1f} ms" for side in sides))
    table.add_row("search", *(_statistics(side.statistics) for side in sides))
    for claim in comparison.claims:
        requests = sorted(set(comparison.greedy.devices.get(claim, {})) | set(comparison.cp_sat.devices.get(claim, {})))
        for request in requests:
            table.add_row(f"{claim} / {request}",
                          *(", ".join(d.rsplit("/", 1)[-1] for d in side.devices.get(claim, {}).get(request, []))
                            or "-" for side in sides))
    verdict = "identical choices" if comparison.identical else "the choices differ:"
    return table_text(table) + "".join(f"{line}\n" for line in [verdict, *(f"  {d}" for d in comparison.differences)])


def _verdict(side: SideResult) -> str:
    return side.verdict if not side.message else f"{side.verdict}: {side.message}"


def _statistics(statistics: dict[str, Any]) -> str:
    parts = [f"{key} {value}" for key, value in statistics.items() if key != "notes"]
    return ", ".join(parts) or "-"
