"""Optional node operations (DRAOptionalNodeOperations): a slice's devices that skip the kubelet's
NodePrepareResources/NodeUnprepareResources calls are only usable on a node that can skip them.

Seed 000: "When a Pod uses a ResourceClaim with skipNodeOperations configured, the Kubernetes scheduler
verifies that the target node declares support for the DRAOptionalNodeOperations feature in its
.status.declaredFeatures before scheduling the Pod." Kubernetes' allocator checks it per device, in
``allocateDevice`` (as it does counters with their gate off): an ExactCount request passes such a device
over and may take a plain sibling, while an ``allocationMode: All`` request that lists it cannot be
satisfied. Without a Node object in the input nothing is known of the node, and nothing is refused.
With the gate off the API server drops the field, and the device is allocated as any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drasat.solver.allocation.planning.plan import Alternative

from .base import Found, Rule, Stage

if TYPE_CHECKING:
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice

FEATURE = "DRAOptionalNodeOperations"


def undeclared(inv: Inventory, dev: InventoryDevice) -> str:
    """Why the node cannot use a device whose slice skips node operations; "" when it can."""
    if not dev.slice.spec.skip_node_operations or not inv.features[FEATURE] or inv.node.declares(FEATURE):
        return ""
    return (
        f"its slice skips node operations ({', '.join(dev.slice.spec.skip_node_operations)}), but node "
        f"{inv.node.name} does not declare {FEATURE} in status.declaredFeatures"
    )


class NodeOperations(Rule):
    """Devices skipping node operations need a node that declares it can skip them."""

    name = "node-operations"
    stage = Stage.BLOCK
    searched = False  # decided before any search: such a device is never a candidate on this node

    def excludes_any(self, inv: Inventory) -> bool:
        return bool(inv.features[FEATURE]) and not inv.node.declares(FEATURE)

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        return undeclared(inv, dev)
