"""What would make failing claims fit, where finding out is cheap.

Three kinds of fix. The CP-SAT model narrows the search; every fix offered is then confirmed by
``allocate`` itself on the changed problem, so a fix never "fits" where Kubernetes' search would
meet a selector error or another refusal the model does not carry:

* **a smaller count**: the largest count of one request that fits with everything else as
  it is, by binary search over the count (a handful of CP-SAT solves per request);
* **one claim released**: an allocated claim whose devices, once free, let the claims fit —
  tried for the few claims holding the devices the failing requests lost, within the deadline;
* **a feature gate**: a gate the funnel names (it dropped a field, a slice or a pool) turned on.

Each try is bounded (:data:`MAX_TRIES`) and shares the explanation's deadline: running out of
time ends the search for fixes, never the explanation.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from drasat.models.errors import AllocationError, DrasatError, EvaluationError, SolveTimeout, Unschedulable
from drasat.models.resource import ResourceClaim
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import Inventory, build_inventory
from drasat.solver.allocation.planning.plan import ClaimPlan, RequestPlan
from drasat.solver.allocation.problem import Problem, claim_key
from drasat.solver.cel import SelectorEvaluator

from .funnel import Funnel

MAX_TRIES = 6  # allocated claims tried for release
MAX_COUNTS = 6  # requests whose largest fitting count is searched for
SECONDS = 10.0  # at most this long for all fixes together: they must not hold the explanation up


@dataclass(frozen=True)
class Fix:
    """One change that makes the claims fit: what kind, in words, and the change as data."""

    kind: str  # "count" | "release" | "gate"
    text: str
    data: dict[str, Any]

    def to_data(self) -> dict[str, Any]:
        """The fix as JSON-ready data: its kind, its words, and the change."""
        return {"kind": self.kind, "text": self.text, **self.data}


Feasible = Callable[[Inventory, list[ClaimPlan], float], bool]  # (inventory, plans, deadline)


def find_fixes(
    problem: Problem,
    inv: Inventory,
    plans: list[ClaimPlan],
    funnel: list[Funnel],
    involved: set[tuple[int, int]],
    ev: SelectorEvaluator,
    feasible: Feasible,
    deadline: float,
    hinted: frozenset[str] = frozenset(),
) -> list[Fix]:
    """Fixes for the failing requests ``involved`` (claim index, request index), as many as time allows;
    ``hinted``: feature gates the conflict names, tried beside those the funnel names."""
    deadline = min(deadline, time.monotonic() + SECONDS)
    fixes: list[Fix] = []
    searches: list[Callable[[], list[Fix]]] = [
        lambda: _counts(problem, inv, plans, involved, ev, feasible, deadline),
        lambda: _releases(problem, inv, funnel, ev, feasible, deadline),
        lambda: _gates(problem, funnel, hinted, ev, feasible, deadline),
    ]
    for search in searches:
        if time.monotonic() >= deadline:
            break
        try:
            fixes.extend(search())
        except DrasatError:
            break  # out of time (or a changed problem Kubernetes would refuse): keep what was found
    return fixes


def _counts(
    problem: Problem,
    inv: Inventory,
    plans: list[ClaimPlan],
    involved: set[tuple[int, int]],
    ev: SelectorEvaluator,
    feasible: Feasible,
    deadline: float,
) -> list[Fix]:
    fixes = []
    countable = [(claim, request) for claim, request in sorted(involved) if _countable(plans[claim].requests[request])]
    for claim, request in countable[:MAX_COUNTS]:
        req = plans[claim].requests[request]
        asked = req.alternatives[0].count
        low, high = 0, asked - 1  # the largest count known to fit (0: none yet), the largest still possible
        while low < high and time.monotonic() < deadline:
            middle = (low + high + 1) // 2
            if feasible(inv, _with_count(plans, claim, request, middle), deadline):
                low = middle
            else:
                high = middle - 1
        if low and low == high and _allocates(_with_claim_count(problem, plans[claim], req.name, low), ev, deadline):
            label = plans[claim].label
            fixes.append(
                Fix(
                    "count",
                    f"claim {label}, request {req.name}: count {low} fits (it asks {asked})",
                    {"claim": label, "request": req.name, "count": low, "asked": asked},
                )
            )
    return fixes


def _countable(req: RequestPlan) -> bool:
    """A request of one ExactCount shape asking for more than one device (a smaller count can exist)."""
    (alt, *others) = req.alternatives
    return not others and alt.mode != "All" and alt.count > 1


def _with_claim_count(problem: Problem, plan: ClaimPlan, request: str, count: int) -> Problem:
    """``problem`` with one request of one claim asking ``count`` devices (the claim is copied)."""
    claim = plan.claim.model_copy(deep=True)
    for req in claim.spec.devices.requests:
        if req.name == request and req.exactly is not None:
            req.exactly.count = count
    claims = [claim if i == plan.index else c for i, c in enumerate(problem.claims)]
    return replace(problem, claims=claims)


def _with_count(plans: list[ClaimPlan], claim: int, request: int, count: int) -> list[ClaimPlan]:
    plan = plans[claim]
    req = plan.requests[request]
    changed = replace(req, alternatives=tuple(replace(alt, count=count) for alt in req.alternatives))
    requests = tuple(changed if r.index == request else r for r in plan.requests)
    return [replace(plan, requests=requests) if p.index == claim else p for p in plans]


def _releases(
    problem: Problem, inv: Inventory, funnel: list[Funnel], ev: SelectorEvaluator, feasible: Feasible, deadline: float
) -> list[Fix]:
    """The first allocated claim whose release makes it fit: those the funnels name as holding devices
    first (most devices first), then others holding anything in this node's pools (counters, shares)."""
    named: Counter[str] = Counter()
    for f in funnel:
        for step in f.steps:
            if step.holder:
                named[step.holder] += step.removed
    pools = {pool.key for pool in inv.pools}
    held = {claim_key(c): c for c in problem.allocated if _holds_in(c, pools)}
    order = [label for label, _ in named.most_common() if label in held]
    order += [label for label in held if label not in named]  # counters and shared capacity name no holder
    for label in order[:MAX_TRIES]:
        if time.monotonic() >= deadline:
            break
        freed = replace(problem, allocated=[c for c in problem.allocated if claim_key(c) != label])
        if _fits(freed, ev, feasible, deadline):
            return [Fix("release", f"releasing claim {label} (deallocating it) makes them fit", {"claim": label})]
    return []


