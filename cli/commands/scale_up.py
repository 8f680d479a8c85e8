"""``drasat scale-up``: the fewest, cheapest nodes to add from node templates so that the pending pods fit."""

from __future__ import annotations

from fractions import Fraction

import click

from drasat.cli.allocation_options import allocation_options, exit_on_error
from drasat.cli.inputs import input_options, read_inputs
from drasat.cli.render.kubectl import output_options, report_epilog
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError, InputError
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

EPILOG = """\b
Exit status: 0 every pending pod fits with the nodes added (or with none);
1 some pod is left pending (listed on stderr: fits nowhere, or the time ran
out first); 2 invalid input (a template slice naming another node, a bad
cost or count).

\b
Template cost and count: annotations on the template's Node,
  capacity.drasat.io/cost: "2.5"       capacity.drasat.io/max-count: "10"
or --cost NAME=2.5 / --max-count NAME=10 (the flags win). Defaults: cost 1,
max-count --max-nodes.

\b
Examples:
  drasat scale-up --node-template gpu-node.yaml cluster/
  drasat scale-up --node-template a100.yaml \\
      --node-template h100.yaml \\
      --cost a100-template=1 --cost h100-template=3 --max-nodes 20 \\
      -o yaml cluster/
"""


def _pairs(kind: type):
    def convert(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict:
        out = {}
        for text in values:
            name, sep, value = text.partition("=")
            try:
                number = kind(value)
            except (ValueError, ZeroDivisionError):
                number = None
            if not sep or not name or number is None or number < 0:
                raise click.BadParameter(f"{text!r}: give NAME=VALUE, VALUE a non-negative number", ctx, param)
            out[name] = number
        return out

    return convert


@click.command(
    name="scale-up",
    epilog=EPILOG
    + "\n"
    + report_epilog("ScaleUpPlan", "node to add", (".nodes[*].node", "ADDED:.nodesAdded,COST:.cost")),
)
@input_options
@click.option(
    "--node-template",
    "template_files",
    multiple=True,
    required=True,
    metavar="FILE",
    help="A Node and its ResourceSlices (slices naming that node): one kind of node that may be added. Repeatable; "
    "a file may hold several templates.",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(0, 1000),
    default=100,
    show_default=True,
    metavar="K",
    help="Add at most K nodes in all.",
)
@click.option("--cost", "costs", multiple=True, metavar="NAME=C", callback=_pairs(Fraction), help="A template's cost.")
@click.option(
    "--max-count", "max_counts", multiple=True, metavar="NAME=K", callback=_pairs(int), help="A template's most copies."
)
@allocation_options
@output_options(
    ("table", "wide"),
    "table",
    "table: the headline and first fit decreasing's estimate, then one row per node to add (template, how many "
    "pods); wide: with the pods' names; yaml/json: one ScaleUpPlan object (nodes, each pod's node and devices, "
    "pending pods, the estimate); name: the nodes to add.",
)
def scale_up(
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    template_files: tuple[str, ...],
    max_nodes: int,
    costs: dict,
    max_counts: dict,
    feature_gates: str,
    solver: Solver,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    output: str,
) -> None:
    """The fewest nodes to add, from node templates, so that every pending pod fits.

    Every copy a template may add is a node of one CP-SAT model that counts the
    pending pods on every node (existing and new) with every DRA rule, cpu,
    memory and pods: the most pods placed (gang PodGroups whole), then the
    least total cost, then the fewest nodes. The pods are then given devices
    node by node and every allocation is checked by the verifier. The answer
    says whether it is proven optimal, or how far the cost may be from the
    bound. Beside it: what cluster-autoscaler's binpacking estimator (first
    fit decreasing, node by node) would add for the same pods.
    """
    try:
        result = _scale_up(
            read_inputs(files, kubeconfig, context, filenames, output=output),
            template_files,
            max_nodes,
            costs,
            max_counts,
            (feature_gates, solver, objective, timeout, workers, cel_engine),
        )
    except DrasatError as exc:
        exit_on_error(exc, False, timeout)
        return
    from drasat.cli.render.capacity import print_answer, scale_up_answer, scale_up_headline

    print_answer(scale_up_answer(result), output, scale_up_headline(result))
    for pod in result.pending:
        why = (
            "fits nowhere, even with the nodes the templates may add"
            if result.proven
            else "is not placed (the time ran out: not proven that it cannot fit)"
        )
        echo(f"pod {pod} {why}", err=True)
    for note in result.standing.notes:
        echo(f"note: {note}", err=True)
    if result.pending:
        raise SystemExit(1)


def _scale_up(bundle, template_files, max_nodes, costs, max_counts, settings):
    with importing():
        from drasat.cli.loading import load_bundle
        from drasat.solver import Features, scale_up
        from drasat.solver.allocation.problem import refuse_unstorable
        from drasat.solver.capacity.templates import node_templates
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects
        from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions

    feature_gates, solver, objective, timeout, workers, cel_engine = settings
    options = AllocateOptions(solver, objective, timeout, workers, SelectorEvaluator(cel_engine))
    held = load_bundle(template_files)
    if held.problems:
        raise InputError(held.problems)
    objects = list(held)
    refuse_unstorable(objects, held.location_of)
    templates = node_templates(objects, held.location_of, costs=costs, max_counts=max_counts, max_nodes=max_nodes)
    taken = sorted({n.name for n in templates} & {getattr(o, "name", None) for o in bundle if o.kind == "Node"})
    if taken:
        raise InputError(f"node template {', '.join(taken)} has the name of a node of the cluster: rename the template")
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates))
    used = [*cluster.slices, *cluster.classes, *cluster.claims, *cluster.templates, *cluster.nodes]
    refuse_unstorable(used, bundle.location_of)
    return scale_up(cluster, templates, max_nodes=max_nodes, options=options)
