"""What the resourceclaim controller does with the claims of pods that will not run any more.

A pod is done when its phase is Succeeded or Failed (or it is being deleted before it was ever
bound): the controller (``syncClaim`` in pkg/controller/resourceclaim) removes it from every claim's
``status.reservedFor``; a claim reserved for no one afterwards is deallocated when the scheduler
allocated it (it carries the ``resource.kubernetes.io/delete-protection`` finalizer the scheduler
adds); a claim generated for the done pod (its controller owner) is deleted. Scheduling looks at the
cluster after that, so the devices such claims held are free for pending pods: a finished Job's
generated claim does not keep its GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from drasat.models.core import Pod
from drasat.models.resource import ResourceClaim, ResourceClaimConsumerReference

from .cluster import Cluster, ObjectKey, key_of, label_of, namespace_of

SCHEDULER_FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer


def pod_done(pod: Pod) -> bool:
    """``isPodDone``: a terminal phase, or deleted and never scheduled."""
    phase = pod.status.phase if pod.status else None
    return phase in ("Succeeded", "Failed") or bool(pod.metadata.deletion_timestamp and not pod.spec.node_name)


@dataclass
class Released:
    """The claims as the controller leaves them (None: deleted), and a line for each change."""

    claims: dict[ObjectKey, ResourceClaim | None] = field(default_factory=dict)  # only the changed ones
    notes: list[str] = field(default_factory=list)


def release_finished(cluster: Cluster) -> Released:
    """Reservations of done pods dropped, claims left unreserved deallocated, done pods' own claims deleted."""
    done = {(namespace_of(p), p.name): p for p in cluster.pods if pod_done(p)}
    out = Released()
    if not done:
        return out
    for claim in cluster.claims:
        owner = _owning_pod(claim, done)
        status = claim.status
        reserved = status.reserved_for if status else []
        valid = [r for r in reserved if not _is_done(r, namespace_of(claim), done)]
        if owner is not None and not valid:
            out.claims[key_of(claim)] = None
            out.notes.append(
                f"claim {label_of(claim)} is deleted: it was generated for pod {label_of(owner)}, which is "
                f"{_why_done(owner)} (its devices are free)"
            )
        elif status is not None and len(valid) < len(reserved):
            update: dict = {"reserved_for": valid}
            freed = not valid and SCHEDULER_FINALIZER in claim.metadata.finalizers and status.allocation is not None
            if freed:
                update["allocation"] = None
            out.claims[key_of(claim)] = claim.model_copy(update={"status": status.model_copy(update=update)})
            gone = ", ".join(r.name for r in reserved if r not in valid)
            out.notes.append(
                f"claim {label_of(claim)}: reservation for finished pod(s) {gone} removed"
                + ("; no one else uses it, so it is deallocated" if freed else "")
            )
    return out


def _matches(pod: Pod, name: str, uid: str) -> bool:
    return pod.name == name and (not pod.metadata.uid or pod.metadata.uid == uid)


def _is_done(ref: ResourceClaimConsumerReference, namespace: str, done: Mapping[ObjectKey, Pod]) -> bool:
    if ref.api_group or ref.resource != "pods":
        return False
    pod = done.get((namespace, ref.name))
    return pod is not None and _matches(pod, ref.name, ref.uid)


def _owning_pod(claim: ResourceClaim, done: Mapping[ObjectKey, Pod]) -> Pod | None:
    """The done pod that is the claim's controller owner (``owningPod``), if any."""
    for ref in claim.metadata.owner_references:
        if ref.controller and ref.api_version == "v1" and ref.kind == "Pod":
            pod = done.get((namespace_of(claim), ref.name))
            if pod is not None and _matches(pod, ref.name, ref.uid):
                return pod
    return None


def _why_done(pod: Pod) -> str:
    phase = pod.status.phase if pod.status else None
    return phase if phase in ("Succeeded", "Failed") else "deleted before it was scheduled"


def stranded_pods(cluster: Cluster) -> list[str]:
    """Bound pods (``spec.nodeName``) whose claims are missing or not allocated, one line each. Nothing
    allocates claims for a pod that is already bound (the scheduler only allocates for pods it places), so
    the kubelet cannot prepare the devices and the pod never starts: worth saying, never ignored."""
    from .pods import resolve_pod_claims

    out = []
    for pod in cluster.pods:
        if not pod.spec.node_name or pod_done(pod) or pod.metadata.deletion_timestamp:
            continue
        pc = resolve_pod_claims(pod, cluster)
        where = f"pod {label_of(pod)} is bound to node {pod.spec.node_name} (spec.nodeName)"
        if pc.unresolvable:
            out.append(f"{where} but its claims cannot be had: {pc.unresolvable}; the kubelet cannot start it")
            continue
        for use in pc.uses:
            if use.generated:
                out.append(
                    f"{where} but the claim for its pod claim {use.pod_claim!r} does not exist yet; "
                    "the kubelet cannot start it until it is created and allocated"
                )
            elif not use.allocated:
                out.append(
                    f"{where} but claim {label_of(use.claim)} is not allocated: nothing allocates the claims "
                    "of a bound pod, so the kubelet cannot prepare its devices and the pod does not start"
                )
    return out
