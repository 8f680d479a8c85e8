"""Human rendering of placements (rich tables), kept apart from the schedule command's logic."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from .render import table_text


def placement_table(placements: list[Any], wide: bool = False) -> str:
    """One row per pod (node and devices, or why it is pending); ``wide``: one row per device with its claim."""
    table = Table(title="Placement", show_lines=False)
    columns = ("pod", "node", "claim", "request", "driver", "pool", "device") if wide else ("pod", "node", "devices")
    for column in columns:
        table.add_column(column, overflow="fold")
    for p in placements:
        if p.node is None:
            table.add_row(p.label, "(pending)", p.reason, *([""] * (len(columns) - 3)))
            continue
        rows = [(c.name, r) for c in p.claims for r in (c.status.allocation.devices.results
                                                         if c.status and c.status.allocation else [])]
        if wide:
            for claim, r in rows or [("", None)]:
                table.add_row(p.label, p.node, claim, *((r.request, r.driver, r.pool, r.device) if r else [""] * 4))
        else:
            table.add_row(p.label, p.node, ", ".join(f"{r.request}={r.device}" for _, r in rows))
    return table_text(table)


def batch_summary_line(summary: Any) -> str:
    """The joint placement's summary, one line for stderr (stdout keeps the List)."""
    gangs = f", {summary.gangs_complete}/{summary.gangs} gangs complete" if summary.gangs else ""
    notes = "".join(f"\n  note: {n}" for n in summary.notes)
    return (f"batch: {summary.placed}/{summary.pods} pods placed ({summary.placed_jointly} jointly){gangs}; "
            f"{summary.pod_classes} pod classes, {summary.node_classes} node classes, {summary.configurations} "
            f"configurations, {summary.allocator_calls} allocator calls, {summary.nodes_verified} nodes verified; "
            f"{summary.seconds:.2f} s{notes}")
