"""Validation of Node, Namespace, Pod, PodGroup and ResourcePoolStatusRequest, as far as drasat reads them.

For the core kinds only the parts drasat models are checked (names, labels,
taints, node selection, resource claims and requests); the rest of a Pod's or
Node's spec is the API server's business. ResourcePoolStatusRequest follows the
1.37 validation of resource.k8s.io/v1alpha3.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from drasat.models.core import (
    Container,
    Namespace,
    Node,
    Pod,
    PodGroup,
    PodGroupResourceClaim,
    PodResourceClaim,
    PodSpec,
    Toleration,
)
from drasat.models.errors import Location

from .formats import (
    Findings,
    check_conditions,
    check_dns_label,
    check_dns_subdomain,
    check_driver_name,
    check_fully_qualified_name,
    check_label_key,
    check_label_value,
    check_node_name,
    check_node_selector,
    check_object_meta,
    check_pool_name,
    check_unique,
    index,
    key,
    show,
)
from .pod_resources import check_pod_requirements

if TYPE_CHECKING:  # its model is imported when an input holds such a request (models.kinds)
    from drasat.models.pool_status_request import ResourcePoolStatusRequest

NODE_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MAX_POOL_STATUS_CONDITIONS = 8


def check_node(out: Findings, where: Location, obj: Node) -> None:
    """A Node: its name and labels (what slice node selectors match against)."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    taints = obj.spec.taints if obj.spec else []
    for i, taint in enumerate(taints):
        at = index(where.child("spec.taints"), i)
        check_label_key(out, at.child("key"), taint.key)
        if taint.value:
            check_label_value(out, at.child("value"), taint.value)
        if taint.effect not in NODE_TAINT_EFFECTS:
            out.add(
                at.child("effect"),
                f"{show(taint.effect)} is not a node taint effect: use NoSchedule, PreferNoSchedule or NoExecute",
            )


def check_namespace(out: Findings, where: Location, obj: Namespace) -> None:
    """A Namespace: its name."""
    check_object_meta(out, where.child("metadata"), obj.metadata, name_format="label")


def check_pod(out: Findings, where: Location, obj: Pod) -> None:
    """A Pod: metadata, node selection, tolerations, containers' requests and claims, its resourceClaims."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    spec, at = obj.spec, where.child("spec")
    _check_pod_placement(out, at, spec)
    for i, toleration in enumerate(spec.tolerations):
        _check_pod_toleration(out, index(at.child("tolerations"), i), toleration)
    claims = _check_claim_sources(out, at.child("resourceClaims"), spec.resource_claims)
    _check_containers(out, at, spec, claims)
    check_pod_requirements(out, at, spec)
    if spec.resources is not None:
        for i, claim in enumerate(spec.resources.claims):
            _check_claim_use(out, index(at.child("resources.claims"), i), claim.name, claims)
    if spec.scheduling_group is not None and spec.scheduling_group.pod_group_name is not None:
        check_dns_label(out, at.child("schedulingGroup.podGroupName"), spec.scheduling_group.pod_group_name)


def _check_pod_placement(out: Findings, at: Location, spec: PodSpec) -> None:
    """Where the pod may go: its node name, node selector labels and required node affinity."""
    if spec.node_name:
        check_node_name(out, at.child("nodeName"), spec.node_name)
    for name, value in spec.node_selector.items():
        check_label_key(out, key(at.child("nodeSelector"), name), name)
        check_label_value(out, key(at.child("nodeSelector"), name), value)
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    if required is not None:
        check_node_selector(
            out, at.child("affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"), required
        )


def _check_containers(out: Findings, at: Location, spec: PodSpec, claims: set[str]) -> None:
    """At least one container; each container and init container checked, their names unique among all."""
    if not spec.containers:
        out.add(at.child("containers"), "at least one container is required")
    seen: set[str] = set()
    for field, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, container in enumerate(containers):
            _check_container(out, index(at.child(field), i), container, claims)
            if container.name in seen:
                out.add(index(at.child(field), i).child("name"), f"duplicate container name {show(container.name)}")
            seen.add(container.name)


def _check_pod_toleration(out: Findings, at: Location, toleration: Toleration) -> None:
    """Core's ValidateTolerations: Exists or Equal, a value only with Equal, an empty key only with Exists."""
    operator = toleration.operator or "Equal"
    if operator not in ("Exists", "Equal"):
        out.add(at.child("operator"), f"{show(operator)} is not a toleration operator: use Equal or Exists")
    elif operator == "Exists" and toleration.value:
        out.add(at.child("value"), "must be empty when the operator is Exists")
    elif not toleration.key and operator != "Exists":
        out.add(at.child("operator"), 'must be Exists when `key` is empty, which means "match all values and all keys"')
    if toleration.effect and toleration.effect not in NODE_TAINT_EFFECTS:
        out.add(
            at.child("effect"),
            f"{show(toleration.effect)} is not a node taint effect: use NoSchedule, "
            "PreferNoSchedule or NoExecute (or leave it empty for all)",
        )


