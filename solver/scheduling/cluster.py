"""The whole input as one value: every object a scheduling decision may look at, indexed.

``Problem`` is the question for one node; ``Cluster`` is what the scheduler sees
before it has picked a node — all Nodes, Pods, PodGroups, claims, templates,
slices and classes. It never changes: the scheduling loop keeps what changes
(claims allocated, pods bound) in its own state and derives each node's
``Problem`` from both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from drasat.models.core import Namespace, Node, Pod, PodGroup
from drasat.models.loader import typed_objects
from drasat.models.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from drasat.solver.allocation.features import Features

if TYPE_CHECKING:  # annotations only: their models are imported when an input holds such objects (models.kinds)
    from drasat.models.policy import PodDisruptionBudget
    from drasat.models.topology import KubeletConfiguration, NodeResourceTopology

    from .plugins.binding_conditions import BindingClock

DEFAULT_NAMESPACE = "default"
EXTENDED_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

ObjectKey = tuple[str, str]  # (namespace, name)


def namespace_of(obj: ResourceClaim | ResourceClaimTemplate | Pod | PodGroup) -> str:
    """An object written without a namespace lives in ``default``, as kubectl would create it."""
    return obj.namespace or DEFAULT_NAMESPACE


def key_of(obj: ResourceClaim | ResourceClaimTemplate | Pod | PodGroup) -> ObjectKey:
    """(namespace, name): how objects of namespaced kinds are told apart."""
    return namespace_of(obj), obj.name


def label_of(obj: ResourceClaim | ResourceClaimTemplate | Pod | PodGroup) -> str:
    """``namespace/name``: how messages name a namespaced object."""
    return "/".join(key_of(obj))


@dataclass(frozen=True)
class Cluster:
    """Everything in the input that scheduling reads; indexes are built once, on first use."""

    nodes: Sequence[Node] = ()
    pods: Sequence[Pod] = ()
    pod_groups: Sequence[PodGroup] = ()
    namespaces: Sequence[Namespace] = ()
    slices: Sequence[ResourceSlice] = ()
    classes: Sequence[DeviceClass] = ()
    claims: Sequence[ResourceClaim] = ()
    templates: Sequence[ResourceClaimTemplate] = ()
    taint_rules: Sequence[DeviceTaintRule] = ()
    features: Features = field(default_factory=Features)
    # The kubelets' NUMA layouts and policies (the Topology Manager's admission is predicted with them).
    topologies: Sequence[NodeResourceTopology] = ()
    kubelet_configs: Sequence[KubeletConfiguration] = ()
    # The moment the scheduler looks (binding conditions' timeouts): None is the wall clock when asked.
    clock: BindingClock | None = None
    disruption_budgets: Sequence[PodDisruptionBudget] = ()  # read by preemption only

    @cached_property
    def claims_by_key(self) -> dict[ObjectKey, ResourceClaim]:
        return {key_of(c): c for c in self.claims}

    @cached_property
    def generated_claims(self) -> dict[tuple[str, str, str, str], ResourceClaim]:
        """Claims the resourceclaim controller made: (namespace, owner kind, owner name, pod claim) -> claim,
        found by their controlling owner and their ``resource.kubernetes.io/pod-claim-name`` annotation."""
        out = {}
        for claim in self.claims:
            pod_claim = claim.metadata.annotations.get(POD_CLAIM_ANNOTATION)
            for ref in claim.metadata.owner_references:
                if pod_claim and ref.controller:
                    out[(namespace_of(claim), ref.kind, ref.name, pod_claim)] = claim
        return out

    @cached_property
    def templates_by_key(self) -> dict[ObjectKey, ResourceClaimTemplate]:
        return {key_of(t): t for t in self.templates}

    @cached_property
    def pod_groups_by_key(self) -> dict[ObjectKey, PodGroup]:
        return {key_of(g): g for g in self.pod_groups}

    @cached_property
    def classes_by_name(self) -> dict[str, DeviceClass]:
        return {c.name: c for c in self.classes}

    def class_for_extended_resource(self, resource: str) -> DeviceClass | None:
        """The DeviceClass backing an extended resource: ``deviceclass.resource.kubernetes.io/<class>``
        names one directly; otherwise the class whose ``extendedResourceName`` is ``resource``."""
        if resource.startswith(EXTENDED_CLASS_PREFIX):
            return self.classes_by_name.get(resource[len(EXTENDED_CLASS_PREFIX) :])
        return self._extended_names.get(resource)

    @cached_property
    def _extended_names(self) -> dict[str, DeviceClass]:
        # Upstream picks the newest class when several name the same resource; drasat, having no
        # creation order it can trust, takes the first by name so that the answer is reproducible.
        found: dict[str, DeviceClass] = {}
        for cls in sorted(self.classes, key=lambda c: c.name):
            name = cls.spec.extended_resource_name
            if name and name not in found:
                found[name] = cls
        return found


def cluster_from_objects(
    objects: Sequence[object], features: Features | None = None, clock: BindingClock | None = None
) -> Cluster:
    """Sort loaded objects by kind into a Cluster (objects of other kinds are ignored)."""
    objects = typed_objects(objects)  # client objects and API JSON are read as files are
    by_kind: dict[str, list] = {}
    for obj in objects:
        by_kind.setdefault(getattr(obj, "kind", ""), []).append(obj)
    return Cluster(
        nodes=by_kind.get("Node", []),
        pods=by_kind.get("Pod", []),
        pod_groups=by_kind.get("PodGroup", []),
        namespaces=by_kind.get("Namespace", []),
        slices=by_kind.get("ResourceSlice", []),
        classes=by_kind.get("DeviceClass", []),
        claims=by_kind.get("ResourceClaim", []),
        templates=by_kind.get("ResourceClaimTemplate", []),
        taint_rules=by_kind.get("DeviceTaintRule", []),
        features=features or Features(),
        topologies=by_kind.get("NodeResourceTopology", []),
        kubelet_configs=by_kind.get("KubeletConfiguration", []),
        clock=clock,
        disruption_budgets=by_kind.get("PodDisruptionBudget", []),
    )
