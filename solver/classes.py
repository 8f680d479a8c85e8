"""Equivalence classes: devices that no rule of this input can tell apart become one count.

Two devices are interchangeable when the same alternatives may take them, they draw
the same counters from the same pool (with the same compatibility groups), and
every constraint sees the same labels on them. The CP-SAT model then decides *how
many* of a class each alternative takes instead of *which* — the difference between
milliseconds and seconds on symmetric inputs (pigeonhole proofs, wide nodes).
Shared devices and devices an admin-access request may take stay single, because
their bookkeeping is per device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable

from .candidates import Alternative
from .claims import ClaimPlan
from .inventory import Inventory
from .state import SearchState


@dataclass
class DeviceClassGroup:
    """One equivalence class: its devices in inventory order."""

    index: int
    devices: list[int] = field(default_factory=list)
    shared: bool = False

    @property
    def size(self) -> int:
        return len(self.devices)


def equivalence_classes(inv: Inventory, plans: list[ClaimPlan],
                        labels: SearchState) -> tuple[list[DeviceClassGroup], dict[int, int]]:
    """Classes over every device some alternative may take, and each device's class index."""
    alternatives = [(plan, alt) for plan in plans for alt in plan.alternatives()]
    members: dict[int, list[tuple]] = {}
    singles: set[int] = set()
    for plan, alt in alternatives:
        for device in alt.candidates:
            members.setdefault(device, []).append(_membership(plan, alt, device, labels))
            if alt.admin or inv.devices[device].shared:
                singles.add(device)
    groups: list[DeviceClassGroup] = []
    by_key: dict[Hashable, DeviceClassGroup] = {}
    class_of: dict[int, int] = {}
    for device in sorted(members):
        key: Hashable = ("single", device) if device in singles else (
            tuple(members[device]), _counter_signature(inv, device))
        group = by_key.get(key)
        if group is None:
            group = by_key[key] = DeviceClassGroup(len(groups), shared=inv.devices[device].shared)
            groups.append(group)
        group.devices.append(device)
        class_of[device] = group.index
    return groups, class_of


def _membership(plan: ClaimPlan, alt: Alternative, device: int, state: SearchState) -> tuple:
    """What one alternative sees of a device: that it may take it, and the constraint labels."""
    seen = tuple(state.labels_of(plan.index, ci, alt, device)
                 for ci, c in enumerate(plan.constraints) if c.applies(alt))
    return (id(alt), seen)


def _counter_signature(inv: Inventory, device: int) -> Hashable:
    dev = inv.devices[device]
    if not dev.device.consumes_counters:
        return ()
    uses = tuple(sorted((u.counter_set, tuple(sorted((n, c.value.value) for n, c in u.counters.items())),
                         tuple(sorted(u.compatibility_groups or ()))) for u in dev.device.consumes_counters))
    return (dev.pool_key, uses)
