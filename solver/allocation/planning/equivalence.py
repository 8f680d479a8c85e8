"""Equivalence classes: devices that no rule of this input can tell apart become one count.

Two devices are interchangeable when the same alternatives may take them and every rule
sees them alike (each rule's signatures: counters drawn, constraint labels, ...). The
CP-SAT model then decides *how many* of a class each alternative takes instead of *which*
— the difference between milliseconds and seconds on symmetric inputs (pigeonhole
proofs, wide nodes). A rule whose bookkeeping is per device (shares, admin access) keeps
the device a class of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from drasat.solver.allocation.rules.base import Rule, RuleContext
from drasat.solver.allocation.rules.registry import RULES

from .plan import Alternative, AltId


@dataclass
class DeviceClassGroup:
    """One equivalence class: its devices in inventory order."""

    index: int
    devices: list[int] = field(default_factory=list)
    shared: bool = False

    @property
    def size(self) -> int:
        return len(self.devices)


Classes = tuple[list[DeviceClassGroup], dict[int, int]]  # the groups, and each device's group index


def equivalence_classes(ctx: RuleContext, rules: Sequence[Rule] = RULES) -> Classes:
    """Classes over every device some alternative may take, and each device's class index.

    Each device gets one signature: the columns it belongs to, what each rule sees of it there, and
    what each rule sees of it whoever takes it. A *column* is a set of alternatives with the same
    candidates and the same :meth:`~.rules.base.Rule.view` — on a wide input, hundreds of claims
    asking alike make one column — so the work is linear in devices plus alternatives, not their product.
    """
    inv = ctx.inv
    per_alt = [r for r in rules if type(r).signature is not Rule.signature]
    per_device = [r for r in rules if type(r).device_signature is not Rule.device_signature]
    singles = {dev.index for dev in inv.devices if any(r.single_device(ctx, dev) for r in rules)}
    members: dict[int, list[tuple[int, tuple]]] = {}
    columns: dict[Hashable, int] = {}
    for plan in ctx.plans:
        for alt in plan.alternatives():
            if any(rule.single_for(ctx, alt) for rule in rules):
                singles.update(alt.candidates)
            key = (alt.candidates, tuple([rule.view(ctx, plan, alt) for rule in per_alt]))
            if key in columns:
                continue
            column = columns[key] = len(columns)
            for device in alt.candidates:
                seen = tuple([rule.signature(ctx, plan, alt, device) for rule in per_alt])
                members.setdefault(device, []).append((column, seen))
    return _grouped(ctx, members, singles, per_device)


def _grouped(
    ctx: RuleContext, members: dict[int, list[tuple[int, tuple]]], singles: set[int], per_device: list[Rule]
) -> tuple[list[DeviceClassGroup], dict[int, int]]:
    """Devices with one signature become one class, numbered in inventory order of their first device."""
    inv = ctx.inv
    groups: list[DeviceClassGroup] = []
    by_key: dict[Hashable, DeviceClassGroup] = {}
    class_of: dict[int, int] = {}
    for device in sorted(members):
        key: Hashable = (
            ("single", device)
            if device in singles
            else (
                inv.devices[device].shared,
                tuple(members[device]),
                tuple([rule.device_signature(ctx, device) for rule in per_device]),
            )
        )
        group = by_key.get(key)
        if group is None:
            group = by_key[key] = DeviceClassGroup(len(groups), shared=inv.devices[device].shared)
            groups.append(group)
        group.devices.append(device)
        class_of[device] = group.index
    return groups, class_of


def class_counts(alts: Iterable[Alternative], class_of: dict[int, int]) -> dict[AltId, dict[int, int]]:
    """How many candidates of each class every alternative has (alternatives with the same candidates
    share one count: the work is per distinct candidate list, not per claim)."""
    known: dict[tuple[int, ...], dict[int, int]] = {}
    counts: dict[AltId, dict[int, int]] = {}
    for alt in alts:
        found = known.get(alt.candidates)
        if found is None:
            found = known[alt.candidates] = dict(Counter(class_of[device] for device in alt.candidates))
        counts[alt.id] = found
    return counts
