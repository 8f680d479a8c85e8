"""``drasat schedule``: place pending pods one at a time over every node, as kube-scheduler does."""

from __future__ import annotations

import time
from typing import Any

import click

from drasat.cli.allocation_options import (
    allocation_options,
    binding_clock,
    binding_options,
    exit_on_error,
    names_option,
    parallel_options,
)
from drasat.cli.inputs import (
    in_namespace,
    input_options,
    namespace_options,
    read_inputs,
    scheduling_needs,
    told_as_validate,
)
from drasat.cli.interrupt import halted_on_first_interrupt, stopped_on_interrupt
from drasat.cli.nothing_to_do import say_no_pending_pods
from drasat.cli.output_state import state_option, write_state
from drasat.cli.progress import Bar, Status
from drasat.cli.render.html import html_option
from drasat.cli.render.kubectl import forms_epilog, output_options, render_list
from drasat.cli.render.schedule import batch_summary_line, placement_table
from drasat.cli.render.tables import echo_table
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

EPILOG = """Exit status: 0 every pod placed; 1 some pod stays pending (the scheduler's
reason on stderr; the pods that were placed are still printed), waits in
PreBind for a device's binding conditions (printed with its claims but without
spec.nodeName, as the API holds it meanwhile) or the time ran out; 2 invalid
input, an unknown or already bound pod, or a CEL expression that does not
compile.

\b
Examples:
  drasat schedule -o table examples/
  kubectl get nodes,pods,podgroups,resourceslices,deviceclasses \\
      -A -o yaml > cluster.yaml
  kubectl get resourceclaims,resourceclaimtemplates -A -o yaml \\
      | drasat schedule -o wide cluster.yaml -
  drasat schedule --pods default/trainer-0 cluster/
  drasat schedule --objective pack --processes 2 cluster/
  drasat schedule --batch -o table cluster/
"""


@click.command(epilog=EPILOG + "\n" + forms_epilog("the placed Pods and their ResourceClaims"))
@input_options
@namespace_options
@click.option(
    "--pods",
    metavar="NS/NAME,...",
    help="Pods to schedule, in this order "
    "(default: every pod without spec.nodeName, in input order). A bare name must be unambiguous.",
)
@allocation_options
@parallel_options
@binding_options
@output_options(
    ("table", "wide"),
    "yaml",
    "yaml/json: a v1 List of the placed pods and their claims; table: one line per pod (node, devices); "
    "wide: one line per device, with claim, driver and pool, and why a pod is pending.",
)
@state_option
@html_option(
    "Also write the allocation map after this placement to FILE: the cluster's devices as the pods leave "
    "them, the placements, and the pods left pending with the scheduler's reasons (see `drasat inventory "
    "--html`)."
)
@click.option(
    "--batch",
    is_flag=True,
    help="Place every pending pod jointly: one CP-SAT model counting pods of each class on each node and their "
    "devices, for the most pods, higher spec.priority first, a gang PodGroup placed with at least minCount "
    "pods or not at all; never fewer pods than one by one. A summary on stderr says whether the answer is "
    "proven the most the cluster holds, or how far from CP-SAT's bound; on a terminal a line shows the best "
    "so far. --timeout bounds the whole run: what time cut short is said in the summary.",
)
@click.option("-v", "--verbose", is_flag=True, help="Per-node reasons for pods left pending, and the time taken.")
def schedule(
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
    percentage: int,
    processes: int,
    ray: str | None,
    now: Any,
    binding_timeout: float,
    output: str,
    output_state: str | None,
    html_file: str | None,
    batch: bool,
    verbose: bool,
) -> None:
    """Choose a node for each pending Pod and allocate its claims there.

    For each pod, in order: every Node is filtered as kube-scheduler's default
    profile filters it (node selector and required affinity, taints, cpu, memory
    and pods, DRA claims including templates, PodGroup claims and extended
    resources), the nodes that pass are scored as the default profile weighs
    them (PreferNoSchedule taints, preferred node affinity, least allocated,
    balanced allocation, DRA prioritized-list score; ties by node name, or with
    --objective pack first by pack's order: fewest devices and GPUs newly
    touched, least of the biggest free partitions taken, then the node with
    fewer whole GPUs left, so pods pack onto nodes already in use) and the
    best one is taken. Each placement reduces what the next pod finds. Pods
    with spec.schedulingGates or another spec.schedulerName stay pending.
    Pods (and the templates and PodGroups they name) the API server would not
    store are refused, as `drasat validate` words it.

    FILE is read as by `drasat solve`; with --kubeconfig/--context the live
    cluster's objects are read (read-only) and files add to them. --output-state
    writes the whole input with the placed pods and their claims merged in.
    """
    if batch and ray:
        raise click.UsageError("--ray runs one-by-one's per-node allocations; --batch runs on --processes only")
    bundle = None
    try:
        bundle = read_inputs(files, kubeconfig, context, filenames, output=output, needs=scheduling_needs(True))
        pods = in_namespace(pods, namespace, all_namespaces)
        text, pending, placed = _schedule(
            bundle,
            namespace,
            pods,
            feature_gates,
            solver,
            objective,
            timeout,
            workers,
            (cel_engine, percentage),
            (processes, ray),
            output,
            verbose,
            batch,
            binding_clock(now, binding_timeout),
            html_file=html_file,
        )
        if output_state:
            write_state(output_state, bundle, placed)
    except DrasatError as exc:
        exit_on_error(told_as_validate(exc, bundle), verbose, timeout)
        return
    echo_table(text, output, namespace)
    if pending:
        raise SystemExit(1)


