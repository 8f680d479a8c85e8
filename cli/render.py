"""Human rendering of allocations (rich tables), kept apart from the commands' logic."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table


def allocation_table(claims: list[dict[str, Any]]) -> str:
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
    buffer = io.StringIO()
    Console(file=buffer, width=140, force_terminal=False).print(table)
    return buffer.getvalue()


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
