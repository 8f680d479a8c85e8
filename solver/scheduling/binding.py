"""Reserve and Bind: the pod's claims allocated and reserved on the node picked, the pod bound, the state updated.

A verdict kept from another node of the class or another pod of the claim shape is taken over for
this pod and node when it can be (the same devices, by position), else the devices are allocated
again here; the kubelet's predicted NUMA admission (nodes with a NodeResourceTopology) takes its
CPUs and memory from the node's layout.
"""

from __future__ import annotations

from dataclasses import replace

from drasat.models.core import (
    NodeAllocatableResourceClaimStatus,
    Pod,
    PodExtendedResourceClaimStatus,
    PodResourceClaimStatus,
    PodStatus,
)
from drasat.models.resource import ResourceClaim, ResourceClaimStatus
from drasat.solver.allocation.problem import claim_key

from .cluster_state import ClusterState
from .placement import Placement
from .plugins.binding_conditions import BindingClock, stamped
from .plugins.dynamic_resources import AllocateOptions, DraVerdict, claim_shape, dra_verdict
from .plugins.numa_filter import admitted_on
from .pods import PodClaims, pod_consumer


def commit(
    state: ClusterState, pc: PodClaims, node: str, verdict: DraVerdict, options: AllocateOptions
) -> Placement | None:
    """Bind the pod to ``node``: allocations for this very pod and node (a cached verdict may come from
    another node of its class or another pod of its shape), claims reserved, pod status written, state
    updated. None if the devices fail."""
    if (verdict.node, verdict.pod) != (node, pc.label):
        verdict = for_this_pod(state, pc, node, verdict) or dra_verdict(state, pc, node, options)
        if verdict.reasons:
            return None
    claims = updated_claims(pc, verdict, state.cluster.clock)
    pod = bound_pod(pc, node, verdict, claims)
    admission = admitted_on(state, pc, node, verdict.allocations) if state.numa else None
    state.record(claims)
    state.bind(pod, node)
    placement = Placement(pod, node, claims, problem=verdict.problem, allocations=verdict.allocations)
    placement.exact, placement.admission = verdict.exact, admission
    return placement


def for_this_pod(state: ClusterState, pc: PodClaims, node: str, verdict: DraVerdict) -> DraVerdict | None:
    """Another pod's verdict on this very node (and state of it: the cache's key) for claims of the same shape:
    the same devices serve this pod's claims, taken over by position — unless the answer names its claims
    (share IDs) or depends on the pod (node-allocatable amounts). None: allocate again."""
    if verdict.node != node or verdict.statuses or not verdict.claims:
        return None
    if any(r.share_id for a in verdict.allocations.values() for r in a.devices.results):
        return None
    claims = claim_shape(state, pc, node).claims
    if len(claims) != len(verdict.claims):
        return None
    allocations = {claim_key(new): verdict.allocations[claim_key(old)] for new, old in zip(claims, verdict.claims)}
    return replace(verdict, pod=pc.label, claims=claims, allocations=allocations, problem=state.problem(node, claims))


def updated_claims(pc: PodClaims, verdict: DraVerdict, clock: BindingClock | None = None) -> list[ResourceClaim]:
    """Every claim of the pod with its allocation (stamped at ``clock``'s moment, when the scheduler stamps
    allocations) and the pod (or its group) in ``reservedFor``."""
    out = []
    consumers = [(u.claim, u.consumer) for u in pc.uses]
    own = {claim_key(u.claim) for u in pc.uses}
    consumers += [(c, pod_consumer(pc.pod)) for c in verdict.claims if claim_key(c) not in own]
    for claim, consumer in consumers:
        # Shallow copies: the spec is shared as it is, and the status gets new values, never changed ones.
        updated = claim.model_copy()
        status = updated.status.model_copy() if updated.status else ResourceClaimStatus()
        allocation = verdict.allocations.get(claim_key(claim))
        if allocation is not None:
            status.allocation = stamped(allocation, clock)
        if not any(r.uid == consumer.uid for r in status.reserved_for):
            status.reserved_for = [*status.reserved_for, consumer.reference()]
        updated.status = status
        out.append(updated)
    return out


def bound_pod(pc: PodClaims, node: str, verdict: DraVerdict, claims: list[ResourceClaim]) -> Pod:
    """The pod as the API server would store it once bound to ``node``, with its generated claims named."""
    pod = pc.pod.model_copy()  # shallow, as the claims: only new values are set on the copies
    pod.spec = pod.spec.model_copy()
    pod.spec.node_name = node
    status = pod.status.model_copy() if pod.status else PodStatus()
    templated = {e.name for e in pod.spec.resource_claims if e.resource_claim_template_name}
    known = {s.name for s in status.resource_claim_statuses}
    generated = [
        PodResourceClaimStatus(name=u.pod_claim, resource_claim_name=u.claim.name)
        for u in pc.uses
        if u.pod_claim in templated and u.pod_claim not in known
    ]
    if generated:
        status.resource_claim_statuses = [*status.resource_claim_statuses, *generated]
    if verdict.mappings:
        own = {claim_key(u.claim) for u in pc.uses}
        extended = next(c for c in claims if claim_key(c) not in own)
        status.extended_resource_claim_status = PodExtendedResourceClaimStatus(
            request_mappings=verdict.mappings, resource_claim_name=extended.name
        )
    if verdict.statuses:
        status.node_allocatable_resource_claim_statuses = [
            NodeAllocatableResourceClaimStatus.model_validate(s.to_api()) for s in verdict.statuses
        ]
    pod.status = status
    return pod
