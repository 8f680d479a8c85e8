"""The greedy twin: Kubernetes' depth-first first-fit search with backtracking.

Claims in order, requests in order, ``firstAvailable`` entries in order, devices in
inventory order; slot k+1 only looks past slot k's device, so each request explores
combinations, never permutations. The first complete allocation wins — which is
exactly what Kubernetes returns, and the definition of drasat's first-fit answer.

A budget of device tries bounds the search: the default solver runs this first with a
small budget and hands hard inputs (where depth-first search is exponential) to CP-SAT.
"""

from __future__ import annotations

import bisect
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Container, Sequence
from dataclasses import dataclass

from drasat.models.errors import SolveTimeout
from drasat.solver.allocation.planning.plan import MAX_RESULTS, Alternative, AltId, ClaimPlan, Pick

from .search_state import SearchState

SUCCESS, FAIL, SIZE = "success", "fail", "size"


class BudgetExhausted(Exception):
    """The search used its whole step budget without an answer."""


@dataclass
class GreedyResult:
    """The depth-first search's answer (picks per claim, or None: no allocation) and its effort."""

    picks: list[list[Pick]] | None  # None: no allocation exists. The search state's own lists (not copied):
    steps: int  # a caller that goes on searching with that state copies them first
    tries: int = 0  # devices tried
    backtracks: int = 0  # devices taken back after what followed them failed


class _Frame(ABC):
    """One level of the search on the explicit stack. ``resume(None)`` starts it; ``resume(outcome)``
    hands it the outcome of the step it waited on. It returns its own outcome (a string) or the
    next frame to run on top of it."""

    __slots__ = ()

    @abstractmethod
    def resume(self, outcome: str | None) -> str | _Frame:
        """Start (``None``) or continue with the outcome of the step this frame waited on."""


Next = str | _Frame  # an outcome now, or a frame that will deliver one


def _run(first: Next) -> str:
    """Run frames on an explicit stack: the search is as deep as the picks it holds, and Python's
    own stack (and its process-wide recursion limit) must not bound it."""
    if isinstance(first, str):
        return first
    stack: list[_Frame] = [first]
    outcome: str | None = None
    while stack:
        step = stack[-1].resume(outcome)
        if isinstance(step, str):
            stack.pop()
            outcome = step
        else:
            stack.append(step)
            outcome = None
    assert outcome is not None
    return outcome


_NONE: frozenset[int] = frozenset()


def any_holds(sets: tuple[Container[int], ...], device: int) -> bool:
    """Whether any of the (at most a few) sets holds the device."""
    for held in sets:
        if device in held:
            return True
    return False


class _Request(_Frame):
    """Each alternative of one request in order; SIZE only when every one exceeded the claim limit."""

    __slots__ = ("search", "plan", "alts", "i", "exceeded")

    def __init__(self, search: _Search, plan: ClaimPlan, alts: Sequence[Alternative]) -> None:
        self.search, self.plan, self.alts = search, plan, alts
        self.i, self.exceeded = 0, True

    def resume(self, outcome: str | None) -> Next:
        claim = self.plan.index
        while True:
            if outcome is not None and self.search.own(outcome, claim) != SIZE:
                self.exceeded = False
                if outcome == SUCCESS:
                    return SUCCESS
            if self.i == len(self.alts):
                return SIZE if self.exceeded else FAIL
            alt = self.alts[self.i]
            self.i += 1
            step = self.search.slot(self.plan, alt, 0, 0)
            if step.__class__ is not str:
                return step
            outcome = step


class _Slot(_Frame):
    """Slot ``k`` of an ExactCount alternative: each free device from ``pos`` on, then the next slots."""

    __slots__ = ("search", "plan", "alt", "k", "order", "pos", "pick", "skip")

    def __init__(
        self, search: _Search, plan: ClaimPlan, alt: Alternative, k: int, order: Sequence[int], pos: int
    ) -> None:
        self.search, self.plan, self.alt, self.k, self.order, self.pos = search, plan, alt, k, order, pos
        self.pick: Pick | None = None
        self.skip = search.skip_sets(plan.index, alt)  # updated in place by the rules: asked once

    def resume(self, outcome: str | None) -> Next:
        search, alt, c = self.search, self.alt, self.plan.index
        state = search.state
        while True:
            if outcome is not None:
                settled = self._settle(outcome)
                if settled is not None:
                    return settled
            outcome = None
            order = self.order
            first, second, more = self.skip
            for i in range(self.pos, len(order)):
                device = order[i]
                if device in first or device in second or (more and any_holds(more, device)):
                    continue  # taken earlier in this search: skipped before its selectors, as upstream
                if device in alt.errors:
                    raise alt.errors[device]
                search.tries += 1  # the budget counts tries (see _Search.try_add), counted here inline
                if search.tries > search.most_tries:
                    raise BudgetExhausted()
                pick = state.try_add(c, alt, device, False)
                if pick is not None:
                    self.pos, self.pick = i + 1, pick
                    step = search.slot(self.plan, alt, self.k + 1, device + 1)
                    if step.__class__ is not str:
                        return step
                    outcome = step
                    break
            else:
                return FAIL

    def _settle(self, outcome: str) -> str | None:
        """What the next slots' outcome means here: success goes up, a failure takes this slot's pick back
        (None: try the next device), a claim over its size limit goes up too. Apart from :meth:`resume`'s
        loop over devices, which stays inline: it runs once per device tried, this once per backtrack."""
        if outcome == SUCCESS:
            return SUCCESS
        search = self.search
        search.state.remove(self.plan.index, self.pick)  # type: ignore[arg-type]  # set before any outcome
        search.backtracks += 1
        return SIZE if search.own(outcome, self.plan.index) == SIZE else None


