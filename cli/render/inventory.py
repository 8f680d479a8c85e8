"""``drasat inventory`` as kubectl would print it: a table of devices, one of counters, and per node the
largest request of each partition type that still fits; or a v1 List of one NodeInventory per node.

The device table's default columns (node, device, state, type, claim) fit an 80-column terminal;
``-o wide`` adds the driver, the pool, the reason of the state, taints and counter sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drasat.models.quantity import Quantity

from .tables import TextTable, table_text
from .text import rendered


def amount(value: Quantity) -> str:
    return str(value)


def detail(device: Any) -> str:
    """Why the device is in its state, in a few words."""
    if device.state == "shared":
        left = ", ".join(f"{k} {amount(v)} left" for k, v in device.capacity_left.items())
        n = device.shares
        return f"{n} share{'s' if n != 1 else ''}: {', '.join(device.claims)}" + (f"; {left}" if left else "")
    if device.state == "allocated":
        return ", ".join(device.claims)
    if device.state == "tainted":
        return ", ".join(device.taints)
    return device.reason


def inventory_tables(reports: Sequence[Any], *, wide: bool = False) -> str:
    """The devices of every node in one table, then the counters, then each node's fragmentation line."""
    devices = TextTable(title="Devices")
    for header, only_wide in DEVICE_COLUMNS:
        devices.add_column(header, wide=only_wide)
    for report in reports:
        for d in report.devices:
            devices.add_row(
                report.node,
                d.driver,
                d.pool,
                d.name,
                d.state,
                d.partition_type or "",
                ",".join(d.claims),
                detail(d) if d.state not in ("allocated", "free") else "",
                ",".join(d.taints),
                ",".join(d.counter_sets),
            )
    parts: list[str] = [table_text(devices, wide=wide)]
    if not parts[0]:  # no device: no lone headers (the command says "No resources found")
        return ""
    counters = [(r.node, c) for r in reports for c in r.counters]
    if counters:
        table = TextTable(title="Counters")
        for header, only_wide in COUNTER_COLUMNS:
            table.add_column(header, wide=only_wide)
        for node, c in counters:
            table.add_row(
                node, c.driver, c.pool, c.counter_set, c.counter, amount(c.used), amount(c.left), amount(c.capacity)
            )
        parts += ["\n", table_text(table, wide=wide)]
    return rendered(*parts, "\n", fit_table(reports))


def fit_table(reports: Sequence[Any]) -> str:
    """Per node and driver: the largest request of each partition type that still fits, and how many whole
    devices (without a partition type) can still be allocated together. A driver whose devices on the node
    have no partition type fits at most its free whole devices: LARGEST FIT says ``whole×N`` (``<none>``
    only when nothing fits), never ``<none>`` beside four free GPUs."""
    table = TextTable(title="Largest request that still fits")
    for header in ("node", "driver", "largest fit", "free whole"):
        table.add_column(header)
    for report in reports:
        drivers = sorted(
            {d for d, _ in report.largest_fit} | set(report.free_whole) | {d.driver for d in report.devices}
        )
        for driver in drivers:
            whole = report.free_whole.get(driver, 0)
            fits = ",".join(f"{kind}×{n}" for (d, kind), n in sorted(report.largest_fit.items()) if d == driver)
            table.add_row(report.node, driver, fits or (f"whole×{whole}" if whole else "<none>"), str(whole))
        if not drivers:
            table.add_row(report.node, "<none>", "<none>", "0")
    return table_text(table)


DEVICE_COLUMNS = (
    ("node", False),
    ("driver", True),
    ("pool", True),
    ("device", False),
    ("state", False),
    ("type", False),
    ("claim", False),
    ("reason", True),
    ("taints", True),
    ("counter sets", True),
)
COUNTER_COLUMNS = (
    ("node", False),
    ("driver", True),
    ("pool", True),
    ("counter set", False),
    ("counter", False),
    ("used", False),
    ("left", False),
    ("capacity", False),
)


def inventory_item(report: Any) -> dict[str, Any]:
    """A node report as a kubectl-like object (kind NodeInventory, metadata.name the node), for -o json|yaml|
    name|jsonpath|custom-columns."""
    from .kubectl import report_object

    return report_object("NodeInventory", report.node, as_data(report))


def as_data(report: Any) -> dict[str, Any]:
    """A node report as plain JSON values."""
    from drasat.solver.report.device_states import fragmentation_line

    return {
        "node": report.node,
        "devices": [
            {
                "driver": d.driver,
                "pool": d.pool,
                "name": d.name,
                "state": d.state,
                "claims": d.claims,
                "taints": d.taints,
                "reason": d.reason,
                "partitionType": d.partition_type,
                "counterSets": d.counter_sets,
                **({"shares": d.shares} if d.state == "shared" else {}),
                "capacityLeft": {k: amount(v) for k, v in d.capacity_left.items()},
            }
            for d in report.devices
        ],
        "counters": [
            {
                "driver": c.driver,
                "pool": c.pool,
                "counterSet": c.counter_set,
                "counter": c.counter,
                "capacity": amount(c.capacity),
                "used": amount(c.used),
                "left": amount(c.left),
            }
            for c in report.counters
        ],
        "largestFit": [
            {"driver": driver, "partitionType": kind, "devices": n}
            for (driver, kind), n in sorted(report.largest_fit.items())
        ],
        "freeWholeDevices": dict(sorted(report.free_whole.items())),
        "fragmentation": fragmentation_line(report),
    }
