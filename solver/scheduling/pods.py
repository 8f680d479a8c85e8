"""Which ResourceClaims a Pod needs, resolved as Kubernetes resolves them.

A pod names its claims in ``spec.resourceClaims``: an existing claim by name, or
a ResourceClaimTemplate from which the resourceclaim controller generates one
claim per pod (or, for a claim its PodGroup also lists, one claim per group).
Containers asking for extended resources that a DeviceClass backs get one more,
implicit claim, written by the scheduler. This module turns a pod into that list
of claims, each with the consumer it will be reserved for — without looking at
any node, so that the per-node checks and a joint (many-pod) model can share it.

Generated names follow the controller (``<pod>-<claim>-`` plus five characters)
but the five characters are derived from the owner's uid (or namespace and name)
so that drasat's answer is reproducible.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from drasat.models.core import (
    Pod,
    PodGroup,
    PodGroupResourceClaimStatus,
    PodResourceClaim,
    PodResourceClaimStatus,
)
from drasat.models.errors import InputError
from drasat.models.meta import ObjectMeta, OwnerReference
from drasat.models.resource import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
)

from .cluster import POD_CLAIM_ANNOTATION, Cluster, ObjectKey, label_of, namespace_of
from .plugins.node_resources import aggregate_requests, is_extended_resource

EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
RESERVED_FOR_MAX = 256  # ResourceClaim status.reservedFor holds at most this many consumers
REASON_CLAIM_IN_USE = "resourceclaim in use"  # DynamicResources' PreFilter when reservedFor is full
SCHEDULING_GROUP = "scheduling.k8s.io"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the API server's generateName alphabet
_NAME_BASE_MAX = 57  # leaves room for the five characters in a 63-character name
_GENERATED_BASE_MAX = 58  # the API server's names.MaxGeneratedNameLength (63 - 5)

ClaimBook = Mapping[ObjectKey, ResourceClaim]
"""The claims as they stand now: the input's, plus those allocated so far (generated ones included)."""


@dataclass(frozen=True)
class Consumer:
    """What a claim gets reserved for: the pod, or the PodGroup when the claim is the group's."""

    api_group: str
    resource: str
    name: str
    uid: str

    def reference(self) -> ResourceClaimConsumerReference:
        return ResourceClaimConsumerReference(
            api_group=self.api_group or None, resource=self.resource, name=self.name, uid=self.uid
        )


@dataclass
class ClaimUse:
    """One claim a pod needs: the claim (from the input, or generated now) and whom it is reserved for."""

    pod_claim: str  # the entry's name in pod.spec.resourceClaims ("" for the extended-resource claim)
    claim: ResourceClaim
    consumer: Consumer
    generated: bool = False

    @property
    def allocated(self) -> bool:
        return bool(self.claim.status and self.claim.status.allocation)

    @property
    def reserved(self) -> bool:
        return bool(self.claim.status and any(r.uid == self.consumer.uid for r in self.claim.status.reserved_for))


@dataclass
class PodClaims:
    """A pod's claims before any node is chosen; ``unresolvable`` says why no node can run it."""

    pod: Pod
    uses: list[ClaimUse] = field(default_factory=list)
    extended: dict[str, int] = field(default_factory=dict)  # extended resource -> count, a DeviceClass backs it
    unresolvable: str = ""

    @property
    def label(self) -> str:
        return label_of(self.pod)


def object_uid(kind: str, obj: Pod | PodGroup) -> str:
    """The object's uid, or one derived from kind, namespace and name when the input has none."""
    return obj.metadata.uid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"drasat:{kind}/{label_of(obj)}"))


def pod_consumer(pod: Pod) -> Consumer:
    """The pod as a claim's ``reservedFor`` entry."""
    return Consumer("", "pods", pod.name, object_uid("Pod", pod))


def group_consumer(group: PodGroup) -> Consumer:
    """The pod group as a claim's ``reservedFor`` entry (its claims are shared by its pods)."""
    return Consumer(SCHEDULING_GROUP, "podgroups", group.name, object_uid("PodGroup", group))


