"""First-fit decoding in a handful of solves: accept the longest prefix of the guess that CP-SAT proves extendable.

Kubernetes' first-fit answer is the lexicographically first complete allocation in claim,
request and device order. The staged decoder (:class:`~.objectives._Decoder`) finds it step
by step, with a CP-SAT solve wherever the last solution does not already show the next step
possible: on a big input, a solve per claim or more. Most of those steps are the ones the
guess without backtracking (:mod:`.hint`) takes anyway, so decoding goes in rounds:

1. fill the requests left without backtracking, as far as the guess is first-fit's candidate;
2. find the longest prefix of those steps that some complete allocation extends — free where the
   last solution already takes them, else one solve that takes as many leading steps as it can;
3. accept that prefix (each of its steps is depth-first search's own: :mod:`.hint` says why), let
   the staged decoder settle the one request after it, and start the next round there.

A round costs a solve, plus one per device of the next request that the last solution does not show,
and settles at least one request; where the guess is right but for a few requests, the whole answer
takes a few rounds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from drasat.models.errors import InternalError
from drasat.solver.allocation.depth_first.hint import GuessStep, first_fit_fill, trusted_fill, undo_steps
from drasat.solver.allocation.depth_first.search_state import SearchState
from drasat.solver.allocation.planning.plan import ClaimPlan, Pick, RequestPlan

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from .model import AllocationModel
    from .objectives import _Decoder
    from .stages import Stages


def decode_first_fit(m: AllocationModel, stages: Stages, decoder: _Decoder) -> list[list[Pick]]:
    """Kubernetes' first-fit picks per claim, from a model CP-SAT has found feasible."""
    requests = [(plan, req) for plan in m.plans for req in plan.requests]
    picks: list[list[Pick]] = [[] for _ in m.plans]
    state = SearchState(m.inv, m.plans)
    at, window = 0, len(requests)
    while at < len(requests):
        steps = trusted_fill(state, requests[at : at + window])
        good = _longest_extendable(m, stages, steps, decoder.drawn)
        # Guess only about as far ahead as the guess last held: where it goes wrong every few requests
        # (tight packing), filling all the rest every round would cost more than the solves.
        window = max(8, 2 * good)
        undo_steps(state, steps[good:])
        for step in steps[:good]:
            decoder.accept(step.plan, requests[at][1], step.alt, step.picks)
            picks[step.plan.index].extend(step.picks)
            at += 1
        if at < len(requests):
            plan, req = requests[at]
            settled = decoder.request(plan, req)
            _apply(state, plan, settled)
            picks[plan.index].extend(settled)
            at += 1
    return picks


def _apply(state: SearchState, plan: ClaimPlan, picks: Sequence[Pick]) -> None:
    """Record decoded picks in the guess's state, so that the next round's guess starts after them."""
    for pick in picks:
        if state.try_add(plan.index, pick.alt, pick.device, must=False) is None:
            raise InternalError(
                f"claim {plan.label}: CP-SAT chose device {state.inv.devices[pick.device].label()}, "
                "which the depth-first side's rules refuse"
            )


def _longest_extendable(m: AllocationModel, stages: Stages, steps: Sequence[GuessStep], drawn: Counter[int]) -> int:
    """How many leading ``steps`` some complete allocation takes (the last solution found, if any, is one).
    ``drawn``: what the claims decided so far drew from each take variable (merged groups go on adding)."""
    needs = _needs(m, steps, drawn)
    shown = _shown(stages.values, needs)
    if shown == len(steps):
        return shown
    with stages.scratch():  # the guess's literals mean nothing after this round
        literals = [_literal(stages, step, need) for step, need in zip(steps, needs)]
        for earlier, later in zip(literals, literals[1:]):
            stages.model.add_implication(later, earlier)  # a step counts only after every step before it
        hint = dict(stages.values)
        for step in steps:
            hint.update(_step_values(m, step))
        # One solve for the longest prefix: most steps taken, each only with those before it. (Asking prefix
        # by prefix costs a solve per question, and each "no" is a proof as hard as this one's bound.)
        if not stages.solve_best(-sum(literals), hint=hint):
            raise InternalError("first-fit decoding lost the allocation it had found")
    return _shown(stages.values, needs)


