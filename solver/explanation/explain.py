"""Why claims cannot be allocated: the funnel of candidates, a minimal conflict, and what would fix it.

Kubernetes answers "cannot allocate all claims". drasat answers in three steps:

1. **The funnel** (:mod:`.funnel`), per request and alternative: how many devices the node
   offers it, and what removed the others, naming the selector, the node selection, the pool,
   the taint, the claim holding a device, the counter left, the gate. A request none of whose
   alternatives has the devices it needs is the cause, and nothing more needs to be said.
2. **The conflicts**, when every request has enough candidates on its own: each DRA rule
   instance of the CP-SAT model (one device's exclusivity, one constraint of one claim,
   one counter set, one device's capacity) carries an assumption literal. CP-SAT names a
   sufficient set of them for infeasibility; that set is then shrunk one member at a
   time until dropping any member makes the rest feasible — a minimal conflict, each member
   said with its numbers (:mod:`.conflict_detail`). Its members relaxed, the next conflict is
   searched for, until the rest holds: every independent conflict is named, and "dropping this
   lets the claims fit" is said only where a solve showed it (:mod:`.conflicts`, :mod:`.wording`).
3. **What would fix it** (:mod:`.fixes`): the largest count that fits, the one allocated
   claim whose release makes it fit, the feature gate to turn on.

A feasible input is said to be so, with the devices ``allocate`` would choose. Nothing here
changes what ``allocate`` decides; it reads the same plans and model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from drasat.models.errors import AllocationError, DrasatError, EvaluationError, SolveTimeout, Unschedulable
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import Inventory, build_inventory
from drasat.solver.allocation.planning.plan import ClaimPlan
from drasat.solver.allocation.problem import Problem
from drasat.solver.allocation.rules.base import Assumption
from drasat.solver.cel import SelectorEvaluator

from .conflict_detail import detail
from .conflicts import Conflicts, core, find_conflicts
from .fixes import Fix, find_fixes
from .funnel import Funnel, Removal, funnel_of, gate_named
from .wording import conflict_blocks, conflict_closing, conflict_intro

__all__ = [
    "Choice",
    "Conflict",
    "ConflictRule",
    "Explanation",
    "Fix",
    "Funnel",
    "Removal",
    "explain",
    "explain_funnel",
    "funnel_of",
]

OWN_LIMIT = (
    "the requests themselves: together they need more devices than these alternatives offer, "
    "or more than 32 for one claim"
)


@dataclass(frozen=True)
class ConflictRule:
    """One rule instance of a minimal conflict: which rule, what it says, its numbers, and whose it is."""

    rule: str
    meaning: str
    detail: str = ""
    claim: str | None = None
    constraint: int | None = None
    counter_set: str | None = None
    requests: tuple[str, ...] = ()  # the requests a constraint covers
    alone: bool | None = None  # dropping it alone (every other rule instance kept) lets the claims fit; None: unchecked

    @property
    def sentence(self) -> str:
        """The rule instance and its numbers, in one sentence."""
        return f"{self.meaning}: {self.detail}" if self.detail else self.meaning

    def to_data(self) -> dict[str, Any]:
        """The rule instance as JSON-ready data, with the ids of what it belongs to."""
        ids = {
            "claim": self.claim,
            "constraint": self.constraint,
            "counterSet": self.counter_set,
            "requests": list(self.requests) or None,
            "droppingAloneFits": self.alone,
        }
        return {
            "rule": self.rule,
            "meaning": self.meaning,
            **({"detail": self.detail} if self.detail else {}),
            **{k: v for k, v in ids.items() if v is not None},
        }


@dataclass(frozen=True)
class Conflict:
    """One independent conflict: rule instances that cannot hold together, whatever else is dropped."""

    rules: list[ConflictRule]
    minimal: bool = True  # False: time ran out while shrinking it (every member is still needed? unknown)

    def to_data(self) -> dict[str, Any]:
        """The conflict as JSON-ready data."""
        return {"rules": [rule.to_data() for rule in self.rules], "minimal": self.minimal}


@dataclass(frozen=True)
class Choice:
    """One device a feasible input would get, as ``drasat solve`` would choose it."""

    claim: str
    request: str
    device: str

    def to_data(self) -> dict[str, str]:
        """The device as JSON-ready data."""
        return {"claim": self.claim, "request": self.request, "device": self.device}


@dataclass
class Explanation:
    """The whole answer: whether the claims fit, the funnel, a minimal conflict, fixes, or the choice."""

    feasible: bool
    funnel: list[Funnel]
    short: list[tuple[str, str]] = field(default_factory=list)  # (claim, request): no alternative can be met
    conflicts: list[Conflict] = field(default_factory=list)  # independent: each must be resolved
    complete: bool = True  # every independent conflict found: dropping all their members lets the claims fit
    stopped: str = ""  # why the search for conflicts ended before every one was surely found
    together: list[ConflictRule] = field(default_factory=list)  # one per conflict, dropped together: fits (checked)
    fixes: list[Fix] = field(default_factory=list)
    choice: list[Choice] = field(default_factory=list)  # feasible: the devices allocate picks
    exact: bool = True  # False: time ran out before the choice was surely the first-fit one
    timed_out: str = ""  # which search ran out of time, in words ("": none did)

    @property
    def short_requests(self) -> list[str]:
        """The requests no alternative of which can be met, each in words ("claim ns/name, request r")."""
        return [f"claim {claim}, request {request}" for claim, request in self.short]

    @property
    def conflict_rules(self) -> list[ConflictRule]:
        """The rule instances of every conflict, in order."""
        return [rule for conflict in self.conflicts for rule in conflict.rules]

    @property
    def conflict(self) -> list[str]:
        """The conflicts' rule instances, each in one sentence."""
        return [rule.sentence for rule in self.conflict_rules]

    @property
    def minimal(self) -> bool:
        """Whether every conflict was shrunk to a minimal one (time may run out first)."""
        return all(conflict.minimal for conflict in self.conflicts)

    def summary(self) -> list[str]:
        """The explanation in a few lines (``solve -v``, ``Unschedulable.reasons``): the alternatives
        that fall short, then the cause or the conflict, then the fixes."""
        lines = []
        for f in self.funnel:
            if f.short:
                why = f.blocked or "; ".join(f"{s.removed} {s.reason}" for s in f.steps[:3]) or "nothing matches"
                lines.append(
                    f"claim {f.claim}, request {f.request}: {f.candidates} candidate(s), needs {f.needs}: {why}"
                )
            lines.extend(f"claim {f.claim}, request {f.request}: {note}" for note in f.notes)
        if self.short_requests:
            lines.append("cause: too few candidates for " + "; ".join(self.short_requests))
        elif self.conflict:
            lines.extend(line for line in [conflict_intro(self)] if line)
            lines.extend(f"{head}: " + "; ".join(members) for head, members in conflict_blocks(self))
            lines.extend(conflict_closing(self))
        elif self.timed_out:
            lines.append(self.timed_out)
        elif not self.feasible:
            lines.append(
                "every request has candidates enough on its own: together they conflict "
                "(`drasat explain` names the rules that do)"
            )
        lines.extend(f"fix: {fix.text}" for fix in self.fixes)
        return lines

    def to_data(self) -> dict[str, Any]:
        """The explanation as JSON-ready data (``drasat explain -o json``)."""
        return {
            "feasible": self.feasible,
            "shortRequests": [{"claim": c, "request": r} for c, r in self.short],
            "conflict": [rule.to_data() for rule in self.conflict_rules],
            "conflicts": [conflict.to_data() for conflict in self.conflicts],
            **({"conflictsComplete": self.complete} if self.conflicts else {}),
            **({"conflictsStopped": self.stopped} if self.stopped else {}),
            **({"dropTogether": [rule.meaning for rule in self.together]} if self.together else {}),
            "fixes": [fix.to_data() for fix in self.fixes],
            "choice": [c.to_data() for c in self.choice],
            "exact": self.exact,
            **({"timedOut": self.timed_out} if self.timed_out else {}),
            **({} if self.minimal else {"conflictMinimal": False}),
            "funnel": [f.to_data() for f in self.funnel],
        }


