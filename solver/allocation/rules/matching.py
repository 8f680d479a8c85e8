"""matchAttribute and distinctAttribute, scalar and list-valued (DRAListTypeAttributes).

Each device taking part in a constraint has a set of labels (``allocation/planning/constraints.py``):
``match`` holds when one device is chosen or all chosen share a label, ``distinct`` when no
two share one — across all the requests of the claim the constraint names. A device
without the attribute cannot take part; in All mode, adding such a device is the error
Kubernetes reports, not a reason to backtrack.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from itertools import product
from typing import TYPE_CHECKING

from drasat.models.errors import AllocationError
from drasat.models.resource import DeviceAttribute
from drasat.solver.allocation.planning.attributes import lookup
from drasat.solver.allocation.planning.constraints import Label, distinct_holds, labels, match_holds
from drasat.solver.allocation.planning.plan import Alternative, AltId, ClaimPlan, ConstraintPlan, Pick

from .base import Assumption, Encoding, Rule, RuleContext
from .wording import SHOWN_VALUES, count_text

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from drasat.solver.allocation.planning.inventory import Inventory, InventoryDevice

Labels = frozenset[Label]


def constraint_attribute(inv: Inventory, alt: Alternative, device: int, name: str) -> DeviceAttribute | None:
    """The attribute a constraint compares: a derived attribute of the request first, then the device's."""
    derived = alt.derived.get(device, {})
    if name in derived:
        return derived[name]
    dev = inv.devices[device]
    return lookup(dev.device.attributes, dev.id[0], name)


class LabelCache:
    """A device's labels per constraint; shared between claims unless the request derives attributes."""

    def __init__(self, ctx: RuleContext) -> None:
        self.inv, self.plans = ctx.inv, ctx.plans
        self.known: dict[tuple, Labels | None] = {}
        self.applies: dict[AltId, list[int]] = {}

    def applicable(self, plan: ClaimPlan, alt: Alternative) -> list[int]:
        """The indexes of the claim's constraints that apply to ``alt``."""
        found = self.applies.get(alt.id)
        if found is None:
            found = self.applies[alt.id] = [ci for ci, c in enumerate(plan.constraints) if c.applies(alt)]
        return found

    def of(self, claim: int, ci: int, alt: Alternative, device: int) -> Labels | None:
        constraint = self.plans[claim].constraints[ci]
        key = (constraint.attribute, constraint.kind, device, alt.id if alt.derived else None)
        if key not in self.known:
            attr = constraint_attribute(self.inv, alt, device, constraint.attribute)
            self.known[key] = labels(attr, constraint.kind, self.inv.features.list_attributes)
        return self.known[key]


def label_cache(ctx: RuleContext) -> LabelCache:
    """The one LabelCache of this context (made on first use, then shared by the rule's sides)."""
    cache = ctx.cache.get("labels")
    if cache is None:
        cache = ctx.cache["labels"] = LabelCache(ctx)
    return cache


class Members:
    """The attribute rule's depth-first state: per claim and constraint, the labels of the picks so far.

    A plain class with slots: the search makes one per call."""

    __slots__ = ("labels", "plans", "chosen", "seen")

    def __init__(self, labels: LabelCache, plans: list[ClaimPlan], chosen: list[list[list[Labels]]]) -> None:
        self.labels, self.plans = labels, plans
        self.chosen = chosen  # claim -> constraint -> labels of picks
        self.seen: dict[tuple, list[tuple[int, str, Labels | None]]] = {}

    def of(self, claim: int, alt: Alternative, device: int) -> list[tuple[int, str, Labels | None]]:
        """(constraint, kind, labels) for each of the claim's constraints that applies to ``alt``."""
        key = (alt.id, device)
        found = self.seen.get(key)
        if found is None:
            plan, labels = self.plans[claim], self.labels
            found = self.seen[key] = [
                (ci, plan.constraints[ci].kind, labels.of(claim, ci, alt, device))
                for ci in labels.applicable(plan, alt)
            ]  # which apply: asked once per alt
        return found


