"""``drasat inventory``: every device per node and pool with its state, counters used and left, fragmentation."""

from __future__ import annotations

from typing import Any

import click

from drasat.cli.inputs import CLUSTER_SCOPED, in_namespace_only, input_options, namespace_options_with, read_inputs
from drasat.cli.progress import Bar
from drasat.cli.render.tables import TextTable, table_text
from drasat.cli.render.text import echo, rendered
from drasat.cli.reporting import dump, exits_on_error
from drasat.models.quantity import Quantity

EPILOG = """\b
Device states: free; allocated (to which claim); shared (a device that allows
multiple allocations, with its shares, one per allocation result, and the capacity
left, never below zero); tainted (NoSchedule
or NoExecute, its own taint or a DeviceTaintRule's); blocked (free, but the shared
counters it needs are used up, or compatibility groups exclude it); incomplete (its
pool is missing slices). Each node ends with a fragmentation line: the largest
request of each partition type that still fits, computed exactly.

\b
Exit status: 0 printed (or the page written); 2 invalid input.

\b
Examples:
  drasat inventory cluster/
  drasat inventory --node worker-1 -o wide cluster/
  drasat inventory --html map.html cluster/     one self-contained page: open it in a browser
"""


@click.command(epilog=EPILOG)
@input_options
@namespace_options_with(CLUSTER_SCOPED)
@click.option("--node", metavar="NAME", help="Show only this node.")
@click.option(
    "--default-partition-type-attribute",
    "default_attribute",
    metavar="ATTRIBUTE",
    help="Partition type attribute for slices that declare no partitionTypeAttribute.",
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "wide", "json"]),
    default="table",
    show_default=True,
    help="table: per node; wide: with taints and counter sets per device; json: the data.",
)
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Write the allocation map, one self-contained HTML page, to FILE instead (- for stdout; the folder "
    "must exist).",
)
@exits_on_error
def inventory(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...],
    namespace: str | None,
    all_namespaces: bool,
    node: str | None,
    default_attribute: str | None,
    output: str,
    html_file: str | None,
) -> None:
    """Show every DRA device per node: free, allocated, shared, tainted or blocked by counters.

    FILE is a YAML or JSON file, a directory (read recursively) or - for stdin, holding
    ResourceSlices, ResourceClaims (allocated ones hold devices) and DeviceTaintRules.
    With no FILE, or with --kubeconfig/--context, the live cluster is read (read-only).
    """
    from drasat.models.live import Listed
    from drasat.models.resource import DeviceTaintRule, ResourceClaim, ResourceSlice
    from drasat.solver.report.device_states import node_reports
    from drasat.solver.report.pool_status import PoolInputs
    from drasat.solver.report.pool_usage import refuse_bad_taints

    in_namespace_only([], namespace, all_namespaces)  # -n and -A together are refused, as everywhere
    needs = {Listed.RESOURCE_SLICES, Listed.RESOURCE_CLAIMS, Listed.DEVICE_TAINT_RULES}
    bundle = read_inputs(files, kubeconfig, context, filenames, output=output, needs=needs)
    refuse_bad_taints(bundle.of_kind(ResourceSlice), bundle.of_kind(DeviceTaintRule), bundle.location_of)
    cluster = PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim), bundle.of_kind(DeviceTaintRule))
    with Bar("reading pools", output=output) as bar:
        reports = node_reports(cluster, node=node, default_attribute=default_attribute, progress=bar.update)
    if node is not None and not reports:
        from drasat.models.errors import InputError

        raise InputError(f"--node: no device or counter set of any ResourceSlice is on node {node!r}")
    if html_file is not None:
        from drasat.cli.render.html import write_map

        write_map(reports, html_file)  # "-": the page on stdout
        if html_file != "-":
            echo(f"wrote {html_file}: {sum(len(r.devices) for r in reports)} devices on {len(reports)} nodes", err=True)
        return
    if output == "json":
        echo(dump([as_data(r) for r in reports], "json"), nl=False)
    else:
        echo(rendered(*(_node_table(r, wide=output == "wide") for r in reports)), nl=False)


def amount(value: Quantity) -> str:
    return str(value)


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


def _node_table(report: Any, wide: bool) -> str:
    from drasat.solver.report.device_states import fragmentation_line

    table = TextTable(show_lines=False)
    columns = ["driver", "pool", "device", "state", "type", "detail"] + (["taints", "counter sets"] if wide else [])
    for column in columns:
        table.add_column(column)
    for d in report.devices:
        row = [d.driver, d.pool, d.name, d.state, d.partition_type or "", detail(d)]
        if wide:
            row += [", ".join(d.taints), ", ".join(d.counter_sets)]
        table.add_row(*row)
    lines = [f"node {report.node}\n", table_text(table)]
    lines += [
        f"  counter {c.driver}/{c.pool}/{c.counter_set}/{c.counter}: {amount(c.used)} used, "
        f"{amount(c.left)} left of {amount(c.capacity)}\n"
        for c in report.counters
    ]
    lines.append(f"  {fragmentation_line(report)}\n\n")
    return rendered(*lines)
