"""Equivalence classes: devices that no rule of this input can tell apart become one count.

Two devices are interchangeable when the same alternatives may take them and every rule
sees them alike (each rule's signatures: counters drawn, constraint labels, ...). The
CP-SAT model then decides *how many* of a class each alternative takes instead of *which*
— the difference between milliseconds and seconds on symmetric inputs (pigeonhole
proofs, wide nodes). A rule whose bookkeeping is per device (shares, admin access) keeps
the device a class of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Sequence

from .rules.base import Rule, RuleContext
from .rules.registry import RULES


@dataclass
class DeviceClassGroup:
    """One equivalence class: its devices in inventory order."""

    index: int
    devices: list[int] = field(default_factory=list)
    shared: bool = False

    @property
    def size(self) -> int:
        return len(self.devices)


def equivalence_classes(ctx: RuleContext, rules: Sequence[Rule] = RULES) -> tuple[list[DeviceClassGroup], dict[int, int]]:
    """Classes over every device some alternative may take, and each device's class index."""
    inv = ctx.inv
    per_alt = [r for r in rules if type(r).signature is not Rule.signature]
    per_device = [r for r in rules if type(r).device_signature is not Rule.device_signature]
    singles = {dev.index for dev in inv.devices if any(r.single_device(ctx, dev) for r in rules)}
    members: dict[int, list[tuple]] = {}
    for plan in ctx.plans:
        for alt in plan.alternatives():
            alone = any(rule.single_for(ctx, alt) for rule in rules)
            for device in alt.candidates:
                seen = tuple([rule.signature(ctx, plan, alt, device) for rule in per_alt])
                members.setdefault(device, []).append((alt.id, seen))
            if alone:
                singles.update(alt.candidates)
    groups: list[DeviceClassGroup] = []
    by_key: dict[Hashable, DeviceClassGroup] = {}
    class_of: dict[int, int] = {}
    for device in sorted(members):
        key: Hashable = ("single", device) if device in singles else (
            inv.devices[device].shared, tuple(members[device]),
            tuple(rule.device_signature(ctx, device) for rule in per_device))
        group = by_key.get(key)
        if group is None:
            group = by_key[key] = DeviceClassGroup(len(groups), shared=inv.devices[device].shared)
            groups.append(group)
        group.devices.append(device)
        class_of[device] = group.index
    return groups, class_of
