"""What cluster-autoscaler would add: its binpacking estimator (first fit decreasing) over the node templates.

As cluster-autoscaler's ``BinpackingNodeEstimator.Estimate`` does (``estimator/binpacking_estimator.go``):
pods that fit the existing nodes are taken out first (the scheduler will place them); the rest, grouped
into equivalence groups ordered by ``DecreasingPodOrderer`` (a pod's cpu and memory requests over the
template's allocatable, largest first), go group by group: each pod onto any node added so far while
that works, then only onto the last node added, a new node of the template when the last one refuses it
(none when the last one added is still empty, or the template's maximum count is reached). Every check
is drasat's scheduler (``schedule_one``: the filters, and DRA allocation by Kubernetes' own
algorithm), restricted to the nodes the estimator may use. Each loop of cluster-autoscaler then scales
one node group: here the template helping the most pods (then the cheapest) is chosen, and loops repeat
on what is still pending, while they help.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from drasat.models.core import Affinity, NodeAffinity, Pod
from drasat.models.meta import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from drasat.solver.batch.pod_classes import pod_key, sort_queue
from drasat.solver.scheduling.cluster import Cluster, label_of
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.one_by_one import Placement, schedule_one
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.scheduling.plugins.node_resources import allocatable_of, pod_requests
from drasat.solver.scheduling.pods import pending_pods

from .templates import NodeTemplate


@dataclass
class Estimate:
    """The estimator's answer: nodes per template (in the loops' order), where each pod went, what is left."""

    nodes: dict[str, list[str]] = field(default_factory=dict)  # template -> new nodes holding pods
    placed: dict[str, Placement] = field(default_factory=dict)  # pod -> its placement (existing node or new)
    pending: list[str] = field(default_factory=list)
    cost: float = 0.0
    cut: bool = False  # the time limit stopped it: pods it had not reached are in ``pending``

    @property
    def added(self) -> int:
        return sum(len(v) for v in self.nodes.values())

    def to_data(self) -> dict[str, Any]:
        return {
            "nodesAdded": self.added,
            "cost": self.cost,
            "templates": {t: len(v) for t, v in self.nodes.items()},
            "pending": self.pending,
            "cutByTimeout": self.cut,
        }


def estimate(cluster: Cluster, templates: Sequence[NodeTemplate], max_nodes: int, options: AllocateOptions) -> Estimate:
    """First fit decreasing over the templates, loop by loop (see the module docstring)."""
    from .fit import committed
    from .scale_up import with_copies

    ends = time.monotonic() + options.time_limit
    cache: dict[tuple, Any] = {}
    out = Estimate()
    left, first = [], []
    state = ClusterState(cluster)  # the existing nodes alone: the scheduler's pass, unpinned
    for pod in pending_pods(cluster):
        if time.monotonic() > ends:
            out.cut = True
            left.append(pod)
            continue
        p = schedule_one(state, pod, options, cache)
        if p.node:
            out.placed[label_of(pod)] = p
            first.append(p)
        else:
            left.append(pod)
    grown, _ = with_copies(committed(cluster, first), templates)
    state = ClusterState(grown)
    used = {t.name: 0 for t in templates}
    while left and sum(used.values()) < max_nodes and not out.cut:
        packing = (ends, options, cache)
        best = _best_loop(state, grown, templates, left, used, max_nodes - sum(used.values()), packing)
        if best is None:
            out.cut = time.monotonic() > ends
            break
        template, nodes, placed = best
        out.nodes.setdefault(template.name, []).extend(nodes)
        out.cost += float(template.cost) * len(nodes)
        used[template.name] += len(nodes)
        out.placed.update(placed)
        left = [p for p in left if label_of(p) not in placed]
    out.pending = [label_of(p) for p in left]
    return out


def _best_loop(
    state: ClusterState,
    grown: Cluster,
    templates: Sequence[NodeTemplate],
    left: list[Pod],
    used: dict[str, int],
    room: int,
    packing: tuple[float, AllocateOptions, dict[tuple, Any]],
) -> tuple[NodeTemplate, list[str], dict[str, Placement]] | None:
    """One loop of cluster-autoscaler: every template estimated on a fork of the state; the one helping the most
    pods (then the cheapest) is kept, its placements applied to the state."""
    start = state.snapshot()
    best: tuple[tuple[int, float], NodeTemplate, list[str], dict[str, Placement], Any] | None = None
    for t in templates:
        most = min(t.max_count - used[t.name], room)
        if most <= 0:
            continue
        nodes, placed, cut = _one_template(state, grown, t, left, used[t.name], most, packing)
        if cut:
            state.restore(start)
            return None
        key = (len(placed), -float(t.cost) * len(nodes))
        if placed and (best is None or key > best[0]):
            best = (key, t, nodes, placed, state.snapshot())
        state.restore(start)
    if best is None:
        return None
    state.restore(best[4])
    return best[1], best[2], best[3]


def _one_template(
    state: ClusterState,
    grown: Cluster,
    template: NodeTemplate,
    pods: list[Pod],
    first: int,
    most: int,
    packing: tuple[float, AllocateOptions, dict[tuple, Any]],
) -> tuple[list[str], dict[str, Placement], bool]:
    """The estimator for one template: copies ``first`` .. ``first + most - 1`` are its new nodes. Returns the
    new nodes that took pods, where each pod went, and whether the time limit cut it."""
    queue = sort_queue(grown, pods, state.book)
    groups: dict[Any, list[Pod]] = {}
    for pod in pods:
        groups.setdefault(queue.class_of.get(pod_key(pod), label_of(pod)), []).append(pod)
    allocatable = allocatable_of(template.node)
    packer = _Packer(state, template, first, most, packing)
    for group in sorted(groups.values(), key=lambda g: -_score(g[0], allocatable)):
        packer.on_new_nodes(packer.on_added_nodes(group))
    return packer.with_pods, packer.placed, packer.cut


class _Packer:
    """One estimation's state: the nodes added (in order), those holding pods, where each pod went."""

    def __init__(
        self,
        state: ClusterState,
        template: NodeTemplate,
        first: int,
        most: int,
        packing: tuple[float, AllocateOptions, dict[tuple, Any]],
    ) -> None:
        self.state, self.template, self.first, self.most = state, template, first, most
        self.ends, self.options, self.cache = packing
        self.cut = False
        self.new: list[str] = []
        self.with_pods: list[str] = []
        self.placed: dict[str, Placement] = {}

    def fits(self, pod: Pod, names: list[str]) -> bool:
        """Whether the scheduler places the pod on one of ``names`` (it is then bound there); after the time
        limit, no pod is placed any more."""
        if time.monotonic() > self.ends:
            self.cut = True
            return False
        p = schedule_one(self.state, pinned(pod, names), self.options, self.cache)
        if p.node:
            self.placed[label_of(pod)] = p
            if p.node not in self.with_pods:
                self.with_pods.append(p.node)
        return p.node is not None

    def on_added_nodes(self, group: list[Pod]) -> list[Pod]:
        """tryToScheduleOnExistingNodes: the group's pods onto any node added so far, until one does not fit;
        the pods left."""
        for i, pod in enumerate(group):
            if not self.new or not self.fits(pod, self.new):
                return group[i:]
        return []

    def on_new_nodes(self, pods: list[Pod]) -> None:
        """tryToScheduleOnNewNodes: each pod onto the last node added, else onto a new one (none when the last
        one is still empty or the count is reached; a pod the new node refuses ends the group)."""
        for pod in pods:
            if self.new and self.fits(pod, [self.new[-1]]):
                continue
            if (self.new and self.new[-1] not in self.with_pods) or len(self.new) >= self.most:
                return
            self.new.append(self.template.copy_name(self.first + len(self.new)))
            if not self.fits(pod, [self.new[-1]]):
                return


def _score(pod: Pod, allocatable: dict[str, Fraction]) -> float:
    """DecreasingPodOrderer's score: the pod's cpu and memory requests over the template's allocatable."""
    requests = pod_requests(pod)
    return sum(float(requests.get(r, Fraction(0)) / allocatable[r]) for r in ("cpu", "memory") if allocatable.get(r))


def pinned(pod: Pod, names: list[str]) -> Pod:
    """The pod, its required node affinity narrowed to ``names``: each term once per name, with ``metadata.name
    In [name]`` (a field selector takes one value) — how the estimator restricts a check to the nodes it may use."""
    pod = pod.model_copy(deep=True)
    terms = pod.required_node_terms() or [NodeSelectorTerm()]
    pins = []
    for name in names:
        for term in terms:
            pin = term.model_copy(deep=True)
            pin.match_fields.append(NodeSelectorRequirement(key="metadata.name", operator="In", values=[name]))
            pins.append(pin)
    affinity = pod.spec.affinity or Affinity()
    node_affinity = affinity.node_affinity or NodeAffinity()
    node_affinity.required_during_scheduling_ignored_during_execution = NodeSelector(node_selector_terms=pins)
    affinity.node_affinity = node_affinity
    pod.spec.affinity = affinity
    return pod
