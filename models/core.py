"""Core (``v1``) and ``scheduling.k8s.io`` kinds, as far as device allocation needs them.

Node, Namespace, Pod and PodGroup are large kinds of which drasat reads a small
part: a node's name, labels, taints and allocatable resources; a namespace's
labels (admin access is granted per namespace); a pod's node placement, its
resource claims and the resources its containers ask for; a pod group's claims.

Those parts are typed and strict like every other model. The *rest* of a Node's
or Pod's ``spec`` and ``status`` (volumes, probes, images, conditions, ...) is
not modelled: those outer parts accept any other field and keep it verbatim
(``extra="allow"``), so that ``kubectl get -o yaml`` output loads unchanged and
dumps back to what was read, without drasat having to track every field the
core API gains in each release. Typos in those untyped fields are therefore not
caught; typos in the typed ones are.
"""

# No ``from __future__ import annotations`` here: pydantic would compile every annotation string at each start.

from pydantic import ConfigDict, Field, model_validator

from .meta import (
    BUILT_ON_FIRST_USE,
    ApiModel,
    Condition,
    JsonObject,
    NodeSelector,
    NodeSelectorTerm,
    Timestamp,
    TypedObject,
    empty_dict,
    empty_list,
)
from .quantity import Quantity

CORE_API_VERSION = "v1"
SCHEDULING_GROUP = "scheduling.k8s.io"

_OPEN = ConfigDict(extra="allow")
"""For the outer parts of large kinds: unknown fields are kept verbatim, not checked."""


# --- Node -----------------------------------------------------------------------------------


class Taint(ApiModel):
    """A node taint (not a device taint: those live in resource.k8s.io)."""

    key: str
    value: str | None = None
    effect: str
    time_added: Timestamp | None = None


class NodeSpec(ApiModel):
    """The scheduling-relevant part of a node's spec; other fields are kept untyped."""

    model_config = _OPEN

    taints: list[Taint] = Field(default_factory=empty_list)
    unschedulable: bool | None = None


class NodeStatus(ApiModel):
    """Allocatable and capacity resources; other status fields are kept untyped."""

    model_config = _OPEN

    allocatable: dict[str, Quantity] = Field(default_factory=empty_dict)
    capacity: dict[str, Quantity] = Field(default_factory=empty_dict)
    # Node Declared Features: what the kubelet supports (DRAOptionalNodeOperations, ...), sorted, unique.
    declared_features: list[str] = Field(default_factory=empty_list)


class Node(TypedObject):
    """A candidate node: slices' node selectors match its name and labels."""

    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# --- Namespace ------------------------------------------------------------------------------


class NamespaceSpec(ApiModel):
    """A namespace's finalizers."""

    model_config = BUILT_ON_FIRST_USE

    finalizers: list[str] = Field(default_factory=empty_list)


class NamespaceCondition(ApiModel):
    """One condition of a namespace (e.g. while it terminates)."""

    model_config = BUILT_ON_FIRST_USE

    type: str
    status: str
    last_transition_time: Timestamp | None = None
    reason: str | None = None
    message: str | None = None


class NamespaceStatus(ApiModel):
    """A namespace's phase: Active, or Terminating (its pods are not scheduled)."""

    model_config = BUILT_ON_FIRST_USE

    phase: str | None = None
    conditions: list[NamespaceCondition] = Field(default_factory=empty_list)


class Namespace(TypedObject):
    """A namespace; its labels decide whether claims in it may ask for admin access."""

    model_config = BUILT_ON_FIRST_USE

    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


# --- Pod ------------------------------------------------------------------------------------


class ContainerResourceClaim(ApiModel):
    """``resources.claims[]``: a container uses a pod claim (or one request of it)."""

    name: str
    request: str | None = None


class ResourceRequirements(ApiModel):
    """A container's (or pod's) requests, limits and claims."""

    limits: dict[str, Quantity] = Field(default_factory=empty_dict)
    requests: dict[str, Quantity] = Field(default_factory=empty_dict)
    claims: list[ContainerResourceClaim] = Field(default_factory=empty_list)


class Container(ApiModel):
    """A container's name and resources; image, command, probes, ... are kept untyped."""

    model_config = _OPEN

    name: str
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None


class PodResourceClaim(ApiModel):
    """``spec.resourceClaims[]``: exactly one of a claim name or a template name (validation checks)."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class Toleration(ApiModel):
    """A pod's toleration of node taints."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class PreferredSchedulingTerm(ApiModel):
    """A node preference with its weight (1-100): NodeAffinity's score sums the weights of matching terms."""

    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(ApiModel):
    """Required node selector terms (filter) and preferred terms (score)."""

    model_config = _OPEN

    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = Field(
        default_factory=empty_list
    )


class Affinity(ApiModel):
    """Only node affinity matters for where devices can be allocated."""

    model_config = _OPEN

    node_affinity: NodeAffinity | None = None


class PodSchedulingGroup(ApiModel):
    """``spec.schedulingGroup``: the PodGroup a pod belongs to (its claims are shared)."""

    pod_group_name: str | None = None


class PodSchedulingGate(ApiModel):
    """``spec.schedulingGates[]``: while any is present the scheduler leaves the pod alone."""

    name: str


