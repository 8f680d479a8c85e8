"""``drasat preempt``: what to evict so that a pending pod fits — kube-scheduler's victims, and the fewest."""

from __future__ import annotations

import click

from drasat.cli.allocation_options import allocation_options, exit_on_error
from drasat.cli.inputs import input_options, read_inputs
from drasat.cli.render.kubectl import output_options, report_epilog
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

EPILOG = """\b
Exit status: 0 the pod fits, as it is or once the victims are evicted; 1 no
eviction of lower-priority pods makes it fit; 2 invalid input (an unknown or
already bound pod).

\b
Examples:
  drasat preempt default/trainer-0 cluster/
  drasat preempt -o yaml --timeout 10 urgent cluster/
  # the pods to evict, one a line
  drasat preempt -o name default/trainer-0 cluster/
"""


@click.command(
    epilog=EPILOG
    + "\n"
    + report_epilog("PreemptionPlan", "victim (the fewest)", (".fewest.victims[*].pod", "POD:.pod,NODE:.fewest.node"))
)
@click.argument("pod_name", metavar="POD")
@input_options
@allocation_options
@output_options(
    ("table", "wide"),
    "table",
    "table: the headline and why the answers differ, then one row per victim (kube-scheduler's, then the "
    "fewest: node, pod, priority); wide: with the PodDisruptionBudgets each answer breaks; yaml/json: one "
    "PreemptionPlan object; name: the fewest victims (kube-scheduler's when there is no fewest).",
)
def preempt(
    pod_name: str,
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    feature_gates: str,
    solver: Solver,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    output: str,
) -> None:
    """Which running pods to evict so that the pending POD (NS/NAME) fits.

    First the victims kube-scheduler's DefaultPreemption picks: on each node,
    every pod of lower priority removed, then given back most important first
    (PodDisruptionBudget breakers first) while the pod still fits; of those
    nodes, fewest budgets broken, lowest top victim priority, least priority
    sum, fewest victims. A victim's ResourceClaims are released as the
    resourceclaim controller releases them (deallocated once nobody holds
    them). Then drasat's own answer: the fewest budgets broken, then the fewest
    victims, then the least priority lost, over every victim set (tried by
    size; --timeout keeps the best so far and says it is not proven). It says
    why the two differ.
    """
    try:
        result = _preempt(
            pod_name,
            read_inputs(files, kubeconfig, context, filenames, output=output),
            (feature_gates, solver, objective, timeout, workers, cel_engine),
        )
    except DrasatError as exc:
        exit_on_error(exc, False, timeout)
        return
    from drasat.cli.render.capacity import preempt_answer, preempt_headline, print_answer

    print_answer(preempt_answer(result), output, preempt_headline(result))
    for note in result.notes:
        echo(f"note: {note}", err=True)
    if not result.helps:
        raise SystemExit(1)


def _preempt(pod_name, bundle, settings):
    with importing():
        from drasat.solver import Features, preempt
        from drasat.solver.allocation.problem import refuse_unstorable
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects
        from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
        from drasat.solver.scheduling.pod_inputs import refuse_unstorable_pods
        from drasat.solver.scheduling.pods import select_pods

    feature_gates, solver, objective, timeout, workers, cel_engine = settings
    options = AllocateOptions(solver, objective, timeout, workers, SelectorEvaluator(cel_engine))
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates))
    (pod,) = select_pods(cluster, [pod_name])
    refuse_unstorable_pods(cluster, [pod], bundle.location_of)
    used = [*cluster.slices, *cluster.classes, *cluster.claims, *cluster.templates, *cluster.nodes]
    refuse_unstorable(used, bundle.location_of)
    return preempt(cluster, pod, options=options)
