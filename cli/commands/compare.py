"""``drasat compare``: Kubernetes' depth-first first fit and CP-SAT on the same claims, side by side."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from drasat.cli.allocation_options import (
    ALLOW_INVALID,
    CEL_ENGINE,
    FEATURE_GATES,
    NODE,
    WORKERS,
    choice_of,
    names_option,
)
from drasat.cli.inputs import input_options, read_inputs, scheduling_needs, told_as_validate
from drasat.cli.nothing_to_do import say_nothing_to_allocate
from drasat.cli.options import Seconds
from drasat.cli.render.allocation import comparison_table
from drasat.cli.render.html import html_option
from drasat.cli.render.kubectl import forms_epilog, named_object, output_options, render_list, report_object
from drasat.cli.render.tables import TABLE_FORMS, echo_table
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError, InputError
from drasat.solver.allocation.options import Objective

if TYPE_CHECKING:
    from drasat.models.bundle import Bundle
    from drasat.solver.report.comparison import Comparison

EPILOG = """\b
Exit status: 0 the comparison was made (whatever either side's verdict: read
it in the output), or there was nothing to compare (a notice says so, as
solve's); 2 invalid input, unknown node or claim, or an input both
searches refuse (a claim naming a DeviceClass that is not there).

\b
Examples:
  drasat compare --node gpu-node-1 examples/
  drasat compare --objective prioritized-list -o json cluster.yaml
  drasat compare --context prod --node worker-7 --claims team-a/train
  drasat compare --schedule -o table cluster/
"""


@click.command(epilog=EPILOG + "\n" + forms_epilog("one comparison object", named="claim or pod compared"))
@input_options
@ALLOW_INVALID
@NODE
@FEATURE_GATES
@click.option(
    "--claims",
    metavar="NS/NAME,...",
    help="Claims to allocate, in this order (default: the claims "
    "of the pending Pods, or every claim without status.allocation when the input has no Pods).",
)
@click.option("--pods", metavar="NS/NAME,...", help="Compare on the claims of these Pods (as `drasat solve`).")
@click.option(
    "--objective",
    **choice_of(Objective),
    default=Objective.FIRST_FIT.value,
    show_default=True,
    help="The CP-SAT column's objective (the greedy column is always first-fit, "
    "as Kubernetes); pack: fewest GPUs and devices touched, then the biggest free partitions.",
)
@click.option(
    "--timeout",
    type=Seconds(),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Time each side may take; a side that runs out is reported as 'timeout'.",
)
@WORKERS
@CEL_ENGINE
@click.option(
    "--schedule",
    "pods_mode",
    is_flag=True,
    help="Compare placing the pending Pods one by one (as "
    "kube-scheduler) with `drasat schedule --batch`: pods placed, gangs complete, devices and counter sets "
    "touched, whole devices left free, largest free partition per node type, wall time, pods that differ.",
)
@output_options(
    ("table", "wide"),
    "table",
    "table: side by side for people (wide: with the search statistics); yaml/json: the same as data, one "
    "object of kind AllocationComparison (ScheduleComparison with --schedule); name: the claims (or pods) "
    "compared.",
)
@html_option(
    "With --schedule: also write the allocation map to FILE, with the placements one by one beside batch "
    "and the pods left pending with their reasons."
)
def compare(
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    node: str | None,
    feature_gates: str,
    claims: str | None,
    pods: str | None,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
    pods_mode: bool,
    output: str,
    html_file: str | None,
) -> None:
    """Compare Kubernetes' greedy allocation with CP-SAT's on the same claims.

    The greedy column is drasat's twin of Kubernetes' allocator: depth-first,
    first fit, with backtracking. The CP-SAT column is the constraint solver
    alone. For each: the verdict, the devices per request, wall time and search
    statistics; then whether the two chose the same devices.

    FILE is read as by `drasat solve` (files, directories, - for stdin); with
    --kubeconfig/--context the cluster's objects are read too.
    """
    bundle = None
    try:
        if html_file is not None and not pods_mode:
            raise InputError(
                "--html draws the placements of --schedule: add --schedule (or use `drasat inventory --html`)"
            )
        bundle = read_inputs(
            files, kubeconfig, context, filenames, needs=scheduling_needs(pods_mode or pods is not None)
        )
        question = (bundle, node, claims, pods, feature_gates, objective, timeout, workers, cel_engine)
        answer = _scheduled(*question, html_file) if pods_mode else _allocated(*question, wide=output == "wide")
    except DrasatError as exc:
        exc = told_as_validate(exc, bundle)
        echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    _print(output, answer)


def _scheduled(*question: Any) -> Compared | None:
    """``--schedule``: one by one beside batch (see :mod:`.compare_schedule`), or None when no pod is pending."""
    from .compare_schedule import compare_schedule

    placed = compare_schedule(*question)
    if placed is None:
        return None
    data, table, pods_compared = placed
    return Compared(table, report_object("ScheduleComparison", "schedule", data), [("Pod", p) for p in pods_compared])


def _allocated(
    bundle: Bundle, node: str | None, claims: str | None, pods: str | None, *options: Any, wide: bool
) -> Compared | None:
    """The two searches on the claims `drasat solve` would allocate, or None when there are none."""
    feature_gates, objective, timeout, workers, cel_engine = options
    result = _compare(bundle, node, feature_gates, claims, pods, objective, timeout, workers, cel_engine)
    if result is None:
        return None
    item = report_object("AllocationComparison", result.node, result.to_data())
    return Compared(comparison_table(result, wide=wide), item, [("ResourceClaim", c) for c in result.claims])


class Compared(NamedTuple):
    """A comparison made: its table, its object for yaml/json/jsonpath, and what it compared (kind, name)."""

    table: str
    item: dict
    about: list[tuple[str, str]]


def _print(output: str, answer: Compared | None) -> None:
    """The table, the comparison object in a kubectl form, or (-o name) what was compared, without namespace;
    nothing compared (None): kubectl's empty answer, an empty List (a table: nothing, "No resources found")."""
    if answer is None:
        echo_table("" if output in TABLE_FORMS else render_list([], output), output)
    elif output in TABLE_FORMS:
        echo(answer.table, nl=False)
    elif output == "name":
        echo(render_list([named_object(kind, name) for kind, name in answer.about], output), nl=False)
    else:
        echo(render_list([answer.item], output, single=True), nl=False)


def _compare(
    bundle: Bundle,
    node: str | None,
    feature_gates: str,
    claims: str | None,
    pods: str | None,
    objective: Objective,
    timeout: float,
    workers: int,
    cel_engine: str | None,
) -> Comparison | None:
    """The question `drasat solve` would answer for these options, put to both searches; None when it has no
    claim (the notice says why, as solve's)."""
    from drasat.models.errors import AllocationError
    from drasat.solver import Features
    from drasat.solver.report.comparison import ERROR
    from drasat.solver.report.comparison import compare as run_compare
    from drasat.solver.scheduling.pod_problem import pods_problem

    question = pods_problem(
        list(bundle),
        node=node,
        pods=names_option(pods),
        claims=names_option(claims),
        features=Features.parse(feature_gates),
        locate=bundle.location_of,
    )
    for pod, why in question.left_out:
        echo(f"pod {pod} is not allocated: {why}", err=True)
    problem = question.problem
    if not problem.claims:
        say_nothing_to_allocate(list(bundle), claims)
        return None
    result = run_compare(problem, objective=objective, time_limit=timeout, workers=workers, cel_engine=cel_engine)
    if result.greedy.verdict == ERROR and result.cp_sat.verdict == ERROR:
        # both refuse the input in the allocator's words (a DeviceClass that is not there): that is bad
        # input, as `drasat solve` says it, not two identical choices
        raise result.greedy.error or AllocationError(result.greedy.message)
    return result
