"""Devices a node cannot use at all, and why: the part of the funnel before candidate selection.

The inventory keeps only devices of usable pools that reach the node, so a device in a slice
whose ``nodeSelector`` does not match, in an incomplete or invalid pool, or in a slice a
feature gate drops, never reaches candidate selection — and an explanation that looked only
at candidates would not know it was there. This module finds those devices again, with the
reason in words (naming the slice, the selector, the pool, the gate), so that the funnel can
show the ones a request's selectors would have taken. Slices pinned by ``nodeName`` to another
node are left out: they are plainly someone else's.
"""

from __future__ import annotations

from dataclasses import dataclass

from drasat.models.meta import NodeSelector
from drasat.models.resource import Device, ResourceSlice
from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.pools import Pool
from drasat.solver.allocation.problem import NodeInfo, Problem
from drasat.solver.allocation.rules.reachability import device_reaches, slice_reaches
from drasat.solver.cel import CelDevice

PER_DEVICE = "per device"


@dataclass(frozen=True)
class Unavailable:
    """One device the node cannot use, with the reason, and the feature gate that would change it."""

    label: str
    cel: CelDevice
    reason: str
    gate: str | None = None


def unavailable_devices(problem: Problem, inv: Inventory) -> list[Unavailable]:
    """Every device of a slice this node could see that the inventory left out, with why."""
    pools = {pool.key: pool for pool in inv.pools}
    newest: dict[tuple[str, str], int] = {}
    for s in problem.slices:
        key = (s.spec.driver, s.spec.pool.name)
        newest[key] = max(newest.get(key, s.spec.pool.generation), s.spec.pool.generation)
    held = {id(dev.slice) for dev in inv.devices}
    found: list[Unavailable] = []
    for s in problem.slices:
        spec = s.spec
        if (spec.node_name and spec.node_name != inv.node.name) or id(s) in held:
            continue  # another node's own slice, or one whose devices the inventory holds
        key = (spec.driver, spec.pool.name)
        reason, gate = _slice_reason(s, inv, pools.get(key), newest[key])
        for d in spec.devices if reason else []:
            if spec.per_device_node_selection and not device_reaches(inv.node, s, d):
                found.append(Unavailable(_label(s, d), _cel(s, d), device_placement(inv, s, d)))
            else:  # a device that would reach the node is dropped for the slice's reason
                found.append(Unavailable(_label(s, d), _cel(s, d), reason, gate))
    return found


def _slice_reason(s: ResourceSlice, inv: Inventory, pool: Pool | None, newest: int) -> tuple[str, str | None]:
    spec = s.spec
    gated = [
        f
        for f, on in (
            ("perDeviceNodeSelection", spec.per_device_node_selection is not None),
            ("sharedCounters", bool(spec.shared_counters)),
        )
        if on
    ]
    if not slice_reaches(inv.node, s):  # placement first: a gate turned on would not bring it here
        if spec.per_device_node_selection:
            return PER_DEVICE, None  # no device of it reaches the node: each says where it is
        return f"in slice {s.name}, {_placement(spec.node_selector, spec.all_nodes, inv.node)}", None
    if gated and not inv.features.partitionable:
        return (
            f"in slice {s.name}, which uses {' and '.join(gated)}: dropped while the DRAPartitionableDevices "
            "feature gate is disabled",
            "DRAPartitionableDevices",
        )
    if pool is None or s.spec.pool.generation < newest:
        return _superseded(s, newest), None
    if pool.state == "usable":
        return "", None  # its devices are in the inventory
    gate = "DRADeviceCompatibilityGroups" if "DRADeviceCompatibilityGroups" in pool.problem else None
    return f"in pool {pool.label()}, {pool.state}: {pool.problem or 'see drasat pool-status'}", gate


def _superseded(s: ResourceSlice, newest: int) -> str:
    """A slice of a pool the inventory dropped whole: a newer generation of the pool exists elsewhere."""
    if newest <= s.spec.pool.generation:
        return ""
    return (
        f"in slice {s.name}, of generation {s.spec.pool.generation} of pool {s.spec.driver}/{s.spec.pool.name}: "
        f"generation {newest} replaces it"
    )


def device_placement(inv: Inventory, s: ResourceSlice, d: Device) -> str:
    """Why a device of a per-device slice is not on this node, in words."""
    if d.node_name:
        return f"not on this node: the device is on node {d.node_name}"
    return "not on this node: " + _placement(d.node_selector, d.all_nodes, inv.node)


def _placement(selector: NodeSelector | None, all_nodes: bool | None, node: NodeInfo) -> str:
    if selector is not None:
        return f"whose nodeSelector ({selector_words(selector)}) does not match node {node.name}"
    return "with no node selection (nodeName, nodeSelector or allNodes) that reaches this node"


def selector_words(selector: NodeSelector) -> str:
    """A node selector as one line: terms joined by "or", requirements by "and"."""
    terms = []
    for term in selector.node_selector_terms:
        reqs = [
            f"{r.key} {r.operator} {','.join(r.values)}".rstrip() for r in [*term.match_expressions, *term.match_fields]
        ]
        terms.append(" and ".join(reqs) or "(empty term)")
    return " or ".join(terms) or "no terms"


def _label(s: ResourceSlice, d: Device) -> str:
    return f"{s.spec.driver}/{s.spec.pool.name}/{d.name}"


def _cel(s: ResourceSlice, d: Device) -> CelDevice:
    """The device as CEL sees it (the inventory's own view, for a device the inventory does not hold)."""
    return CelDevice(
        key=(s.spec.driver, s.spec.pool.name, s.name, d.name),
        driver=s.spec.driver,
        attributes={k: v.raw() for k, v in d.attributes.items()},
        capacity={k: v.value for k, v in d.capacity.items()},
        allow_multiple_allocations=bool(d.allow_multiple_allocations),
    )
