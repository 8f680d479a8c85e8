"""Why claims cannot be allocated: the funnel of candidates, and a minimal conflict of rule instances.

Kubernetes answers "cannot allocate all claims". drasat answers in two steps:

1. **The funnel**, per request and alternative: how many devices the node offers it, and
   what removed the others (class or request selector, node selection, pools, taints,
   devices in use, ...), with up to three device names per reason — the exclusion
   reasons candidate selection keeps. A request none of whose alternatives has the
   devices it needs is the cause, and nothing more needs to be said.
2. **The conflict**, when every request has enough candidates on its own: each DRA rule
   instance of the CP-SAT model (one device's exclusivity, one constraint of one claim,
   one counter set, one device's capacity) carries an assumption literal. CP-SAT names a
   sufficient set of them for infeasibility; that set is then shrunk one member at a
   time until dropping any member makes the rest feasible — a minimal conflict.

Nothing here changes what ``allocate`` decides; it reads the same plans and model.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from drasat.models.errors import SolveTimeout

from .cel import SelectorEvaluator
from .claims import plan_claims
from .inventory import Inventory, build_inventory
from .plan import Alternative, ClaimPlan
from .problem import Problem

NAMED = 3  # devices named per funnel step


@dataclass(frozen=True)
class Step:
    """One reason devices were removed from an alternative's candidates."""

    reason: str
    removed: int
    devices: list[str]


@dataclass(frozen=True)
class Funnel:
    """One alternative of one request: what the node offers it, and what it needs."""

    claim: str
    request: str
    needs: int | str  # a count, or "all" for allocationMode All
    candidates: int
    steps: list[Step]
    blocked: str = ""

    @property
    def short(self) -> bool:
        return bool(self.blocked) or (isinstance(self.needs, int) and self.candidates < self.needs)


@dataclass
class Explanation:
    """The whole answer: whether the claims fit, the funnel, and a minimal conflict when they do not."""

    feasible: bool
    funnel: list[Funnel]
    short_requests: list[str] = field(default_factory=list)   # requests no alternative of which can be met
    conflict: list[str] = field(default_factory=list)         # rule instances, in words
    conflict_rules: list[dict[str, Any]] = field(default_factory=list)  # the same as data

    def summary(self) -> list[str]:
        """The explanation in a few lines (``solve -v``, ``Unschedulable.reasons``): the alternatives
        that fall short, then the cause or the conflict."""
        lines = []
        for f in self.funnel:
            if f.short:
                why = f.blocked or "; ".join(f"{s.removed} {s.reason}" for s in f.steps[:3]) or "nothing matches"
                lines.append(f"claim {f.claim}, request {f.request}: {f.candidates} candidate(s), needs {f.needs}: "
                             f"{why}")
        if self.short_requests:
            lines.append("cause: too few candidates for " + "; ".join(self.short_requests))
        elif self.conflict:
            lines.append("every request has candidates enough; these cannot all hold together: "
                         + "; ".join(self.conflict))
        elif not self.feasible:
            lines.append("every request has candidates enough on its own: together they conflict "
                         "(`drasat explain` names the rules that do)")
        return lines

    def to_data(self) -> dict[str, Any]:
        return {"feasible": self.feasible, "shortRequests": self.short_requests, "conflict": self.conflict_rules,
                "funnel": [{"claim": f.claim, "request": f.request, "needs": f.needs, "candidates": f.candidates,
                            "blocked": f.blocked or None,
                            "removed": [{"reason": s.reason, "count": s.removed, "devices": s.devices}
                                        for s in f.steps]} for f in self.funnel]}


def explain(problem: Problem, *, evaluator: SelectorEvaluator | None = None, time_limit: float = 60.0) -> Explanation:
    """Explain ``problem``: its funnel, and (when every request has candidates enough) a minimal conflict."""
    deadline = time.monotonic() + time_limit
    inv = build_inventory(problem)
    plans = plan_claims(problem, inv, evaluator or SelectorEvaluator(), deadline=deadline)
    funnel, short = funnel_of(inv, plans)
    if short:
        return Explanation(False, funnel, short_requests=short)
    from .model import build_model  # OR-Tools loads only when needed

    model = build_model(inv, plans)
    conflict = _minimal_conflict(model, deadline)
    if conflict is None:
        return Explanation(True, funnel)
    words = [a.meaning for a in conflict] or ["the requests themselves: together they need more devices than "
                                              "these alternatives offer, or more than 32 for one claim"]
    data = [{"rule": a.rule, "meaning": a.meaning, **{k: v for k, v in (("claim", _claim(plans, a.claim)),
            ("constraint", a.constraint), ("counterSet", "/".join(a.counter_set) if a.counter_set else None))
            if v is not None}} for a in conflict]
    return Explanation(False, funnel, conflict=words, conflict_rules=data)


def funnel_of(inv: Inventory, plans: list[ClaimPlan]) -> tuple[list[Funnel], list[str]]:
    """Every alternative's funnel, and the requests none of whose alternatives has devices enough."""
    by_request = [(plan, req, [_funnel(inv, plan, alt) for alt in req.alternatives])
                  for plan in plans for req in plan.requests]
    funnel = [f for _, _, alternatives in by_request for f in alternatives]
    short = [f"claim {plan.label}, request {req.name}" for plan, req, alternatives in by_request
             if all(f.short for f in alternatives)]
    return funnel, short


def _claim(plans: list[ClaimPlan], index: int | None) -> str | None:
    return plans[index].label if index is not None else None


def _funnel(inv: Inventory, plan: ClaimPlan, alt: Alternative) -> Funnel:
    by_reason: dict[str, list[str]] = defaultdict(list)
    for device, reason in alt.excluded.items():
        by_reason[reason].append(inv.devices[device].label())
    steps = [Step(reason, len(devices), sorted(devices)[:NAMED])
             for reason, devices in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0]))]
    needs: int | str = "all" if alt.mode == "All" else alt.count
    return Funnel(plan.label, alt.result_name, needs, len(alt.candidates), steps, alt.blocked)


def _minimal_conflict(model: Any, deadline: float) -> list[Any] | None:
    """None when every rule instance can hold together; else a minimal set of them that cannot."""
    assumptions = list(model.assumptions)
    core = _core(model, assumptions, deadline)
    if core is None:
        return None
    for member in list(core):  # deletion: keep a member only if the rest would be feasible without it
        trial = [a for a in core if a is not member]
        smaller = _core(model, trial, deadline)
        if smaller is not None:
            core = [a for a in trial if a in smaller]
    return core


def _core(model: Any, assumptions: list[Any], deadline: float) -> list[Any] | None:
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
