"""Answer a ``ResourcePoolStatusRequest`` offline, as kube-controller-manager would, with exact headroom.

Counts follow Kubernetes' pool status controller: newest generation only; a pool
missing slices gets a ``PoolIncomplete:`` validation error and no counts; a device
is unavailable when a NoSchedule or NoExecute taint (its own or a DeviceTaintRule's)
is on it; ``availableDevices`` = total - allocated - unavailable (never below zero).

``partitionSummary`` differs on purpose: where the controller counts greedily, device
by device, drasat maximises with CP-SAT (:mod:`.headroom`), so ``allocatable`` is the
true number of further devices of that type that fit beside the allocated ones,
given the counters left and the compatibility groups in force. Taints do not lower
it (a claim may tolerate them); ``unavailableDevices`` reports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from drasat.models.errors import InputError, Location
from drasat.models.meta import Condition
from drasat.models.pool_status_request import (
    LIMIT_DEFAULT,
    LIMIT_MAX,
    PartitionTypeStatus,
    PoolStatus,
    ResourcePoolStatusRequest,
    ResourcePoolStatusRequestSpec,
    ResourcePoolStatusRequestStatus,
    ShareableCapacityStatus,
    ShareableSummaryStatus,
)
from drasat.models.quantity import Quantity
from drasat.models.resource import Device, DeviceTaintRule, ResourceClaim, ResourceSlice
from drasat.models.validation.formats import Findings, check_fully_qualified_name

from .headroom import max_allocatable
from .pool_usage import (
    DeviceUse,
    GatheredPool,
    Usage,
    blocks_scheduling,
    candidate_of,
    counter_state,
    device_taints,
    gather_pools,
    overcommitted,
    usage_from_claims,
)

MAX_LIST_ITEMS = 32  # the status lists' maxItems: more is a validation error, not a truncation
MAX_MESSAGE_BYTES = 256
INCOMPLETE = "PoolIncomplete:"
TYPE_MISSING = "PartitionTypeMissing:"
SUMMARY_OVER_CAP = "PartitionSummaryOverCap:"
SHAREABLE_OVER_CAP = "ShareableSummaryOverCap:"


@dataclass(frozen=True)
class PoolInputs:
    """What the answer is computed from: every slice, claim and taint rule in the input."""

    slices: Sequence[ResourceSlice]
    claims: Sequence[ResourceClaim] = ()
    taint_rules: Sequence[DeviceTaintRule] = ()


def check_spec(spec: ResourcePoolStatusRequestSpec) -> None:
    """The API server's rules for the spec: a driver, a limit between 1 and 1000, a qualified attribute."""
    if not spec.driver:
        raise InputError("spec.driver: required: name the driver whose pools to report")
    if spec.limit is not None and not 1 <= spec.limit <= LIMIT_MAX:
        raise InputError(f"spec.limit: must be between 1 and {LIMIT_MAX}, not {spec.limit}")
    if spec.default_partition_type_attribute is not None:
        check_attribute_name(spec.default_partition_type_attribute, "spec.defaultPartitionTypeAttribute")


def check_attribute_name(name: str, field: str) -> None:
    """The API's format k8s-resource-fully-qualified-name: ``domain/c_identifier``; else InputError at ``field``."""
    found = Findings()
    check_fully_qualified_name(found, Location(path=field), name)
    if found.problems:
        raise InputError(found.problems)


def answer(
    request: ResourcePoolStatusRequest, cluster: PoolInputs, *, now: datetime | None = None
) -> ResourcePoolStatusRequest:
    """A copy of ``request`` with ``status`` filled."""
    check_spec(request.spec)
    status = pool_status(request.spec, cluster, now=now)
    return request.model_copy(update={"status": status})


def pool_status(
    spec: ResourcePoolStatusRequestSpec, cluster: PoolInputs, *, now: datetime | None = None
) -> ResourcePoolStatusRequestStatus:
    """Every matching pool's status, sorted by (driver, pool), cut to the limit; the Complete condition."""
    usage = usage_from_claims(cluster.claims)
    pools = [
        _one_pool(p, spec, usage, cluster.taint_rules)
        for p in gather_pools(cluster.slices, spec.driver, spec.pool_name)
    ]
    shown = pools[: spec.limit or LIMIT_DEFAULT]
    # only pools missing slices are "incomplete"; a partition-type or over-cap error still has counts
    flagged = sum(1 for p in shown if p.validation_error and p.validation_error.startswith(INCOMPLETE))
    message = f"Calculated status for {len(shown)} pools" + (f" ({flagged} incomplete)" if flagged else "")
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = Condition(
        type="Complete", status="True", last_transition_time=stamp, reason="CalculationComplete", message=message
    )
    return ResourcePoolStatusRequestStatus(pool_count=len(pools), pools=shown, conditions=[condition])


