"""``drasat explain``: why claims cannot be allocated on a node — the funnel, then a minimal conflict."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

import click
import yaml

from drasat.cli.allocation_options import (
    ALLOW_INVALID,
    CEL_ENGINE,
    FEATURE_GATES,
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
from drasat.cli.nothing_to_do import say_no_pending_pods, say_nothing_to_allocate
from drasat.cli.options import Seconds
from drasat.cli.progress import Bar
from drasat.cli.render.explain import explanation_text, pod_text
from drasat.cli.render.kubectl import render_data
from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError, InputError

from ..startup import importing

BATCH_SHARE = 0.5  # of the time left once the pods are explained, for the joint placement of a pending pod

if TYPE_CHECKING:
    from drasat.models.bundle import Bundle
    from drasat.solver.explanation.explain import Explanation
    from drasat.solver.scheduling.pod_explanation import PodExplanation

EPILOG = """\b
Exit status: 0 the claims can be allocated together (explain says so and
shows the devices solve would choose), or there is nothing to explain (no
pending claim or pod: a notice says so, as solve's); 1 they cannot (the
explanation is printed), or no answer within --timeout; 2 invalid input, or
an error Kubernetes' allocator itself would return.

\b
Examples:
  drasat explain --node gpu-node-1 --claims default/two-gpus examples/
  # every node, as the scheduler would try them
  drasat explain --pods team-a/trainer-0 cluster/
  drasat explain -o json --node gpu-node-1 examples/
"""


@click.command(epilog=EPILOG)
@input_options
@namespace_options
@ALLOW_INVALID
@click.option(
    "--node",
    metavar="NAME",
    help="Node to explain for (default: the only Node in the input; with Pods "
    "and several Nodes, every node as the scheduler judges them).",
)
@click.option("--claims", metavar="NS/NAME,...", help="Claims to explain, as `drasat solve` takes them.")
@click.option(
    "--pods",
    metavar="NS/NAME,...",
    help="Explain these Pods as the scheduler judges them, each "
    "in the state its queue leaves it (the pending pods before it placed, as drasat schedule places them): "
    "over every node (its summary line, then the devices per class of nodes), or with --node over that "
    "node alone; a pod left pending names the pods that took its room, and says whether "
    "`drasat schedule --batch` would place it. Not with --claims.",
)
@FEATURE_GATES
@click.option(
    "--timeout",
    type=Seconds(),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Time for the whole explanation: the allocation, then the search for a minimal conflict "
    "(what would fix it takes at most 10 s of it).",
)
@CEL_ENGINE
@binding_options
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "yaml", "name"]),
    default="text",
    show_default=True,
    help="text for people; json or yaml: the same as data; name: pod/NAME (or resourceclaim.resource.k8s.io/NAME) "
    "of each pod or claim explained.",
)
def explain(
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
    timeout: float,
    cel_engine: str | None,
    now: Any,
    binding_timeout: float,
    output: str,
) -> None:
    """Explain why claims cannot be allocated together on a node.

    First the funnel: for each request and alternative, how many devices the
    node offers it and what removed the others (selectors, node selection,
    pools, taints, devices in use, ...), naming a few devices per reason. A
    request with too few candidates is the cause. Otherwise, the conflicts:
    each a minimal set of DRA rule instances (a device allocated once, a
    claim's matchAttribute, a counter set, a device's capacity) that cannot
    hold together, each member with its numbers. Every independent conflict is
    named (all of them must be resolved), and "dropping it lets the claims
    fit" is said only where a solve showed it. Then what would fix it, where
    cheap: the largest count that
    fits, the allocated claim whose release makes it fit, the feature gate to
    turn on. Claims that fit are shown with the devices solve would choose.
    """
    bundle = None
    try:
        bundle = read_inputs(
            files, kubeconfig, context, filenames, output=output, needs=scheduling_needs(pods is not None)
        )
        pods = in_namespace(pods, namespace, all_namespaces)
        if pods is not None and claims is not None:
            raise InputError(
                "--claims cannot be combined with --pods: a pod is explained with its own claims "
                "(use `drasat solve --pods ... --claims ...` to allocate them together)"
            )
        clock = binding_clock(now, binding_timeout)
        if pods is not None or (node is None and claims is None and _pods_over_nodes(bundle)):
            per_pod = _explain_pods(bundle, pods, node, namespace, feature_gates, timeout, (cel_engine, clock), output)
            data: Any = {"kind": "PodExplanationList", "pods": [p.to_data() for p in per_pod]}
            text = "\n".join("\n".join([pod_text(p), *p.binding]) for p in per_pod)
            feasible = all(p.feasible for p in per_pod)
        else:
            found = _explain(
                bundle,
                node,
                in_namespace(claims, namespace, all_namespaces),
                namespace,
                feature_gates,
                timeout,
                cel_engine,
                clock,
            )
            if found is None:  # nothing to allocate (the notice says why): nothing to explain, as solve's answer
                data, text, feasible = {"kind": "ClaimsExplanation", **_nothing().to_data()}, "", True
            else:
                data = {"kind": "ClaimsExplanation", **found.to_data()}
                text, feasible = explanation_text(found), found.feasible
    except DrasatError as exc:
        exit_on_error(told_as_validate(exc, bundle), False, timeout)
        return
    if output == "json":
        echo(json.dumps(data, indent=2))
    elif output == "yaml":
        echo(yaml.safe_dump(data, sort_keys=False), nl=False)
    elif output == "name":
        echo(render_data(data, output, _explained(data)), nl=False)
    elif text:
        echo(text)
    sys.exit(0 if feasible else 1)


def _explained(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods or claims an explanation is about, as objects for ``-o name`` (kubectl's: without namespace)."""
    if data["kind"] == "PodExplanationList":
        return [{"kind": "Pod", "metadata": {"name": p["pod"].rsplit("/", 1)[-1]}} for p in data["pods"]]
    claims = dict.fromkeys(f["claim"] for f in data.get("funnel", []))
    return [{"kind": "ResourceClaim", "metadata": {"name": c.rsplit("/", 1)[-1]}} for c in claims]


