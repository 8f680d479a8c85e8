"""matchAttribute and distinctAttribute, scalar and list-valued (DRAListTypeAttributes).

Each device taking part in a constraint has a set of labels (``allocation/planning/constraints.py``):
``match`` holds when one device is chosen or all chosen share a label, ``distinct`` when no
two share one — across all the requests of the claim the constraint names. A device
without the attribute cannot take part; in All mode, adding such a device is the error
Kubernetes reports, not a reason to backtrack.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from drasat.models.errors import AllocationError
from drasat.models.resource import DeviceAttribute
from drasat.solver.allocation.planning.attributes import lookup
from drasat.solver.allocation.planning.constraints import Label, distinct_holds, labels, match_holds
from drasat.solver.allocation.planning.plan import Alternative, AltId, ClaimPlan, Pick

from .base import Encoding, Rule, RuleContext

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
    """Alike claims merged into one alternative (allocation/cp_sat/merge.py), each under this match constraint, with one
    label per candidate: each claim takes all its devices under one label, so the group is a count of claims
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
