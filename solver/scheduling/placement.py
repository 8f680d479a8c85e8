"""One pod's outcome as the scheduler leaves it: its node and claims, or why it stays pending.

Also what binding conditions add to it (:mod:`.plugins.binding_conditions`): the claims PostFilter
deallocated before the attempt, and those PreBind waits for, with the pod not bound meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from drasat.models.core import Node, Pod
from drasat.models.resource import AllocationResult, ResourceClaim
from drasat.solver.allocation.problem import Problem, claim_key

from .cluster import Cluster, label_of
from .plugins.binding_conditions import BindingClock, BindingVerdict, Recovery, stamped, waiting_in_prebind
from .plugins.node_filters import summary
from .plugins.numa_admission import Admission


@dataclass
class Placement:
    """One pod's outcome: the node and the claims as the scheduler leaves them, or why it stays pending."""

    pod: Pod  # with spec.nodeName and the status fields the scheduler writes, when placed
    node: str | None = None
    claims: list[ResourceClaim] = field(default_factory=list)  # allocated and/or reserved for this pod
    reason: str = ""
    problem: Problem | None = None  # the per-node question the new allocations answer (for the verifier)
    allocations: dict[str, AllocationResult] = field(default_factory=dict)  # by claim_key, as allocate's results
    node_reasons: dict[str, list[str]] = field(default_factory=dict)
    exact: bool = True  # False: time ran out before the objective's answer on the node (the allocation is valid)
    # Binding conditions: claims PostFilter deallocated before this attempt, and those PreBind waits for (then
    # the pod is not bound yet: ``pod`` has no spec.nodeName, ``node`` is the node it waits on).
    deallocated: list[BindingVerdict] = field(default_factory=list)
    waiting: list[BindingVerdict] = field(default_factory=list)
    admission: Admission | None = None  # the kubelet's predicted admission (nodes with a NodeResourceTopology)

    @property
    def label(self) -> str:
        return label_of(self.pod)


def _stamped_claim(claim: ResourceClaim, placement: Placement, clock: BindingClock | None) -> ResourceClaim:
    """A claim newly allocated by this placement, its allocationTimestamp at the clock's moment (any path that
    made the allocation: one by one stamps it already, the joint model does not)."""
    status = claim.status
    if clock is None or status is None or status.allocation is None or claim_key(claim) not in placement.allocations:
        return claim
    return claim.model_copy(
        update={"status": status.model_copy(update={"allocation": stamped(status.allocation, clock)})}
    )


def with_binding_state(placement: Placement, recovery: Recovery, cluster: Cluster) -> Placement:
    """The placement with the claims deallocated for it and, when PreBind waits for binding conditions, the
    pod as it stands meanwhile: assumed on its node (its resources count there) but not bound."""
    placement.deallocated = recovery.deallocated.get(placement.label, [])
    if placement.node is None:
        return placement
    placement.claims = [_stamped_claim(c, placement, cluster.clock) for c in placement.claims]
    placement.waiting = waiting_in_prebind(placement.claims, cluster)
    if placement.waiting:
        pod = placement.pod.model_copy()
        pod.spec = pod.spec.model_copy()
        pod.spec.node_name = None
        pod.spec.model_fields_set.discard("node_name")  # unset, not null: the API prints no nodeName
        placement.pod = pod
    return placement


def pending_or_placed(found: tuple[Placement, dict[str, list[str]]], nodes: Sequence[Node]) -> Placement:
    """The placement, or the pending pod with the scheduler's summary: reasons in node order, whichever order
    the nodes were looked at in."""
    placement, reasons = found
    if placement.node is not None:
        return placement
    node_reasons = {n.name: reasons[n.name] for n in nodes if n.name in reasons}
    return Placement(placement.pod, reason=summary(len(nodes), node_reasons.values()), node_reasons=node_reasons)