class PodSpec(ApiModel):
    """Where a pod may run and what it asks for; every other pod field is kept untyped."""

    model_config = _OPEN

    @model_validator(mode="after")
    def _integer_priority(self) -> "PodSpec":
        """``priority`` is an int32 the API server refuses otherwise; read as 0 it would silently reorder."""
        value = (self.model_extra or {}).get("priority")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"spec.priority must be an integer, not {value!r}")
        return self

    node_name: str | None = None
    node_selector: dict[str, str] = Field(default_factory=empty_dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = Field(default_factory=empty_list)
    resource_claims: list[PodResourceClaim] = Field(default_factory=empty_list)
    containers: list[Container] = Field(default_factory=empty_list)
    init_containers: list[Container] = Field(default_factory=empty_list)
    resources: ResourceRequirements | None = None
    overhead: dict[str, Quantity] = Field(default_factory=empty_dict)
    scheduling_group: PodSchedulingGroup | None = None
    scheduling_gates: list[PodSchedulingGate] = Field(default_factory=empty_list)
    scheduler_name: str | None = None


class PodResourceClaimStatus(ApiModel):
    """Which generated ResourceClaim stands for a template-based pod claim."""

    name: str
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(ApiModel):
    """Which request of the pod's extended-resource claim backs a container's extended resource."""

    container_name: str
    resource_name: str
    request_name: str


class PodExtendedResourceClaimStatus(ApiModel):
    """The claim the scheduler generated for a pod's extended resources backed by DRA."""

    request_mappings: list[ContainerExtendedResourceRequest] = Field(default_factory=empty_list)
    resource_claim_name: str


class NodeAllocatableMappedResources(ApiModel):
    """Node resources a pod's claims map to (DRANodeAllocatableResources status)."""

    name: str
    quantity: Quantity | None = None


class NodeAllocatableOverheadResources(ApiModel):
    """Node resources a pod's claims cost as overhead (DRANodeAllocatableResources status)."""

    name: str
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResourceClaimStatus(ApiModel):
    """cpu, memory or hugepages a claim's devices add to the pod's footprint on its node."""

    resource_claim_name: str
    containers: list[str] = Field(default_factory=empty_list)
    mapping: list[NodeAllocatableMappedResources] = Field(default_factory=empty_list)
    overhead: list[NodeAllocatableOverheadResources] = Field(default_factory=empty_list)


class PodStatus(ApiModel):
    """Generated claim names and DRA accounting; every other status field is kept untyped."""

    model_config = _OPEN

    phase: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] = Field(default_factory=empty_list)
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    node_allocatable_resource_claim_statuses: list[NodeAllocatableResourceClaimStatus] = Field(
        default_factory=empty_list
    )


class Pod(TypedObject):
    """A pod, reduced to what decides which devices it needs and on which nodes."""

    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus | None = None

    def required_node_terms(self) -> list[NodeSelectorTerm]:
        """The required node affinity terms (ORed), or none when the pod has no such affinity."""
        affinity = self.spec.affinity
        if affinity is None or affinity.node_affinity is None:
            return []
        selector = affinity.node_affinity.required_during_scheduling_ignored_during_execution
        return list(selector.node_selector_terms) if selector else []

    def preferred_node_terms(self) -> list[PreferredSchedulingTerm]:
        """The preferred node affinity terms with their weights (scoring only)."""
        affinity = self.spec.affinity
        if affinity is None or affinity.node_affinity is None:
            return []
        return list(affinity.node_affinity.preferred_during_scheduling_ignored_during_execution)


# --- PodGroup (scheduling.k8s.io) -----------------------------------------------------------


class PodGroupResourceClaim(ApiModel):
    """A claim shared by all pods of the group: exactly one of a claim or a template name."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodGroupSpec(ApiModel):
    """The group's claims are typed; scheduling policy and constraints are kept as written.

    The nested scheduling structures (gang policy, topology constraints, workload
    reference) do not influence device allocation, so they are stored verbatim
    (any JSON) rather than modelled; the spec's own field names stay strict.
    """

    model_config = BUILT_ON_FIRST_USE

    resource_claims: list[PodGroupResourceClaim] = Field(default_factory=empty_list)
    scheduling_policy: JsonObject | None = None
    scheduling_constraints: JsonObject | None = None
    disruption_mode: JsonObject | None = None
    workload_ref: JsonObject | None = None
    parent_composite_pod_group_name: str | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    preemption_policy: str | None = None


class PodGroupResourceClaimStatus(ApiModel):
    """The claim generated for a pod group's template reference."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    resource_claim_name: str | None = None


class PodGroupStatus(ApiModel):
    """A pod group's generated claims and conditions."""

    model_config = BUILT_ON_FIRST_USE

    conditions: list[Condition] = Field(default_factory=empty_list)
    resource_claim_statuses: list[PodGroupResourceClaimStatus] = Field(default_factory=empty_list)


class PodGroup(TypedObject):
    """``scheduling.k8s.io`` PodGroup (v1alpha3, v1beta1): claims shared by a group of pods."""

    model_config = BUILT_ON_FIRST_USE

    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)
    status: PodGroupStatus | None = None
