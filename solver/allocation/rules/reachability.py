"""Node reachability: slice node selection, per-device node selection, and bindsToNode.

A slice (or, with ``perDeviceNodeSelection``, each of its devices) says where it can be
used: ``nodeName``, ``allNodes`` or a ``nodeSelector``. Only what the chosen node reaches
is allocatable; an off-node device of a per-device slice stays listed, because Kubernetes
runs the selectors (and raises their errors) before it looks at the node. A device that
is node-local (a ``nodeName``, or ``bindsToNode``) pins its allocation to the node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drasat.models.errors import SelectorParseError
from drasat.models.resource import Device, ResourceSlice
from drasat.solver.allocation.planning.node_selectors import (
    checked_reaches,
    parse_failure,
    selector_matches,
)
from drasat.solver.allocation.planning.plan import Alternative
from drasat.solver.allocation.problem import NodeInfo

from .base import Found, Rule, Stage

if TYPE_CHECKING:
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice

OFF_NODE = "not on this node"


def slice_reaches(node: NodeInfo, s: ResourceSlice) -> bool:
    """Whether any device of the slice may be used on ``node`` (the slice's own fields, or any device's)."""
    spec = s.spec
    if spec.node_name:  # the usual cases first, as :func:`~..nodes.reaches` decides them (nothing to parse)
        return spec.node_name == node.name
    if spec.all_nodes:
        return True
    if spec.node_selector is not None:
        try:  # the slice is worded only for an error
            return selector_matches(node, spec.node_selector)
        except SelectorParseError as exc:
            raise parse_failure(f"slice {s.name}", exc) from None
    if spec.per_device_node_selection:
        return any(device_reaches(node, s, d) for d in spec.devices)
    return False


def device_reaches(node: NodeInfo, s: ResourceSlice, d: Device) -> bool:
    """Whether one device of a per-device slice may be used on ``node``."""
    return checked_reaches(node, f"device {d.name} in slice {s.name}", d.node_name, d.all_nodes, d.node_selector)


def node_local(dev: InventoryDevice) -> bool:
    """Whether the device's allocation can only be used on this node (``nodeName`` or ``bindsToNode``)."""
    owner = dev.device if dev.slice.spec.per_device_node_selection else dev.slice.spec
    return owner.node_name is not None or bool(dev.device.binds_to_node)


class Reachability(Rule):
    """Only devices that reach the node (node name, selector, all nodes) are candidates."""

    name = "reachability"
    stage = Stage.SELECTION
    searched = False  # decided before any search: an off-node device is never a candidate

    def excludes_any(self, inv: Inventory) -> bool:
        return inv.kinds.off_node

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        return "" if dev.on_node else OFF_NODE
