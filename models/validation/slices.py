"""Kubernetes' validation of a ResourceSlice: pool, node selection, devices, counters, capacities.

Rules and limits follow ``pkg/apis/resource/validation`` of Kubernetes 1.37 (see
allocation-semantics.md §11). Messages name the field and say what is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from drasat.models.errors import Location
from drasat.models.resource import (
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCounterConsumption,
    NodeAllocatableMapping,
    NodeAllocatableResource,
    ResourceSlice,
    ResourceSliceSpec,
)

from .formats import (
    Findings,
    byte_length,
    check_dns_label,
    check_driver_name,
    check_fully_qualified_name,
    check_max_items,
    check_node_name,
    check_node_selector,
    check_object_meta,
    check_pool_name,
    check_qualified_name,
    check_unique,
    index,
    key,
    show,
    too_long,
)
from .request_policy import check_capacity
from .shared import check_binding_conditions, check_device_taint, check_skip_node_operations

MAX_DEVICES = 128
MAX_DEVICES_ADVANCED = 64
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_COMPATIBILITY_GROUPS = 2
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
MAX_TAINTS = 16
MAX_ATTRIBUTE_LENGTH = 64
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$"
)
_NODE_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def check_resource_slice(out: Findings, where: Location, obj: ResourceSlice) -> None:
    """A ResourceSlice: pool, node selection, devices and counters, as the API server validates them."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    spec, at = obj.spec, where.child("spec")
    check_driver_name(out, at.child("driver"), spec.driver)
    check_pool_name(out, at.child("pool.name"), spec.pool.name)
    if spec.pool.resource_slice_count <= 0:
        out.add(at.child("pool.resourceSliceCount"), "must be greater than zero")
    if spec.pool.generation < 0:
        out.add(at.child("pool.generation"), "must not be negative")
    _check_node_selection(out, at, spec)
    check_counters_or_devices(out, at, spec)
    _check_devices(out, at.child("devices"), spec)
    _check_counter_sets(out, at.child("sharedCounters"), spec.shared_counters)
    if spec.partition_type_attribute is not None:
        _check_partition_type(out, at, spec)
    check_skip_node_operations(out, at.child("skipNodeOperations"), spec.skip_node_operations)


def check_counters_or_devices(out: Findings, at: Location, spec: ResourceSliceSpec) -> None:
    """Since 1.35 a slice publishes counter sets or devices, never both (solve refuses it too: storable.py)."""
    if "devices" in spec.model_fields_set and "shared_counters" in spec.model_fields_set:
        out.add(
            at,
            "only one of `sharedCounters` or `devices` may be set in a slice (since Kubernetes 1.35 "
            "counter sets and the devices that consume them are published in separate slices)",
        )


def _check_node_selection(out: Findings, at: Location, spec: ResourceSliceSpec) -> None:
    chosen = []
    if spec.node_name is not None:
        if spec.node_name:
            chosen.append("nodeName")
            check_node_name(out, at.child("nodeName"), spec.node_name)
        else:
            out.add(at.child("nodeName"), "must be either unset or a node name, not empty")
    if spec.node_selector is not None:
        chosen.append("nodeSelector")
        check_node_selector(out, at.child("nodeSelector"), spec.node_selector)
        if len(spec.node_selector.node_selector_terms) != 1:
            out.add(at.child("nodeSelector.nodeSelectorTerms"), "must have exactly one node selector term")
    for field, value in (("allNodes", spec.all_nodes), ("perDeviceNodeSelection", spec.per_device_node_selection)):
        if value is True:
            chosen.append(field)
        elif value is False:
            out.add(at.child(field), "must be either unset or true")
    if not chosen:
        out.add(
            at,
            "exactly one of `nodeName`, `nodeSelector`, `allNodes` or `perDeviceNodeSelection` is "
            "required: it says which nodes can use the devices",
        )
    elif len(chosen) > 1:
        out.add(
            at,
            f"exactly one of `nodeName`, `nodeSelector`, `allNodes` or `perDeviceNodeSelection` is "
            f"required, but {', '.join(f'`{c}`' for c in chosen)} are set",
        )


def _uses_advanced_features(devices: list[Device]) -> bool:
    """Taints, counter consumption or list attributes lower the device limit to 64."""
    return any(d.taints or d.consumes_counters or any(_is_list(a) for a in d.attributes.values()) for d in devices)


def _is_list(attribute: DeviceAttribute) -> bool:
    return any(v is not None for v in (attribute.ints, attribute.bools, attribute.strings, attribute.versions))


def _check_devices(out: Findings, at: Location, spec: ResourceSliceSpec) -> None:
    limit = MAX_DEVICES_ADVANCED if _uses_advanced_features(spec.devices) else MAX_DEVICES
    if not check_max_items(out, at, spec.devices, limit):
        return
    per_device = spec.per_device_node_selection is True
    for i, device in enumerate(spec.devices):
        _check_device(out, index(at, i), device, per_device)
    check_unique(out, at, [d.name for d in spec.devices])


