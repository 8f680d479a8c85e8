"""``drasat solve``: allocate claims on a node and print them with ``status.allocation`` set."""

from __future__ import annotations

from typing import Any

import click

from drasat.cli.allocation_options import (
    NODE,
    allocation_options,
    binding_clock,
    binding_options,
    exit_on_error,
    names_option,
)
from drasat.cli.inputs import (
    in_namespace,
    input_options,
    namespace_options,
    read_inputs,
    scheduling_needs,
    told_as_validate,
)
from drasat.cli.nothing_to_do import say_nothing_to_allocate
from drasat.cli.output_state import state_option, write_state
from drasat.cli.render.allocation import allocation_table
from drasat.cli.render.kubectl import forms_epilog, output_options, render_list
from drasat.cli.render.tables import echo_table
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError, InternalError, Unschedulable
from drasat.solver.allocation.options import Objective, Solver

from ..startup import importing

BEST_SO_FAR = 4  # exit status: a valid allocation printed, the time limit reached before the objective's answer

EPILOG = """\b
Exit status: 0 all claims allocated (a pending pod that cannot have its claims
— scheduling gates, a missing template — is named on stderr and left out,
unless --pods names it); 1 no allocation exists for all of them together, or
none was found within --timeout (one line on stderr, nothing on stdout);
2 invalid input, unknown node or claim, or a CEL error (nothing on stdout);
3 an internal error of drasat; 4 the time ran out after an allocation was
found: it is printed (checked by drasat's verifier) but may not be the
--objective's answer.

\b
Examples:
  drasat solve --node gpu-node-1 examples/
  kubectl get resourceslices,deviceclasses,resourceclaims,nodes -A -o yaml \\
      | drasat solve --node worker-3 -o table -
  drasat solve --claims train,infer --objective prioritized-list \\
      cluster.yaml
  drasat solve --node gpu-node-1 --pods default/trainer-0 examples/

\b
Every device chosen, with kubectl's JSONPath:
  drasat solve --node gpu-node-1 examples/ -o \\
      'jsonpath={.items[*].status.allocation.devices.results[*].device}'
"""


@click.command(epilog=EPILOG + "\n" + forms_epilog("the allocated ResourceClaims"))
@input_options
@namespace_options
@NODE
@click.option(
    "--claims",
    metavar="NS/NAME,...",
    help="Claims to allocate, in this order "
    "(default: the claims of the pending Pods, or every claim without status.allocation when the "
    "input has no Pods). A bare name must be unambiguous.",
)
@click.option(
    "--pods",
    metavar="NS/NAME,...",
    help="Allocate the claims of these Pods (templates, PodGroup "
    "claims and extended resources included), after those named by --claims.",
)
@allocation_options
@binding_options
@output_options(
    ("table", "wide"),
    "yaml",
    "yaml/json: a v1 List of the allocated ResourceClaims; table: one line per device (claim, request, "
    "device); wide: with driver, pool, share ID, consumed capacity, conditions and node selector.",
)
@state_option
@click.option("-v", "--verbose", is_flag=True, help="Print how the answer was found, or why there is none, on stderr.")
def solve(
    files: tuple[str, ...],
    filenames: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    all_namespaces: bool,
    node: str | None,
    claims: str | None,
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
    output_state: str | None,
    verbose: bool,
) -> None:
    """Allocate devices for ResourceClaims on one node, all claims together.

    FILE is a YAML or JSON file (multi-document, List kinds and `kubectl get -o yaml`
    output are fine), a directory (read recursively), or - for stdin. Claims that
    already have status.allocation count as devices in use. With Pods in the input,
    the claims of the pending pods are allocated (generated from templates where
    needed) and nothing else unless named with --claims. With --kubeconfig/--context the
    live cluster's objects are read (read-only) and files add to them.

    Objects are taken as the API server stores them: its defaults applied (a
    missing or zero count is 1), and objects it would never store refused (a
    negative count, no name, numbers beyond int64; `drasat validate` checks the
    rest).

    Prints a v1 List of the newly allocated ResourceClaims with status.allocation set;
    --output-state also writes the whole input with them merged in (nothing when no
    allocation exists).
    """
    bundle = None
    try:
        bundle = read_inputs(
            files, kubeconfig, context, filenames, output=output, needs=scheduling_needs(pods is not None)
        )
        claims, pods = in_namespace(claims, namespace, all_namespaces), in_namespace(pods, namespace, all_namespaces)
        allocated, exact = _solve(
            bundle,
            node,
            namespace,
            feature_gates,
            claims,
            pods,
            solver,
            objective,
            timeout,
            workers,
            (cel_engine, binding_clock(now, binding_timeout)),
            verbose,
        )
        if output_state:
            write_state(output_state, bundle, allocated)
    except DrasatError as exc:
        exit_on_error(told_as_validate(exc, bundle), verbose, timeout)
        return
    echo_table(render(allocated, output), output, namespace)
    if not exact:
        echo(
            f"warning: the time limit ({timeout:g} s) was reached: this allocation is valid (verified) but "
            f"may not be the {objective} answer; raise --timeout for it",
            err=True,
        )
        raise SystemExit(BEST_SO_FAR)


