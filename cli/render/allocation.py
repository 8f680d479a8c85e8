"""The tables of ``drasat solve`` (one line per device allocated) and ``drasat compare`` (greedy beside CP-SAT).

The default columns are what fits an 80-column terminal (claim, request, device); ``-o wide`` adds the
driver, the pool and everything else a result carries, each in a column of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .tables import TextTable, table_text
from .text import rendered

if TYPE_CHECKING:
    from drasat.solver.report.comparison import Comparison, SideResult

WIDE = ("admin", "share id", "consumed", "binding conditions", "tolerations", "node selector")


def allocation_table(claims: list[dict[str, Any]], *, encoding: str | None = None, wide: bool = False) -> str:
    """One row per allocated device: claim, request, device (``wide``: driver, pool, admin access, share ID,
    consumed capacity, binding conditions, tolerations and the claim's node selector too)."""
    table = TextTable(title="Allocation")
    for column in ("claim", "request"):
        table.add_column(column)
    table.add_column("driver", wide=True)
    table.add_column("pool", wide=True)
    table.add_column("device")
    for column in WIDE:
        table.add_column(column, wide=True)
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
                *_wide(result, selector),
            )
    return table_text(table, encoding=encoding, wide=wide)


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


def _selector(selector: dict[str, Any]) -> str:
    terms = []
    for term in selector.get("nodeSelectorTerms", []):
        reqs = [
            f"{r['key']} {r['operator']} {','.join(r.get('values', []))}"
            for r in term.get("matchExpressions", []) + term.get("matchFields", [])
        ]
        terms.append(" and ".join(reqs))
    return " or ".join(terms)


def comparison_table(comparison: Comparison, *, wide: bool = False) -> str:
    """Greedy and CP-SAT side by side (node, objective, verdict, time; ``wide``: the search statistics),
    then a table of the devices each chose per claim and request, then whether the choices are the same."""
    sides = (comparison.greedy, comparison.cp_sat)
    summary = TextTable(title=f"greedy (Kubernetes) vs CP-SAT on node {comparison.node}")
    for column in ("", "greedy", "cp-sat"):
        summary.add_column(column)
    summary.add_row("node", comparison.node, comparison.node)
    summary.add_row("objective", "first-fit", str(comparison.cp_sat.objective))
    summary.add_row("verdict", *(_verdict(side) for side in sides))
    summary.add_row("wall time", *(f"{side.seconds * 1000:.1f} ms" for side in sides))
    if wide:
        summary.add_row("search", *(_statistics(side.statistics) for side in sides))
    devices = TextTable(title="Devices")
    for column in ("claim", "request", "greedy", "cp-sat"):
        devices.add_column(column)
    for claim in comparison.claims:
        requests = sorted(set(comparison.greedy.devices.get(claim, {})) | set(comparison.cp_sat.devices.get(claim, {})))
        for request in requests:
            devices.add_row(
                claim,
                request,
                *(
                    ",".join(d.rsplit("/", 1)[-1] for d in side.devices.get(claim, {}).get(request, [])) or "-"
                    for side in sides
                ),
            )
    verdict = "identical choices" if comparison.identical else "the choices differ:"
    return rendered(
        table_text(summary),
        "\n",
        table_text(devices),
        *(f"{line}\n" for line in [verdict, *(f"  {d}" for d in comparison.differences)]),
    )


def _verdict(side: SideResult) -> str:
    return side.verdict if not side.message else f"{side.verdict}: {side.message}"


def _statistics(statistics: dict[str, Any]) -> str:
    parts = [f"{key} {value}" for key, value in statistics.items() if key != "notes"]
    return ", ".join(parts) or "-"
