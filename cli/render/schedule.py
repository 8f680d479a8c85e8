"""Tables of placements (schedule) and of one by one beside batch (compare --schedule), kubectl's form."""

from __future__ import annotations

from typing import Any

from .tables import TextTable, table_text
from .text import rendered


def placement_table(placements: list[Any], wide: bool = False) -> str:
    """One row per pod: its node and devices, or ``<pending>`` (why is on stderr); ``wide``: one row per
    device with its claim, driver and pool, and the reason of a pending pod in a column of its own."""
    table = TextTable(title="Placement")
    columns = (
        ("pod", "node", "claim", "request", "driver", "pool", "device", "reason")
        if wide
        else ("pod", "node", "devices")
    )
    for column in columns:
        table.add_column(column)
    for p in placements:
        if p.node is None:
            table.add_row(p.label, PENDING, *([""] * (len(columns) - 3)), p.reason if wide else "")
            continue
        node = f"{p.node} (PreBind)" if getattr(p, "waiting", None) else p.node  # not bound until conditions hold
        rows = [
            (f"{c.namespace}/{c.name}", r)
            for c in p.claims
            for r in (c.status.allocation.devices.results if c.status and c.status.allocation else [])
        ]
        if wide:
            for claim, r in rows or [("", None)]:
                table.add_row(p.label, node, claim, *((r.request, r.driver, r.pool, r.device) if r else [""] * 4))
        else:
            table.add_row(p.label, node, ",".join(f"{r.request}={r.device}" for _, r in rows) or "<none>")
    return table_text(table)


PENDING = "<pending>"
"""The node of a pod left pending (kubectl prints ``<none>`` for a pod no node was chosen for; the word says
more, and the scheduler's reason is on stderr, or in ``-o wide``'s REASON column)."""


def batch_summary_line(summary: Any) -> str:
    """The joint placement's summary, one line for stderr (stdout keeps the List): pods placed, how far that
    is from the model's bound (or that it is proven the most), gangs, what the model counted, time."""
    gangs = f", {summary.gangs_complete}/{summary.gangs} gangs complete" if summary.gangs else ""
    notes = "".join(f"\n  note: {n}" for n in summary.notes)
    counts = ", ".join(
        f"{n} {one if n == 1 else many}"
        for n, one, many in (
            (summary.pod_classes, "pod class", "pod classes"),
            (summary.nodes_counted, "node counted", "nodes counted"),
            (summary.nodes_verified, "node verified", "nodes verified"),
        )
    )
    return (
        f"batch: {summary.placed}/{summary.pods} pods placed ({summary.placed_jointly} jointly: {standing(summary)})"
        f"{gangs}; {counts}; {summary.seconds:.2f} s{notes}"
    )


def standing(summary: Any, placed: int | None = None) -> str:
    """How the joint answer stands against the model's bound: "1,881 placed, proven optimal", "within N of the
    bound B", or that no bound is known (``placed``: the pods to compare with, default the jointly placed)."""
    placed = summary.placed_jointly if placed is None else placed
    if summary.proven:
        return f"{placed:,} placed, proven optimal"
    if summary.bound is None:
        return "no bound known"
    gap = summary.bound - placed
    return f"within {gap:,} of the bound {summary.bound:,}" if gap > 0 else f"at the bound {summary.bound:,}"


def _per_node(node_type: str, usage: Any) -> str:
    """A node type's legend: what each node of it has, and how many nodes are of it."""
    nodes = usage.largest_free[node_type].of_nodes
    return f"{node_type} per node ({nodes} node{'s' * (nodes != 1)})"


def schedule_comparison_table(comparison: Any) -> str:
    """One-by-one and batch side by side, then the pods whose outcome differs."""
    one, batch = comparison.one_by_one, comparison.batch
    table = TextTable(title=f"One by one vs joint placement ({one.objective})")
    for column in ("", "one-by-one", "batch"):
        table.add_column(column, overflow="fold")
    rows = [
        ("pods placed", f"{one.placed}/{one.pods}", f"{batch.placed}/{batch.pods}"),
        ("gangs complete", f"{one.gangs_complete}/{one.gangs}", f"{batch.gangs_complete}/{batch.gangs}"),
        ("devices touched", str(one.usage.devices_touched), str(batch.usage.devices_touched)),
        ("counter sets touched", str(one.usage.counter_sets_touched), str(batch.usage.counter_sets_touched)),
        ("whole devices free", str(one.usage.whole_devices_free), str(batch.usage.whole_devices_free)),
    ]
    types = list(one.usage.largest_free)
    for number, node_type in enumerate(types, 1):
        largest = one.usage.largest_free[node_type]
        rows.append(
            (
                f"{largest.label} (node type {number})" if len(types) > 1 else largest.label,
                str(largest),
                str(batch.usage.largest_free.get(node_type, "-")),
            )
        )
    rows.append(("joint model", "", standing(batch, batch.placed)))
    rows.append(("wall time", f"{one.seconds:.2f} s", f"{batch.seconds:.2f} s"))
    for row in rows:
        table.add_row(*row)
    legend = [
        f"node type{f' {n}' if len(types) > 1 else ''}: {_per_node(t, one.usage)}\n" for n, t in enumerate(types, 1)
    ]
    if comparison.differences:
        return rendered(
            table_text(table),
            *legend,
            "Pods placed differently:\n",
            *(f"  {line}\n" for line in comparison.differences),
        )
    return rendered(table_text(table), *legend, "Every pod has the same outcome.\n")
