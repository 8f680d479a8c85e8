"""kube-scheduler's node filters that do not involve devices, with the scheduler's own reasons.

Each filter answers for one pod and one node, in the default profile's order —
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity — and the first that
fails gives the node's reason, worded as kube-scheduler words it so that the
summary line reads like ``kubectl describe pod``. Resources (NodeResourcesFit)
and devices (DynamicResources) come after these, in the scheduling loop.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from drasat.models.core import Node, Pod, Taint, Toleration
from drasat.models.errors import InputError
from drasat.models.meta import NodeSelector

from .cluster import label_of
from .nodes import SelectorParseError, selector_matches
from .problem import NodeInfo

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_DRA = "cannot allocate all claims"


def node_info(node: Node) -> NodeInfo:
    return NodeInfo(node.name, dict(node.metadata.labels))


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes' ToleratesTaint: effect (empty = any), then key and value by operator."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.value or "") == (taint.value or "")


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


def filter_reasons(pod: Pod, node: Node) -> list[str]:
    """Why ``node`` cannot run ``pod`` before resources and devices are looked at ([] = it passes)."""
    spec = node.spec
    if spec is not None and spec.unschedulable and not any(
            tolerates(t, Taint(key=UNSCHEDULABLE_TAINT, effect="NoSchedule")) for t in pod.spec.tolerations):
        return [REASON_UNSCHEDULABLE]
    if pod.spec.node_name and pod.spec.node_name != node.name:
        return [REASON_NODE_NAME]
    taint = untolerated_taint(pod, node)
    if taint is not None:
        return [f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}"]
    if not matches_affinity(pod, node):
        return [REASON_AFFINITY]
    return []


def summary(total_nodes: int, reasons: Iterable[Sequence[str]], prefilter: str = "") -> str:
    """The scheduler's one-line verdict for a pod no node can run:
    ``0/12 nodes are available: 8 cannot allocate all claims, 3 Insufficient cpu, 1 node(s) had ...``.
    Counts come first, largest first, then by reason, so that the line reads the same every time."""
    if prefilter:
        return f"0/{total_nodes} nodes are available: {prefilter}"
    counts = Counter(reason for node_reasons in reasons for reason in node_reasons)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{n} {reason}" for reason, n in ordered)
    return f"0/{total_nodes} nodes are available: {listed}" if listed else f"0/{total_nodes} nodes are available"