def explain(
    problem: Problem,
    *,
    evaluator: SelectorEvaluator | None = None,
    time_limit: float = 60.0,
    proven: Unschedulable | None = None,
) -> Explanation:
    """Explain ``problem``: its funnel, a minimal conflict when every request has candidates enough,
    fixes where cheap — or, when the claims fit, the devices they would get. ``proven``: the Unschedulable
    ``allocate`` raised for this very problem (``solve -v``, a library caller), so that it is not proved a
    second time: the error is only the verdict, the why is worked out here."""
    deadline = time.monotonic() + time_limit
    ev = evaluator or SelectorEvaluator()
    inv = build_inventory(problem)
    plans = plan_claims(problem, inv, ev, deadline=deadline)
    found = explain_funnel(problem, inv, plans, ev)
    involved = {(p.index, r.index) for p in plans for r in p.requests if (p.label, r.name) in found.short}
    try:
        refused = proven or _allocate(problem, found, ev, deadline)
    except SolveTimeout:
        found.timed_out = "time ran out before allocate decided whether the claims fit (raise --timeout)"
        return found
    if refused is None:
        found.short = []
        return found
    if not isinstance(refused, Unschedulable):
        raise refused  # Kubernetes' own error (a selector that fails on a device it reaches): solve's answer
    if not found.short_requests:
        from drasat.solver.allocation.cp_sat.model import build_model  # OR-Tools loads only when needed

        model = build_model(inv, plans)
        try:
            conflicts = find_conflicts(model, deadline)
        except SolveTimeout:
            found.timed_out = "the search for a minimal conflict ran out of time (raise --timeout)"
            return found
        if conflicts is None:
            raise refused  # not a matter of fitting: Kubernetes' own error, met mid-search
        _record(found, inv, plans, conflicts)
        involved = _involved(plans, [a for members in conflicts.cores for a in members])
    hinted = frozenset(gate for rule in found.conflict_rules if (gate := gate_named(rule.detail)))
    found.fixes = find_fixes(problem, inv, plans, found.funnel, involved, ev, _feasible_plans, deadline, hinted)
    return found


