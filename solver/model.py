"""Stage 3: one CP-SAT model for all claims together, over equivalence-class counts.

Variables: ``use[claim/request]`` — which alternative each request takes — and
``take[claim/request/class]`` — how many devices of a class it takes. This module posts
what the plan itself says (one alternative per request, counts, ``allocationMode: All``,
the 32-device claim limit) and then lets each registered rule post its own constraints,
each rule instance under its own assumption literal (``model.assumptions``). Every
variable has a readable name so that a model dump reads like the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ortools.sat.python import cp_model

from .classes import DeviceClassGroup, equivalence_classes
from .inventory import Inventory
from .plan import MAX_RESULTS, Alternative, AltId, AltVars, ClaimPlan
from .rules.base import Assumption, Encoding, Rule, RuleContext
from .rules.registry import RULES


@dataclass
class AllocationModel:
    """The CP-SAT model and the maps from its variables back to claims, requests and devices.

    Nothing here changes once built: solving adds constraints to ``model`` only through the
    objectives' stages, which copy it first when it must be solved again from scratch.
    """

    model: cp_model.CpModel
    inv: Inventory
    plans: list[ClaimPlan]
    groups: list[DeviceClassGroup]
    class_of: dict[int, int]
    vars: dict[AltId, AltVars]
    assumptions: list[Assumption]

    def takes(self, alt: Alternative) -> dict[int, cp_model.IntVar]:
        return dict(self.vars[alt.id].takes)

    def use(self, alt: Alternative) -> cp_model.IntVar:
        return self.vars[alt.id].use

    def literals(self) -> list[cp_model.IntVar]:
        """Every assumption literal; assuming them all true is the allocation problem itself."""
        return [a.literal for a in self.assumptions]


def build_model(inv: Inventory, plans: Sequence[ClaimPlan], rules: Sequence[Rule] = RULES,
                ctx: RuleContext | None = None) -> AllocationModel:
    """Compile the planned claims into CP-SAT, in a fixed order: variables, then each rule."""
    ctx = ctx or RuleContext(inv, list(plans))
    groups, class_of = equivalence_classes(ctx, rules)
    enc = Encoding(cp_model.CpModel(), ctx, groups, class_of)
    for plan in ctx.plans:
        _requests(enc, plan)
    for rule in rules:
        rule.encode(enc)
    return AllocationModel(enc.model, inv, ctx.plans, groups, class_of, enc.vars, enc.assumptions)


def _requests(enc: Encoding, plan: ClaimPlan) -> None:
    """Each request takes exactly one alternative, with its count of devices; the claim at most 32."""
    model = enc.model
    sizes = []
    for req in plan.requests:
        uses = []
        for alt in req.alternatives:
            use = model.new_bool_var(f"use[{plan.label}/{alt.result_name}]")
            uses.append(use)
            sizes.append(alt.count * use)
            takes, tops = _takes(enc, plan, alt, use)
            enc.vars[alt.id] = AltVars(alt, use, takes, tops)
            if alt.mode == "All" and alt.blocked:
                model.add(use == 0)
            elif alt.mode != "All":
                model.add(sum(takes.values()) == alt.count * use)
        model.add_exactly_one(uses)
    model.add(sum(sizes) <= MAX_RESULTS)


def _takes(enc: Encoding, plan: ClaimPlan, alt: Alternative,
           use: cp_model.IntVar) -> tuple[dict[int, cp_model.IntVar], dict[int, int]]:
    per_class: dict[int, int] = {}
    for device in alt.candidates:
        per_class[enc.class_of[device]] = per_class.get(enc.class_of[device], 0) + 1
    takes: dict[int, cp_model.IntVar] = {}
    tops: dict[int, int] = {}
    for k, available in per_class.items():
        top = available if alt.mode == "All" else min(available, alt.count)
        take = enc.int_var(0, top, f"take[{plan.label}/{alt.result_name}/class{k}]")
        takes[k], tops[k] = take, top
        enc.by_class.setdefault(k, []).append((alt, take))
        if alt.mode == "All":
            enc.model.add(take == available * use)
    return takes, tops
