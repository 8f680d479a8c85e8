"""The funnel: per request and alternative, the devices a node has, and what removed each one.

Candidate selection records one reason per excluded device, in Kubernetes' order of checks.
The funnel groups them, and makes the vague ones exact where it can: *which* selector refused
a device (the class's, naming the class, or the request's own), *which* node selection put it
elsewhere, *how much* of a counter is left. It adds the devices the inventory never held
(:mod:`.unavailable`: off-node slices, incomplete or invalid pools, slices a gate drops) that
the request's selectors would have taken, and notes a request field a feature gate dropped.
A request none of whose alternatives keeps the devices it needs is the cause of the failure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from drasat.models.errors import DrasatError
from drasat.models.quantity import Quantity
from drasat.models.resource import DeviceCapacity, DeviceTaintRule
from drasat.solver.allocation.features import DEFAULTS as GATES
from drasat.solver.allocation.planning.candidates import NOT_SELECTED
from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan
from drasat.solver.allocation.planning.rounding import consumed_amount, share_of, violates
from drasat.solver.allocation.rules.capacity import NO_CAPACITY
from drasat.solver.allocation.rules.reachability import OFF_NODE
from drasat.solver.allocation.rules.taints import taint_words, untolerated_taint
from drasat.solver.cel import SelectorEvaluator

from .unavailable import Unavailable, device_placement, unavailable_devices

if TYPE_CHECKING:
    from drasat.solver.allocation.problem import Problem

NAMED = 3  # devices named per funnel step
SHOWN = 72  # characters of a selector expression shown in a reason


@dataclass(frozen=True)
class Removal:
    """One reason devices were removed from an alternative's candidates, with up to :data:`NAMED` of them."""

    reason: str
    removed: int
    devices: list[str]
    gate: str | None = None  # a feature gate whose setting causes this step
    ids: tuple[tuple[str, str], ...] = ()  # what the reason names, as data: claim, counterSet, taintRule, taint

    @property
    def holder(self) -> str | None:
        """The allocated claim holding the removed devices, if that is the reason."""
        return dict(self.ids).get("claim")

    def to_data(self) -> dict[str, object]:
        """The step as JSON-ready data: the reason in words, and what it names as fields of their own."""
        return {
            "reason": self.reason,
            "count": self.removed,
            "devices": self.devices,
            **({"featureGate": self.gate} if self.gate else {}),
            **dict(self.ids),
        }


@dataclass(frozen=True)
class Funnel:
    """One alternative of one request: what the node offers it, what removed the rest, what it needs."""

    claim: str
    request: str
    needs: int | str  # a count, or "all" for allocationMode All
    candidates: int
    steps: list[Removal]
    blocked: str = ""
    notes: list[str] = field(default_factory=list)  # request fields a feature gate dropped
    candidate_devices: list[str] = field(default_factory=list)  # the first few candidates

    @property
    def offered(self) -> int:
        """Devices the node has that this funnel started from (candidates and every removed one)."""
        return self.candidates + sum(step.removed for step in self.steps)

    @property
    def short(self) -> bool:
        """Whether this alternative alone cannot be met, whatever else is allocated."""
        return bool(self.blocked) or (isinstance(self.needs, int) and self.candidates < self.needs)

    def to_data(self) -> dict[str, object]:
        """The funnel as JSON-ready data (every step, with its devices named)."""
        return {
            "claim": self.claim,
            "request": self.request,
            "needs": self.needs,
            "offered": self.offered,
            "candidates": self.candidates,
            "candidateDevices": self.candidate_devices,
            "blocked": self.blocked or None,
            "notes": self.notes,
            "removed": [step.to_data() for step in self.steps],
        }


def funnel_of(
    inv: Inventory, plans: list[ClaimPlan], problem: Problem | None = None, evaluator: SelectorEvaluator | None = None
) -> tuple[list[Funnel], list[tuple[str, str]]]:
    """Every alternative's funnel, and the requests (claim, request) none of whose alternatives has devices enough.

    Without ``problem`` the devices the inventory left out are not looked for; without
    ``evaluator`` "not selected" is not split by selector."""
    missing = unavailable_devices(problem, inv) if problem is not None else []
    rules = problem.taint_rules if problem is not None else ()
    by_request = [
        (plan, req, [_funnel(inv, plan, alt, evaluator, missing, rules) for alt in req.alternatives])
        for plan in plans
        for req in plan.requests
    ]
    funnel = [f for _, _, alternatives in by_request for f in alternatives]
    short = [(plan.label, req.name) for plan, req, alternatives in by_request if all(f.short for f in alternatives)]
    return funnel, short


