"""``drasat pool-status`` as a kubectl table: one line per pool of every answered request."""

from __future__ import annotations

from typing import Any

from .tables import TextTable, table_text

COLUMNS = (
    ("request", True),
    ("driver", True),
    ("pool", False),
    ("node", True),
    ("slices", True),
    ("devices", False),
    ("allocated", False),
    ("available", False),
    ("unavailable", True),
    ("partitions", False),
    ("shareable", True),
    ("validation error", True),
)


def pools_table(answered: list[Any], *, wide: bool = False) -> str:
    """Every pool of every request in one table; PARTITIONS is ``TYPE=ALLOCATABLE/TOTAL`` per partition type
    (allocatable: the exact number that still fit together)."""
    table = TextTable(title="Pools")
    for header, only_wide in COLUMNS:
        table.add_column(header, wide=only_wide)
    for request in answered:
        status = request.status
        assert status is not None  # answer() always fills it
        for pool in status.pools:
            table.add_row(
                request.name,
                request.spec.driver,
                pool.pool_name,
                pool.node_name or "",
                *(
                    _number(v)
                    for v in (
                        pool.resource_slice_count,
                        pool.total_devices,
                        pool.allocated_devices,
                        pool.available_devices,
                        pool.unavailable_devices,
                    )
                ),
                ",".join(f"{p.type}={p.allocatable}/{p.total}" for p in pool.partition_summary),
                _shareable(pool.shareable_summary),
                pool.validation_error or "",
            )
    return table_text(table, wide=wide)


def _shareable(summary: Any) -> str:
    if summary is None:
        return ""
    text = f"{summary.fully_available_devices} free, {summary.partially_available_devices} partly used"
    return text + "".join(f"; {c.name} {c.available} of {c.total} left" for c in summary.capacity)


def _number(value: int | None) -> str:
    return "" if value is None else str(value)
