"""Stage 1: the devices one node can use, in the order Kubernetes tries them, and what is in use.

Pools (usable or not, with their counters) and what is in use come from :mod:`.pools`; devices are
enumerated as Kubernetes' allocator enumerates them — pools by (driver, name) with binding-condition
pools last, slices by name, devices as listed — because first-fit is defined by that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from drasat.models.resource import Device, DeviceTaint, DeviceTaintRule, ResourceSlice
from drasat.models.trusted import dict_setter
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.frozen import maker
from drasat.solver.allocation.problem import DeviceId, NodeInfo, Problem
from drasat.solver.allocation.rules.reachability import device_reaches
from drasat.solver.cel import CelDevice

from .pools import NOTHING_IN_USE, InUse, Pool, PoolKey, build_pool, gather, in_use_state, pool_order


@dataclass(frozen=True)
class InventoryDevice:
    """One device the node can use, with everything the later stages ask of it."""

    index: int
    id: DeviceId
    slice: ResourceSlice
    device: Device
    taints: tuple[DeviceTaint, ...]
    cel: CelDevice
    pool_has_binding_conditions: bool
    shared: bool  # allocatable many times (allowMultipleAllocations, with DRAConsumableCapacity on)
    on_node: bool = True  # False: per-device node selection puts it elsewhere (checked after the selectors)

    @property
    def name(self) -> str:
        return self.id[2]

    @property
    def pool_key(self) -> PoolKey:
        return self.id[0], self.id[1]

    def label(self) -> str:
        return "/".join(self.id)


@dataclass
class DeviceKinds:
    draws_counters: bool = False  # some device consumes counters
    shared: bool = False  # some device is allocatable many times
    off_node: bool = False  # some device (of a per-device slice) is not on this node
    tainted: bool = False  # some device has a taint


@dataclass
class Inventory:
    """The node, the gates, its pools (usable or not, with counters left), its devices in order, what is in use."""

    node: NodeInfo
    features: Features
    pools: list[Pool]
    devices: list[InventoryDevice]
    in_use: InUse
    kinds: DeviceKinds = field(default_factory=DeviceKinds)
    """Which kinds of device are here at all (rules ask before any work, several times a call): found
    while the inventory is built, not as a ``cached_property``, whose lock costs more than the scan."""

    def pool(self, key: PoolKey) -> Pool:
        return next(p for p in self.pools if p.key == key)


def build_inventory(problem: Problem, devices_of: Inventory | None = None) -> Inventory:
    """Pools, devices in enumeration order, and the in-use state, for ``problem.node``.

    ``devices_of``: an inventory built for the same node, slices, taint rules and gates, with other claims
    in use (the scheduler's, as pods land on the node). Which devices a node has and their order do not
    depend on what is in use — only the pools' counters and the in-use state do — so its devices are
    taken as they are (the records are read-only) and only the pools are built again."""
    features = problem.features
    in_use = in_use_state(problem.allocated, features) if problem.allocated else NOTHING_IN_USE
    pools: list[Pool] = []
    usable: list[tuple[Pool, list[ResourceSlice]]] = []
    for key, relevant, others in gather(problem.slices, problem.node, features):
        pool, device_slices = build_pool(key, relevant, others, features, in_use)
        pools.append(pool)
        if pool.state == "usable":
            usable.append((pool, device_slices))
    if len(pools) > 1:
        pools.sort(key=pool_order)
        usable.sort(key=lambda item: pool_order(item[0]))
    if devices_of is not None:
        return Inventory(problem.node, features, pools, devices_of.devices, in_use, devices_of.kinds)
    rules = problem.taint_rules if features.taint_rules else ()
    devices, kinds = _enumerate(usable, problem.node, rules, features.consumable_capacity)
    return Inventory(problem.node, features, pools, devices, in_use, kinds)


def _enumerate(
    usable: list[tuple[Pool, list[ResourceSlice]]], node: NodeInfo, rules: Sequence[DeviceTaintRule], consumable: bool
) -> tuple[list[InventoryDevice], DeviceKinds]:
    """The usable devices in Kubernetes' order, and which kinds of device are among them (found in the same
    pass: rules ask several times a call). Every call makes two records per device, filled field by field
    without the frozen ``__init__`` (tests/test_fast_records.py checks they are whole): the device, and its
    :class:`CelDevice`, which keeps the API device to convert its maps from when first read (``_FromSource``)."""
    devices: list[InventoryDevice] = []
    draws = shared = off_node = tainted = False
    for pool, device_slices in usable:
        driver, pool_name = pool.key
        binding = pool.has_binding_conditions
        for s in device_slices:  # in name order already (build_pool)
            per_device, slice_name = s.spec.per_device_node_selection, s.metadata.name or ""
            for d in s.spec.devices:
                # Off-node devices stay listed: upstream runs the selectors (and their errors) first.
                on_node = not per_device or device_reaches(node, s, d)
                device_id = (driver, pool_name, d.name)
                taints = tuple(d.taints) if d.taints else ()
                if rules:
                    taints += tuple(_rule_taints(rules, device_id))
                multiple = bool(d.allow_multiple_allocations)
                cel = _new(CelDevice)
                _set_cel_dict(
                    cel,
                    {
                        "key": (driver, pool_name, slice_name, d.name),
                        "driver": driver,
                        "allow_multiple_allocations": multiple,
                        "_source": d,
                    },
                )
                devices.append(
                    _device(len(devices), device_id, s, d, taints, cel, binding, consumable and multiple, on_node)
                )  # by position, in field order: a keyword call costs more
                draws = draws or bool(d.consumes_counters)
                shared = shared or (consumable and multiple)
                off_node = off_node or not on_node
                tainted = tainted or bool(taints)
    return devices, DeviceKinds(draws, shared, off_node, tainted)


_new, _set_cel_dict = object.__new__, dict_setter(CelDevice)  # see models.trusted.dict_setter
_device = maker(InventoryDevice)  # frozen: a generated maker is a third of the dataclass's __init__


def _rule_taints(rules: Sequence[DeviceTaintRule], device: DeviceId) -> Iterable[DeviceTaint]:
    """DeviceTaintRules as kube-scheduler applies them (a rule without a selector taints every device)."""
    driver, pool, name = device
    for rule in rules:
        sel = rule.spec.device_selector
        if sel is not None and (
            (sel.driver and sel.driver != driver)
            or (sel.pool and sel.pool != pool)
            or (sel.device and sel.device != name)
        ):
            continue
        yield rule.spec.taint