def _explain(
    bundle: Bundle,
    node: str | None,
    claims: str | None,
    namespace: str | None,
    feature_gates: str,
    timeout: float,
    cel_engine: str | None,
    clock: Any = None,
) -> Explanation | None:
    """The explanation of the pending claims on the node; None when there is none (the notice says why)."""
    with importing():
        from drasat.solver import Features
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.explanation.explain import explain as run_explain
        from drasat.solver.scheduling.pod_problem import pods_problem

    question = pods_problem(
        list(bundle),
        node=node,
        pods=None,
        claims=names_option(claims),
        features=Features.parse(feature_gates),
        locate=bundle.location_of,
        namespace=namespace,
        clock=clock,
    )
    for note in question.binding_notes:
        echo(note, err=True)
    for pod, why in question.left_out:
        echo(f"pod {pod} is not explained: {why}", err=True)
    if not question.problem.claims:
        say_nothing_to_allocate(list(bundle), claims)
        return None
    return run_explain(question.problem, evaluator=SelectorEvaluator(cel_engine), time_limit=timeout)


def _nothing() -> Explanation:
    """The explanation of no claim at all, as data: they fit (there is nothing to fit), no funnel, no choice."""
    from drasat.solver.explanation.explain import Explanation

    return Explanation(feasible=True, funnel=[])


def _pods_over_nodes(bundle: Bundle) -> bool:
    """Pods and several Nodes, and no node named: the scheduler's question (which node, if any?)."""
    kinds = [obj.kind for obj in bundle]
    return "Pod" in kinds and kinds.count("Node") > 1


def _explain_pods(
    bundle: Bundle,
    pods: str | None,
    node: str | None,
    namespace: str | None,
    feature_gates: str,
    timeout: float,
    engine_and_clock: tuple[str | None, Any],
    output: str,
) -> list[PodExplanation]:
    """Each pod as the scheduler judges it: over every node, or with ``node`` over that node alone (its own
    filters too: CPU, taints, ... — a pod is never called feasible on its devices only)."""
    with importing():
        from drasat.solver import Features
        from drasat.solver.cel import SelectorEvaluator
        from drasat.solver.scheduling.cluster import cluster_from_objects, key_of
        from drasat.solver.scheduling.pod_explanation import explain_pods
        from drasat.solver.scheduling.pod_inputs import refuse_unstorable_pods
        from drasat.solver.scheduling.pods import pending_pods, select_pods

    cel_engine, clock = engine_and_clock
    cluster = cluster_from_objects(list(bundle), Features.parse(feature_gates), clock)
    if node is not None and node not in {n.name for n in cluster.nodes}:
        raise InputError(f"--node {node}: no Node of that name in the input")
    if pods is not None:
        chosen = select_pods(cluster, names_option(pods) or [])
    else:  # every pending pod (of the namespace), as drasat schedule takes them
        chosen = [p for p in pending_pods(cluster) if namespace is None or key_of(p)[0] == namespace]
    refuse_unstorable_pods(cluster, chosen, bundle.location_of)
    if not chosen:
        say_no_pending_pods(namespace)
        return []
    started = time.monotonic()
    evaluator = SelectorEvaluator(cel_engine)
    with Bar("explaining pods", output=output) as bar:
        found = explain_pods(cluster, chosen, evaluator=evaluator, time_limit=timeout, progress=bar.update, node=node)
    if any(p.queue is not None and p.queue.alone is not None for p in found):  # the queue is why: would --batch?
        _joint(cluster, found, evaluator, max(timeout - (time.monotonic() - started), 0.0) * BATCH_SHARE)
    return found


def _joint(cluster: Any, found: list[PodExplanation], evaluator: Any, seconds: float) -> None:
    """Where ``schedule --batch`` puts each pod left pending: every pending pod placed jointly, as that command
    places them, within the time left."""
    from drasat.solver.batch.placement import schedule_batch
    from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
    from drasat.solver.scheduling.pod_explanation import with_batch

    seconds = max(seconds, 0.1)  # what is left: --timeout bounds the whole command (an answer unproven then says so)
    result = schedule_batch(cluster, options=AllocateOptions(time_limit=seconds, evaluator=evaluator))
    with_batch(found, result.placements, result.summary.proven, seconds)
