"""Consumable capacity (DRAConsumableCapacity): shares of devices that allow multiple allocations.

A request takes a share of every capacity of the device, rounded as Kubernetes rounds it
(``allocation/planning/rounding.py``); the shares of one device, with what is already allocated, stay
within each capacity value. A device asked for nothing in particular, dedicated and
without policies, fits whole. Shared devices are each a class of their own.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from drasat.models.quantity import Quantity
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, Pick
from drasat.solver.allocation.planning.rounding import fits, share_of

from .base import Assumption, Encoding, Found, Rule, RuleContext, Stage
from .counters import add_scaled

if TYPE_CHECKING:
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice

NO_CAPACITY = "not enough capacity, or the capacity request breaks the device's policy"


def capacity_share(inv: Inventory, alt: Alternative, dev: InventoryDevice) -> dict[str, Fraction] | None:
    """The share ``alt`` takes of the device, or None when the capacity or policy cannot allow it."""
    capacities = dev.device.capacity
    if (
        not alt.capacity
        and not dev.shared
        and dev.id not in inv.in_use.capacity
        and all(c.request_policy is None for c in capacities.values())
    ):
        return {}  # a dedicated device asked for nothing in particular: its whole capacity fits
    fractional = inv.features["DRAFractionalCapacityRange"]
    share = share_of(capacities, alt.capacity, fractional)
    if share is None:
        return None
    already = inv.in_use.capacity.get(dev.id, {})
    return share if fits(capacities, share, already) else None


class Shares:
    """The capacity rule's depth-first state: the shares taken of each shared device so far (slotted: one per call)."""

    __slots__ = ("inv", "taken")

    def __init__(self, inv: Inventory) -> None:
        self.inv = inv
        self.taken: dict[int, list] = {}  # shared device -> shares taken in this search


class ConsumableCapacity(Rule):
    """Shares of devices that allow multiple allocations (DRAConsumableCapacity)."""

    name = "capacity"
    stage = Stage.FILTER

    def excludes_any(self, inv: Inventory) -> bool:
        return inv.features.consumable_capacity

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        if not inv.features.consumable_capacity:
            return ""
        share = capacity_share(inv, alt, dev)
        if share is None:
            return NO_CAPACITY
        if dev.shared:
            found.share[dev.index] = share
        return ""

    def single_device(self, ctx: RuleContext, dev: InventoryDevice) -> bool:
        return dev.shared  # shares are counted per device

    def active(self, ctx: RuleContext) -> bool:
        return ctx.inv.kinds.shared

    def start(self, ctx: RuleContext) -> Shares:
        return Shares(ctx.inv)

    def fits(self, state: Shares, claim: int, alt: Alternative, dev: InventoryDevice, must: bool) -> bool:
        share = alt.share.get(dev.index) if dev.shared else None
        if share is None:
            return True
        already = state.inv.in_use.capacity.get(dev.id, {})
        return fits(dev.device.capacity, share, already, *state.taken.get(dev.index, ()))

    def apply(self, state: Shares, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        if pick.share is not None:
            state.taken.setdefault(pick.device, []).append(pick.share)

    def undo(self, state: Shares, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        if pick.share is not None:
            state.taken[pick.device].remove(pick.share)

    def encode(self, enc: Encoding) -> None:
        for group in enc.groups:
            if not group.shared:
                continue
            dev = enc.inv.devices[group.devices[0]]
            takes = enc.by_class.get(group.index, [])
            if not dev.device.capacity or not takes:
                continue
            already = enc.inv.in_use.capacity.get(dev.id, {})
            literal = enc.guard(
                "capacity", f"the shares of device {dev.label()} fit its capacity", devices=(dev.index,)
            )
            for name, capacity in dev.device.capacity.items():
                terms = [(alt.share[dev.index][name], v) for alt, v in takes]
                add_scaled(enc.model, terms, capacity.value.value - already.get(name, Fraction(0)), literal)

    def describe(self, inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
        """What is free of the shared device's capacities, and the share each request would take."""
        if not member.devices:
            return ""
        return _capacity_left(inv, member.devices[0]) + _shares_asked(inv, plans, member.devices[0])


def _shares_asked(inv: Inventory, plans: list[ClaimPlan], device: int) -> str:
    """The share of the device each request that may take it would consume."""
    capacities = inv.devices[device].device.capacity
    asked = []
    for plan in plans:
        for alt in plan.alternatives():
            share = alt.share.get(device)
            if share:
                amounts = ", ".join(
                    f"{name} {Quantity(amount, capacities[name].value.format)}"
                    for name, amount in sorted(share.items())
                )
                asked.append(f"claim {plan.label} request {alt.result_name} {amounts}")
    return "; shares asked: " + ", ".join(asked) if asked else ""


def _capacity_left(inv: Inventory, device: int) -> str:
    dev = inv.devices[device]
    used = inv.in_use.capacity.get(dev.id, {})
    parts = [
        f"{name} {Quantity(c.value.value - used.get(name, Fraction(0)), c.value.format)} of {c.value} free"
        for name, c in sorted(dev.device.capacity.items())
    ]
    return f"device {dev.name} has " + ", ".join(parts)
