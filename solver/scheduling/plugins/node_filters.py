"""kube-scheduler's node filters that do not involve devices, with the scheduler's own reasons.

Each filter answers for one pod and one node, in the default profile's order —
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity — and the first that
fails gives the node's reason, worded as kube-scheduler words it so that the
summary line reads like ``kubectl describe pod``. Resources (NodeResourcesFit)
and devices (DynamicResources) come after these, in the scheduling loop.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from drasat.models.core import Node, Pod, Taint
from drasat.models.errors import InputError, SelectorParseError
from drasat.models.meta import NodeSelector
from drasat.solver.allocation.planning.node_selectors import selector_matches
from drasat.solver.allocation.problem import NodeInfo
from drasat.solver.allocation.rules.taints import tolerates
from drasat.solver.scheduling.cluster import label_of

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_DRA = "cannot allocate all claims"
REASON_NOT_ON_NODE = "resourceclaim not available on the node"  # DynamicResources: its claim is reserved elsewhere
REASON_PINNED = "node(s) didn't satisfy plugin(s) [NodeAffinity]"  # absent from NodeAffinity's PreFilter result
REASON_PIN_CONFLICT = "pod affinity terms conflict"  # every term pins metadata.name, and no name is left


def node_info(node: Node) -> NodeInfo:
    """The name, labels and declared features of a Node: what slice node selectors are matched against."""
    return NodeInfo.of(node)


def untolerated_taint(pod: Pod, node: Node) -> Taint | None:
    """The first NoSchedule/NoExecute taint of the node that none of the pod's tolerations tolerate."""
    for taint in node.spec.taints if node.spec else []:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in pod.spec.tolerations):
            return taint
    return None


def matches_affinity(pod: Pod, node: Node) -> bool:
    """``spec.nodeSelector`` (every label equal) and the required node affinity terms (any term)."""
    labels = node.metadata.labels
    if any(labels.get(key) != value for key, value in pod.spec.node_selector.items()):
        return False
    terms = pod.required_node_terms()
    if not terms:
        return True
    try:
        return selector_matches(node_info(node), NodeSelector(node_selector_terms=terms))
    except SelectorParseError as exc:
        raise InputError(f"Pod {label_of(pod)}: spec.affinity.nodeAffinity: {exc}") from None


def unschedulable_reason(pod: Pod, node: Node) -> list[str]:
    """NodeUnschedulable: a cordoned node runs only pods tolerating its unschedulable taint."""
    spec = node.spec
    if (
        spec is not None
        and spec.unschedulable
        and not any(tolerates(t, Taint(key=UNSCHEDULABLE_TAINT, effect="NoSchedule")) for t in pod.spec.tolerations)
    ):
        return [REASON_UNSCHEDULABLE]
    return []


def node_name_reason(pod: Pod, node: Node) -> list[str]:
    """NodeName: a pod naming a node runs there only."""
    return [REASON_NODE_NAME] if pod.spec.node_name and pod.spec.node_name != node.name else []


def taint_reason(pod: Pod, node: Node) -> list[str]:
    """TaintToleration's filter: the first NoSchedule/NoExecute taint the pod does not tolerate."""
    taint = untolerated_taint(pod, node)
    return [] if taint is None else [f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}"]


def affinity_reason(pod: Pod, node: Node) -> list[str]:
    """NodeAffinity's filter: the node selector and the required node affinity."""
    return [] if matches_affinity(pod, node) else [REASON_AFFINITY]


def filter_reasons(pod: Pod, node: Node) -> list[str]:
    """Why ``node`` cannot run ``pod`` before resources and devices are looked at ([] = it passes): the
    filters above in the default profile's order, the first that fails."""
    return (
        unschedulable_reason(pod, node)
        or node_name_reason(pod, node)
        or taint_reason(pod, node)
        or affinity_reason(pod, node)
    )


def pinned_nodes(pod: Pod) -> set[str] | None:
    """NodeAffinity's PreFilter: when every required term pins ``metadata.name`` (matchFields In), only
    those nodes are looked at (a term's pins intersect, terms unite); None when some term pins nothing."""
    names: set[str] | None = None
    for term in pod.required_node_terms():
        pins: set[str] | None = None
        for requirement in term.match_fields:
            if requirement.key == "metadata.name" and requirement.operator == "In":
                values = set(requirement.values)
                pins = values if pins is None else pins & values
        if pins is None:
            return None
        names = pins if names is None else names | pins
    return names


def summary(total_nodes: int, reasons: Iterable[Sequence[str]], prefilter: str = "") -> str:
    """The scheduler's one-line verdict for a pod no node can run, as kube-scheduler's FitError writes it:
    ``0/12 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu.``
    Each reason with its node count, sorted as strings (so a count of 10 sorts before 2, as upstream),
    joined by ", " and ended with a period; a PreFilter failure stands alone."""
    head = f"0/{total_nodes} nodes are available:"
    if prefilter:
        return f"{head} {prefilter}."
    counts = Counter(reason for node_reasons in reasons for reason in node_reasons)
    listed = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return f"{head} {listed}." if listed else head