def generated_uid(seed: str) -> str:
    """The uid the API server gives a created object (random there; derived from ``seed`` here, so that the
    same input gives the same answer). Metadata files and reservedFor entries name claims by it."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"drasat:ResourceClaim/{seed}"))


def generated_name(base: str, seed: str) -> str:
    """``generateName`` as the API server turns it into a name: the base cut to 58 characters, then five
    characters from its alphabet (derived from ``seed`` here, random there)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return base[:_GENERATED_BASE_MAX] + "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def template_claim_base(owner: str, pod_claim: str) -> str:
    """The controller's ``generateName``: ``<owner>-<claim>-``, both parts cut proportionally when too long."""
    base = f"{owner}-{pod_claim}-"
    if len(base) > _NAME_BASE_MAX:
        base = (
            owner[: len(owner) * _NAME_BASE_MAX // len(base)]
            + "-"
            + pod_claim[: len(pod_claim) * _NAME_BASE_MAX // len(base)]
        )
    return base


def resolve_pod_claims(pod: Pod, cluster: Cluster, book: ClaimBook | None = None) -> PodClaims:
    """The claims ``pod`` needs, resolved against ``book`` (default: the input's claims)."""
    book = cluster.claims_by_key if book is None else book
    out = PodClaims(pod)
    group, grouped = _pod_group(pod, cluster)
    if isinstance(group, str):
        out.unresolvable = group
        return out
    for entry in pod.spec.resource_claims:
        use_or_reason = _resolve_entry(pod, entry, group, grouped, cluster, book)
        if isinstance(use_or_reason, str):
            out.unresolvable = out.unresolvable or use_or_reason
        elif use_or_reason is not None:
            out.uses.append(use_or_reason)
    if not out.unresolvable:
        out.unresolvable = next((r for u in out.uses if (r := _reservation_problem(u))), "")
    if cluster.features["DRAExtendedResource"]:
        out.extended = extended_requests(pod, cluster)
    return out


def _pod_group(pod: Pod, cluster: Cluster) -> tuple[PodGroup | str | None, bool]:
    """The pod's PodGroup (or why it is missing) and whether its claims are grouped (the gate is on).

    With ``DRAWorkloadResourceClaims`` on, a pod naming a PodGroup the input lacks waits for it: its
    claims are never silently made the pod's own. With the gate off the group is still looked up, because
    a pod claim matching a group template claim then gets no claim at all (seed 000)."""
    ref = pod.spec.scheduling_group
    if ref is None or not ref.pod_group_name:
        return None, False
    grouped = cluster.features["DRAWorkloadResourceClaims"]
    group = cluster.pod_groups_by_key.get((namespace_of(pod), ref.pod_group_name))
    if group is None and grouped:
        return (
            f'podgroup.scheduling.k8s.io "{ref.pod_group_name}" not found (spec.schedulingGroup.podGroupName)'
        ), grouped
    return group, grouped


def _group_entry(entry: PodResourceClaim, group: PodGroup | None) -> bool:
    """A pod claim is the group's when name, claim name and template name all equal one of the group's."""
    return group is not None and any(
        (g.name, g.resource_claim_name, g.resource_claim_template_name)
        == (entry.name, entry.resource_claim_name, entry.resource_claim_template_name)
        for g in group.spec.resource_claims
    )


def _resolve_entry(
    pod: Pod, entry: PodResourceClaim, group: PodGroup | None, grouped: bool, cluster: Cluster, book: ClaimBook
) -> ClaimUse | str | None:
    """A ClaimUse, or the reason the pod cannot be scheduled, or None (the entry needs no claim)."""
    ns = namespace_of(pod)
    owner: Pod | PodGroup = group if grouped and group is not None and _group_entry(entry, group) else pod
    consumer = group_consumer(owner) if isinstance(owner, PodGroup) else pod_consumer(pod)
    if entry.resource_claim_name:
        claim = book.get((ns, entry.resource_claim_name))
        if claim is None:
            return f'resourceclaim.resource.k8s.io "{entry.resource_claim_name}" not found'
        return _usable(claim) or ClaimUse(entry.name, claim, consumer)
    template_name = entry.resource_claim_template_name or ""
    status = _recorded_status(pod, owner, entry.name)
    if status is not None and status.resource_claim_name is None:
        return None  # the controller decided no claim is needed
    name = (
        (status.resource_claim_name if status is not None else None)
        or _made_before(owner, entry.name, cluster)
        or generated_claim_name(owner, entry.name)
    )
    claim = book.get((ns, name))
    if claim is not None:
        return _usable(claim) or _owned(claim, owner) or ClaimUse(entry.name, claim, consumer)
    if not grouped and group is not None and _group_entry(entry, group):
        return (
            f'pod claim "{entry.name}" matches a claim of PodGroup {label_of(group)}: with the '
            "DRAWorkloadResourceClaims feature disabled no ResourceClaim is created for it"
        )
    template = cluster.templates_by_key.get((ns, template_name))
    if template is None:
        return (
            f'resource claim template "{template_name}": '
            f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
        )
    return ClaimUse(entry.name, _claim_from_template(owner, entry.name, name, template), consumer, generated=True)


def _recorded_status(
    pod: Pod, owner: Pod | PodGroup, pod_claim: str
) -> PodResourceClaimStatus | PodGroupResourceClaimStatus | None:
    """What the controller recorded for this pod claim: the pod's own status first, then — for a group
    claim — the PodGroup's, where the one claim of the whole group is named once for all its pods."""
    statuses: list[PodResourceClaimStatus | PodGroupResourceClaimStatus] = list(
        pod.status.resource_claim_statuses if pod.status else []
    )
    if isinstance(owner, PodGroup):
        statuses += owner.status.resource_claim_statuses if owner.status else []
    return next((s for s in statuses if s.name == pod_claim), None)


def _made_before(owner: Pod | PodGroup, pod_claim: str, cluster: Cluster) -> str:
    """The name of a claim the controller already made for this owner and pod claim (its status may not say
    so yet), as the controller looks for one before it makes another."""
    kind = "PodGroup" if isinstance(owner, PodGroup) else "Pod"
    claim = cluster.generated_claims.get((namespace_of(owner), kind, owner.name, pod_claim))
    return claim.name if claim is not None else ""


def _usable(claim: ResourceClaim) -> str:
    if claim.metadata.deletion_timestamp:
        return f'resourceclaim "{claim.name}" is being deleted'
    return ""


def _owned(claim: ResourceClaim, owner: Pod | PodGroup) -> str:
    kind = "PodGroup" if isinstance(owner, PodGroup) else "Pod"
    uid = object_uid(kind, owner)
    if any(
        ref.controller and ref.kind == kind and ref.name == owner.name and ref.uid == uid
        for ref in claim.metadata.owner_references
    ):
        return ""
    return f"ResourceClaim {label_of(claim)} was not created for {kind} {label_of(owner)} ({kind} is not owner)"


def _reservation_problem(use: ClaimUse) -> str:
    """A claim reserved for as many consumers as the API allows cannot take one more."""
    status = use.claim.status
    if status and not use.reserved and len(status.reserved_for) >= RESERVED_FOR_MAX:
        return REASON_CLAIM_IN_USE
    return ""


def generated_claim_name(owner: Pod | PodGroup, pod_claim: str) -> str:
    """The name the resourceclaim controller gives the claim it makes for ``owner``'s ``pod_claim``."""
    kind = "PodGroup" if isinstance(owner, PodGroup) else "Pod"
    return generated_name(template_claim_base(owner.name, pod_claim), f"{object_uid(kind, owner)}/{pod_claim}")


def owner_reference(owner: Pod | PodGroup) -> OwnerReference:
    """The controller owner reference a claim generated for this pod or pod group carries."""
    if isinstance(owner, PodGroup):
        return OwnerReference(
            api_version=owner.api_version,
            kind="PodGroup",
            name=owner.name,
            uid=object_uid("PodGroup", owner),
            controller=True,
            block_owner_deletion=True,
        )
    return OwnerReference(
        api_version="v1",
        kind="Pod",
        name=owner.name,
        uid=object_uid("Pod", owner),
        controller=True,
        block_owner_deletion=True,
    )


def _claim_from_template(
    owner: Pod | PodGroup, pod_claim: str, name: str, template: ResourceClaimTemplate
) -> ResourceClaim:
    """The claim the resourceclaim controller creates: template spec, labels and annotations, owned by the owner."""
    meta = template.spec.metadata or ObjectMeta()
    annotations = dict(meta.annotations)
    annotations[POD_CLAIM_ANNOTATION] = pod_claim
    kind = "PodGroup" if isinstance(owner, PodGroup) else "Pod"
    metadata = ObjectMeta(
        name=name,
        namespace=namespace_of(owner),
        uid=generated_uid(f"{object_uid(kind, owner)}/{pod_claim}"),
        annotations=annotations,
        owner_references=[owner_reference(owner)],
    )
    if meta.labels:
        metadata.labels = dict(meta.labels)  # assigned only when present, so that output shows no empty map
    return ResourceClaim(
        api_version="resource.k8s.io/v1",
        kind="ResourceClaim",
        metadata=metadata,
        spec=template.spec.spec.model_copy(deep=True),
    )


DEFAULT_SCHEDULER = "default-scheduler"
REASON_GATED = "scheduling gated"


def not_schedulable_now(pod: Pod) -> str:
    """Why kube-scheduler's queue does not take the pod at all (PreEnqueue), or "" when it does: a pod with
    scheduling gates waits for them to be removed; a pod for another scheduler is that scheduler's."""
    if pod.spec.scheduling_gates:
        gates = ", ".join(g.name for g in pod.spec.scheduling_gates)
        return f"{REASON_GATED} (spec.schedulingGates: {gates})"
    if (pod.spec.scheduler_name or DEFAULT_SCHEDULER) != DEFAULT_SCHEDULER:
        return f"not for the default scheduler (spec.schedulerName: {pod.spec.scheduler_name})"
    return ""


def pending_pods(cluster: Cluster) -> list[Pod]:
    """Pods without ``spec.nodeName``, in input order (gated pods too: they are pending, and say why)."""
    return [p for p in cluster.pods if not p.spec.node_name and not p.metadata.deletion_timestamp and not finished(p)]


def finished(pod: Pod) -> bool:
    """Succeeded and Failed pods hold nothing on their node any more (the scheduler's cache drops them)."""
    return bool(pod.status and pod.status.phase in ("Succeeded", "Failed"))


def select_pods(cluster: Cluster, names: Sequence[str]) -> list[Pod]:
    """Pods named ``namespace/name`` (or a bare name when only one namespace has it), in the order given."""
    chosen = []
    for name in names:
        ns, _, bare = name.rpartition("/")
        found = [p for p in cluster.pods if p.name == bare and (not ns or namespace_of(p) == ns)]
        if not found:
            raise InputError(f"no Pod {name} in the input")
        if len(found) > 1:
            raise InputError(f"Pod name {name} is ambiguous: give one of {', '.join(label_of(p) for p in found)}")
        if found[0] in chosen:
            raise InputError(f"Pod {label_of(found[0])} is named twice in --pods: a pod is scheduled once")
        if found[0].spec.node_name:
            raise InputError(
                f"Pod {label_of(found[0])} is already bound to node {found[0].spec.node_name} "
                "(spec.nodeName): the scheduler only places pending pods"
            )
        chosen.append(found[0])
    return chosen


# --- extended resources backed by DRA ---------------------------------------------------------


def extended_requests(pod: Pod, cluster: Cluster) -> dict[str, int]:
    """The pod's requests of extended resources that some DeviceClass backs (init containers: the max)."""
    totals = aggregate_requests(pod, include_pod_level=False)
    return {
        name: int(amount)
        for name, amount in sorted(totals.items())
        if amount > 0 and is_extended_resource(name) and cluster.class_for_extended_resource(name) is not None
    }