def _check_device(out: Findings, at: Location, device: Device, per_device: bool) -> None:
    check_dns_label(out, at.child("name"), device.name)
    total = len(device.attributes) + len(device.capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        out.add(
            at,
            f"Invalid value: {total}: the total number of attributes and capacities must not exceed "
            f"{MAX_ATTRIBUTES_AND_CAPACITIES}",
        )
    values = sum(_value_count(a) for a in device.attributes.values())  # list elements count one each
    if values > MAX_ATTRIBUTE_VALUES:
        out.add(
            at, f"Invalid value: {values}: the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"
        )
    for name, attribute in device.attributes.items():
        check_qualified_name(out, key(at.child("attributes"), name), name)
        _check_attribute(out, key(at.child("attributes"), name), attribute)
    multiple = device.allow_multiple_allocations is True
    for name, capacity in device.capacity.items():
        check_qualified_name(out, key(at.child("capacity"), name), name)
        check_capacity(out, key(at.child("capacity"), name), capacity, multiple)
    if check_max_items(out, at.child("taints"), device.taints, MAX_TAINTS):
        for i, taint in enumerate(device.taints):
            check_device_taint(out, index(at.child("taints"), i), taint)
    _check_consumptions(out, at.child("consumesCounters"), device.consumes_counters)
    _check_device_nodes(out, at, device, per_device)
    check_binding_conditions(out, at, device.binding_conditions, device.binding_failure_conditions)
    for name, resource in device.node_allocatable_resources.items():
        _check_node_allocatable(out, key(at.child("nodeAllocatableResources"), name), name, resource, device)


def _value_count(attribute: DeviceAttribute) -> int:
    lists = [v for v in (attribute.ints, attribute.bools, attribute.strings, attribute.versions) if v]
    return sum(len(v) for v in lists) if lists else 1


def _check_attribute(out: Findings, at: Location, attribute: DeviceAttribute) -> None:
    """Exactly one typed value; strings and versions at most 64 bytes (UTF-8, as Go counts); lists not empty."""
    given = [name for name, value in attribute.raw().items() if value is not None]
    if len(given) != 1:
        out.add(
            at,
            "exactly one value must be given (one of int, bool, string, version, ints, bools, strings, "
            "versions)" + (f", not {len(given)}: {', '.join(given)}" if given else ""),
        )
    if attribute.string is not None:
        _check_text(out, at.child("string"), attribute.string, version=False)
    if attribute.version is not None:
        _check_text(out, at.child("version"), attribute.version, version=True)
    for field in ("ints", "bools", "strings", "versions"):
        items = getattr(attribute, field)
        if items is not None and not items:
            out.add(at.child(field), "must not be empty when given")
    for i, item in enumerate(attribute.strings or []):
        _check_text(out, index(at.child("strings"), i), item, version=False)
    for i, item in enumerate(attribute.versions or []):
        _check_text(out, index(at.child("versions"), i), item, version=True)


def _check_text(out: Findings, at: Location, value: str, version: bool) -> None:
    if byte_length(value) > MAX_ATTRIBUTE_LENGTH:
        out.add(at, too_long(MAX_ATTRIBUTE_LENGTH))
    if version and not _SEMVER.match(value):
        out.add(
            at,
            f"{show(value)} is not a semantic version (semver.org 2.0.0: MAJOR.MINOR.PATCH, no leading 'v' or zeros)",
        )


def _check_consumptions(out: Findings, at: Location, consumptions: list[DeviceCounterConsumption]) -> None:
    if not check_max_items(out, at, consumptions, MAX_CONSUMPTIONS_PER_DEVICE):
        return
    for i, consumption in enumerate(consumptions):
        here = index(at, i)
        check_dns_label(out, here.child("counterSet"), consumption.counter_set)
        _check_counters(out, here.child("counters"), consumption.counters, MAX_COUNTERS_PER_CONSUMPTION)
        groups = consumption.compatibility_groups or []
        if check_max_items(out, here.child("compatibilityGroups"), groups, MAX_COMPATIBILITY_GROUPS):
            check_unique(out, here.child("compatibilityGroups"), groups)
            for g, group in enumerate(groups):
                check_dns_label(out, index(here.child("compatibilityGroups"), g), group)
    check_unique(out, at, [c.counter_set for c in consumptions])


def _check_counters(out: Findings, at: Location, counters: Mapping[str, object], limit: int) -> None:
    if not counters:
        out.add(at, "at least one counter is required")
    elif check_max_items(out, at, counters, limit):
        for name in counters:
            check_dns_label(out, key(at, name), name)


def _check_counter_sets(out: Findings, at: Location, sets: list[CounterSet]) -> None:
    if not check_max_items(out, at, sets, MAX_COUNTER_SETS):
        return
    for i, counter_set in enumerate(sets):
        check_dns_label(out, index(at, i).child("name"), counter_set.name)
        _check_counters(out, index(at, i).child("counters"), counter_set.counters, MAX_COUNTERS_PER_SET)
    check_unique(out, at, [s.name for s in sets])


def _check_device_nodes(out: Findings, at: Location, device: Device, per_device: bool) -> None:
    """With perDeviceNodeSelection each device says where it is available; otherwise none may."""
    given = [
        f
        for f, v in (
            ("nodeName", device.node_name),
            ("nodeSelector", device.node_selector),
            ("allNodes", device.all_nodes),
        )
        if v is not None
    ]
    if not per_device:
        if given:
            out.add(
                at,
                f"{', '.join(f'`{g}`' for g in given)} may only be set when the slice sets "
                "perDeviceNodeSelection: true",
            )
        return
    if device.node_name is not None:
        if device.node_name:
            check_node_name(out, at.child("nodeName"), device.node_name)
        else:
            out.add(at.child("nodeName"), "must not be empty")
    if device.node_selector is not None:
        check_node_selector(out, at.child("nodeSelector"), device.node_selector)
    if device.all_nodes is False:
        out.add(at.child("allNodes"), "must be either unset or true")
    chosen = [g for g in given if not (g == "allNodes" and device.all_nodes is False)]
    if len(chosen) != 1:
        out.add(
            at,
            "exactly one of `nodeName`, `nodeSelector` or `allNodes` is required when the slice sets "
            "perDeviceNodeSelection: true" + (f", but {len(chosen)} are set" if chosen else ""),
        )


def _check_node_allocatable(
    out: Findings, at: Location, name: str, resource: NodeAllocatableResource, device: Device
) -> None:
    """One node allocatable resource of a device: a node resource, mapped from capacity and/or with overhead."""
    if name not in _NODE_RESOURCES and not name.startswith("hugepages-"):
        out.add(
            at, f"{show(name)} is not a node allocatable resource (cpu, memory, ephemeral-storage or hugepages-<size>)"
        )
    if resource.mapping is None and resource.overhead is None:
        out.add(at, "at least one of `mapping` or `overhead` is required")
    if resource.mapping is not None:
        _check_mapping(out, at.child("mapping"), resource.mapping, device)
    overhead = resource.overhead
    if overhead is not None:
        if overhead.per_pod is None and overhead.per_container is None:
            out.add(at.child("overhead"), "at least one of `perPod` or `perContainer` is required")
        for field, value in (("perPod", overhead.per_pod), ("perContainer", overhead.per_container)):
            if value is not None and value < 0:
                out.add(at.child("overhead").child(field), f"{value} must not be negative")


def _check_mapping(out: Findings, here: Location, mapping: NodeAllocatableMapping, device: Device) -> None:
    """A mapping names one of the device's capacities with its multiplier (both or neither); multipliers > 0."""
    if mapping.capacity_key is not None:
        if not mapping.capacity_key:
            out.add(here.child("capacityKey"), "must not be empty")
        elif mapping.capacity_key not in device.capacity:
            out.add(here.child("capacityKey"), f"{show(mapping.capacity_key)} is not a capacity of this device")
        if mapping.capacity_multiplier is None:
            out.add(here.child("capacityMultiplier"), "is required when capacityKey is set")
    elif mapping.capacity_multiplier is not None:
        out.add(here.child("capacityKey"), "is required when capacityMultiplier is set")
    for field, value in (
        ("capacityMultiplier", mapping.capacity_multiplier),
        ("deviceMultiplier", mapping.device_multiplier),
    ):
        if value is not None and value <= 0:
            out.add(here.child(field), f"{value} must be positive")


def _check_partition_type(out: Findings, at: Location, spec: ResourceSliceSpec) -> None:
    """A named partition type attribute: only with counter-consuming devices, each carrying it as a string."""
    name = spec.partition_type_attribute or ""
    if not any(d.consumes_counters for d in spec.devices):
        out.add(at.child("partitionTypeAttribute"), "may only be set on a slice with devices that consume counters")
        return
    before = len(out.problems)
    check_fully_qualified_name(out, at.child("partitionTypeAttribute"), name)
    if len(out.problems) > before:
        return
    bare = name[len(spec.driver) + 1 :] if name.startswith(spec.driver + "/") else ""
    for i, device in enumerate(spec.devices):
        if not device.consumes_counters:
            continue
        attribute = device.attributes.get(name) or (device.attributes.get(bare) if bare else None)
        where = key(index(at.child("devices"), i).child("attributes"), name)
        if attribute is None:
            out.add(
                where,
                "is required: the device consumes counters and the slice's partitionTypeAttribute names this attribute",
            )
        elif attribute.string is None:
            out.add(where, "must be a string value because the slice's partitionTypeAttribute names it")