class AttributeConstraints(Rule):
    """matchAttribute and distinctAttribute, for both searches and the CP-SAT model."""

    name = "attributes"

    def signature(self, ctx: RuleContext, plan: ClaimPlan, alt: Alternative, device: int) -> Hashable:
        if not plan.constraints:
            return ()
        cache = label_cache(ctx)
        return tuple([cache.of(plan.index, ci, alt, device) for ci in cache.applicable(plan, alt)])

    def view(self, ctx: RuleContext, plan: ClaimPlan, alt: Alternative) -> Hashable:
        """The labels depend on the applicable constraints' attribute and kind only, unless the request
        derives attributes of its own (``LabelCache.of``'s key)."""
        if not plan.constraints:
            return ()
        applicable = label_cache(ctx).applicable(plan, alt)
        own = alt.id if alt.derived else None
        return own, tuple((plan.constraints[ci].attribute, plan.constraints[ci].kind) for ci in applicable)

    def active(self, ctx: RuleContext) -> bool:
        for plan in ctx.plans:  # a plain loop: every search asks, and a generator costs a frame (0.2 µs)
            if plan.constraints:
                return True
        return False

    def start(self, ctx: RuleContext) -> Members:
        return Members(label_cache(ctx), ctx.plans, [[[] for _ in plan.constraints] for plan in ctx.plans])

    def fits(self, state: Members, claim: int, alt: Alternative, dev: InventoryDevice, must: bool) -> bool:
        for ci, kind, mine in state.of(claim, alt, dev.index):
            chosen = state.chosen[claim][ci]
            holds = mine is not None and (
                match_holds([*chosen, mine]) if kind == "match" else distinct_holds([*chosen, mine])
            )
            if not holds:
                if must:
                    raise AllocationError(
                        f"claim {alt.claim_label}, request {alt.own_name}: cannot add device "
                        f"{dev.label()} because a claim constraint would not be satisfied"
                    )
                return False
        return True

    def apply(self, state: Members, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        for ci, _, found in state.of(claim, pick.alt, pick.device):
            state.chosen[claim][ci].append(found or frozenset())  # never None: checked on the way in

    def undo(self, state: Members, claim: int, pick: Pick, dev: InventoryDevice) -> None:
        for ci, _, _ in state.of(claim, pick.alt, pick.device):
            state.chosen[claim][ci].pop()

    def encode(self, enc: Encoding) -> None:
        cache = label_cache(enc.ctx)
        for plan in enc.ctx.plans:
            for ci, constraint in enumerate(plan.constraints):
                takes: list[tuple[Labels | None, cp_model.IntVar]] = []
                for alt in plan.alternatives():
                    if constraint.applies(alt):
                        for k, var in enc.vars[alt.id].takes.items():
                            takes.append((cache.of(plan.index, ci, alt, enc.groups[k].devices[0]), var))
                words = (
                    f"claim {plan.label}: constraint #{constraint.index} "
                    f"({constraint.kind}Attribute {constraint.attribute}) holds"
                )
                literal = enc.guard("attributes", words, claim=plan.index, constraint=constraint.index)
                merged = plan.requests[0].alternatives[0]
                if merged.id in enc.claims:
                    _encode_merged(enc, plan, ci, merged, literal)
                else:
                    _encode_one(enc, plan, ci, constraint.kind, takes, literal)

    def describe(self, inv: Inventory, plans: list[ClaimPlan], member: Assumption) -> str:
        """For a matchAttribute, how many candidates each request has per attribute value; for a
        distinctAttribute, how few values the candidates carry; and the candidates that lack it."""
        if member.claim is None or member.constraint is None:
            return ""
        plan = plans[member.claim]
        constraint = next(c for c in plan.constraints if c.index == member.constraint)
        return _attribute_detail(inv, plan, constraint)

    def encode_counts(self, enc: Encoding) -> bool:
        """Counted claims under a match constraint split into counts of claims per label, exactly when each
        candidate has one label and each request the constraint covers has one alternative; otherwise (a
        distinct constraint, list-valued attributes, firstAvailable under the constraint) only "a device
        without the attribute cannot take part" is posted, and the model is a relaxation there."""
        cache, exact = label_cache(enc.ctx), True
        for plan in enc.ctx.plans:
            for ci, constraint in enumerate(plan.constraints):
                covered = [alt for alt in plan.alternatives() if constraint.applies(alt)]
                by_label = {alt.id: _classes_by_label(enc, cache, plan, ci, alt) for alt in covered}
                literal = enc.guard(
                    "attributes",
                    f"claim {plan.label}: constraint #{constraint.index} holds, per claim counted",
                    claim=plan.index,
                    constraint=constraint.index,
                )
                for alt in covered:
                    for k in by_label[alt.id].get(None, []):
                        enc.model.add(enc.vars[alt.id].takes[k] == 0).only_enforce_if(literal)
                if sum(alt.count for alt in covered) <= 1:
                    continue  # one device in all: nothing to match
                if not _counts_per_label(enc, plan, constraint, covered, by_label):
                    exact = False
                    continue
                _encode_counted(enc, plan, ci, covered, by_label, literal)
        return exact


def _classes_by_label(
    enc: Encoding, cache: LabelCache, plan: ClaimPlan, ci: int, alt: Alternative
) -> dict[Label | None, list[int]]:
    """The alternative's device classes by their one label (None: without the attribute; a class with several
    labels goes under each, which :func:`_counts_per_label` refuses)."""
    out: dict[Label | None, list[int]] = {}
    for k in enc.vars[alt.id].takes:
        found = cache.of(plan.index, ci, alt, enc.groups[k].devices[0])
        for label in found or (None,):
            out.setdefault(label, []).append(k)
    return out


def _counts_per_label(
    enc: Encoding, plan: ClaimPlan, constraint: ConstraintPlan, covered: list[Alternative], by_label: dict
) -> bool:
    """Whether counts of claims per label say exactly what the constraint says of each counted claim."""
    if constraint.kind != "match" or any(alt.mode != "ExactCount" for alt in covered):
        return False
    if any(len(plan.requests[alt.request].alternatives) != 1 for alt in covered):
        return False  # a covered request with several alternatives: each claim chooses on its own
    for alt in covered:
        classes = [k for ks in by_label[alt.id].values() for k in ks]
        if len(classes) != len(set(classes)):
            return False  # a class under two labels (list-valued attributes)
    return True


def _encode_counted(
    enc: Encoding,
    plan: ClaimPlan,
    ci: int,
    covered: list[Alternative],
    by_label: dict[AltId, dict[Label | None, list[int]]],
    literal: cp_model.IntVar,
) -> None:
    """Each counted claim takes every covered request's devices under one label: per label, how many claims
    do, and each covered alternative takes its count for each of them from the label's classes."""
    claims = enc.multiplicity[covered[0].id]
    every = sorted({label for found in by_label.values() for label in found if label is not None}, key=repr)
    top = enc.top(claims)
    counts = {label: enc.int_var(0, top, f"claims[{plan.label}/constraint{ci}/{label!r}]") for label in every}
    enc.model.add(sum(counts.values()) == claims).only_enforce_if(literal)
    for alt in covered:
        takes = enc.vars[alt.id].takes
        for label, count in counts.items():
            classes = by_label[alt.id].get(label, [])
            enc.model.add(sum(takes[k] for k in classes) == alt.count * count).only_enforce_if(literal)


def _encode_one(
    enc: Encoding,
    plan: ClaimPlan,
    ci: int,
    kind: str,
    takes: list[tuple[Labels | None, cp_model.IntVar]],
    literal: cp_model.IntVar,
) -> None:
    model = enc.model
    for found, var in takes:
        if found is None:
            model.add(var == 0).only_enforce_if(literal)
    usable = [(found, var) for found, var in takes if found is not None]
    every = sorted({label for found, _ in usable for label in found}, key=repr)
    if kind == "distinct":
        for label in every:
            model.add(sum(var for found, var in usable if label in found) <= 1).only_enforce_if(literal)
        return
    single = model.new_bool_var(f"single[{plan.label}/constraint{ci}]")
    chosen = {label: model.new_bool_var(f"match[{plan.label}/constraint{ci}/{label!r}]") for label in every}
    model.add(sum(chosen.values()) + single <= 1)
    model.add(sum(var for _, var in usable) <= 1).only_enforce_if([single, literal])
    for found, var in usable:
        model.add(var <= enc.top(var) * (single + sum(chosen[label] for label in found))).only_enforce_if(literal)


def _encode_merged(enc: Encoding, plan: ClaimPlan, ci: int, alt: Alternative, literal: cp_model.IntVar) -> None:
    """Alike claims merged into one alternative (allocation/cp_sat/merge.py), each under this match constraint,
    with one label per candidate: each claim takes all its devices under one label, so the group is a count of claims
    per label, and each label's classes give that many claims' devices. (Any counts that add up split into
    such claims: a variable per claim and label would make CP-SAT prove each "no" once per permutation.)"""
    cache, model = label_cache(enc.ctx), enc.model
    claims = enc.claims[alt.id]
    each = alt.count // claims
    by_label: dict[Label, list[int]] = {}
    for k in enc.vars[alt.id].takes:
        found = cache.of(plan.index, ci, alt, enc.groups[k].devices[0])
        by_label.setdefault(next(iter(found or ())), []).append(k)  # one label each: merge.py checked
    takes = enc.vars[alt.id].takes
    counts = {}
    for label, classes in by_label.items():
        count = counts[label] = enc.int_var(0, claims, f"claims[{plan.label}/constraint{ci}/{label!r}]")
        model.add(sum(takes[k] for k in classes) == each * count).only_enforce_if(literal)
        for k in classes:
            enc.per_label.setdefault(alt.id, {})[k] = count
    model.add(sum(counts.values()) == claims).only_enforce_if(literal)


def _attribute_detail(inv: Inventory, plan: ClaimPlan, constraint: ConstraintPlan) -> str:
    covered = [alt for alt in plan.alternatives() if constraint.applies(alt)]
    per_value: dict[Hashable, dict[int, set[int]]] = {}  # value -> alternative (position) -> devices carrying it
    lacking: Counter[str] = Counter()
    for position, alt in enumerate(covered):
        for device in alt.candidates:
            attr = constraint_attribute(inv, alt, device, constraint.attribute)
            found = labels(attr, constraint.kind, inv.features.list_attributes)
            if not found:
                lacking[alt.result_name] += 1
            for label in found or ():
                per_value.setdefault(label, {}).setdefault(position, set()).add(device)
    missing = "; ".join(f"{n} of request {name}'s candidates lack it" for name, n in lacking.items())
    if not inv.features.list_attributes and _any_list(inv, covered, constraint.attribute):
        missing += ("; " if missing else "") + (
            "some candidates' values are lists, which constraints compare only with DRAListTypeAttributes (disabled)"
        )
    values = sorted(per_value, key=repr)
    groups = _by_request(covered)
    if constraint.kind == "distinct":
        text = _distinct_detail(constraint, values, groups)
    else:
        text = _match_detail(constraint, values, groups, per_value, covered)
    return text + (f"; {missing}" if missing else "")


def _distinct_detail(constraint: ConstraintPlan, values: list[Hashable], groups: list[list[Alternative]]) -> str:
    """How many distinct values the candidates carry, against how many devices the requests take together."""
    totals = sorted({sum(alt.count for alt in combo if alt.mode != "All") for combo in product(*groups)})
    needed = " or ".join(str(total) for total in totals)
    shown = ", ".join(_value(v) for v in values[:SHOWN_VALUES]) + (", ..." if len(values) > SHOWN_VALUES else "")
    return (
        f"the candidates carry {len(values)} distinct value{'s' if len(values) != 1 else ''} of "
        f"{constraint.attribute} ({shown or 'none'}) for {needed} device{'s' if totals[-1] != 1 else ''}"
    )


def _match_detail(
    constraint: ConstraintPlan,
    values: list[Hashable],
    groups: list[list[Alternative]],
    per_value: dict[Hashable, dict[int, set[int]]],
    covered: list[Alternative],
) -> str:
    """Per attribute value, how many candidates of each request carry it, against what the requests need."""
    either = [" or ".join(f"{count_text(alt)} for {alt.result_name}" for alt in group) for group in groups]
    wanted = " and ".join(
        f"({text})" if len(group) > 1 and len(groups) > 1 else text for text, group in zip(either, groups)
    )
    rows = [_match_row(v, per_value[v], covered) for v in values[:SHOWN_VALUES]]
    more = "; ..." if len(values) > SHOWN_VALUES else ""
    return f"no {constraint.attribute} value has {wanted} free ({'; '.join(rows) + more or 'no candidate has it'})"


def _by_request(covered: list[Alternative]) -> list[list[Alternative]]:
    """The alternatives grouped by request: a request's firstAvailable alternatives are one or the
    other, never all of them; the requests themselves are all needed."""
    groups: dict[int, list[Alternative]] = {}
    for alt in covered:
        groups.setdefault(alt.request, []).append(alt)
    return list(groups.values())


def _any_list(inv: Inventory, covered: list[Alternative], attribute: str) -> bool:
    for alt in covered:
        for device in alt.candidates:
            attr = constraint_attribute(inv, alt, device, attribute)
            if attr is not None and (attr.ints or attr.bools or attr.strings or attr.versions):
                return True
    return False


def _match_row(value: Hashable, carriers: dict[int, set[int]], covered: list[Alternative]) -> str:
    """One value: how many candidates of each request carry it (and how many devices that is in all,
    when requests could share them)."""
    row = f"{_value(value)}: " + ", ".join(
        f"{len(carriers.get(i, ()))} {alt.result_name}" for i, alt in enumerate(covered)
    )
    devices = set().union(*carriers.values())
    if len(covered) > 1 and len(devices) < sum(len(d) for d in carriers.values()):
        row += f" ({len(devices)} device{'s' if len(devices) != 1 else ''} in all)"
    return row


def _value(label: Hashable) -> str:
    """A constraint label as the user wrote the value (labels are (type, value) pairs)."""
    if isinstance(label, tuple) and len(label) == 2:
        return str(label[1]).lower() if isinstance(label[1], bool) else str(label[1])
    return str(label)