def _schedule(
    bundle,
    namespace,
    pods,
    feature_gates,
    solver,
    objective,
    timeout,
    workers,
    engine_and_percentage,
    parallel,
    output,
    verbose,
    batch=False,
    clock=None,
    html_file=None,
) -> tuple[str, int, list[dict[str, Any]]]:
    with importing():
        from drasat.solver import Features
        from drasat.solver.allocation.problem import refuse_unstorable
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects
        from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
        from drasat.solver.scheduling.pod_inputs import refuse_unstorable_pods
        from drasat.solver.scheduling.pods import pending_pods

        cel_engine, percentage = engine_and_percentage
        options = AllocateOptions(  # checked first
            solver, objective, timeout, workers, SelectorEvaluator(cel_engine), percentage_of_nodes_to_score=percentage
        )
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates), clock)
    if not cluster.nodes:
        echo("warning: no Node objects in the input: no pod can be placed", err=True)
    chosen = _chosen_pods(cluster, pods, namespace)
    refuse_unstorable_pods(cluster, pending_pods(cluster) if chosen is None else chosen, bundle.location_of)
    used = [*cluster.slices, *cluster.classes, *cluster.claims, *cluster.taint_rules, *cluster.nodes]
    used += [*cluster.topologies, *cluster.kubelet_configs]
    refuse_unstorable(used, bundle.location_of)  # every node is a candidate: all of them are used
    _controller_notes(cluster)
    started = time.monotonic()
    placements = _placed(cluster, chosen, options, parallel, output, batch)
    pending = _report(placements, objective, verbose)
    if html_file is not None:
        _write_map(html_file, cluster, placements, "batch" if batch else "one-by-one")
    if verbose:
        echo(
            f"{len(placements) - len(pending)}/{len(placements)} pods placed in {time.monotonic() - started:.2f} s",
            err=True,
        )
    placed = [obj for p in placements if p.node is not None for obj in _objects(p)]
    pending += [p for p in placements if p.waiting]  # not bound until their binding conditions are True
    if output in ("table", "wide"):
        return placement_table(placements, wide=output == "wide"), len(pending), placed
    return render_list(placed, output), len(pending), placed


def _controller_notes(cluster) -> None:
    """What the controllers did or cannot do before the scheduler looks: claims of finished pods released,
    bound pods whose claims nothing will allocate."""
    from drasat.solver.scheduling.claim_controller import release_finished, stranded_pods

    for note in release_finished(cluster).notes:
        echo(f"notice: {note}", err=True)
    for note in stranded_pods(cluster):
        echo(f"warning: {note}", err=True)


def _write_map(path: str, cluster, placements: list, method: str) -> None:
    """The allocation map of the cluster as the placements leave it, with the placements beside it."""
    from drasat.cli.render.html import MapExtras, PlacedSide, write_map
    from drasat.cli.render.map_data import reports_after

    reports = reports_after(cluster, placements)
    write_map(reports, path, MapExtras(sides=[PlacedSide(method, placements)]))
    echo(f"wrote {path}: {sum(len(r.devices) for r in reports)} devices on {len(reports)} nodes", err=True)


def _chosen_pods(cluster, pods: str | None, namespace: str | None) -> list | None:
    """The pods named with --pods, else the namespace's pending pods (as the scheduler's queue would hold
    them), else None: every pending pod."""
    from drasat.solver.scheduling.cluster import key_of
    from drasat.solver.scheduling.pods import pending_pods, select_pods

    if pods is not None:
        return select_pods(cluster, names_option(pods) or [])
    if namespace is not None:
        return [p for p in pending_pods(cluster) if key_of(p)[0] == namespace]
    return None