class _AllSlot(_Frame):
    """One device of an ``allocationMode: All`` list, placed; waits for the rest of the list."""

    __slots__ = ("search", "claim", "pick", "rest")

    def __init__(self, search: _Search, claim: int, pick: Pick, rest: _Frame) -> None:
        self.search, self.claim, self.pick, self.rest = search, claim, pick, rest

    def resume(self, outcome: str | None) -> Next:
        if outcome is None:
            return self.rest
        return self.search.settle_all(self.claim, self.pick, outcome)


class _Search:
    def __init__(self, state: SearchState, budget: int | None, deadline: float | None) -> None:
        self.state, self.plans, self.deadline = state, state.plans, deadline
        self.most_tries = math.inf if budget is None else budget  # device tries allowed (the budget)
        self.steps = self.tries = self.backtracks = 0
        self._check_at = 64  # the step count at which the deadline is looked at next
        self.size_claim = -1  # the claim whose 32-device limit the last SIZE outcome is about
        self._order: dict[AltId, list[int]] = {}
        self._skip: dict[AltId, tuple[Container[int], Container[int], tuple]] = {}

    def _check_time(self) -> None:
        """Give up if the deadline has passed; asked each time the step count passes ``_check_at``, which then
        moves 64 steps on (the steps are counted inline, where they are made)."""
        self._check_at = self.steps + 64
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SolveTimeout(f"the greedy search gave up after {self.steps} steps (time limit reached)")

    def try_add(self, claim: int, alt: Alternative, device: int, must: bool) -> Pick | None:
        """Try one device; the budget counts tries, the unit of work that explodes on hard inputs."""
        self.tries += 1
        if self.tries > self.most_tries:
            raise BudgetExhausted()
        return self.state.try_add(claim, alt, device, must)

    def skip_sets(self, claim: int, alt: Alternative) -> tuple[Container[int], Container[int], tuple]:
        """The sets of devices this search already holds against ``alt``: the usual one or two apart, to be
        tested inline. The rules update them in place, so they are looked up once per alternative."""
        key = alt.id
        found = self._skip.get(key)
        if found is None:
            taken = self.state.taken_sets(claim, alt)
            count = len(taken)
            found = self._skip[key] = (taken[0] if count else _NONE, taken[1] if count > 1 else _NONE, tuple(taken[2:]))
        return found

    def own(self, outcome: str, claim: int) -> str:
        """An outcome as a step of ``claim`` sees it: another claim's SIZE (its own limit) is a FAIL here."""
        return FAIL if outcome == SIZE and self.size_claim != claim else outcome

    def request(self, c: int, r: int) -> Next:
        plans = self.plans
        self.steps += 1
        while r == len(plans[c].requests):  # the claim is complete: on to the next one
            c, r = c + 1, 0
            self.steps += 1
            if c == len(plans):
                return SUCCESS
            self.steps += 1
        if self.steps >= self._check_at:
            self._check_time()
        plan = plans[c]
        alternatives = plan.requests[r].alternatives
        if len(alternatives) == 1:
            return self.slot(plan, alternatives[0], 0, 0)  # its outcome is the request's: no frame needed
        return _Request(self, plan, alternatives)

    def slot(self, plan: ClaimPlan, alt: Alternative, k: int, start: int) -> Next:
        self.steps += 1
        if self.steps >= self._check_at:
            self._check_time()
        c = plan.index
        if alt.mode == "All" and alt.blocked and k == alt.blocked_at:
            return FAIL  # reached a listed device that can never be allocated (earlier ones were tried)
        if k >= alt.count:
            return self.request(c, alt.request + 1)
        if len(self.state.picks[c]) + alt.count - k > MAX_RESULTS:
            self.size_claim = c
            return SIZE
        if alt.mode == "All":
            pick = self.try_add(c, alt, alt.candidates[k], must=True)
            if pick is None:
                return FAIL
            rest = self.slot(plan, alt, k + 1, alt.candidates[k] + 1)
            if isinstance(rest, str):
                return self.settle_all(c, pick, rest)
            return _AllSlot(self, c, pick, rest)
        order = self._devices(alt) if alt.errors else alt.candidates
        return _Slot(self, plan, alt, k, order, bisect.bisect_left(order, start) if start else 0)

    def settle_all(self, claim: int, pick: Pick, outcome: str) -> str:
        """An All-mode device's outcome: kept on success, else undone (the list fails as a whole)."""
        outcome = self.own(outcome, claim)
        if outcome != SUCCESS:
            self.state.remove(claim, pick)
        return outcome if outcome in (SUCCESS, SIZE) else FAIL

    def _devices(self, alt: Alternative) -> Sequence[int]:
        """Candidates plus the devices whose selectors failed (raised only when reached), in order (asked only
        where some failed: else the candidates are the list, in inventory order already)."""
        key = alt.id
        if key not in self._order:
            self._order[key] = sorted([*alt.candidates, *alt.errors])
        return self._order[key]


def greedy_search(state: SearchState, budget: int | None = None, deadline: float | None = None) -> GreedyResult:
    """Run the depth-first search on a fresh ``state``.

    Raises :class:`BudgetExhausted` past ``budget`` device tries and SolveTimeout past ``deadline``
    (a ``time.monotonic()`` value).
    """
    search = _Search(state, budget, deadline)
    search.steps += 1  # the first step: the search of claim 0 and on
    found = _run(search.request(0, 0) if state.plans else SUCCESS) == SUCCESS
    # The answer is the state's own lists, not copies: the search is over, and no caller goes on with the state.
    return GreedyResult(state.picks if found else None, search.steps, search.tries, search.backtracks)
