"""A first-fit guess without backtracking, from the depth-first side's rules, for anyone to start from.

CP-SAT takes it as its hint, and first-fit decoding (:mod:`.first_fit`) accepts the part of it
that is surely Kubernetes' answer once CP-SAT shows it extendable; it needs no search, so the
CP-SAT side never drives the depth-first search itself.

Why a prefix of the guess is first-fit's own: at each step the guess takes the first device
that fits given the steps before it, and every device before it does not fit — and a device
that does not fit now fits no later state either (every rule only narrows as picks are added).
So when a prefix of the guess is part of *some* complete allocation, depth-first search, which
takes at each step the first device that still allows one, makes the same steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.plan import Alternative, AltId, ClaimPlan, Pick, RequestPlan
from drasat.solver.allocation.rules.base import RuleContext

from .search_state import SearchState


def first_fit_fill(
    inv: Inventory, plans: Sequence[ClaimPlan], ctx: RuleContext | None = None
) -> dict[AltId, list[Pick]]:
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
                picks, _ = _fill(state, plan.index, alt)
                if picks is not None:
                    chosen[alt.id] = picks
                    break
    return chosen


@dataclass(frozen=True)
class GuessStep:
    """One request as the guess filled it: the alternative taken and its picks, in order."""

    plan: ClaimPlan
    alt: Alternative
    picks: list[Pick]


def trusted_fill(state: SearchState, requests: Sequence[tuple[ClaimPlan, RequestPlan]]) -> list[GuessStep]:
    """The guess for ``requests`` in order, applied to ``state``, up to the first request where it
    stops being first-fit's candidate answer: a request left out, or one that passed over an earlier
    alternative whose refusal might be wrong (its devices stuck part-way; depth-first search would
    have backtracked within it). Every step before that is depth-first search's own step, provided
    the steps so far are part of some complete allocation (the module's docstring says why)."""
    steps: list[GuessStep] = []
    for plan, req in requests:
        for alt in req.alternatives:
            picks, surely = _fill(state, plan.index, alt)
            if picks is not None:
                steps.append(GuessStep(plan, alt, picks))
                break
            if not surely:
                return steps
        else:
            return steps
    return steps


def undo_steps(state: SearchState, steps: Sequence[GuessStep]) -> None:
    """Take ``steps`` back out of ``state``, last pick first."""
    for step in reversed(steps):
        for pick in reversed(step.picks):
            state.remove(step.plan.index, pick)


_NONE: frozenset[int] = frozenset()


def _fill(state: SearchState, claim: int, alt: Alternative) -> tuple[list[Pick] | None, bool]:
    """The alternative's first fitting devices, applied to ``state``; else None and whether the refusal is
    sure (no device fitted at all, or the alternative had no choice to make: one device, or All mode)."""
    if alt.errors:
        return None, False
    picks: list[Pick] = []
    # The sets of devices held already (kept current by the rules as picks come and go): no rule needs
    # asking about those, as in the depth-first search. Tested inline: this loop runs over every candidate.
    held = state.taken_sets(claim, alt) if alt.mode != "All" else ()
    first, second = (*held, _NONE, _NONE)[:2]
    more = held[2:]
    for device in alt.candidates:
        if len(picks) == alt.count:
            break
        if device in first or device in second or (more and any(device in other for other in more)):
            continue
        pick = state.try_add(claim, alt, device, must=False)
        if pick is not None:
            picks.append(pick)
        elif alt.mode == "All":
            break
    if len(picks) == alt.count:
        return picks, True
    for pick in reversed(picks):
        state.remove(claim, pick)
    return None, not picks or alt.count == 1 or alt.mode == "All"