def explain_funnel(
    problem: Problem, inv: Inventory, plans: list[ClaimPlan], evaluator: SelectorEvaluator | None = None
) -> Explanation:
    """The funnel alone, for claims known not to fit (``allocate``'s failure: no extra solves)."""
    funnel, short = funnel_of(inv, plans, problem, evaluator)
    return Explanation(False, funnel, short=short)


def _allocate(problem: Problem, found: Explanation, ev: SelectorEvaluator, deadline: float) -> DrasatError | None:
    """Allocate as ``drasat solve`` would: None when the claims fit (``found`` then holds the choice),
    else the error that says they do not (Unschedulable, or an error Kubernetes' search meets)."""
    from drasat.solver.allocation.api import allocate

    try:
        answer = allocate(problem, evaluator=ev, time_limit=max(deadline - time.monotonic(), 0.001))
    except (Unschedulable, AllocationError, EvaluationError) as exc:
        return exc
    found.feasible, found.exact = True, answer.stats.exact
    found.choice = [
        Choice(label, r.request, f"{r.driver}/{r.pool}/{r.device}")
        for label, result in answer.results.items()
        for r in result.devices.results
    ]
    return None


def _record(found: Explanation, inv: Inventory, plans: list[ClaimPlan], conflicts: Conflicts) -> None:
    """The conflicts found, each member in words with what the solves confirmed about dropping it."""
    for members, minimal in zip(conflicts.cores, conflicts.minimal):
        rules = [_rule(inv, plans, a, conflicts.alone.get(a.literal.index)) for a in members]
        found.conflicts.append(Conflict(rules or [ConflictRule("requests", OWN_LIMIT)], minimal))
    found.complete, found.stopped = conflicts.complete, conflicts.stopped
    chosen = {a.literal.index for a in conflicts.together}
    found.together = [
        rule
        for members, conflict in zip(conflicts.cores, found.conflicts)
        for a, rule in zip(members, conflict.rules)
        if a.literal.index in chosen
    ]


def _rule(inv: Inventory, plans: list[ClaimPlan], a: Assumption, alone: bool | None = None) -> ConflictRule:
    counter_set = "/".join(a.counter_set) if a.counter_set else None
    claim = plans[a.claim].label if a.claim is not None else None
    requests: tuple[str, ...] = ()
    if a.claim is not None and a.constraint is not None:
        plan = plans[a.claim]
        covered = next(c for c in plan.constraints if c.index == a.constraint)
        requests = tuple(alt.result_name for alt in plan.alternatives() if covered.applies(alt))
    return ConflictRule(a.rule, a.meaning, detail(inv, plans, a), claim, a.constraint, counter_set, requests, alone)


def _involved(plans: list[ClaimPlan], conflict: list[Assumption]) -> set[tuple[int, int]]:
    """The requests a conflict touches: those of its claims (every claim when no member names one)."""
    claims = {a.claim for a in conflict if a.claim is not None} or {p.index for p in plans}
    return {(p.index, r.index) for p in plans if p.index in claims for r in p.requests}


def _feasible_plans(inv: Inventory, plans: list[ClaimPlan], deadline: float) -> bool:
    from drasat.solver.allocation.cp_sat.model import build_model

    model = build_model(inv, plans)
    return core(model, list(model.assumptions), deadline) is None