def _funnel(
    inv: Inventory,
    plan: ClaimPlan,
    alt: Alternative,
    ev: SelectorEvaluator | None,
    missing: list[Unavailable],
    taint_rules: Sequence[DeviceTaintRule],
) -> Funnel:
    by_reason: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], list[str]] = defaultdict(list)
    for device, reason in alt.excluded.items():
        exact = _exact_reason(inv, alt, device, reason, ev, taint_rules)
        ids = _ids(inv, alt, device, reason, taint_rules)
        by_reason[(exact, gate_named(exact), ids)].append(inv.devices[device].label())
    if ev is not None:
        for gone in missing:
            if _selected(ev, alt, gone):
                by_reason[(gone.reason, gone.gate, ())].append(gone.label)
    steps = [
        Removal(reason, len(devices), sorted(set(devices))[:NAMED], gate, ids)
        for (reason, gate, ids), devices in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0][0]))
    ]
    needs: int | str = "all" if alt.mode == "All" else alt.count
    named = [inv.devices[d].label() for d in alt.candidates[:NAMED]]
    return Funnel(
        plan.label,
        alt.result_name,
        needs,
        len(alt.candidates),
        steps,
        alt.blocked,
        dropped_fields(inv, plan, alt),
        named,
    )


def gate_named(reason: str) -> str | None:
    """The feature gate a reason names (candidate selection names the gate that refuses a device)."""
    return next((gate for gate in GATES if gate in reason), None)


def dropped_fields(inv: Inventory, plan: ClaimPlan, alt: Alternative) -> list[str]:
    """Request fields the API server drops with their feature gate off, as notes naming the gate."""
    request = plan.claim.spec.devices.requests[alt.request]
    body = request.first_available[alt.rank] if request.first_available else request.exactly
    notes = []
    if body is not None and body.derived_attributes and not inv.features.derived_attributes:
        names = ", ".join(spec.name for spec in body.derived_attributes)
        notes.append(
            f"derivedAttributes ({names}) dropped: the DRADerivedAttributes feature gate is disabled, "
            "so constraints see only the devices' own attributes"
        )
    return notes


def _exact_reason(
    inv: Inventory,
    alt: Alternative,
    device: int,
    reason: str,
    ev: SelectorEvaluator | None,
    taint_rules: Sequence[DeviceTaintRule],
) -> str:
    dev = inv.devices[device]
    if reason == NOT_SELECTED and ev is not None:
        return _which_selector(ev, alt, device, inv) or reason
    if reason == OFF_NODE:
        return device_placement(inv, dev.slice, dev.device)
    if reason.startswith("counter ") and reason.endswith("has not enough left"):
        return _counter_left(inv, device) or reason
    if reason == NO_CAPACITY:
        return _capacity_short(inv, alt, device)
    if reason.startswith("already allocated") and dev.device.allow_multiple_allocations and not dev.shared:
        return reason + " (the device allows multiple allocations, but DRAConsumableCapacity is disabled)"
    if reason.startswith("has taint ") and taint_rules:
        return reason + _taint_source(inv, alt, device, taint_rules)
    return reason


def _ids(
    inv: Inventory, alt: Alternative, device: int, reason: str, taint_rules: Sequence[DeviceTaintRule]
) -> tuple[tuple[str, str], ...]:
    """What a reason names, as data (fixes and ``-o json`` read these, never the sentence)."""
    dev = inv.devices[device]
    if reason.startswith("already allocated") and dev.id in inv.in_use.holders:
        return (("claim", inv.in_use.holders[dev.id]),)
    if reason.startswith("counter "):
        pool = inv.pool(dev.pool_key)
        short = [
            use.counter_set
            for use in dev.device.consumes_counters
            for name, counter in use.counters.items()
            if counter.value.value > pool.counters.get(use.counter_set, {}).get(name, counter.value.value)
        ]
        return tuple(("counterSet", f"{pool.label()}/{name}") for name in short[:1])
    if reason.startswith("has taint "):
        taint = untolerated_taint(dev, alt.tolerations)
        if taint is None:
            return ()
        rules = [rule.name for rule in taint_rules if rule.spec.taint is taint]
        return (("taint", taint_words(taint)), *(("taintRule", name) for name in rules[:1]))
    return ()


