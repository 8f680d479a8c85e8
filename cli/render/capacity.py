"""Human and machine rendering of the capacity commands' answers (fit, scale-up), apart from their logic."""

from __future__ import annotations

import json
from typing import Any

import yaml

from .tables import TextTable, table_text


def report_text(data: dict[str, Any], output: str) -> str:
    """A report's data as YAML or JSON (the forms tools read)."""
    if output == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False)


def fit_headline(result: Any) -> str:
    """One line: how many copies fit, of how many asked, and whether that is proven the most."""
    copies = f"{result.copies} cop{'y' if result.copies == 1 else 'ies'}"
    unit = "" if result.pods_per_copy == 1 else f" ({result.pods_per_copy} pods each)"
    asked = f" of {result.wanted} asked" if result.wanted is not None else ""
    if result.proven:
        how = "proven the most" if result.wanted is None or result.copies < result.wanted else "all asked for"
    elif result.bound is not None:
        how = f"not proven: CP-SAT's bound is {result.bound}"
    else:
        how = "not proven (no bound for the whole cluster)"
    return f"fit: {copies}{unit} of {result.workload} fit{asked}; {how}"


def fit_table(result: Any) -> str:
    """One row per node that takes pods of the workload: its pods, per pod set, and their devices."""
    table = TextTable()
    for column in ("node", "pods", "pod sets", "devices"):
        table.add_column(column, overflow="fold")
    devices: dict[str, list[str]] = {}
    for pod in result.pods:
        devices.setdefault(pod.node, []).extend(pod.devices)
    for node, sets in sorted(result.nodes.items()):
        text = ", ".join(f"{name}={n}" for name, n in sets.items())
        table.add_row(node, str(sum(sets.values())), text, ", ".join(devices.get(node, [])))
    return str(table_text(table))