def _placed(cluster, chosen, options, parallel, output: str, batch: bool) -> list:
    """The placements, jointly (``--batch``, its summary line on stderr) or one pod at a time (with a
    progress bar on a terminal, on the executor ``--processes``/``--ray`` chose)."""
    if batch:
        from drasat.solver.batch.placement import schedule_batch
        from drasat.solver.scheduling.one_by_one import with_binding_state
        from drasat.solver.scheduling.plugins.binding_conditions import recover
        from drasat.solver.scheduling.pods import pending_pods

        if cluster.topologies:
            echo(
                "notice: --batch does not predict the kubelet's Topology Manager admission (NodeResourceTopology); "
                "one by one does",
                err=True,
            )
        recovery = recover(cluster, pending_pods(cluster) if chosen is None else chosen)
        with Status(output=output) as status, halted_on_first_interrupt() as halt:
            result = schedule_batch(
                recovery.cluster, chosen, options=options, progress=status.batch, halt=halt, processes=parallel[0]
            )
        echo(batch_summary_line(result.summary), err=True)
        return [with_binding_state(p, recovery, recovery.cluster) for p in result.placements]
    with importing():
        from drasat.solver.scheduling.one_by_one import schedule as place
        from drasat.solver.scheduling.parallel import executor
    with (
        executor(*parallel) as ex,
        stopped_on_interrupt(ex.terminate),
        Bar("scheduling pods", output=output) as bar,
    ):
        return place(cluster, chosen, options=options, executor=ex, progress=bar.update)


def _report(placements: list, objective: Objective, verbose: bool) -> list:
    """What stderr says of the placements (nothing pending, answers cut short by time, claims deallocated
    and pods waiting for binding conditions, each pending pod and, with -v, why each node refused it); the
    pending placements."""
    from drasat.solver.scheduling.plugins.binding_conditions import deallocation_note

    if not placements:
        say_no_pending_pods()
    for p in placements:
        if p.node is not None and not p.exact:
            echo(
                f"warning: pod {p.label}: time ran out before the {objective} answer on {p.node}; its valid "
                f"allocation so far is kept (raise --timeout)",
                err=True,
            )
    for p in placements:
        for verdict in p.deallocated:
            echo(deallocation_note(p.label, verdict), err=True)
        for verdict in p.waiting:
            echo(f"pod {p.label} waits in PreBind on node {p.node}: {verdict.describe()}", err=True)
    pending = [p for p in placements if p.node is None]
    _report_pending(pending, verbose)
    return pending


def _report_pending(pending: list, verbose: bool) -> None:
    """Each pending pod and why (with -v, why each node refused it); the pods a stopped batch did not try, where
    several share the reason, in one line."""
    untried = {} if verbose else _untried(pending)
    for p in pending:
        if p.reason not in untried:
            echo(f"pod {p.label} is pending: {p.reason}", err=True)
        for node, reasons in sorted(p.node_reasons.items()) if verbose else []:
            echo(f"  {node}: {'; '.join(reasons)}", err=True)
    for reason, labels in untried.items():
        named = ", ".join(labels[:UNTRIED_NAMED]) + (", ..." if len(labels) > UNTRIED_NAMED else "")
        echo(f"{len(labels)} pods are pending: {reason} ({named}; -v names each)", err=True)


UNTRIED_NAMED = 3
"""Pods named on the one line that says many were not tried (a batch stopped early leaves thousands)."""


def _untried(pending: list) -> dict[str, list[str]]:
    """The pods a stopped batch did not try, by reason, where several share one: told in one line each."""
    from drasat.solver.batch.passes import HALTED, NOT_TRIED

    by_reason: dict[str, list[str]] = {}
    for p in pending:
        if p.reason.startswith((HALTED, NOT_TRIED)):
            by_reason.setdefault(p.reason, []).append(p.label)
    return {reason: labels for reason, labels in by_reason.items() if len(labels) > 1}


def _objects(placement) -> list[dict[str, Any]]:
    pod = placement.pod.to_api()
    pod["apiVersion"] = "v1"
    claims = []
    for claim in placement.claims:
        body = claim.to_api()
        body["apiVersion"] = "resource.k8s.io/v1"
        claims.append(body)
    return [pod, *claims]
