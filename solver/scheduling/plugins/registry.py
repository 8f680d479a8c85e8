"""The scheduler plugins drasat runs, in kube-scheduler's default profile order, with their extension points.

kube-scheduler lists its plugins in ``framework/plugins/registry.go`` and enables them in the order of
``getDefaultPlugins`` (``apis/config/v1/default_plugins.go``): SchedulingGates, PrioritySort,
NodeUnschedulable, NodeName, TaintToleration (weight 3), NodeAffinity (2), NodePorts, NodeResourcesFit
(1), the volume plugins, PodTopologySpread, InterPodAffinity, DynamicResources (put before
DefaultPreemption by ``applyFeatureGates``), DefaultPreemption, NodeResourcesBalancedAllocation (1),
ImageLocality, DefaultBinder. Each extension point runs its plugins in that order and a Filter stops
at the first that fails, so the order decides which reason a node reports. drasat models the plugins
below (PreEnqueue's gates, the queue's order, binding and preemption live in the scheduling loop and
:mod:`..binding`); the kubelet's NUMA admission (NodeResourceTopologyMatch, an out-of-tree plugin) comes
last.

Two Filter points, where upstream has one: the filters before the devices step read the node's labels,
taints and load only, so the loop keeps their answer per class of nodes and pod spec; those after it
(:attr:`Plugin.filter_devices`) read the devices' answer. Scores are raw per node (``score``) or read
from the devices' answer (``score_devices``), then normalised as the plugin says and weighted.

Adding a plugin: a :class:`Plugin` subclass here (its logic in its own module), and one line in
:data:`PLUGINS`; the loop asks the registry, never a plugin by name.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

from drasat.models.resource import ResourceClaim
from drasat.solver.scheduling.cluster_state import NodeLoad
from drasat.solver.scheduling.cycle import Cycle

from .dynamic_resources import DraVerdict, allocated_elsewhere
from .node_filters import (
    REASON_PIN_CONFLICT,
    affinity_reason,
    node_name_reason,
    pinned_nodes,
    taint_reason,
    unschedulable_reason,
)
from .node_resources import Resources, checked_requests, insufficient, least_allocated, pod_requests
from .numa_filter import numa_refusal
from .scores import balanced_allocation, intolerable_prefer_no_schedule, normalized, preferred_affinity


class Normalization(Enum):
    """How a plugin's raw scores become 0..100 over the nodes that passed (upstream's NormalizeScore)."""

    NONE = "none"  # already 0..100
    DEFAULT = "default"  # DefaultNormalizeScore: scaled by the largest
    REVERSE = "reverse"  # DefaultNormalizeScore reversed: fewer is better

    def apply(self, raw: list[int]) -> list[int]:
        """The scores over the nodes that passed, normalised."""
        if self is Normalization.NONE:
            return raw
        return normalized(raw, reverse=self is Normalization.REVERSE)


class Plugin:
    """One plugin's extension points; a point the plugin does not implement passes (or scores nothing)."""

    name: ClassVar[str]
    weight: ClassVar[int] = 0  # > 0: the plugin scores (``score`` or ``score_devices``)
    normalization: ClassVar[Normalization] = Normalization.NONE
    scores_devices: ClassVar[bool] = False  # its score is read from the devices' answer, not from the node

    def pre_filter(self, cycle: Cycle) -> str:
        """Why no node can run the pod, before any is looked at ("" when some may); may narrow ``cycle``."""
        return ""

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        """Why the node cannot run the pod, from its labels, taints and load ([] = it passes)."""
        return []

    def filter_devices(self, cycle: Cycle, node: str, verdict: DraVerdict) -> list[str]:
        """Why the node cannot run the pod once its devices are known ([] = it passes)."""
        return []

    def score(self, cycle: Cycle, load: NodeLoad) -> int:
        """The raw score of a node that passed, from the node alone."""
        return 0

    def score_devices(self, verdict: DraVerdict) -> int:
        """The raw score of a node that passed, from its devices' answer."""
        return 0

    def devices_score_constant(self, cycle: Cycle) -> bool:
        """Whether ``score_devices`` is the same on every node for this pod (it cannot change the ranking)."""
        return True


class NodeUnschedulable(Plugin):
    """A cordoned node (``spec.unschedulable``) runs only pods that tolerate its taint."""

    name = "NodeUnschedulable"

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return unschedulable_reason(cycle.pod, load.node)


class NodeName(Plugin):
    """A pod that names its node (``spec.nodeName``) runs there only."""

    name = "NodeName"

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return node_name_reason(cycle.pod, load.node)


class TaintToleration(Plugin):
    """NoSchedule/NoExecute taints the pod must tolerate; PreferNoSchedule ones it does not lower the score."""

    name = "TaintToleration"
    weight = 3
    normalization = Normalization.REVERSE

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return taint_reason(cycle.pod, load.node)

    def score(self, cycle: Cycle, load: NodeLoad) -> int:
        return intolerable_prefer_no_schedule(cycle.pod, load.node)


