"""Kubernetes' validation of a ResourceClaim's status: allocation, reservations, device status.

The API server checks the status when the scheduler or a driver writes it, not
when a user creates a claim. drasat reads allocated claims from ``kubectl get``
output (their devices are in use), so it checks the status as the API server did
when it was written: results name requests of this claim, at most 32 devices,
well-formed share IDs, reservations only on allocated claims, device status only
for allocated devices.
"""

from __future__ import annotations

import ipaddress

from drasat.models.errors import Location
from drasat.models.resource import (
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaimStatus,
)

from .formats import (
    Findings,
    check_conditions,
    check_dns_label,
    check_driver_name,
    check_json_object,
    check_max_items,
    check_node_selector,
    check_pool_name,
    check_unique,
    check_uuid,
    index,
    show,
    too_long,
)
from .shared import (
    RequestNames,
    check_binding_conditions,
    check_opaque,
    check_request_ref,
    check_request_refs,
    check_skip_node_operations,
    check_toleration,
)

MAX_RESULTS = 32
MAX_ALLOCATION_CONFIGS = 64
MAX_RESERVED_FOR = 256
MAX_DEVICE_CONDITIONS = 8
MAX_DEVICE_DATA = 10 * 1024
MAX_INTERFACE_NAME = 256
MAX_HARDWARE_ADDRESS = 128
MAX_IPS = 16
CONFIG_SOURCES = ("FromClass", "FromClaim")

DeviceKey = tuple[str, str, str, str | None]


def check_claim_status(out: Findings, at: Location, status: ResourceClaimStatus, names: RequestNames) -> None:
    """A claim's status: its allocation against the request names, consumers and device reports."""
    reserved = at.child("reservedFor")
    if check_max_items(out, reserved, status.reserved_for, MAX_RESERVED_FOR):
        for i, consumer in enumerate(status.reserved_for):
            for field, value in (("resource", consumer.resource), ("name", consumer.name), ("uid", consumer.uid)):
                if not value:
                    out.add(index(reserved, i).child(field), "is required")
        check_unique(out, reserved, [c.uid for c in status.reserved_for])
    if status.reserved_for and status.allocation is None:
        out.add(reserved, "may only be set on an allocated claim (status.allocation is missing)")
    allocated: set[DeviceKey] = set()
    if status.allocation is not None:
        allocated = _check_allocation(out, at.child("allocation"), status.allocation, names)
    devices = at.child("devices")
    for i, device in enumerate(status.devices):
        _check_device_status(out, index(devices, i), device, allocated)
    check_unique(out, devices, ["/".join(k for k in _key(d) if k) for d in status.devices])


def _key(entry: DeviceRequestAllocationResult | AllocatedDeviceStatus) -> DeviceKey:
    return entry.driver, entry.pool, entry.device, entry.share_id


def _check_allocation(out: Findings, at: Location, allocation: AllocationResult, names: RequestNames) -> set[DeviceKey]:
    results = at.child("devices.results")
    if check_max_items(out, results, allocation.devices.results, MAX_RESULTS):
        for i, result in enumerate(allocation.devices.results):
            _check_result(out, index(results, i), result, names)
    configs = at.child("devices.config")
    if check_max_items(out, configs, allocation.devices.config, MAX_ALLOCATION_CONFIGS):
        for i, config in enumerate(allocation.devices.config):
            here = index(configs, i)
            if config.source not in CONFIG_SOURCES:
                out.add(here.child("source"), f"{show(config.source)} must be FromClass or FromClaim")
            check_request_refs(out, here.child("requests"), config.requests, names)
            check_opaque(out, here.child("opaque"), config.opaque)
    if allocation.node_selector is not None:
        check_node_selector(out, at.child("nodeSelector"), allocation.node_selector)
    return {_key(result) for result in allocation.devices.results}


def _check_result(out: Findings, at: Location, result: DeviceRequestAllocationResult, names: RequestNames) -> None:
    check_request_ref(out, at.child("request"), result.request, names)
    check_driver_name(out, at.child("driver"), result.driver)
    check_pool_name(out, at.child("pool"), result.pool)
    check_dns_label(out, at.child("device"), result.device)
    check_binding_conditions(out, at, result.binding_conditions, result.binding_failure_conditions)
    for i, toleration in enumerate(result.tolerations):
        check_toleration(out, index(at.child("tolerations"), i), toleration)
    if result.share_id is not None:
        check_uuid(out, at.child("shareID"), result.share_id)
    check_skip_node_operations(out, at.child("skipNodeOperations"), result.skip_node_operations)


def _check_device_status(out: Findings, at: Location, device: AllocatedDeviceStatus, allocated: set[DeviceKey]) -> None:
    check_driver_name(out, at.child("driver"), device.driver)
    check_pool_name(out, at.child("pool"), device.pool)
    check_dns_label(out, at.child("device"), device.device)
    if device.share_id is not None:
        check_uuid(out, at.child("shareID"), device.share_id)
    if _key(device) not in allocated:
        out.add(at, f"device {device.driver}/{device.pool}/{device.device} must be one allocated to this claim")
    check_conditions(out, at.child("conditions"), device.conditions, MAX_DEVICE_CONDITIONS)
    if device.data is not None:
        check_json_object(out, at.child("data"), device.data, MAX_DEVICE_DATA)
    network = device.network_data
    if network is None:
        return
    if network.interface_name and len(network.interface_name.encode()) > MAX_INTERFACE_NAME:
        out.add(at.child("networkData.interfaceName"), too_long(MAX_INTERFACE_NAME))
    if network.hardware_address and len(network.hardware_address.encode()) > MAX_HARDWARE_ADDRESS:
        out.add(at.child("networkData.hardwareAddress"), too_long(MAX_HARDWARE_ADDRESS))
    if check_max_items(out, at.child("networkData.ips"), network.ips, MAX_IPS):
        check_unique(out, at.child("networkData.ips"), network.ips)
        for i, address in enumerate(network.ips):
            _check_interface_address(out, index(at.child("networkData.ips"), i), address)


def _check_interface_address(out: Findings, at: Location, address: str) -> None:
    """An address in CIDR notation (``192.0.2.5/24``), the form Kubernetes requires."""
    try:
        ipaddress.ip_interface(address)
        valid = "/" in address
    except ValueError:
        valid = False
    if not valid:
        out.add(at, f"{show(address)} must be an IP address with a prefix length, like 192.0.2.5/24")
