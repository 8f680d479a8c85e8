"""Device exclusivity and admin access.

An exclusive device serves one non-admin pick overall — across claims, and against what
is already allocated — and never two picks of one claim. Admin-access picks do not count
as use (they may repeat a device another claim holds), but stay exclusive within their
claim. Shared devices (allowMultipleAllocations) are the capacity rule's business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, Pick

from .base import Assumption, Encoding, Found, Rule, RuleContext, Stage
from .wording import wanted_by

if TYPE_CHECKING:
    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice

IN_USE = "already allocated to another claim"
_NONE: frozenset[int] = frozenset()


class Held:
    """The exclusivity rule's depth-first state: devices held, per claim and overall.

    A plain class with slots: the search makes one per call, and a small call is mostly set-up. A
    non-admin pick needs a device no other non-admin pick holds, so ``busy`` alone says what is used."""

    __slots__ = ("held", "in_use", "busy")

    def __init__(self, held: list[set[int]], in_use: frozenset[int]) -> None:
        self.held = held  # per claim: exclusive devices it holds
        self.in_use = in_use  # devices (indexes) allocated before this search
        self.busy: set[int] = set()  # devices with a non-admin pick in this search


class Exclusivity(Rule):
    """An exclusive device serves one pick; admin-access picks do not count as use."""

    name = "exclusivity"
    stage = Stage.EARLY

    def excludes_any(self, inv: Inventory) -> bool:
        return bool(inv.in_use.exclusive)

    def exclude(self, inv: Inventory, alt: Alternative, dev: InventoryDevice, found: Found) -> str:
        if alt.admin or dev.id not in inv.in_use.exclusive:
            return ""
        holder = inv.in_use.holders.get(dev.id)
        return f"already allocated to claim {holder}" if holder else IN_USE

    def single_for(self, ctx: RuleContext, alt: Alternative) -> bool:
        return alt.admin  # admin picks are counted per device and per claim

    def start(self, ctx: RuleContext) -> Held:
        exclusive = ctx.inv.in_use.exclusive
        in_use = frozenset(d.index for d in ctx.inv.devices if d.id in exclusive) if exclusive else _NONE
        held: list[set[int]] = []
        for _ in ctx.plans:  # a plain loop: every search starts one, and a comprehension is a call of its own
            held.append(set())
        return Held(held, in_use)

    def taken(self, state: Held, claim: int, alt: Alternative, dev: InventoryDevice) -> bool:
        if dev.shared:
            return False
        return dev.index in state.held[claim] or (not alt.admin and dev.index in state.busy)

    def taken_sets(self, state: Held, claim: int, alt: Alternative) -> tuple[set[int], ...]:
        return (state.held[claim],) if alt.admin else (state.held[claim], state.busy)

    def fits(self, state: Held, claim: int, alt: Alternative, dev: InventoryDevice, must: bool) -> bool:
        if not alt.admin and dev.index in state.in_use:
            return False  # an All-mode list may name it (and then is blocked); a hint may try it
        if dev.shared:
            return True
        return dev.index not in state.held[claim] and (alt.admin or dev.index not in state.busy)

    def apply(self, state: Held, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        if not dev.shared:
            state.held[claim].add(pick.device)
            if not pick.alt.admin:
                state.busy.add(pick.device)

    def undo(self, state: Held, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        if not dev.shared:
            state.held[claim].discard(pick.device)
            if not pick.alt.admin:
                state.busy.discard(pick.device)

    def encode(self, enc: Encoding) -> None:
        for group in enc.groups:
            if not group.shared:
                _one_device_class(enc, group.index, group.size, per_claim=True)

    def encode_counts(self, enc: Encoding) -> bool:
        """Overall counts lift as they are; "at most once per claim" for admin access does not (a counted
        alternative is many claims): relaxed where an admin claim could take a device twice."""
        exact = True
        for group in enc.groups:
            if not group.shared:
                exact &= _one_device_class(enc, group.index, group.size, per_claim=False)
        return exact

    def describe(self, inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
        """The requests that want the class's devices, with how many each needs."""
        return wanted_by(plans, member.devices).removeprefix("; ") if member.devices else ""


def _one_device_class(enc: Encoding, k: int, size: int, *, per_claim: bool) -> bool:
    """A class of exclusive devices: at most ``size`` non-admin picks overall; at most ``size`` per claim
    (with ``per_claim``; without, whether there was any such claim to check is the answer: False)."""
    takes = enc.by_class.get(k, [])
    overall = [v for alt, v in takes if not alt.admin]
    claims: dict[int, list] = {}
    for alt, v in takes:
        claims.setdefault(alt.claim, []).append(v)
    admin = any(alt.admin for alt, _ in takes)
    crowded = [vs for vs in claims.values() if len(vs) > 1] if admin else []
    exact = per_claim or not crowded
    if not per_claim:
        crowded = []
    if len(overall) <= 1 and not crowded:
        return exact
    devices = ", ".join(enc.inv.devices[d].label() for d in enc.groups[k].devices)
    literal = enc.guard(
        "exclusivity", f"device {devices} is allocated at most once", devices=tuple(enc.groups[k].devices)
    )
    if len(overall) > 1:
        enc.model.add(sum(overall) <= size).only_enforce_if(literal)
    for vs in crowded:
        enc.model.add(sum(vs) <= size).only_enforce_if(literal)
    return exact
