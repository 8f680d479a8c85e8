"""What a partial allocation holds: devices in use, shares, counters, constraint members.

The greedy search adds and removes picks on one :class:`SearchState`; every addition
is undone exactly (no leaked counters, no forgotten constraint members), which is
where drasat deliberately parts from Kubernetes' bookkeeping bugs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.errors import AllocationError

from .candidates import Alternative, compatible
from .claims import ClaimPlan, constraint_attribute
from .constraints import Label, distinct_holds, labels, match_holds
from .inventory import Inventory, InventoryDevice
from .capacity import fits


@dataclass(frozen=True)
class Pick:
    """One device allocated for one alternative (``share`` for shared devices)."""

    alt: Alternative
    device: int
    share: dict[str, Fraction] | None = None


@dataclass
class SearchState:
    inv: Inventory
    plans: list[ClaimPlan]
    used: Counter = field(default_factory=Counter)          # device -> non-admin exclusive picks
    held: list[set[int]] = field(default_factory=list)      # per claim: exclusive devices it holds
    shares: dict[int, list[dict[str, Fraction]]] = field(default_factory=dict)
    counters: dict[tuple, Fraction] = field(default_factory=dict)  # (driver, pool, set, counter) -> consumed
    groups: dict[tuple, list[frozenset[str]]] = field(default_factory=dict)
    members: list[list[list[frozenset[Label]]]] = field(default_factory=list)  # claim -> constraint -> labels
    picks: list[list[Pick]] = field(default_factory=list)
    _labels: dict[tuple, frozenset[Label] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.held = [set() for _ in self.plans]
        self.members = [[[] for _ in plan.constraints] for plan in self.plans]
        self.picks = [[] for _ in self.plans]

    def busy(self, claim: int, alt: Alternative, dev: InventoryDevice) -> bool:
        """Whether ``dev`` is taken for ``alt`` by this search (static use is in the candidate lists)."""
        if dev.shared:
            return False
        if dev.index in self.held[claim]:
            return True
        return not alt.admin and self.used[dev.index] > 0

    def try_add(self, claim: int, alt: Alternative, device: int, must: bool) -> Pick | None:
        """Allocate ``device`` for ``alt`` if every rule allows it; the pick, or None."""
        dev = self.inv.devices[device]
        if self.busy(claim, alt, dev) or (not alt.admin and dev.id in self.inv.in_use.exclusive):
            return None
        draws = self._draws_counters(dev)
        if draws and not self._counters_fit(dev):
            return None
        if not self._constraints_accept(claim, alt, device, must):
            return None
        share = alt.share.get(device) if dev.shared else None
        if share is not None and not self._capacity_fits(dev, share):
            return None
        pick = Pick(alt, device, share)
        self._apply(claim, pick, draws, +1)
        return pick

    def remove(self, claim: int, pick: Pick) -> None:
        dev = self.inv.devices[pick.device]
        draws = self._draws_counters(dev, removing=True)
        self._apply(claim, pick, draws, -1)

    # --- the pieces ------------------------------------------------------------------------
    def _draws_counters(self, dev: InventoryDevice, removing: bool = False) -> bool:
        """Shared devices draw their counters with the first share only (none if shared already)."""
        if not dev.device.consumes_counters or not self.inv.features.partitionable:
            return False
        if dev.shared:
            if self.inv.in_use.allocated(dev.id):
                return False
            return len(self.shares.get(dev.index, ())) == (1 if removing else 0)
        return True

    def _counters_fit(self, dev: InventoryDevice) -> bool:
        pool = self.inv.pool(dev.pool_key)
        if pool.overcommitted:
            return False
        for use in dev.device.consumes_counters:
            for name, counter in use.counters.items():
                key = (*dev.pool_key, use.counter_set, name)
                if self.counters.get(key, 0) + counter.value.value > pool.counters[use.counter_set][name]:
                    return False
            if self.inv.features.compatibility_groups:
                group_key = (*dev.pool_key, use.counter_set)
                mine = frozenset(use.compatibility_groups or ())
                held = self.groups.get(group_key, [])
                if not compatible([*pool.allocated_groups.get(use.counter_set, []), *held, mine]):
                    return False
        return True

    def _capacity_fits(self, dev: InventoryDevice, share: dict[str, Fraction]) -> bool:
        already = self.inv.in_use.capacity.get(dev.id, {})
        return fits(dev.device.capacity, share, already, *self.shares.get(dev.index, ()))

    def labels_of(self, claim: int, ci: int, alt: Alternative, device: int) -> frozenset[Label] | None:
        """The device's labels for one constraint; shared between claims unless the request derives attributes."""
        constraint = self.plans[claim].constraints[ci]
        key = (constraint.attribute, constraint.kind, device, id(alt) if alt.derived else None)
        if key not in self._labels:
            attr = constraint_attribute(self.inv, alt, device, constraint.attribute)
            self._labels[key] = labels(attr, constraint.kind, self.inv.features.list_attributes)
        return self._labels[key]

    def _constraints_accept(self, claim: int, alt: Alternative, device: int, must: bool) -> bool:
        for ci, constraint in enumerate(self.plans[claim].constraints):
            if not constraint.applies(alt):
                continue
            mine = self.labels_of(claim, ci, alt, device)
            chosen = self.members[claim][ci]
            holds = mine is not None and (match_holds([*chosen, mine]) if constraint.kind == "match"
                                           else distinct_holds([*chosen, mine]))
            if not holds:
                if must:
                    raise AllocationError(
                        f"claim {alt.claim_label}, request {alt.own_name}: cannot add device "
                        f"{self.inv.devices[device].label()} because a claim constraint would not be satisfied")
                return False
        return True

    def _apply(self, claim: int, pick: Pick, draws: bool, sign: int) -> None:
        dev = self.inv.devices[pick.device]
        alt = pick.alt
        if draws:
            for use in dev.device.consumes_counters:
                for name, counter in use.counters.items():
                    key = (*dev.pool_key, use.counter_set, name)
                    self.counters[key] = self.counters.get(key, 0) + sign * counter.value.value
                groups = self.groups.setdefault((*dev.pool_key, use.counter_set), [])
                mine = frozenset(use.compatibility_groups or ())
                groups.append(mine) if sign > 0 else groups.remove(mine)
        for ci, constraint in enumerate(self.plans[claim].constraints):
            if constraint.applies(alt):
                members = self.members[claim][ci]
                found = self.labels_of(claim, ci, alt, pick.device)  # never None here: checked on the way in
                members.append(found or frozenset()) if sign > 0 else members.pop()
        if pick.share is not None:
            shares = self.shares.setdefault(pick.device, [])
            shares.append(pick.share) if sign > 0 else shares.remove(pick.share)
        elif not dev.shared:
            if sign > 0:
                self.held[claim].add(pick.device)
            else:
                self.held[claim].discard(pick.device)
            if not alt.admin:
                self.used[pick.device] += sign
        if sign > 0:
            self.picks[claim].append(pick)
        else:
            self.picks[claim].pop()