class NodeAffinity(Plugin):
    """The node selector and required affinity (its PreFilter pins ``metadata.name``); preferred terms score."""

    name = "NodeAffinity"
    weight = 2
    normalization = Normalization.DEFAULT

    def pre_filter(self, cycle: Cycle) -> str:
        cycle.pinned = pinned_nodes(cycle.pod)
        return REASON_PIN_CONFLICT if cycle.pinned is not None and not cycle.pinned else ""

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return affinity_reason(cycle.pod, load.node)

    def score(self, cycle: Cycle, load: NodeLoad) -> int:
        return preferred_affinity(cycle.pod, load.node)


class NodeResourcesFit(Plugin):
    """cpu, memory, pods and extended resources; again with the DRA amounts once the devices are known."""

    name = "NodeResourcesFit"
    weight = 1

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return fit(cycle, load, cycle.requests)

    def filter_devices(self, cycle: Cycle, node: str, verdict: DraVerdict) -> list[str]:
        if not verdict.statuses:
            return []
        return fit(cycle, cycle.state.loads[node], pod_requests(cycle.pod, verdict.statuses, pod_level=cycle.pod_level))

    def score(self, cycle: Cycle, load: NodeLoad) -> int:
        return cycle.resource_score(
            self.name, load, lambda: least_allocated(load.allocatable, load.used_for_score, cycle.requests_for_score)
        )


class DynamicResources(Plugin):
    """Allocated claims usable on the node; the devices step itself (the allocation) is the loop's,
    memoised per node class (:mod:`..devices_step`); its score: the firstAvailable alternatives picked."""

    name = "DynamicResources"
    weight = 1
    normalization = Normalization.DEFAULT
    scores_devices = True

    def filter(self, cycle: Cycle, load: NodeLoad) -> list[str]:
        return allocated_elsewhere(cycle.state, cycle.pc, load.node.name)

    def score_devices(self, verdict: DraVerdict) -> int:
        return verdict.score

    def devices_score_constant(self, cycle: Cycle) -> bool:
        """The DRA score is 0 on every node without firstAvailable requests."""
        return not any(_first_available(u.claim) for u in cycle.pc.uses if not u.allocated)


class NodeResourcesBalancedAllocation(Plugin):
    """Nodes whose cpu and memory stay used in equal shares once the pod is placed score higher."""

    name = "NodeResourcesBalancedAllocation"
    weight = 1

    def score(self, cycle: Cycle, load: NodeLoad) -> int:
        return cycle.resource_score(
            self.name, load, lambda: balanced_allocation(load.allocatable, load.used, cycle.requests)
        )


class NodeResourceTopologyMatch(Plugin):
    """The kubelet's Topology Manager admission, predicted on nodes that publish a NodeResourceTopology."""

    name = "NodeResourceTopologyMatch"

    def filter_devices(self, cycle: Cycle, node: str, verdict: DraVerdict) -> list[str]:
        return numa_refusal(cycle.state, cycle.pc, node, verdict.allocations) if cycle.state.numa else []


def fit(cycle: Cycle, load: NodeLoad, request: Resources) -> list[str]:
    """NodeResourcesFit's reasons; extended resources a DeviceClass backs are the devices step's business on
    nodes that do not offer them through a device plugin."""
    on_dra = {name for name in cycle.pc.extended if not load.allocatable.get(name)}
    return insufficient(load.allocatable, load.used, checked_requests(request, on_dra, load.allocatable), load.pods)


def _first_available(claim: ResourceClaim) -> bool:
    return any(r.first_available for r in claim.spec.devices.requests)


PLUGINS: tuple[Plugin, ...] = (
    NodeUnschedulable(),
    NodeName(),
    TaintToleration(),
    NodeAffinity(),
    NodeResourcesFit(),
    DynamicResources(),
    NodeResourcesBalancedAllocation(),
    NodeResourceTopologyMatch(),
)
"""The default profile's order (see the module's docstring)."""


class Profile:
    """The plugins a scheduler runs and, per extension point, those that implement it (in their order).
    kube-scheduler's profile; drasat has the default one (:data:`PROFILE`), and the loop reads it from
    here at each pod, so a test can run the loop with another."""

    def __init__(self, plugins: tuple[Plugin, ...]) -> None:
        self.plugins = plugins
        scores = tuple(p for p in plugins if p.weight)
        self.node_scores = tuple(p for p in scores if not p.scores_devices)
        """The scores read from the node alone, in this order in an outcome's raw scores."""
        self.device_scores = tuple(p for p in scores if p.scores_devices)


PROFILE = Profile(PLUGINS)
