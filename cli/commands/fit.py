"""``drasat fit``: how many copies of a workload fit on the cluster now, and how many on each node."""

from __future__ import annotations

import click

from drasat.cli.allocation_options import allocation_options, exit_on_error
from drasat.cli.inputs import input_options, read_inputs
from drasat.cli.render.kubectl import output_options, report_epilog
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

OUTPUT = output_options(
    ("table", "wide"),
    "table",
    "table: the headline, then one row per node that takes pods (pods, per pod set); wide: with their devices; "
    "yaml/json: one WorkloadFit object (the count, whether it is proven, per-node counts, each pod's devices); "
    "name: the nodes that take pods.",
)

EPILOG = """\b
Exit status: 0 the copies asked for fit (without --replicas: at least one);
1 fewer fit, or the time ran out before any answer; 2 invalid input (a
workload without a pod template, a template that is missing, a bad count).

\b
Examples:
  drasat fit deployment.yaml cluster/
  drasat fit --replicas 8 -o yaml jobset.yaml cluster/
  drasat fit -o wide --no-headers deployment.yaml cluster/
  drasat fit --with-pending --timeout 20 kueue-workload.yaml cluster/
"""


@click.command(
    epilog=EPILOG
    + "\n"
    + report_epilog("WorkloadFit", "node that takes pods", (".nodes[*].node", "FIT:.fit,PROVEN:.proven"))
)
@click.argument("workload_file", metavar="WORKLOAD", type=click.Path(dir_okay=False))
@input_options
@click.option(
    "--replicas",
    type=click.IntRange(0, 100_000),
    metavar="N",
    help="Look for N copies at most (and exit 1 when fewer fit). Default: as many as fit.",
)
@click.option(
    "--with-pending",
    is_flag=True,
    help="Place the cluster's pending pods first (jointly, as `schedule --batch` does) and fit the workload on "
    "what they leave.",
)
@allocation_options
@OUTPUT
def fit(
    workload_file: str,
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    replicas: int | None,
    with_pending: bool,
    feature_gates: str,
    solver: Solver,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    output: str,
) -> None:
    """The most copies of WORKLOAD's pod that fit now, and how many on each node.

    WORKLOAD is a file holding one Pod, Deployment, ReplicaSet, StatefulSet,
    Job, JobSet, LeaderWorkerSet or Kueue Workload. Its pods are made as their
    controller would make them, each with the ResourceClaims its
    ResourceClaimTemplates generate (the templates come from FILE...). One
    copy is one pod, or for a JobSet, a LeaderWorkerSet group and a Kueue
    Workload every pod set at once (each with its count): those fit whole.

    The answer is exact: one CP-SAT model counts the workload's pods on every
    node with every DRA rule (devices, counters, capacity, constraints), cpu,
    memory, pods, selectors, affinity and taints; the pods are then given
    devices node by node and every allocation is checked by the verifier.
    It says whether the count is proven the most; --timeout keeps the best
    count found so far, with CP-SAT's bound.
    """
    try:
        result = _fit(
            workload_file,
            read_inputs(files, kubeconfig, context, filenames, output=output),
            replicas,
            with_pending,
            (feature_gates, solver, objective, timeout, workers, cel_engine),
        )
    except DrasatError as exc:
        exit_on_error(exc, False, timeout)
        return
    from drasat.cli.render.capacity import fit_answer, fit_headline, print_answer

    print_answer(fit_answer(result), output, fit_headline(result))
    for note in result.standing.notes:
        echo(f"note: {note}", err=True)
    if not result.fits:
        raise SystemExit(1)


def _fit(workload_file, bundle, replicas, with_pending, settings):
    with importing():
        from drasat.models.workloads import read_workload
        from drasat.solver import Features, fit_workload
        from drasat.solver.allocation.problem import refuse_unstorable
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects
        from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

    feature_gates, solver, objective, timeout, workers, cel_engine = settings
    options = AllocateOptions(solver, objective, timeout, workers, SelectorEvaluator(cel_engine))
    workload = read_workload(workload_file)
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates))
    if not cluster.nodes:
        echo("warning: no Node objects in the input: nothing fits", err=True)
    used = [*cluster.slices, *cluster.classes, *cluster.claims, *cluster.templates, *cluster.nodes]
    refuse_unstorable(used, bundle.location_of)
    return fit_workload(cluster, workload, replicas=replicas, with_pending=with_pending, options=options)
