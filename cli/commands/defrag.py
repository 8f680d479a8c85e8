"""``drasat defrag``: a plan of at most K moves of running pods that frees whole devices."""

from __future__ import annotations

import click

from drasat.cli.allocation_options import allocation_options, exit_on_error
from drasat.cli.inputs import input_options, read_inputs
from drasat.cli.render.kubectl import output_options, report_epilog
from drasat.models.errors import DrasatError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

EPILOG = """\b
Exit status: 0 the plan frees a whole device or a larger partition; 1 no plan
of at most K moves improves anything; 2 invalid input.

\b
Examples:
  drasat defrag cluster/
  drasat defrag --moves 4 --timeout 30 -o yaml cluster/
"""


@click.command(
    epilog=EPILOG
    + "\n"
    + report_epilog("DefragPlan", "pod moved", (".moves[*].pod", "MOVES:.moves[*].pod,PROVEN:.proven"))
)
@input_options
@click.option(
    "--moves", type=click.IntRange(0, 20), default=2, show_default=True, metavar="K", help="Move at most K pods."
)
@allocation_options
@output_options(
    ("table", "wide"),
    "table",
    "table: the headline, then one row per step in order (pod, from, to); wide: with the pod's devices before "
    "and after; yaml/json: one DefragPlan object; name: the pods moved, step by step.",
)
def defrag(
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    moves: int,
    feature_gates: str,
    solver: Solver,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    output: str,
) -> None:
    """A plan of at most K moves of running pods that frees the most whole devices.

    A move takes a running pod off its node (its claims released) and places
    it again on a node where it fits (its own or another), its claims
    allocated anew; steps are ordered, each valid on the state the steps before
    it leave, and each allocation is checked by the verifier. The plan frees
    the most whole devices (counter sets nothing draws on, plain devices nobody
    holds), then leaves the largest free share of one GPU per node, with the
    fewest moves. Every plan of at most K moves is tried within --timeout (the
    answer says whether that finished: proven).
    """
    try:
        result = _defrag(
            read_inputs(files, kubeconfig, context, filenames, output=output),
            moves,
            (feature_gates, solver, objective, timeout, workers, cel_engine),
        )
    except DrasatError as exc:
        exit_on_error(exc, False, timeout)
        return
    from drasat.cli.render.capacity import defrag_answer, defrag_headline, print_answer

    print_answer(defrag_answer(result), output, defrag_headline(result))
    if not result.improves:
        raise SystemExit(1)


def _defrag(bundle, moves, settings):
    with importing():
        from drasat.solver import Features, defrag
        from drasat.solver.allocation.problem import refuse_unstorable
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects
        from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

    feature_gates, solver, objective, timeout, workers, cel_engine = settings
    options = AllocateOptions(solver, objective, timeout, workers, SelectorEvaluator(cel_engine))
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates))
    used = [*cluster.slices, *cluster.classes, *cluster.claims, *cluster.templates, *cluster.nodes]
    refuse_unstorable(used, bundle.location_of)
    return defrag(cluster, moves=moves, options=options)
