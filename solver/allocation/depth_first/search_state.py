"""What a partial allocation holds, as the depth-first search sees it: each rule's own slice of state.

The search adds and removes picks on one :class:`SearchState`; every addition is undone
exactly by the rules that recorded it (no leaked counters, no forgotten constraint
members), which is where drasat deliberately parts from Kubernetes' bookkeeping bugs.
This module knows no rule: it asks each registered rule in turn.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any

from drasat.models.trusted import dict_setter
from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, Pick
from drasat.solver.allocation.rules.base import Rule, RuleContext
from drasat.solver.allocation.rules.registry import RULES

__all__ = ["Pick", "SearchState"]


def _searched(rules: Sequence[Rule]) -> tuple[tuple[Rule, bool, bool, Any, Any, Any], ...]:
    """The rules with a depth-first side, each with whether it may be inactive on an input (the base's
    :meth:`Rule.active` says a searched rule always is active: not asked), whether it skips devices it holds
    (:meth:`Rule.taken`), and its fits/apply/undo bound once (rules are one object each, for good)."""
    return tuple(
        (
            rule,
            type(rule).active is not Rule.active,
            type(rule).taken is not Rule.taken,
            rule.fits,
            rule.apply,
            rule.undo,
        )
        for rule in rules
        if rule.searched
    )


_new, _set_pick_dict = object.__new__, dict_setter(Pick)  # see models.trusted.dict_setter
_REGISTERED = _searched(RULES)  # worked out once: a small input makes a search state per call


class SearchState:
    """The depth-first search's state: each active rule's slice, with its fits/apply/undo bound once."""

    def __init__(
        self, inv: Inventory, plans: Sequence[ClaimPlan], rules: Sequence[Rule] = RULES, ctx: RuleContext | None = None
    ) -> None:
        self.inv, self.plans = inv, list(plans)
        ctx = self.ctx = ctx or RuleContext(inv, self.plans)
        # Each rule's steps with its slice of state, looked up once: the search calls them for every device it
        # tries (pairs, not functools.partial objects). Rules with nothing to refuse on this input are left out
        # before they make any state: a small input makes a state per call, and most rules have nothing to do.
        fits_: list[tuple[Any, Any]] = []
        apply_: list[tuple[Any, Any]] = []
        undo_: list[tuple[Any, Any]] = []  # undone in the reverse order of applying
        takers: list[tuple[Rule, Any]] = []
        for rule, asks, takes, fits, apply, undo in _REGISTERED if rules is RULES else _searched(rules):  # one pass
            if asks and not rule.active(ctx):
                continue
            state = rule.start(ctx)
            fits_.append((fits, state))
            apply_.append((apply, state))
            undo_.insert(0, (undo, state))
            if takes:
                takers.append((rule, state))
        self._fits, self._apply, self._undo, self.takers = fits_, apply_, undo_, takers
        picks: list[list[Pick]] = []
        for _ in self.plans:  # a plain loop: a comprehension is a call of its own
            picks.append([])
        self.picks = picks

    def taken(self, claim: int, alt: Alternative, dev: InventoryDevice) -> bool:
        """Whether this search already holds the device for ``alt``: skipped before its selectors, as upstream."""
        for rule, state in self.takers:
            if rule.taken(state, claim, alt, dev):
                return True
        return False

    def taken_sets(self, claim: int, alt: Alternative) -> tuple[Container[int], ...]:
        """:meth:`taken` as sets of device indexes (for a loop over many devices). Asked once per alternative
        a search reaches: the usual single taker (exclusivity) answers directly, with no generator made."""
        takers = self.takers
        if len(takers) == 1:
            rule, state = takers[0]
            return rule.taken_sets(state, claim, alt)
        return tuple(s for rule, state in takers for s in rule.taken_sets(state, claim, alt))

    def try_add(self, claim: int, alt: Alternative, device: int, must: bool) -> Pick | None:
        """Allocate ``device`` for ``alt`` if every rule allows it; the pick, or None."""
        dev = self.inv.devices[device]
        for fits, state in self._fits:
            if not fits(state, claim, alt, dev, must):
                return None
        pick = _new(Pick)  # Pick.made, inline: the search makes one for every device it adds
        _set_pick_dict(pick, {"alt": alt, "device": device, "share": alt.share.get(device) if dev.shared else None})
        for apply, state in self._apply:
            apply(state, claim, pick, dev)
        self.picks[claim].append(pick)
        return pick

    def remove(self, claim: int, pick: Pick) -> None:
        """Undo the claim's last pick."""
        dev = self.inv.devices[pick.device]
        for undo, state in self._undo:
            undo(state, claim, pick, dev)
        self.picks[claim].pop()
