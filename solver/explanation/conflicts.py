"""Every independent conflict of a model that cannot be solved, and only the "drop this" claims a solve confirms.

One minimal conflict (an unsat core shrunk until every member is needed) proves that its members cannot hold
together; it does not prove that dropping one of them lets the claims fit. A second conflict, over other devices
or other constraints, may stand as well (a distinctAttribute and a capacity overrun; two devices each wanted
twice), and then no single member is enough. So the search goes on:

1. a core is found, shrunk to a minimal one, and all its members are relaxed; the next core is searched for among
   the rule instances left, until what is left holds (every independent conflict is then found: dropping all
   their members lets the claims fit) or time runs out (then the answer says that more may exist);
2. with one conflict found, each member is dropped alone, with every other rule instance kept, and a solve says
   whether that is enough (a conflict sharing members with the first one can remain);
3. with several, no one member is enough (the other conflicts stand on their own); one member of each, dropped
   together, is searched for greedily and confirmed by a solve.

Nothing is said that a solve did not show; what time did not let check is left unsaid.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from drasat.models.errors import SolveTimeout
from drasat.solver.allocation.rules.base import Assumption

MAX_CONFLICTS = 8  # independent conflicts searched for; beyond, the answer says more may exist
TIME_RAN_OUT = "time ran out (raise --timeout)"


@dataclass
class Conflicts:
    """The independent conflicts found, and what solves confirmed about dropping their members."""

    cores: list[list[Assumption]]
    minimal: list[bool]  # per core: shrunk to a minimal one (time may run out while shrinking)
    complete: bool = False  # with every member of every core dropped, the rest holds (checked)
    alone: dict[int, bool] = field(default_factory=dict)  # member (literal index) -> dropping it alone fits
    together: list[Assumption] = field(default_factory=list)  # one member per core, dropped together: fits
    stopped: str = ""  # why the search ended before every conflict was surely found ("": it did not)


def find_conflicts(model: Any, deadline: float) -> Conflicts | None:
    """None when every rule instance of ``model`` can hold together; else its independent conflicts, each
    minimal where time allowed, with the checked claims about dropping members. Only the first core's
    search may raise :class:`SolveTimeout`: once one conflict is known, running out of time ends the search
    and the answer says what is known."""
    every = list(model.assumptions)
    first = core(model, every, deadline)
    if first is None:
        return None
    found = Conflicts([], [])
    relaxed: set[int] = set()
    try:
        while first is not None:
            shrunk, minimal = shrink(model, first, deadline)
            found.cores.append(shrunk)
            found.minimal.append(minimal)
            if not shrunk:
                return found  # the requests conflict by themselves: no rule instance to drop
            relaxed.update(a.literal.index for a in shrunk)
            if not minimal:
                found.stopped = TIME_RAN_OUT
                return found
            if len(found.cores) >= MAX_CONFLICTS:
                found.stopped = f"the search stops after {MAX_CONFLICTS} conflicts"
                return found
            first = core(model, [a for a in every if a.literal.index not in relaxed], deadline)
        found.complete = True
        _check_drops(model, every, found, deadline)
    except SolveTimeout:
        found.stopped = found.stopped or ("" if found.complete else TIME_RAN_OUT)  # what was not checked is unsaid
    return found


def _check_drops(model: Any, every: list[Assumption], found: Conflicts, deadline: float) -> None:
    """Which members alone, and which one member per conflict together, let the rest hold — each by a solve."""
    if len(found.cores) > 1:
        for member in (a for members in found.cores for a in members):
            found.alone[member.literal.index] = False  # every other conflict still stands on its own
        found.together = _one_of_each(model, every, found.cores, deadline)
        return
    (members,) = found.cores
    for member in members:
        # A lone member is the whole conflict, and without the conflict the rest holds (complete).
        fits = len(members) == 1 or core(model, _without(every, [member]), deadline) is None
        found.alone[member.literal.index] = fits


def _one_of_each(
    model: Any, every: list[Assumption], cores: list[list[Assumption]], deadline: float
) -> list[Assumption]:
    """One member of each conflict such that dropping them together lets the rest hold, found greedily: for
    each conflict in turn, the first member that still leaves the rest feasible with the members chosen so far
    and every member of the conflicts not yet decided dropped. [] when the greedy choice finds none."""
    chosen: list[Assumption] = []
    for position, members in enumerate(cores):
        later = [a for rest in cores[position + 1 :] for a in rest]
        pick = next((m for m in members if core(model, _without(every, [*chosen, m, *later]), deadline) is None), None)
        if pick is None:
            return []
        chosen.append(pick)
    return chosen


def _without(every: list[Assumption], dropped: list[Assumption]) -> list[Assumption]:
    gone = {a.literal.index for a in dropped}
    return [a for a in every if a.literal.index not in gone]


def shrink(model: Any, found: list[Assumption], deadline: float) -> tuple[list[Assumption], bool]:
    """A minimal subset of the core ``found``: a member is kept only if the rest would hold without it. False
    when time ran out while shrinking (the set so far is still a conflict, maybe not a minimal one)."""
    kept = list(found)
    for member in list(kept):
        if all(a is not member for a in kept):
            continue  # an earlier, smaller core already left it out
        trial = [a for a in kept if a is not member]
        try:
            smaller = core(model, trial, deadline)
        except SolveTimeout:
            return kept, False
        if smaller is not None:
            named = {a.literal.index for a in smaller}
            kept = [a for a in trial if a.literal.index in named]
    return kept, True


def core(model: Any, assumptions: list[Assumption], deadline: float) -> list[Assumption] | None:
    """None when the model is feasible under ``assumptions``; else a subset CP-SAT says suffices."""
    from ortools.sat.python import cp_model

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise SolveTimeout("the time limit was reached while looking for a minimal conflict (raise --timeout)")
    model.model.clear_assumptions()
    model.model.add_assumptions([a.literal for a in assumptions])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1  # cores of assumptions come from the sequential search
    solver.parameters.max_time_in_seconds = remaining
    status = solver.solve(model.model)
    model.model.clear_assumptions()
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    if status != cp_model.INFEASIBLE:
        raise SolveTimeout("the time limit was reached while looking for a minimal conflict (raise --timeout)")
    chosen = set(solver.sufficient_assumptions_for_infeasibility())
    return [a for a in assumptions if a.literal.index in chosen]
