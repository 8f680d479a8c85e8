"""``drasat podresources``: what each placed pod's kubelet would report through its PodResources API."""

from __future__ import annotations

import json
from typing import Any

import click
import yaml

from drasat.cli.allocation_options import (
    allocation_options,
    binding_clock,
    binding_options,
    exit_on_error,
    names_option,
)
from drasat.cli.inputs import in_namespace, input_options, namespace_options, read_inputs
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

EPILOG = """\b
Needs a NodeResourceTopology (topology.node.k8s.io/v1alpha2) per node, as the
resource topology exporter publishes it, and the kubelet's policies in its
attributes (topologyManagerPolicy, topologyManagerScope) or in a
KubeletConfiguration document (cpuManagerPolicy: static, memoryManagerPolicy:
Static, ...). Pods are placed as `drasat schedule` places them (a node whose
kubelet would refuse the pod with TopologyAffinityError is filtered out); CPU
ids are numbered cell after cell, the free ones being the highest of each cell.

\b
Exit status: 0 reported; 1 some pod stays pending (its reason on stderr);
2 invalid input.

\b
Examples:
  drasat podresources numa-cluster/
  drasat podresources -o json --pods default/trainer cluster.yaml
"""


@click.command(epilog=EPILOG)
@input_options
@namespace_options
@click.option(
    "--pods", metavar="NS/NAME,...", help="Pods to place and report, in this order (default: every pending pod)."
)
@allocation_options
@binding_options
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "yaml", "json"]),
    default="table",
    show_default=True,
    help="table: per container its CPUs, memory per NUMA node and devices; yaml/json: the PodResources List "
    "response (pod_resources: [...]) with the v1 proto's field names.",
)
def podresources(
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    all_namespaces: bool,
    pods: str | None,
    feature_gates: str,
    solver: Solver,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    now: Any,
    binding_timeout: float,
    output: str,
) -> None:
    """Predict the kubelet's PodResources report (pod-level cpu_ids and memory, each container's share,
    DynamicResources) for each pod, once placed, on nodes with a NodeResourceTopology."""
    try:
        bundle = read_inputs(files, kubeconfig, context, filenames, output=output)
        chosen = in_namespace(pods, namespace, all_namespaces)
        search = (solver, objective, timeout, workers, cel_engine)
        placements = _placements(bundle, chosen, feature_gates, search, binding_clock(now, binding_timeout))
    except DrasatError as exc:
        exit_on_error(exc, False, timeout)
        return
    from drasat.solver.report.pod_resources import pod_resources

    report = pod_resources(placements)
    pending = [p for p in placements if p.node is None]
    for p in pending:
        echo(f"pod {p.label} is pending: {p.reason}", err=True)
    unknown = [p for p in placements if p.node is not None and p.admission is None]
    for p in unknown:
        echo(
            f"notice: pod {p.label} on node {p.node}: no NodeResourceTopology for the node, nothing to report", err=True
        )
    echo(_render(report, output), nl=False)
    if pending:
        raise SystemExit(1)


def _placements(bundle: Any, pods: str | None, feature_gates: str, search: tuple, clock: Any) -> list:
    with importing():
        from drasat.solver import Features
        from drasat.solver.allocation.problem import refuse_unstorable
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects
        from drasat.solver.scheduling.one_by_one import schedule
        from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
        from drasat.solver.scheduling.pod_inputs import refuse_unstorable_pods
        from drasat.solver.scheduling.pods import pending_pods, select_pods
    solver, objective, timeout, workers, cel_engine = search
    options = AllocateOptions(solver, objective, timeout, workers, SelectorEvaluator(cel_engine))
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates), clock)
    chosen = select_pods(cluster, names_option(pods) or []) if pods is not None else None
    refuse_unstorable_pods(cluster, pending_pods(cluster) if chosen is None else chosen, bundle.location_of)
    used = [*cluster.slices, *cluster.classes, *cluster.claims, *cluster.nodes, *cluster.topologies]
    refuse_unstorable([*used, *cluster.kubelet_configs], bundle.location_of)
    return schedule(cluster, chosen, options=options)


def _render(report: list[dict[str, Any]], output: str) -> str:
    data = {"pod_resources": report}
    if output == "json":
        return json.dumps(data, indent=2) + "\n"
    if output == "yaml":
        return yaml.safe_dump(data, sort_keys=False)
    return _table(report)


def _table(report: list[dict[str, Any]]) -> str:
    from drasat.solver.report.pod_resources import cpu_ranges

    rows = [("POD", "CONTAINER", "CPUS", "MEMORY", "DEVICES")]
    for pod in report:
        who = f"{pod['namespace']}/{pod['name']}"
        if pod.get("cpu_ids") or pod.get("memory"):
            rows.append((who, "(pod)", cpu_ranges(pod.get("cpu_ids", [])) or "-", _memory_text(pod), "-"))
        for c in pod["containers"]:
            devices = ", ".join(
                f"{r['pool_name']}/{r['device_name']}"
                for d in c.get("dynamic_resources", [])
                for r in d["claim_resources"]
            )
            cpus = cpu_ranges(c.get("cpu_ids", [])) or "shared"
            rows.append((who, c["name"], cpus, _memory_text(c) or "-", devices or "-"))
    if len(rows) == 1:
        return "no pod placed on a node with a NodeResourceTopology\n"
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join("   ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() + "\n" for r in rows)


def _memory_text(entry: dict[str, Any]) -> str:
    from drasat.models.quantity import BINARY_SI, Quantity

    parts = [f"{Quantity(m['size'], BINARY_SI)}@NUMA{m['topology']['nodes'][0]['ID']}" for m in entry.get("memory", [])]
    return ", ".join(parts)
