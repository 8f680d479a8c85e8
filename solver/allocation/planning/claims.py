"""Stage 2 (per claim): check each claim as Kubernetes does before searching, and plan its alternatives.

Errors here are the ones Kubernetes' allocator returns before any search — disabled
features in use, unknown classes, unsupported modes, the 32-device claim limit —
with its exact wording, because users grep for it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from drasat.models.errors import AllocationError, Location, SelectorError, SolveTimeout
from drasat.models.resource import DeviceSubRequest, ExactDeviceRequest, ResourceClaim
from drasat.solver.allocation.frozen import maker
from drasat.solver.allocation.problem import Problem, claim_key
from drasat.solver.allocation.rules.matching import constraint_attribute
from drasat.solver.cel import CelCompileError, SelectorEvaluator

from .candidates import StaticChecks, evaluate_all, evaluate_derived, evaluate_exact
from .inventory import Inventory
from .plan import MAX_RESULTS, Alternative, Candidates, ClaimPlan, ConstraintPlan, RequestPlan, body_field

__all__ = [
    "MAX_RESULTS",
    "ClaimPlan",
    "ConstraintPlan",
    "RequestPlan",
    "constraint_attribute",
    "plan_claims",
]


def plan_claims(
    problem: Problem, inv: Inventory, ev: SelectorEvaluator, *, deadline: float | None = None
) -> list[ClaimPlan]:
    """Every claim checked and planned, in order; the first problem aborts, as upstream.

    Raises SolveTimeout when selector evaluation passes ``deadline`` (a ``time.monotonic()`` value)."""
    shared = _SharedCandidates(inv, ev, deadline)
    plans = []  # plain loops here and below: a small call plans one claim and request, and comprehensions cost more
    for i, claim in enumerate(problem.claims):
        plans.append(_plan_claim(problem, inv, shared, i, claim))
    return plans


class _SharedCandidates:
    """Alternatives that ask the same of the same devices share one candidate evaluation.

    Sixty claims for "one GPU of class X" then cost one pass over the devices, not sixty. The first alternative's
    is keyed only when a second one asks: a small call has one, and nothing to share it with.
    """

    def __init__(self, inv: Inventory, ev: SelectorEvaluator, deadline: float | None = None) -> None:
        self.inv, self.ev, self.deadline = inv, ev, deadline
        self.checks: StaticChecks | None = None  # made at the first evaluation: a call refused before has none
        self.done: dict[tuple, Candidates] = {}
        self.first: tuple[Alternative, Candidates] | None = None  # the first alternative's, not keyed yet

    def fill(self, alt: Alternative) -> Alternative:
        """``alt`` with its candidates (an All-mode alternative counts its whole list)."""
        if self.first is None and not self.done:
            found = self._evaluate(alt)
            self.first = (alt, found)
            return alt.fill(found)
        if self.first is not None:
            self.done[_share_key(self.first[0])] = self.first[1]
            self.first = None
        key = _share_key(alt)
        known = self.done.get(key)
        if known is not None and not known.errors:  # error texts name the claim: evaluated again for this one
            return alt.fill(known)
        found = self.done[key] = self._evaluate(alt)
        return alt.fill(found)

    def _evaluate(self, alt: Alternative) -> Candidates:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SolveTimeout("the time limit was reached while evaluating selectors (raise --timeout)")
        if self.checks is None:
            self.checks = StaticChecks(self.inv)
        return (evaluate_all if alt.mode == "All" else evaluate_exact)(self.inv, self.ev, alt, self.checks)


def _share_key(alt: Alternative) -> tuple:
    """What candidate selection reads of an alternative: two of the same key have the same candidates."""
    return (
        alt.mode,
        alt.device_class.metadata.name,
        alt.selectors,
        alt.admin,
        tuple(sorted((k, q.value) for k, q in alt.capacity.items())) if alt.capacity else (),
        tuple(t.model_dump_json() for t in alt.tolerations) if alt.tolerations else (),
    )


def _plan_claim(problem: Problem, inv: Inventory, ev: _SharedCandidates, index: int, claim: ResourceClaim) -> ClaimPlan:
    label = claim_key(claim)
    requests = []
    for r, request in enumerate(claim.spec.devices.requests):
        requests.append(_plan_request(problem, inv, ev, index, label, r, request))
    derives = _check_size(label, requests)
    constraints = _constraint_plans(label, claim)
    plan = _claim_plan(index, claim, label, tuple(requests), tuple(constraints))  # by position, in field order
    return _with_derived(plan, inv, ev) if derives else plan


def _check_size(label: str, requests: list[RequestPlan]) -> bool:
    """AllocationError when even the fewest devices each request may take exceed the claim's limit, as
    Kubernetes checks before searching; and whether any alternative derives attributes."""
    minimum, derives = 0, False
    for req in requests:
        fewest = req.alternatives[0].count
        for alt in req.alternatives:
            if alt.count < fewest:
                fewest = alt.count
            if alt.derived_specs:
                derives = True
        minimum += fewest
    if minimum > MAX_RESULTS:
        raise AllocationError(
            f"claim {label}: number of requested devices {minimum} exceeds the claim limit of {MAX_RESULTS}"
        )
    return derives


def _constraint_plans(label: str, claim: ResourceClaim) -> list[ConstraintPlan]:
    """The claim's constraints; one that names no attribute is Kubernetes' allocation error."""
    constraints: list[ConstraintPlan] = []
    for i, c in enumerate(claim.spec.devices.constraints):
        if c.match_attribute:
            constraints.append(ConstraintPlan(i, "match", c.match_attribute, frozenset(c.requests)))
        elif c.distinct_attribute:
            constraints.append(ConstraintPlan(i, "distinct", c.distinct_attribute, frozenset(c.requests)))
        else:
            raise AllocationError(f"claim {label}, constraint #{i}: empty constraint (unsupported constraint type?)")
    return constraints


def _with_derived(plan: ClaimPlan, inv: Inventory, ev: _SharedCandidates) -> ClaimPlan:
    """The plan with each deriving alternative's attributes evaluated on its candidates (once each derived
    attribute is known to feed a constraint)."""
    for alt in plan.alternatives():
        if alt.derived_specs:
            _check_derived_used(plan, alt)
    return replace(
        plan,
        requests=tuple(
            replace(
                req,
                alternatives=tuple(
                    replace(alt, derived=evaluate_derived(inv, ev.ev, alt)) if alt.derived_specs else alt
                    for alt in req.alternatives
                ),
            )
            for req in plan.requests
        ),
    )


# Built without the frozen dataclasses' __init__ (frozen.maker): one per claim and request on every call.
_claim_plan, _request_plan = maker(ClaimPlan), maker(RequestPlan)
MAX_DERIVED = 32


def _check_derived_used(plan: ClaimPlan, alt: Alternative) -> None:
    """Each derived attribute must feed a constraint that applies to its request (the seed's rule)."""
    where = f"claim {plan.label}, request {alt.own_name}"
    if len(alt.derived_specs) > MAX_DERIVED:
        raise AllocationError(f"{where}: {len(alt.derived_specs)} derived attributes, at most {MAX_DERIVED} allowed")
    for spec in alt.derived_specs:
        if not any(c.attribute == spec.name and c.applies(alt) for c in plan.constraints):
            raise AllocationError(
                f"{where}: derived attribute {spec.name} is not used by any matchAttribute "
                "or distinctAttribute constraint that applies to this request"
            )


def _plan_request(
    problem: Problem, inv: Inventory, ev: _SharedCandidates, claim: int, label: str, r: int, request
) -> RequestPlan:
    features = problem.features
    has_sub = bool(request.first_available)
    if has_sub and not features.prioritized_list:
        raise AllocationError(
            f"claim {label}, request {request.name}: has subrequests, but the DRAPrioritizedList feature is disabled"
        )
    if not has_sub and request.exactly is None:
        raise AllocationError(
            f"claim {label}, request {request.name}: unsupported request type (neither exactly nor firstAvailable)"
        )
    if not features.consumable_capacity:
        if not has_sub and request.exactly.capacity is not None:
            raise AllocationError(
                f"claim {label}, request {request.name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        for sub in request.first_available:
            if sub.capacity is not None:
                raise AllocationError(
                    f"claim {label}, subrequest {sub.name}: has capacity requests, "
                    "but the DRAConsumableCapacity feature is disabled"
                )
    bodies: Sequence[ExactDeviceRequest | DeviceSubRequest] = request.first_available or [request.exactly]
    if len(bodies) == 1:
        alternatives: tuple[Alternative, ...] = (
            _alternative(problem, inv, ev, claim, label, r, request.name, 0, bodies[0], has_sub),
        )
    else:
        alternatives = tuple(
            [
                _alternative(problem, inv, ev, claim, label, r, request.name, rank, body, has_sub)
                for rank, body in enumerate(bodies)
            ]
        )
    return _request_plan(r, request.name, alternatives, has_sub)  # by position, in field order


def _alternative(
    problem: Problem,
    inv: Inventory,
    ev: _SharedCandidates,
    claim: int,
    label: str,
    r: int,
    request_name: str,
    rank: int,
    body,
    has_sub: bool,
) -> Alternative:
    """One alternative, checked and with its candidates. Error wording (``where``) is built only for an
    error: most calls have none, and a small call makes one of these per request."""
    sub_name = body.name if has_sub else None
    features = problem.features
    device_class, admin = _checked_request(problem, label, sub_name or request_name, body, (r, rank, has_sub))
    _compile_selectors(ev.ev, device_class, body.selectors, label)
    mode = body.allocation_mode or "ExactCount"
    if mode not in ("ExactCount", "All"):
        raise AllocationError(f"{_where(label, sub_name or request_name)}: unsupported count mode {mode}")
    # With the DRADerivedAttributes gate off the API server drops the field.
    derived = tuple(body.derived_attributes) if features.derived_attributes else ()
    alt = Alternative.planned(
        claim,
        r,
        rank,
        request_name,
        sub_name,
        label,
        device_class,
        mode,  # by position
        body.count if body.count is not None else 1,
        bool(admin),
        tuple(body.tolerations),
        dict(body.capacity.requests) if body.capacity else {},
        tuple([s.cel.expression for s in body.selectors]) if body.selectors else (),
        derived,
    )
    if mode == "All":
        _check_pools_for_all(inv, _where(label, sub_name or request_name))
    return ev.fill(alt)


def _checked_request(problem: Problem, label: str, name: str, body, at: tuple[int, int, bool]) -> tuple[Any, Any]:
    """The request's (or subrequest's) device class and admin access, after the checks Kubernetes' allocator
    makes first, in its order and words: selectors have CEL, admin access only with its gate, a class named
    and found. ``at``: the request's index, the subrequest's, and whether it is one (for the field named)."""
    has_sub = at[2]
    for i, sel in enumerate(body.selectors):
        if sel.cel is None:
            raise AllocationError(
                f"{_where(label, name)}, selector #{i}: CEL expression empty (unsupported selector type?)"
            )
    # Subrequests have no adminAccess: asked only of an exact request (a missing attribute of a pydantic
    # model is a raised and caught AttributeError, several microseconds per subrequest).
    admin = None if has_sub else body.admin_access
    if admin is not None and not problem.features.admin_access:
        raise AllocationError(f"{_where(label, name)}: admin access is requested, but the feature is disabled")
    class_name = body.device_class_name
    if not class_name:
        raise AllocationError(f"{_where(label, name)}: missing device class name (unsupported request type?)")
    device_class = problem.device_class(class_name)
    if device_class is None:
        raise AllocationError(
            f"{_where(label, name)}: could not retrieve device class "
            f'{class_name}: deviceclass.resource.k8s.io "{class_name}" not found',
            Location(kind="ResourceClaim", name=label, path=f"{body_field(*at)}.deviceClassName"),
        )
    return device_class, admin


def _where(label: str, request: str) -> str:
    return f"claim {label}, request {request}"


def _compile_selectors(ev: SelectorEvaluator, device_class, selectors, label: str) -> None:
    """A selector that does not compile makes the input invalid, whether or not the search
    would reach a device it is evaluated on (Kubernetes only notices when it does). Those compiled before (on
    every call but the first) are known by a look-up; any other sends all through :func:`_compile_each`."""
    known = ev.compiled
    for listed in (device_class.spec.selectors, selectors):
        for selector in listed:
            cel = selector.cel
            if cel is None or cel.expression not in known:
                _compile_each(ev, device_class, selectors, label)
                return


def _compile_each(ev: SelectorEvaluator, device_class, selectors, label: str) -> None:
    """Each selector compiled in turn; the first that does not is the error, worded for its owner."""
    compile_ = ev.compile
    for of_class, listed in ((True, device_class.spec.selectors), (False, selectors)):
        for i, selector in enumerate(listed):
            if selector.cel is None:
                raise AllocationError(
                    f"{_owner(of_class, device_class, label)}: selector #{i}: CEL expression "
                    "empty (unsupported selector type?)"
                )
            try:
                compile_(selector.cel.expression)
            except CelCompileError as exc:
                raise SelectorError(
                    f"{_owner(of_class, device_class, label)}: selector #{i}: CEL compile error: {exc.detail}"
                ) from None


def _owner(of_class: bool, device_class, label: str) -> str:
    """Whose selector an error is about, worded only for the error."""
    return f"class {device_class.name}" if of_class else f"claim {label}"


def _check_pools_for_all(inv: Inventory, where: str) -> None:
    for pool in inv.pools:
        if pool.state == "incomplete":
            raise AllocationError(
                f"{where}: asks for all devices, but resource pool {pool.label()} is currently being updated"
            )
        if pool.state == "invalid":
            raise AllocationError(
                f"{where}: asks for all devices, but resource pool {pool.label()} is currently invalid"
            )