def _capacity_short(inv: Inventory, alt: Alternative, device: int) -> str:
    """Which capacity the request's share does not fit in, and how much of it is free; or the policy it breaks."""
    dev = inv.devices[device]
    capacities = dev.device.capacity
    share = share_of(capacities, alt.capacity, inv.features["DRAFractionalCapacityRange"])
    if share is None:
        return _policy_refusal(inv, alt, capacities)
    used = inv.in_use.capacity.get(dev.id, {})
    for name, amount in share.items():
        capacity = capacities[name].value
        free = capacity.value - used.get(name, Fraction(0))
        if amount > free:
            return (
                f"capacity {name} exhausted: {Quantity(free, capacity.format)} of {capacity} free, "
                f"the request takes {Quantity(amount, capacity.format)}"
            )
    return NO_CAPACITY


def _policy_refusal(inv: Inventory, alt: Alternative, capacities: Mapping[str, DeviceCapacity]) -> str:
    """Which capacity the request names that the device lacks, or whose requestPolicy refuses the amount."""
    lacking = [name for name in alt.capacity if name not in capacities]
    if lacking:
        return f"the device has no capacity {', '.join(lacking)}, which the request asks for"
    fractional = inv.features["DRAFractionalCapacityRange"]
    for name, capacity in sorted(capacities.items()):
        asked = alt.capacity.get(name)
        amount = consumed_amount(asked.value if asked is not None else None, capacity, fractional)
        if violates(amount, capacity, fractional):
            what = f"{name}={asked}" if asked is not None else f"{name} (not requested, so its default)"
            return f"capacity request {what} breaks the device's requestPolicy ({_policy(capacity)})"
    return NO_CAPACITY


def _policy(capacity: DeviceCapacity) -> str:
    policy = capacity.request_policy
    if policy is None:
        return "none"
    parts = [f"default {policy.default}"] if policy.default is not None else []
    if policy.valid_values is not None:
        parts.append("validValues " + ", ".join(str(v) for v in policy.valid_values))
    if policy.valid_range is not None:
        r = policy.valid_range
        parts.append(
            "validRange "
            + ", ".join(f"{k} {v}" for k, v in (("min", r.min), ("max", r.max), ("step", r.step)) if v is not None)
        )
    return "; ".join(parts) or "empty"


def _taint_source(inv: Inventory, alt: Alternative, device: int, rules: Sequence[DeviceTaintRule]) -> str:
    """Where the untolerated taint comes from: the DeviceTaintRule that put it there, or the device."""
    taint = untolerated_taint(inv.devices[device], alt.tolerations)
    names = [rule.name for rule in rules if rule.spec.taint is taint]
    return f" (from DeviceTaintRule {', '.join(names)})" if names else " (on the device itself)"


def _which_selector(ev: SelectorEvaluator, alt: Alternative, device: int, inv: Inventory) -> str:
    """The first selector (class, then request) that refuses the device, in words; "" if none does."""
    cel = inv.devices[device].cel
    for i, selector in enumerate(alt.device_class.spec.selectors):
        expression = selector.cel.expression if selector.cel else ""
        if not _accepts(ev, expression, cel):
            return f"not selected by class {alt.device_class.name}, selector #{i} ({_short(expression)})"
    for i, expression in enumerate(alt.selectors):
        if not _accepts(ev, expression, cel):
            return f"not selected by the request's selector #{i} ({_short(expression)})"
    return ""


def _selected(ev: SelectorEvaluator, alt: Alternative, gone: Unavailable) -> bool:
    expressions = [s.cel.expression for s in alt.device_class.spec.selectors if s.cel] + list(alt.selectors)
    return all(_accepts(ev, expression, gone.cel) for expression in expressions)


def _accepts(ev: SelectorEvaluator, expression: str, cel: object) -> bool:
    try:
        return ev.matches(expression, cel)  # type: ignore[arg-type]
    except DrasatError:
        return False  # an error is not a yes; candidate selection reports it where Kubernetes would


def _short(expression: str) -> str:
    flat = " ".join(expression.split())
    return flat if len(flat) <= SHOWN else flat[: SHOWN - 1] + "…"


def _counter_left(inv: Inventory, device: int) -> str:
    """Which counter of which set the device needs more of than its pool has left, with both amounts."""
    dev = inv.devices[device]
    pool = inv.pool(dev.pool_key)
    for use in dev.device.consumes_counters:
        for name, counter in use.counters.items():
            left = pool.counters.get(use.counter_set, {}).get(name)
            if left is not None and counter.value.value > left:
                fmt = counter.value.format
                return (
                    f"counter set {use.counter_set} of pool {pool.label()} has {Quantity(max(left, Fraction(0)), fmt)} "
                    f"of {name} left, the device needs {counter.value}"
                )
    return ""
