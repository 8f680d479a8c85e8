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
import sys
import time
from dataclasses import dataclass

from drasat.models.errors import SolveTimeout

from .candidates import Alternative
from .claims import MAX_RESULTS, ClaimPlan
from .state import Pick, SearchState

SUCCESS, FAIL, SIZE = "success", "fail", "size"


class BudgetExhausted(Exception):
    """The search used its whole step budget without an answer."""


@dataclass
class GreedyResult:
    picks: list[list[Pick]] | None  # None: no allocation exists
    steps: int


class _Search:
    def __init__(self, state: SearchState, budget: int | None, deadline: float | None) -> None:
        self.state, self.plans, self.budget, self.deadline = state, state.plans, budget, deadline
        self.steps = self.tries = 0
        self._order: dict[int, list[int]] = {}

    def _tick(self) -> None:
        self.steps += 1
        if self.deadline is not None and self.steps % 64 == 0 and time.monotonic() > self.deadline:
            raise SolveTimeout(f"the greedy search gave up after {self.steps} steps (time limit reached)")

    def _try(self, claim: int, alt: Alternative, device: int, must: bool) -> Pick | None:
        """Try one device; the budget counts tries, the unit of work that explodes on hard inputs."""
        self.tries += 1
        if self.budget is not None and self.tries > self.budget:
            raise BudgetExhausted()
        return self.state.try_add(claim, alt, device, must)

    def claim(self, c: int) -> str:
        self._tick()
        if c == len(self.plans):
            return SUCCESS
        return self.request(c, 0)

    def request(self, c: int, r: int) -> str:
        self._tick()
        plan = self.plans[c]
        if r == len(plan.requests):
            result = self.claim(c + 1)
            return FAIL if result == SIZE else result
        exceeded = True
        for alt in plan.requests[r].alternatives:
            result = self.slot(plan, alt, 0, 0)
            if result == SIZE:
                continue
            exceeded = False
            if result == SUCCESS:
                return SUCCESS
        return SIZE if exceeded else FAIL

    def slot(self, plan: ClaimPlan, alt: Alternative, k: int, start: int) -> str:
        self._tick()
        c = plan.index
        if alt.mode == "All" and alt.blocked and k == alt.blocked_at:
            return FAIL  # reached a listed device that can never be allocated (earlier ones were tried)
        if k >= alt.count:
            return self.request(c, alt.request + 1)
        if len(self.state.picks[c]) + alt.count - k > MAX_RESULTS:
            return SIZE
        if alt.mode == "All":
            return self._place(plan, alt, k, alt.candidates[k], must=True) or FAIL
        order = self._devices(alt)
        used, held, devices = self.state.used, self.state.held[c], self.state.inv.devices
        for device in order[bisect.bisect_left(order, start):]:
            if (used[device] and not alt.admin or device in held) and not devices[device].shared:
                continue  # taken earlier in this search: skipped before its selectors, as upstream
            if device in alt.errors:
                raise alt.errors[device]
            result = self._place(plan, alt, k, device, must=False)
            if result in (SUCCESS, SIZE):
                return result
        return FAIL

    def _place(self, plan: ClaimPlan, alt: Alternative, k: int, device: int, must: bool) -> str | None:
        pick = self._try(plan.index, alt, device, must)
        if pick is None:
            return None
        result = self.slot(plan, alt, k + 1, device + 1)
        if result != SUCCESS:
            self.state.remove(plan.index, pick)
            return result if result == SIZE else (FAIL if alt.mode == "All" else None)
        return SUCCESS

    def _devices(self, alt: Alternative) -> list[int]:
        """Candidates plus the devices whose selectors failed (raised only when reached), in order."""
        key = id(alt)
        if key not in self._order:
            self._order[key] = sorted([*alt.candidates, *alt.errors])
        return self._order[key]


def greedy_search(state: SearchState, budget: int | None = None, deadline: float | None = None) -> GreedyResult:
    """Run the depth-first search on a fresh ``state``.

    Raises :class:`BudgetExhausted` past ``budget`` device tries and SolveTimeout past ``deadline``
    (a ``time.monotonic()`` value).
    """
    search = _Search(state, budget, deadline)
    limit = sys.getrecursionlimit()
    # A request never picks more devices than it has candidates, whatever its count (up to 2**63-1).
    depth = sum(3 * len(plan.requests) + 3 * sum(max(min(a.count, len(a.candidates) + len(a.errors))
                                                     for a in r.alternatives) for r in plan.requests) + 3
                for plan in state.plans) + 200
    if depth > limit:
        sys.setrecursionlimit(depth)  # each pick is a few frames deep; only raised when needed
    try:
        result = search.claim(0)
    finally:
        if depth > limit:
            sys.setrecursionlimit(limit)
    if result == SUCCESS:
        return GreedyResult([list(p) for p in state.picks], search.steps)
    return GreedyResult(None, search.steps)