def _one_pool(
    pool: GatheredPool, spec: ResourcePoolStatusRequestSpec, usage: Usage, rules: Sequence[DeviceTaintRule]
) -> PoolStatus:
    fields: dict[str, Any] = dict(driver=pool.driver, pool_name=pool.name, generation=pool.generation)
    if pool.node_name:
        fields["node_name"] = pool.node_name
    if not pool.complete:
        fields["validation_error"] = _cut(
            f"{INCOMPLETE} pool {pool.driver}/{pool.name} is incomplete: observed {len(pool.slices)}/"
            f"{pool.expected_slices} slices at generation {pool.generation}"
        )
        return PoolStatus(**fields)
    in_use = usage.in_pool(pool.key)
    devices = pool.devices
    total = len(devices)
    allocated = sum(1 for _, d in devices if d.name in in_use)
    unavailable = sum(1 for _, d in devices if blocks_scheduling(device_taints(pool.key, d, rules)))
    fields.update(
        resource_slice_count=len(pool.slices),
        total_devices=total,
        allocated_devices=allocated,
        available_devices=max(0, total - allocated - unavailable),
        unavailable_devices=unavailable,
    )
    summary, error = partition_summary(pool, in_use, spec.default_partition_type_attribute)
    shareable, shareable_error = shareable_summary(pool, in_use)
    error = error or shareable_error
    if summary and not error:
        fields["partition_summary"] = summary
    if shareable is not None:
        fields["shareable_summary"] = shareable
    if error:
        fields["validation_error"] = error
    return PoolStatus(**fields)


def partition_type(
    pool: GatheredPool, slice_: ResourceSlice, device: Device, default_attribute: str | None
) -> tuple[str, str] | str | None:
    """(attribute, type) of a partitionable device; an error text; or None when no attribute is named."""
    attribute = slice_.spec.partition_type_attribute or default_attribute
    if not attribute:
        return None
    for key, value in device.attributes.items():
        if (key if "/" in key else f"{pool.driver}/{key}") != attribute:
            continue
        if value.string is None:
            kind = next(iter(value.raw()), "empty")
            return (
                f"{TYPE_MISSING} device {device.name!r} in pool {pool.driver}/{pool.name}: partition type "
                f"attribute {attribute!r} is {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not a string"
            )
        return attribute, value.string
    return (
        f"{TYPE_MISSING} device {device.name!r} in pool {pool.driver}/{pool.name} does not carry "
        f"partition type attribute {attribute!r}"
    )


def partition_summary(
    pool: GatheredPool, in_use: dict[str, DeviceUse], default_attribute: str | None
) -> tuple[list[PartitionTypeStatus], str | None]:
    """Per partition type: devices in the pool and the exact number more that could be allocated."""
    groups: dict[tuple[str, str], list[Device]] = {}
    for slice_, device in pool.devices:
        if not device.consumes_counters:
            continue  # only partitionable devices (those drawing on shared counters) are summarised
        found = partition_type(pool, slice_, device, default_attribute)
        if isinstance(found, str):
            return [], _cut(found)
        if found is not None:
            groups.setdefault(found, []).append(device)
    if len(groups) > MAX_LIST_ITEMS:
        return [], (
            f"{SUMMARY_OVER_CAP} pool {pool.driver}/{pool.name} has {len(groups)} partition types, "
            f"exceeding the maximum of {MAX_LIST_ITEMS}"
        )
    state = counter_state(pool, in_use)
    blocked = overcommitted(state)
    summary = []
    for (attribute, type_), devices in sorted(groups.items()):  # by (attribute, type), as the KEP says
        free = [candidate_of(d) for d in devices if d.name not in in_use]
        allocatable = 0 if blocked else max_allocatable(free, state).count
        summary.append(
            PartitionTypeStatus(attribute=attribute, type=type_, total=len(devices), allocatable=allocatable)
        )
    return summary, None


def shareable_summary(
    pool: GatheredPool, in_use: dict[str, DeviceUse]
) -> tuple[ShareableSummaryStatus | None, str | None]:
    """Devices that allow multiple allocations: how many are untouched, how many partly used, capacity sums."""
    shareable = [d for _, d in pool.devices if d.allow_multiple_allocations]
    if not shareable:
        return None, None
    totals: dict[str, Fraction] = {}
    consumed: dict[str, Fraction] = {}
    formats: dict[str, str] = {}
    for device in shareable:
        for name, device_capacity in device.capacity.items():
            totals[name] = totals.get(name, Fraction(0)) + device_capacity.value.value
            formats.setdefault(name, device_capacity.value.format)
    for use in in_use.values():
        for name, amount in use.consumed.items():
            consumed[name] = consumed.get(name, Fraction(0)) + amount
    if len(totals) > MAX_LIST_ITEMS:
        return None, (
            f"{SHAREABLE_OVER_CAP} pool {pool.driver}/{pool.name} has {len(totals)} shareable capacity "
            f"keys, exceeding the maximum of {MAX_LIST_ITEMS}"
        )
    capacity = [
        ShareableCapacityStatus(
            name=name,
            total=Quantity(totals[name], formats[name]),
            consumed=Quantity(consumed.get(name, Fraction(0)), formats[name]),
            available=Quantity(max(Fraction(0), totals[name] - consumed.get(name, 0)), formats[name]),
        )
        for name in sorted(totals)
    ]
    used = sum(1 for d in shareable if d.name in in_use)
    return ShareableSummaryStatus(
        fully_available_devices=len(shareable) - used, partially_available_devices=used, capacity=capacity
    ), None


def _cut(message: str) -> str:
    """The API field holds at most 256 bytes."""
    return message.encode()[:MAX_MESSAGE_BYTES].decode(errors="ignore")