def check_pod_group(out: Findings, where: Location, obj: PodGroup) -> None:
    """A PodGroup: its name and the claims it shares across its pods."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    _check_claim_sources(out, where.child("spec.resourceClaims"), obj.spec.resource_claims)


def _check_claim_sources(
    out: Findings, at: Location, claims: Sequence[PodResourceClaim | PodGroupResourceClaim]
) -> set[str]:
    """Each claim has a unique DNS-label name and exactly one of a claim or a template name."""
    for i, claim in enumerate(claims):
        here = index(at, i)
        check_dns_label(out, here.child("name"), claim.name)
        sources = [s for s in (claim.resource_claim_name, claim.resource_claim_template_name) if s is not None]
        if len(sources) != 1:
            out.add(
                here,
                "exactly one of `resourceClaimName` or `resourceClaimTemplateName` is required"
                + (", but both are set" if sources else ""),
            )
        for field, value in (
            ("resourceClaimName", claim.resource_claim_name),
            ("resourceClaimTemplateName", claim.resource_claim_template_name),
        ):
            if value is not None:
                check_dns_subdomain(out, here.child(field), value)
    check_unique(out, at, [c.name for c in claims])
    return {c.name for c in claims}


def _check_container(out: Findings, at: Location, container: Container, claims: set[str]) -> None:
    check_dns_label(out, at.child("name"), container.name)
    if container.resources is None:
        return
    for i, claim in enumerate(container.resources.claims):
        _check_claim_use(out, index(at.child("resources.claims"), i), claim.name, claims)
    check_unique(
        out,
        at.child("resources.claims"),
        [c.name + (f"/{c.request}" if c.request else "") for c in container.resources.claims],
    )


def _check_claim_use(out: Findings, at: Location, name: str, claims: set[str]) -> None:
    if name not in claims:
        out.add(at.child("name"), f"{show(name)} must be the name of one of the pod's spec.resourceClaims")


def check_pool_status_request(out: Findings, where: Location, obj: ResourcePoolStatusRequest) -> None:
    """A ResourcePoolStatusRequest: driver, pool name, limit and partition-type attribute."""
    from drasat.models.pool_status_request import LIMIT_MAX  # loaded already: ``obj`` is one of its models

    check_object_meta(out, where.child("metadata"), obj.metadata)
    spec, at = obj.spec, where.child("spec")
    check_driver_name(out, at.child("driver"), spec.driver)
    if spec.pool_name is not None:
        check_pool_name(out, at.child("poolName"), spec.pool_name)
    if spec.limit is not None and not 1 <= spec.limit <= LIMIT_MAX:
        out.add(at.child("limit"), f"{spec.limit} must be between 1 and {LIMIT_MAX}")
    if spec.default_partition_type_attribute is not None:
        check_fully_qualified_name(
            out, at.child("defaultPartitionTypeAttribute"), spec.default_partition_type_attribute
        )
    if obj.status is None:
        return
    status = where.child("status")
    if obj.status.pool_count < 0:
        out.add(status.child("poolCount"), "must not be negative")
    check_conditions(out, status.child("conditions"), obj.status.conditions, MAX_POOL_STATUS_CONDITIONS)
    for i, pool in enumerate(obj.status.pools):
        here = index(status.child("pools"), i)
        check_driver_name(out, here.child("driver"), pool.driver)
        check_pool_name(out, here.child("poolName"), pool.pool_name)
        if pool.node_name is not None:
            check_node_name(out, here.child("nodeName"), pool.node_name)
        for field in (
            "generation",
            "resource_slice_count",
            "total_devices",
            "allocated_devices",
            "available_devices",
            "unavailable_devices",
        ):
            value = getattr(pool, field)
            if value is not None and value < 0:
                out.add(here.child(type(pool).model_fields[field].alias or field), f"{value} must not be negative")
