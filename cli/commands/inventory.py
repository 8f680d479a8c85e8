"""``drasat inventory``: every device per node and pool with its state, counters used and left, fragmentation."""

from __future__ import annotations

import click

from drasat.cli.inputs import CLUSTER_SCOPED, in_namespace_only, input_options, namespace_options_with, read_inputs
from drasat.cli.progress import Bar
from drasat.cli.render.html import html_option
from drasat.cli.render.inventory import as_data, detail, inventory_item, inventory_tables
from drasat.cli.render.kubectl import forms_epilog, output_options, render_list
from drasat.cli.render.tables import TABLE_FORMS, echo_table
from drasat.cli.render.text import echo
from drasat.cli.reporting import exits_on_error

__all__ = ["as_data", "detail", "inventory"]

EPILOG = """\b
Device states: free; allocated (to which claim); shared (a device that
allows multiple allocations: its shares, one per allocation result, and
the capacity left, never below zero); tainted (NoSchedule or NoExecute,
its own taint or a DeviceTaintRule's); blocked (free, but the shared
counters it needs are used up, or compatibility groups exclude it);
incomplete (its pool is missing slices). After the devices: the counters
used and left, then per node and driver the largest request of each
partition type that still fits (computed exactly) and the whole devices
free.

\b
Exit status: 0 printed (or the page written); 2 invalid input.

\b
Examples:
  drasat inventory cluster/
  drasat inventory --node worker-1 -o wide cluster/
  drasat inventory cluster/ \\
      -o custom-columns=NODE:.metadata.name,FITS:.fragmentation
  # one self-contained page: open it in a browser
  drasat inventory --html map.html cluster/
"""


@click.command(epilog=EPILOG + "\n" + forms_epilog("NodeInventory objects, one per node"))
@input_options
@namespace_options_with(CLUSTER_SCOPED)
@click.option("--node", metavar="NAME", help="Show only this node.")
@click.option(
    "--default-partition-type-attribute",
    "default_attribute",
    metavar="ATTRIBUTE",
    help="Partition type attribute for slices that declare no partitionTypeAttribute.",
)
@output_options(
    ("table", "wide"),
    "table",
    "table: every device (node, state, partition type, claim), the counters, and per node the largest "
    "request that still fits; wide: with driver, pool, the state's reason, taints and counter sets; yaml/json: a v1 List of one "
    "NodeInventory per node.",
)
@html_option(
    "Write the allocation map to FILE instead (- for stdout; the folder must exist): one self-contained HTML "
    "page (a fleet summary, a card per node, every device in a table, filters by node and state); with Pods "
    "and Nodes in the input, the pending pods that could go on each node.",
    to_stdout=True,
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
        from drasat.cli.render.html import MapExtras, write_map
        from drasat.cli.render.map_data import pods_that_fit

        write_map(reports, html_file, MapExtras(fitting=pods_that_fit(list(bundle))))  # "-": the page on stdout
        if html_file != "-":
            echo(f"wrote {html_file}: {sum(len(r.devices) for r in reports)} devices on {len(reports)} nodes", err=True)
        return
    if output in TABLE_FORMS:
        echo_table(inventory_tables(reports, wide=output == "wide"), output)
    else:
        echo(render_list([inventory_item(r) for r in reports], output), nl=False)
