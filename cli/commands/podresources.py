"""``drasat podresources``: what each placed pod's kubelet would report through its PodResources API."""

from __future__ import annotations

from typing import Any

import click

from drasat.cli.allocation_options import (
    allocation_options,
    binding_clock,
    binding_options,
    exit_on_error,
    names_option,
)
from drasat.cli.inputs import in_namespace, input_options, namespace_options, read_inputs
from drasat.cli.render.kubectl import forms_epilog, output_options
from drasat.cli.render.tables import echo_table
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

EPILOG = """Needs a NodeResourceTopology (topology.node.k8s.io/v1alpha2) per node, as the
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
  drasat podresources -o custom-columns=POD:.name,CPUS:.cpu_ids \\
      cluster.yaml
"""
FORMS = forms_epilog(
    "pods",
    document="the kubelet's PodResources List response",
    rows="pod",
    example=(".pod_resources[*].name", "POD:.name,CPUS:.cpu_ids"),
)


@click.command(epilog=EPILOG + "\n" + FORMS)
@input_options
@namespace_options
@click.option(
    "--pods", metavar="NS/NAME,...", help="Pods to place and report, in this order (default: every pending pod)."
)
@allocation_options
@binding_options
@output_options(
    ("table", "wide"),
    "table",
    "table: one row per container (and one for the pod's own resources): its CPUs and memory per NUMA node; "
    "wide: with its devices, claims and drivers; yaml/json: the kubelet's PodResources List response "
    "(pod_resources: [...]) with the v1 proto's field names, as the kubelet answers it (no apiVersion: it is "
    "not an API object); custom-columns: one row per pod_resources entry; name: the pods.",
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
    if not report and output in ("table", "wide"):
        echo("notice: no pod placed on a node with a NodeResourceTopology", err=True)
    from drasat.cli.render.kubectl import Answer, named_object, render_answer
    from drasat.cli.render.pod_resources import pod_resources_table

    names = [named_object("Pod", pod["name"]) for pod in report]
    answer = Answer(lambda wide: pod_resources_table(report, wide), {"pod_resources": report}, list(report), names)
    echo_table(render_answer(answer, output), output, namespace)
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
