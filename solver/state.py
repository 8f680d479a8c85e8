"""What a partial allocation holds, as the depth-first search sees it: each rule's own slice of state.

The search adds and removes picks on one :class:`SearchState`; every addition is undone
exactly by the rules that recorded it (no leaked counters, no forgotten constraint
members), which is where drasat deliberately parts from Kubernetes' bookkeeping bugs.
This module knows no rule: it asks each registered rule in turn.
"""

from __future__ import annotations

from typing import Any, Sequence

from .inventory import Inventory, InventoryDevice
from .plan import Alternative, ClaimPlan, Pick
from .rules.base import Rule, RuleContext
from .rules.registry import RULES

__all__ = ["Pick", "SearchState"]


class SearchState:
    def __init__(self, inv: Inventory, plans: Sequence[ClaimPlan], rules: Sequence[Rule] = RULES,
                 ctx: RuleContext | None = None) -> None:
        self.inv, self.plans = inv, list(plans)
        self.ctx = ctx or RuleContext(inv, self.plans)
        active = [rule for rule in rules if rule.searched and rule.active(self.ctx)]
        self.slices: list[tuple[Rule, Any]] = [(rule, rule.start(self.ctx)) for rule in active]
        self.undo_order = self.slices[::-1]
        self.takers = [(rule, state) for rule, state in self.slices if type(rule).taken is not Rule.taken]
        self.picks: list[list[Pick]] = [[] for _ in self.plans]

    def taken(self, claim: int, alt: Alternative, dev: InventoryDevice) -> bool:
        """Whether this search already holds the device for ``alt``: skipped before its selectors, as upstream."""
        for rule, state in self.takers:
            if rule.taken(state, claim, alt, dev):
                return True
        return False

    def try_add(self, claim: int, alt: Alternative, device: int, must: bool) -> Pick | None:
        """Allocate ``device`` for ``alt`` if every rule allows it; the pick, or None."""
        dev = self.inv.devices[device]
        for rule, state in self.slices:
            if not rule.fits(state, claim, alt, dev, must):
                return None
        pick = Pick(alt, device, alt.share.get(device) if dev.shared else None)
        for rule, state in self.slices:
            rule.apply(state, claim, pick, dev)
        self.picks[claim].append(pick)
        return pick

    def remove(self, claim: int, pick: Pick) -> None:
        """Undo the claim's last pick."""
        dev = self.inv.devices[pick.device]
        for rule, state in self.undo_order:
            rule.undo(state, claim, pick, dev)
        self.picks[claim].pop()
