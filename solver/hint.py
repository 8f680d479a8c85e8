"""A first-fit guess without backtracking, from the depth-first side's rules, for anyone to start from.

CP-SAT takes it as its hint (staged decoding then usually needs no further solve); it needs
no search, so the CP-SAT side never drives the depth-first search itself.
"""

from __future__ import annotations

from typing import Sequence

from .inventory import Inventory
from .plan import Alternative, AltId, ClaimPlan, Pick
from .rules.base import RuleContext
from .state import SearchState


def first_fit_fill(inv: Inventory, plans: Sequence[ClaimPlan], ctx: RuleContext | None = None) -> dict[AltId, list[Pick]]:
    """A first-fit guess without backtracking: each request's chosen alternative and its picks.

    Each request takes the first alternative whose devices fit, given the requests before
    it, the first devices that fit; a request that does not fit is left out. The CP-SAT
    side starts from it (where it is right — usually for most claims — staged decoding
    needs no further solve).
    """
    state = SearchState(inv, plans, ctx=ctx)
    chosen: dict[AltId, list[Pick]] = {}
    for plan in state.plans:
        for req in plan.requests:
            for alt in req.alternatives:
                picks = _fill(state, plan.index, alt)
                if picks is not None:
                    chosen[alt.id] = picks
                    break
    return chosen


def _fill(state: SearchState, claim: int, alt: Alternative) -> list[Pick] | None:
    picks: list[Pick] = []
    for device in alt.candidates:
        if len(picks) == alt.count:
            break
        pick = state.try_add(claim, alt, device, must=False) if not alt.errors else None
        if pick is not None:
            picks.append(pick)
        elif alt.mode == "All":
            break
    if len(picks) == alt.count:
        return picks
    for pick in reversed(picks):
        state.remove(claim, pick)
    return None