def _solve(
    bundle, node, namespace, feature_gates, claims, pods, solver, objective, timeout, workers, engine_clock, verbose
) -> tuple[list[dict[str, Any]], bool]:
    with importing():
        from drasat.solver import Features, allocate
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.pod_problem import pods_problem

    cel_engine, clock = engine_clock
    objects = list(bundle)
    features = Features.parse(feature_gates)
    question = pods_problem(
        objects,
        node=node,
        pods=names_option(pods),
        claims=names_option(claims),
        features=features,
        locate=bundle.location_of,
        namespace=namespace,
        clock=clock,
    )
    problem = question.problem
    with importing():  # the CEL engine's modules; a bad engine is the one message, before any notice
        evaluator = SelectorEvaluator(cel_engine)
    for note in question.binding_notes:
        echo(note, err=True)
    _say_what_is_left(question, objects, claims, namespace)
    if not any(n.kind == "Node" for n in objects):
        echo(
            f"warning: no Node objects in the input: node {problem.node.name} has no labels, "
            "so slices selected by node labels do not match",
            err=True,
        )
    try:
        answer = allocate(
            problem, solver=solver, objective=objective, time_limit=timeout, workers=workers, evaluator=evaluator
        )
    except Unschedulable as exc:
        if verbose:  # the same explanation `drasat explain` gives, in short; the verdict alone has none
            from drasat.solver import explain

            exc.reasons = explain(problem, evaluator=evaluator, time_limit=timeout, proven=exc).summary()
        raise
    if verbose:
        s = answer.stats
        notes = "".join(f"; {note}" for note in s.notes)
        echo(
            f"solved by {s.solver} in {s.seconds * 1000:.1f} ms (greedy steps {s.greedy_steps}, "
            f"CP-SAT solves {s.cp_sat_solves}){notes}",
            err=True,
        )
    allocated = _printed(question, answer.results, clock)
    if not answer.stats.exact:
        _check_best_so_far(problem, answer.results)
    return allocated, answer.stats.exact


def _printed(question: Any, results: Any, clock: Any) -> list[dict[str, Any]]:
    """The allocated claims as the API would store them: each allocation stamped at --now, reserved for the
    pods it is for; a claim whose devices have binding conditions is said to make its pod wait in PreBind."""
    from drasat.solver.allocation.problem import claim_key
    from drasat.solver.scheduling.plugins.binding_conditions import stamped, waiting_with

    allocated = []
    for claim in question.problem.claims:
        body = claim.to_api()
        body["apiVersion"] = "resource.k8s.io/v1"
        status = body.setdefault("status", {})
        allocation = stamped(results[claim_key(claim)], clock)
        status["allocation"] = allocation.to_api()
        wait = waiting_with(claim, allocation, clock, question.problem.features)
        if wait is not None:
            echo(f"notice: a pod using it waits in PreBind: {wait.describe()}", err=True)
        reserved = [r.to_api() for r in question.consumers.get(claim_key(claim), [])]
        if reserved:
            status["reservedFor"] = status.get("reservedFor", []) + reserved
        allocated.append(body)
    return allocated


def _check_best_so_far(problem: Any, results: Any) -> None:
    """An answer cut short by the time limit is only printed if the independent verifier accepts it."""
    from drasat.solver.verification.verifier import verify

    problems = verify(problem, results)
    if problems:
        raise InternalError("the allocation found before the time limit does not verify: " + "; ".join(problems))


def _say_what_is_left(question: Any, objects: list, claims: str | None, namespace: str | None) -> None:
    """Pods not allocated and why, nothing to allocate and why, pending claims left alone: all on stderr."""
    from drasat.solver.allocation.problem import claim_key

    for pod, why in question.left_out:
        echo(f"pod {pod} is not allocated: {why}", err=True)
    if not question.problem.claims:
        say_nothing_to_allocate(objects, claims)
    if claims is None:
        _say_left_alone(objects, {claim_key(c) for c in question.problem.claims}, namespace)


def _say_left_alone(objects: list, chosen: set[str], namespace: str | None) -> None:
    """Pending claims that pending pods' claims pushed aside, named on stderr: never skipped silently."""
    from drasat.solver.allocation.problem import claim_key

    left = [
        claim_key(o)
        for o in objects
        if o.kind == "ResourceClaim"
        and (o.status is None or o.status.allocation is None)
        and (namespace is None or o.namespace == namespace)
        and claim_key(o) not in chosen
    ]
    if left:
        echo(
            f"notice: {len(left)} pending claim{'s' if len(left) != 1 else ''} no pending pod uses "
            f"{'are' if len(left) != 1 else 'is'} left alone (name them with --claims to allocate them): "
            f"{', '.join(left)}",
            err=True,
        )


def render(claims: list[dict[str, Any]], output: str) -> str:
    """The allocated claims as kubectl would print their List (yaml, json, name, jsonpath) or a human table."""
    if output in ("table", "wide"):
        return allocation_table(claims, wide=output == "wide")
    return render_list(claims, output)
