"""Shared counters (DRAPartitionableDevices) with compatibility groups (DRADeviceCompatibilityGroups).

A device that consumes counters draws them from its pool's counter sets; the sum over
allocated devices may not exceed what the set has left after what is already in use. A
shared device draws once, with its first share. With compatibility groups, devices drawing
on one counter set go together only when all share a group name, or none has any. An
over-committed counter blocks every counter-consuming device of its pool, as upstream.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from drasat.models.quantity import DECIMAL_SI, Quantity
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, Pick

from .base import Assumption, Encoding, Found, Rule, RuleContext, Stage
from .wording import SHOWN_VALUES, wanted_by

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.planning.equivalence import DeviceClassGroup
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice

SetKey = tuple[str, str, str]  # (driver, pool, counter set)
Term = tuple[Fraction, "cp_model.LinearExprT"]


def compatible(groups: Sequence[frozenset[str]]) -> bool:
    """Devices drawing on one counter set go together when they share a group name, or none has any."""
    if not groups or all(not g for g in groups):
        return True
    if any(not g for g in groups):
        return False
    return bool(frozenset.intersection(*groups))


Draw = tuple[tuple[str, str, str, str], "Fraction | int"]  # ((driver, pool, set, counter), amount)


def _exact(value: Fraction) -> Fraction | int:
    """A whole amount as an int: the depth-first search compares counters at every try, and ints
    compare several times faster than Fractions (with the same answers)."""
    return value.numerator if value.denominator == 1 else value


@dataclass
class Drawn:
    """The depth-first side's counters: what each counter has left, kept up to date as picks come and go
    (a try compares one device's draws with them; nothing is summed again)."""

    inv: Inventory
    left: dict[tuple, Fraction | int] = field(default_factory=dict)  # (driver, pool, set, counter) -> left
    groups: dict[SetKey, list[frozenset[str]]] = field(default_factory=dict)
    shares: Counter[int] = field(default_factory=Counter)  # shared device -> shares in this search
    draws: dict[int, tuple[Draw, ...]] = field(default_factory=dict)  # device -> its draws (made once)

    def __post_init__(self) -> None:
        self.pools = {pool.key: pool for pool in self.inv.pools}
        self.overcommitted = {pool.key for pool in self.inv.pools if pool.overcommitted}
        self.compatibility_groups = self.inv.features.compatibility_groups
        self.left = {
            (*pool.key, name, counter): _exact(value)
            for pool in self.inv.pools
            for name, counters in pool.counters.items()
            for counter, value in counters.items()
        }

    def of(self, dev: InventoryDevice) -> tuple[Draw, ...]:
        found = self.draws.get(dev.index)
        if found is None:
            found = self.draws[dev.index] = tuple(
                ((*dev.pool_key, use.counter_set, name), _exact(counter.value.value))
                for use in dev.device.consumes_counters
                for name, counter in use.counters.items()
            )
        return found


class Counters(Rule):
    """Shared counters of partitionable devices (DRAPartitionableDevices), with compatibility groups."""

    name = "counters"
    stage = Stage.BLOCK

    def excludes_any(self, inv: Inventory) -> bool:
        return inv.kinds.draws_counters

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        if not dev.device.consumes_counters:
            return ""
        if not inv.features.partitionable:
            return "consumes counters, but DRAPartitionableDevices is disabled"
        return _counter_block(inv, dev)

    def device_signature(self, ctx: RuleContext, device: int) -> Hashable:
        dev = ctx.inv.devices[device]
        if not dev.device.consumes_counters:
            return ()
        uses = tuple(
            sorted(
                (
                    u.counter_set,
                    tuple(sorted((n, c.value.value) for n, c in u.counters.items())),
                    tuple(sorted(u.compatibility_groups or ())),
                )
                for u in dev.device.consumes_counters
            )
        )
        return (dev.pool_key, uses)

    def single_device(self, ctx: RuleContext, dev: InventoryDevice) -> bool:
        return dev.shared and bool(dev.device.consumes_counters)  # draws once, with its first share

    def active(self, ctx: RuleContext) -> bool:
        return ctx.inv.features.partitionable and ctx.inv.kinds.draws_counters

    def start(self, ctx: RuleContext) -> Drawn:
        return Drawn(ctx.inv)

    def fits(self, state: Drawn, claim: int, alt: Alternative, dev: InventoryDevice, must: bool) -> bool:
        return not _draws(state, dev, adding=True) or _counters_fit(state, dev)

    def apply(self, state: Drawn, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        if _draws(state, dev, adding=True):
            _draw(state, dev, +1)
        if dev.shared:
            state.shares[dev.index] += 1

    def undo(self, state: Drawn, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        if dev.shared:
            state.shares[dev.index] -= 1
        if _draws(state, dev, adding=True):
            _draw(state, dev, -1)

    def encode(self, enc: Encoding) -> None:
        if not enc.inv.features.partitionable:
            return
        terms: dict[tuple, list[Term]] = {}
        members: dict[SetKey, list[tuple[frozenset[str], cp_model.IntVar]]] = {}
        for group in enc.groups:
            dev = enc.inv.devices[group.devices[0]]
            if not dev.device.consumes_counters or (group.shared and enc.inv.in_use.allocated(dev.id)):
                continue
            used = _used(enc, group)
            for use in dev.device.consumes_counters:
                for name, counter in use.counters.items():
                    terms.setdefault((*dev.pool_key, use.counter_set, name), []).append((counter.value.value, used))
                members.setdefault((*dev.pool_key, use.counter_set), []).append(
                    (frozenset(use.compatibility_groups or ()), used)
                )
        for key in sorted(members):
            driver, pool, counter_set = key
            literal = enc.guard(
                "counters",
                f"counter set {counter_set} of pool {driver}/{pool} is not overdrawn"
                + (", by compatible devices" if enc.inv.features.compatibility_groups else ""),
                counter_set=key,
            )
            for (d, p, cs, name), counter_terms in terms.items():
                if (d, p, cs) == key:
                    add_scaled(enc.model, counter_terms, enc.inv.pool((d, p)).counters[cs][name], literal)
            if enc.inv.features.compatibility_groups:
                _compatibility(enc, key, members[key], literal)

    def describe(self, inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
        """What is left of each counter of the set and what its devices take, then who wants those devices."""
        if member.counter_set is None:
            return ""
        driver, pool, counter_set = member.counter_set
        drawing = tuple(
            d.index
            for d in inv.devices
            if d.pool_key == (driver, pool)
            and any(use.counter_set == counter_set for use in d.device.consumes_counters)
        )
        groups = _groups_apart(inv, plans, member.counter_set, drawing) if inv.features.compatibility_groups else ""
        return _counters_left(inv, member.counter_set) + wanted_by(plans, drawing) + groups


def _groups_apart(inv: Inventory, plans: list[ClaimPlan], key: SetKey, drawing: tuple[int, ...]) -> str:
    """The compatibility groups the requests can draw on the set with (each request whose candidates there share
    one list of groups), those already in use, and the pairs of them that do not intersect ("" when no device
    drawing on the set names a group)."""
    counter_set = key[2]
    of = {d: _groups_on(inv.devices[d], counter_set) for d in drawing}
    if not any(of.values()):
        return ""
    said = [(groups, "in use") for groups in inv.pool(key[:2]).allocated_groups.get(counter_set, [])]
    for plan in plans:
        for alt in plan.alternatives():
            found = {of[d] for d in alt.candidates if d in of}
            if len(found) == 1:
                said.append((next(iter(found)), f"claim {plan.label} request {alt.result_name}"))
    shown = ", ".join(f"{who} {_group_words(groups)}" for groups, who in said[:SHOWN_VALUES])
    apart = sorted(
        {
            f"{_group_words(a)} and {_group_words(b)}"
            for i, (a, _) in enumerate(said)
            for b, _ in said[i + 1 :]
            if not compatible([a, b])
        }
    )
    text = f"; compatibility groups here: {shown}" if shown else ""
    return text + (f"; {', '.join(apart[:SHOWN_VALUES])} do not intersect" if apart else "")


def _groups_on(dev: InventoryDevice, counter_set: str) -> frozenset[str]:
    return next(
        (frozenset(u.compatibility_groups or ()) for u in dev.device.consumes_counters if u.counter_set == counter_set),
        frozenset(),
    )


def _group_words(groups: frozenset[str]) -> str:
    return "{" + ", ".join(sorted(groups)) + "}" if groups else "no group"


def _counters_left(inv: Inventory, key: SetKey) -> str:
    """What is left of each counter of the set, and what its devices on this node take of it."""
    driver, pool_name, counter_set = key
    left = inv.pool((driver, pool_name)).counters.get(counter_set, {})
    takes: dict[str, list[str]] = {}
    formats: dict[str, str] = {}
    for dev in inv.devices:
        if dev.pool_key != (driver, pool_name):
            continue
        for use in dev.device.consumes_counters:
            if use.counter_set == counter_set:
                for name, counter in use.counters.items():
                    takes.setdefault(name, []).append(f"{dev.name} {counter.value}")
                    formats[name] = counter.value.format
    parts = []
    for name, value in sorted(left.items()):
        amount = Quantity(max(value, Fraction(0)), formats.get(name, DECIMAL_SI))
        shown = takes.get(name, [])[:SHOWN_VALUES]
        parts.append(f"{amount} of {name} left" + (f", taken by {', '.join(shown)}" if shown else ""))
    return "; ".join(parts) or "nothing left"


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


def _draws(state: Drawn, dev: InventoryDevice, adding: bool) -> bool:
    """Shared devices draw their counters with the first share only (none if in use already).

    ``state.shares`` counts the shares before this pick when adding, and after it when undoing,
    so the same test answers both."""
    if not dev.device.consumes_counters:
        return False
    if dev.shared:
        return not state.inv.in_use.allocated(dev.id) and state.shares[dev.index] == 0
    return True


def _counters_fit(state: Drawn, dev: InventoryDevice) -> bool:
    if dev.pool_key in state.overcommitted:
        return False
    left = state.left
    for key, amount in state.of(dev):
        if amount > left[key]:
            return False
    if state.compatibility_groups:
        pool = state.pools[dev.pool_key]
        for use in dev.device.consumes_counters:
            held = state.groups.get((*dev.pool_key, use.counter_set), [])
            mine = frozenset(use.compatibility_groups or ())
            if not compatible([*pool.allocated_groups.get(use.counter_set, []), *held, mine]):
                return False
    return True


def _draw(state: Drawn, dev: InventoryDevice, sign: int) -> None:
    left = state.left
    for key, amount in state.of(dev):
        left[key] -= sign * amount
    if state.compatibility_groups:
        for use in dev.device.consumes_counters:
            groups = state.groups.setdefault((*dev.pool_key, use.counter_set), [])
            mine = frozenset(use.compatibility_groups or ())
            groups.append(mine) if sign > 0 else groups.remove(mine)


def _used(enc: Encoding, group: DeviceClassGroup) -> cp_model.IntVar:
    """How many devices of the class are allocated (a shared device counts once, however many shares)."""
    takes = [v for _, v in enc.by_class.get(group.index, [])]
    if not group.shared:
        # Not capped at the class size: admin-access picks of other claims may repeat a device.
        top = sum(enc.top(v) for v in takes)
        used = enc.int_var(0, top, f"used[class{group.index}]")
        enc.model.add(used == sum(takes))
        return used
    used = enc.int_var(0, 1, f"used[class{group.index}]")
    if not takes:
        enc.model.add(used == 0)
    elif all(enc.top(v) <= 1 for v in takes):
        enc.model.add_max_equality(used, takes)
    else:  # counted claims (joint placement): many may share the device, which still draws once
        enc.model.add(sum(takes) >= 1).only_enforce_if(used)
        enc.model.add(sum(takes) == 0).only_enforce_if(~used)
    return used


def _compatibility(
    enc: Encoding, key: SetKey, users: list[tuple[frozenset[str], cp_model.IntVar]], literal: cp_model.IntVar
) -> None:
    """All devices drawing on one counter set share a group name (one chosen per set), or none has any."""
    driver, pool, counter_set = key
    allocated = enc.inv.pool((driver, pool)).allocated_groups.get(counter_set, [])
    names = sorted({g for groups, _ in users for g in groups} | {""})
    choice = {g: enc.model.new_bool_var(f"group[{driver}/{pool}/{counter_set}/{g or '-'}]") for g in names}
    enc.model.add(sum(choice.values()) <= 1)
    for g, var in choice.items():
        if any((g not in groups) if g else bool(groups) for groups in allocated):
            enc.model.add(var == 0).only_enforce_if(literal)
    for groups, used in users:
        allowed = [choice[g] for g in groups] if groups else [choice[""]]
        enc.model.add(used <= enc.top(used) * sum(allowed)).only_enforce_if(literal)


def add_scaled(model: cp_model.CpModel, terms: Iterable[Term], bound: Fraction, literal: cp_model.IntVar) -> None:
    """``sum(coef * var) <= bound`` with exact rational coefficients, scaled to integers, under ``literal``."""
    terms = [(c, v) for c, v in terms if c != 0]
    if not terms:
        return  # nothing drawn from it: whatever was left (even an overdrawn budget) does not matter
    scale = math.lcm(*(c.denominator for c, _ in terms), bound.denominator)
    ints = [int(c * scale) for c, _ in terms]
    # An overdrawn budget (in use beyond it already) admits no new draw, but it is no reason to
    # refuse devices that draw nothing from it.
    limit = max(math.floor(bound * scale), 0)
    g = math.gcd(*ints)
    model.add(sum((i // g) * v for i, (_, v) in zip(ints, terms)) <= limit // g).only_enforce_if(literal)