def _holds_in(claim: ResourceClaim, pools: set[tuple[str, str]]) -> bool:
    allocation = claim.status.allocation if claim.status else None
    return allocation is not None and any((r.driver, r.pool) in pools for r in allocation.devices.results)


def _gates(
    problem: Problem,
    funnel: list[Funnel],
    hinted: frozenset[str],
    ev: SelectorEvaluator,
    feasible: Feasible,
    deadline: float,
) -> list[Fix]:
    gates = sorted(
        {s.gate for f in funnel for s in f.steps if s.gate}
        | hinted
        | {"DRADerivedAttributes" for f in funnel if f.notes}
    )
    fixes = []
    for gate in gates:
        if problem.features[gate] or time.monotonic() >= deadline:
            continue
        fits = _fits(replace(problem, features=problem.features.with_gates(**{gate: True})), ev, feasible, deadline)
        text = (
            f"turning on the {gate} feature gate (--feature-gates {gate}=true) makes them fit"
            if fits
            else f"the {gate} feature gate (disabled) removes devices or fields here; turning it on alone is not enough"
        )
        fixes.append(Fix("gate", text, {"featureGate": gate, "fits": fits}))
    return fixes


def _fits(problem: Problem, ev: SelectorEvaluator, feasible: Feasible, deadline: float) -> bool:
    """The model says the changed problem fits, and ``allocate`` agrees."""
    inv = build_inventory(problem)
    return feasible(inv, plan_claims(problem, inv, ev, deadline=deadline), deadline) and _allocates(
        problem, ev, deadline
    )


def _allocates(problem: Problem, ev: SelectorEvaluator, deadline: float) -> bool:
    """Whether ``allocate`` finds the changed problem an allocation (a refusal of any kind: no);
    running out of time is raised, which ends the search for fixes."""
    from drasat.solver.allocation.api import allocate

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise SolveTimeout("no time left to confirm a fix")
    try:
        allocate(problem, evaluator=ev, time_limit=remaining)
    except (Unschedulable, AllocationError, EvaluationError):
        return False
    return True
