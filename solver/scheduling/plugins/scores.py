"""kube-scheduler's default-profile scores for the plugins drasat models, with their weights.

NodeResourcesFit (least allocated) and DynamicResources are computed with the
resources and devices; this module adds the others the default profile runs on
every node that passed the filters — TaintToleration (PreferNoSchedule taints the
pod does not tolerate, fewer is better, weight 3), NodeAffinity (weights of the
matching preferred terms, weight 2) and NodeResourcesBalancedAllocation (cpu and
memory used in equal shares, weight 1) — and the normalisation upstream applies
(``DefaultNormalizeScore``), so that the node chosen is the one kube-scheduler
would choose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from drasat.models.core import Node, Pod
from drasat.models.errors import SelectorParseError
from drasat.models.meta import NodeSelector
from drasat.solver.allocation.planning.node_selectors import selector_matches
from drasat.solver.allocation.rules.taints import tolerates

from .node_filters import node_info

MAX_SCORE = 100
WEIGHT_TAINT_TOLERATION = 3
WEIGHT_NODE_AFFINITY = 2
WEIGHT_BALANCED_ALLOCATION = 1
WEIGHT_NODE_RESOURCES_FIT = 1
WEIGHT_DYNAMIC_RESOURCES = 1


def intolerable_prefer_no_schedule(pod: Pod, node: Node) -> int:
    """TaintToleration's raw score: PreferNoSchedule taints none of the pod's tolerations (with an empty
    or PreferNoSchedule effect) tolerate."""
    tolerations = [t for t in pod.spec.tolerations if not t.effect or t.effect == "PreferNoSchedule"]
    return sum(
        1
        for taint in (node.spec.taints if node.spec else [])
        if taint.effect == "PreferNoSchedule" and not any(tolerates(t, taint) for t in tolerations)
    )


def preferred_affinity(pod: Pod, node: Node) -> int:
    """NodeAffinity's raw score: the summed weights of the preferred terms the node matches (a term that
    does not parse matches nothing, as upstream skips it)."""
    total = 0
    for term in pod.preferred_node_terms():
        if not (term.preference.match_expressions or term.preference.match_fields):
            continue
        try:
            if selector_matches(node_info(node), NodeSelector(node_selector_terms=[term.preference])):
                total += term.weight
        except SelectorParseError:
            continue
    return total


def balanced_allocation(
    allocatable: Mapping[str, Fraction], used: Mapping[str, Fraction], request: Mapping[str, Fraction]
) -> int:
    """NodeResourcesBalancedAllocation: 100 × (1 − the standard deviation of the cpu and memory shares in
    use once the pod is placed), with requests as written (no defaults for missing ones). A pod asking for
    neither is not scored at all (upstream skips best-effort pods so they do not pile onto one node)."""
    if not any(request.get(name, Fraction(0)) > 0 for name in ("cpu", "memory")):
        return 0
    shares = []
    for name in ("cpu", "memory"):
        capacity = allocatable.get(name, Fraction(0))
        if capacity > 0:
            shares.append(min(Fraction(1), (used.get(name, Fraction(0)) + request.get(name, Fraction(0))) / capacity))
    deviation = abs(shares[0] - shares[1]) / 2 if len(shares) == 2 else Fraction(0)
    return int(float(1 - deviation) * MAX_SCORE)


def normalized(scores: Sequence[int], reverse: bool = False) -> list[int]:
    """Upstream's DefaultNormalizeScore: scaled to 0..100 by the largest; reversed, fewer is better."""
    largest = max(scores, default=0)
    if largest == 0:
        return [MAX_SCORE if reverse else score for score in scores]
    scaled = [MAX_SCORE * score // largest for score in scores]
    return [MAX_SCORE - score for score in scaled] if reverse else scaled
