"""Stage 2 (per device): whether a device can serve one (sub)request, and if not, why.

Checks run in Kubernetes' order — binding-condition gate, in use, class selectors,
request selectors, capacity, counters, taints — so that the first reason recorded
is the one Kubernetes would stop at, and a CEL error is only raised for a device
Kubernetes would actually evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

from drasat.models.errors import DrasatError, EvaluationError, SelectorError
from drasat.models.resource import (
    DeviceAttribute, DeviceClass, DeviceDerivedAttribute, DeviceTaint, DeviceToleration,
)
from drasat.models.quantity import Quantity

from .attributes import derived_attribute
from .capacity import fits, share_of
from .cel import CelCompileError, CelRuntimeError, SelectorEvaluator
from .inventory import Inventory, InventoryDevice

CANDIDATE = ""


@dataclass
class Alternative:
    """One way to satisfy a request: the request itself, or one ``firstAvailable`` entry."""

    claim: int
    request: int
    rank: int
    request_name: str
    sub_name: str | None
    claim_label: str
    device_class: DeviceClass
    mode: str
    count: int
    admin: bool
    tolerations: list[DeviceToleration]
    capacity: dict[str, Quantity]
    selectors: list[str]
    candidates: list[int] = field(default_factory=list)
    share: dict[int, dict[str, Fraction]] = field(default_factory=dict)
    errors: dict[int, DrasatError] = field(default_factory=dict)
    excluded: dict[int, str] = field(default_factory=dict)
    derived_specs: list[DeviceDerivedAttribute] = field(default_factory=list)
    derived: dict[int, dict[str, DeviceAttribute]] = field(default_factory=dict)
    blocked: str = ""
    blocked_at: int = -1  # All mode: list position of the first device that can never be allocated

    @property
    def result_name(self) -> str:
        return self.request_name if self.sub_name is None else f"{self.request_name}/{self.sub_name}"

    @property
    def own_name(self) -> str:
        """The name Kubernetes' error messages use: the subrequest's own name for subrequests."""
        return self.sub_name or self.request_name


def selectable(ev: SelectorEvaluator, alt: Alternative, dev: InventoryDevice) -> bool:
    """Class selectors, then the request's own, then the device's own node selection, as Kubernetes
    evaluates them (so a selector error on an off-node device still counts); errors carry its wording."""
    for i, sel in enumerate(alt.device_class.spec.selectors):
        expression = sel.cel.expression if sel.cel else ""
        where = (f"class {alt.device_class.name}", f"claim {alt.claim_label}, request {alt.result_name}")
        if not _one(ev, expression, dev, where, i):
            return False
    for i, expression in enumerate(alt.selectors):
        if not _one(ev, expression, dev, (f"claim {alt.claim_label}", f"request {alt.result_name}"), i):
            return False
    return dev.on_node


def _one(ev: SelectorEvaluator, expression: str, dev: InventoryDevice, where: tuple[str, str], index: int) -> bool:
    """One selector on one device. Messages start as Kubernetes' do (``where[0]``), then name the
    claim, request and expression, so the user can find what failed without the source at hand."""
    owner, context = where
    try:
        return ev.matches(expression, dev.cel)
    except CelCompileError as exc:
        raise SelectorError(f"{owner}: selector #{index}: CEL compile error: {exc.detail}") from None
    except CelRuntimeError as exc:
        raise EvaluationError(f"{owner}: selector #{index} on device {dev.label()}: CEL runtime error: "
                              f"{exc.detail} ({context}, expression: {expression})") from None


def tolerated(taint: DeviceTaint, tolerations: Sequence[DeviceToleration]) -> bool:
    """Whether some toleration matches the taint (Kubernetes' rules; tolerationSeconds is irrelevant here)."""
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.key and t.key != taint.key:
            continue
        operator = t.operator or "Equal"
        if operator == "Exists" or (operator == "Equal" and (t.value or "") == (taint.value or "")):
            return True
    return False


def untolerated_taint(dev: InventoryDevice, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    for taint in dev.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated(taint, tolerations):
            return taint
    return None


def static_block(inv: Inventory, alt: Alternative, dev: InventoryDevice) -> str:
    """Why the device can never be allocated for ``alt`` whatever else is chosen; "" when it can."""
    features, device = inv.features, dev.device
    if not alt.admin and dev.id in inv.in_use.exclusive:
        return "already allocated to another claim"
    if device.consumes_counters:
        if not features.partitionable:
            return "consumes counters, but DRAPartitionableDevices is disabled"
        reason = _counter_block(inv, dev)
        if reason:
            return reason
    if features.device_taints:
        taint = untolerated_taint(dev, alt.tolerations)
        if taint is not None:
            return f"has taint {taint.key}={taint.value or ''}:{taint.effect} that the request does not tolerate"
    return ""


def _counter_block(inv: Inventory, dev: InventoryDevice) -> str:
    pool = inv.pool(dev.pool_key)
    if dev.shared and inv.in_use.allocated(dev.id):
        return ""  # later shares of a shared device draw no counters
    if pool.overcommitted:
        return f"pool {pool.label()} has an over-committed counter"
    for use in dev.device.consumes_counters:
        for name, counter in use.counters.items():
            if counter.value.value > pool.counters[use.counter_set][name]:
                return f"counter {use.counter_set}/{name} has not enough left"
        if inv.features.compatibility_groups:
            groups = frozenset(use.compatibility_groups or ())
            if not compatible([*pool.allocated_groups.get(use.counter_set, []), groups]):
                return f"counter set {use.counter_set} is in use by an incompatible device"
    return ""


def compatible(groups: Sequence[frozenset[str]]) -> bool:
    """Devices drawing on one counter set go together when they share a group name, or none has any."""
    if not groups:
        return True
    if all(not g for g in groups):
        return True
    if any(not g for g in groups):
        return False
    return bool(frozenset.intersection(*groups))


def capacity_share(inv: Inventory, alt: Alternative, dev: InventoryDevice) -> dict[str, Fraction] | None:
    """The share ``alt`` takes of the device, or None when the capacity or policy cannot allow it."""
    capacities = dev.device.capacity
    if not alt.capacity and not dev.shared and dev.id not in inv.in_use.capacity and all(
            c.request_policy is None for c in capacities.values()):
        return {}  # a dedicated device asked for nothing in particular: its whole capacity fits
    fractional = inv.features["DRAFractionalCapacityRange"]
    share = share_of(capacities, alt.capacity, fractional)
    if share is None:
        return None
    already = inv.in_use.capacity.get(dev.id, {})
    return share if fits(capacities, share, already) else None


def evaluate_exact(inv: Inventory, ev: SelectorEvaluator, alt: Alternative) -> None:
    """Fill ``alt``'s candidates, shares, exclusion reasons and deferred CEL errors (ExactCount)."""
    for dev in inv.devices:
        reason = _exact_reason(inv, ev, alt, dev)
        if reason == CANDIDATE:
            alt.candidates.append(dev.index)
        else:
            alt.excluded[dev.index] = reason


def _exact_reason(inv: Inventory, ev: SelectorEvaluator, alt: Alternative, dev: InventoryDevice) -> str:
    if not inv.features.binding_conditions and dev.device.binding_conditions:
        return "has binding conditions, but DRADeviceBindingConditions is disabled"
    if not alt.admin and dev.id in inv.in_use.exclusive:
        return "already allocated to another claim"
    try:
        if not selectable(ev, alt, dev):
            return "not selected by the class or request selectors" if dev.on_node else "not on this node"
    except DrasatError as exc:
        alt.errors[dev.index] = exc
        return f"selector error: {exc}"
    if inv.features.consumable_capacity:
        share = capacity_share(inv, alt, dev)
        if share is None:
            return "not enough capacity, or the capacity request breaks the device's policy"
        if dev.shared:
            alt.share[dev.index] = share
    return static_block(inv, alt, dev)


def evaluate_all(inv: Inventory, ev: SelectorEvaluator, alt: Alternative) -> None:
    """The fixed device list of an ``allocationMode: All`` (sub)request; CEL errors abort at once.

    Like Kubernetes, the list ignores use, taints and counters; a listed device that
    cannot be allocated makes the whole alternative impossible (``blocked``). Its list
    position (``blocked_at``) matters: Kubernetes allocates the list in order, so a
    constraint that an earlier device breaks is still the fatal error it reports.
    """
    for dev in inv.devices:
        if not inv.features.binding_conditions and dev.device.binding_conditions:
            continue
        if not selectable(ev, alt, dev):
            continue
        if inv.features.consumable_capacity:
            share = capacity_share(inv, alt, dev)
            if share is None:
                continue
            if dev.shared:
                alt.share[dev.index] = share
        alt.candidates.append(dev.index)
        reason = static_block(inv, alt, dev)
        if reason and not alt.blocked:
            alt.blocked = f"device {dev.label()} {reason}"
            alt.blocked_at = len(alt.candidates) - 1
    if not alt.candidates:
        alt.blocked = "no device matches (allocationMode All needs at least one)"
        alt.blocked_at = 0


def evaluate_derived(inv: Inventory, ev: SelectorEvaluator, alt: Alternative) -> None:
    """Each candidate's derived attributes (DRADerivedAttributes): evaluated after the selectors,
    visible only to constraints, where they shadow a driver attribute of the same name.
    A failing expression aborts the allocation, as the seed specifies."""
    lists = inv.features.list_attributes
    for device in alt.candidates:
        dev = inv.devices[device]
        values: dict[str, DeviceAttribute] = {}
        for spec in alt.derived_specs:
            where = f"claim {alt.claim_label}, request {alt.own_name}, derived attribute {spec.name}"
            try:
                value = ev.value(spec.expression, dev.cel, lists=lists)
            except CelCompileError as exc:
                raise SelectorError(f"{where}: CEL compile error: {exc.detail}") from None
            except CelRuntimeError as exc:
                raise EvaluationError(f"{where} on device {dev.label()}: CEL runtime error: {exc.detail}") from None
            attribute = derived_attribute(value)
            if attribute is None:
                raise EvaluationError(f"{where} on device {dev.label()}: the value {value!r} is not a string, "
                                      "int, bool, version or a list of one of those")
            values[spec.name] = attribute
        alt.derived[device] = values