Need = list[tuple["cp_model.IntVar", int, bool]]  # (variable, value, exactly: True "==", False ">=")


def _needs(m: AllocationModel, steps: Sequence[GuessStep], drawn: Counter[int]) -> list[Need]:
    """Each step as bounds on the model's variables: its alternative used and its class counts exactly,
    or, for a merged group, its running totals at least (the group's later claims draw from it too)."""
    running = Counter(drawn)
    needs: list[Need] = []
    for step in steps:
        takes = m.takes(step.alt)
        counts = Counter(m.class_of[p.device] for p in step.picks)
        if m.is_merged(step.alt):
            for k, count in counts.items():
                running[takes[k].index] += count
            needs.append([(takes[k], running[takes[k].index], False) for k in counts])
            by_label = m.label_counts(step.alt)
            if by_label and step.picks:  # one more claim of the group under the label of its devices
                claims = by_label[m.class_of[step.picks[0].device]]
                running[claims.index] += 1
                needs[-1].append((claims, running[claims.index], False))
        else:
            needs.append(
                [(m.use(alt), int(alt is step.alt), True) for alt in _request(step).alternatives]
                + [(var, counts[k], True) for k, var in takes.items()]
            )
    return needs


def _step_values(m: AllocationModel, step: GuessStep) -> dict[int, int]:
    """The step as CP-SAT values, for the hint (a merged group's totals are left to the last solution)."""
    if m.is_merged(step.alt):
        return {}
    taken = Counter(m.class_of[p.device] for p in step.picks)
    values = {m.use(alt).index: int(alt is step.alt) for alt in _request(step).alternatives}
    for alt in _request(step).alternatives:
        for k, var in m.takes(alt).items():
            values[var.index] = taken[k] if alt is step.alt else 0
    return values


def _shown(values: dict[int, int], needs: Sequence[Need]) -> int:
    """How many leading steps the solution ``values`` takes as they are."""
    for i, need in enumerate(needs):
        for var, value, exactly in need:
            got = values.get(var.index, 0)
            if got != value if exactly else got < value:
                return i
    return len(needs)


def _literal(stages: Stages, step: GuessStep, need: Need) -> cp_model.IntVar:
    """A literal that, assumed, makes the model take the step."""
    literal = stages.model.new_bool_var(f"guess[{step.plan.label}/{step.alt.result_name}]")
    for var, value, exactly in need:
        if value or not exactly:  # the zeros follow from the request's own constraints
            stages.model.add(var == value if exactly else var >= value).only_enforce_if(literal)
    return literal


def _request(step: GuessStep) -> RequestPlan:
    return step.plan.requests[step.alt.request]


def first_fit_hint(m: AllocationModel) -> dict[int, int]:
    """The depth-first side's guess without backtracking (:func:`first_fit_fill`), as CP-SAT values: each
    take variable of an alternative the guess uses is hinted (0 where no pick is in its class), and the
    picks add up (a merged group's claims share its variables). Counted per pick, not per class and claim."""
    values: dict[int, int] = {}
    for picks in first_fit_fill(m.inv, m.plans).values():
        record = m.record(picks[0].alt) if picks else None
        if record is None:
            continue
        if record.use.index not in values:
            values[record.use.index] = 1
            values.update((var.index, 0) for var in record.takes.values())
        for pick in picks:
            index = record.takes[m.class_of[pick.device]].index
            values[index] += 1
        by_label = m.label_counts(picks[0].alt)
        if by_label:
            claims = by_label[m.class_of[picks[0].device]]
            values[claims.index] = values.get(claims.index, 0) + 1
    return values
