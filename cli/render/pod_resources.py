"""``drasat podresources`` as a kubectl table: one row per container (and one for the pod's own resources).

The default columns (pod, container, CPUs, memory per NUMA node) fit an 80-column terminal; the devices,
claims and drivers, lists that grow with what a container holds, wait for ``-o wide``.
"""

from __future__ import annotations

from typing import Any

from .tables import rows_table

COLUMNS = (
    ("pod", False),
    ("container", False),
    ("cpus", False),
    ("memory", False),
    ("devices", True),
    ("claims", True),
    ("drivers", True),
)


def pod_resources_table(report: list[dict[str, Any]], wide: bool) -> str:
    """The rows of the PodResources report (the proto's field names); nothing when it has no pod."""
    from drasat.solver.report.pod_resources import cpu_ranges

    rows = []
    for pod in report:
        who = f"{pod['namespace']}/{pod['name']}"
        if pod.get("cpu_ids") or pod.get("memory"):
            rows.append((who, "(pod)", cpu_ranges(pod.get("cpu_ids", [])) or "-", _memory_text(pod), "-", "-", "-"))
        for c in pod["containers"]:
            dynamic = c.get("dynamic_resources", [])
            results = [r for d in dynamic for r in d["claim_resources"]]
            rows.append(
                (
                    who,
                    c["name"],
                    cpu_ranges(c.get("cpu_ids", [])) or "shared",
                    _memory_text(c) or "-",
                    ",".join(f"{r['pool_name']}/{r['device_name']}" for r in results) or "-",
                    ",".join(d["claim_name"] for d in dynamic) or "-",
                    ",".join(sorted({r["driver_name"] for r in results})) or "-",
                )
            )
    return rows_table(COLUMNS, rows, wide)


def _memory_text(entry: dict[str, Any]) -> str:
    from drasat.models.quantity import BINARY_SI, Quantity

    parts = [f"{Quantity(m['size'], BINARY_SI)}@NUMA{m['topology']['nodes'][0]['ID']}" for m in entry.get("memory", [])]
    return ",".join(parts)
