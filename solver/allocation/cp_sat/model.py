"""Stage 3: one CP-SAT model for all claims together, over equivalence-class counts.

Variables: ``use[claim/request]`` — which alternative each request takes — and
``take[claim/request/class]`` — how many devices of a class it takes. This module posts
what the plan itself says (one alternative per request, counts, ``allocationMode: All``,
the 32-device claim limit) and then lets each registered rule post its own constraints,
each rule instance under its own assumption literal (``model.assumptions``). Every
variable has a readable name so that a model dump reads like the input.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from drasat.models.errors import SolveTimeout
from drasat.solver.allocation.planning.equivalence import Classes, DeviceClassGroup, class_counts, equivalence_classes
from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.plan import MAX_RESULTS, Alternative, AltId, AltVars, ClaimPlan
from drasat.solver.allocation.planning.plan import alternatives as plan_alternatives
from drasat.solver.allocation.rules.base import Assumption, Encoding, Rule, RuleContext
from drasat.solver.allocation.rules.registry import RULES

from .merge import merge_alike


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
    # Built with alike claims merged (merge.py): each real alternative's model alternative, and the merged ones.
    model_id: dict[AltId, AltId] | None = None
    merged: frozenset[AltId] = frozenset()
    per_label: dict[AltId, dict[int, cp_model.IntVar]] = field(default_factory=dict)  # see Encoding.per_label

    def record(self, alt: Alternative) -> AltVars:
        """The variables of a real alternative (those of its merged group where it has one)."""
        return self.vars[alt.id if self.model_id is None else self.model_id[alt.id]]

    def takes(self, alt: Alternative) -> dict[int, cp_model.IntVar]:
        return dict(self.record(alt).takes)

    def use(self, alt: Alternative) -> cp_model.IntVar:
        return self.record(alt).use

    def is_merged(self, alt: Alternative) -> bool:
        """Whether the alternative's variables count the devices of several claims."""
        return self.model_id is not None and self.model_id[alt.id] in self.merged

    def label_counts(self, alt: Alternative) -> dict[int, cp_model.IntVar]:
        """For an alternative merged under a match constraint, per class the count of the group's claims under
        the class's label; else nothing."""
        return self.per_label.get(alt.id if self.model_id is None else self.model_id[alt.id], {})

    def literals(self) -> list[cp_model.IntVar]:
        """Every assumption literal; assuming them all true is the allocation problem itself."""
        return [a.literal for a in self.assumptions]


def build_model(
    inv: Inventory,
    plans: Sequence[ClaimPlan],
    rules: Sequence[Rule] = RULES,
    ctx: RuleContext | None = None,
    *,
    classes: Classes | None = None,
    deadline: float | None = None,
    merge: bool = False,
    matched: bool = True,
) -> AllocationModel:
    """Compile the planned claims into CP-SAT, in a fixed order: variables, then each rule.

    ``classes`` are :func:`equivalence_classes` when the caller has them already (merging claims keeps
    them: a class is made by candidate lists, which merging keeps). ``deadline`` (a ``time.monotonic()``
    value) is checked between claims and between rules: on a wide input building takes seconds, and the
    time limit covers it. ``merge`` builds alike claims as one count (:mod:`.merge`), for first-fit
    decoding; explanations need every claim's own variables. ``matched``: merge claims under a match
    constraint too (their decoding may raise :class:`~.merge.SplitMatched`)."""
    real = list(ctx.plans if ctx else plans)
    merged = merge_alike(inv, real, matched) if merge else None
    if merged is not None:
        ctx = RuleContext(inv, merged.plans)
    ctx = ctx or RuleContext(inv, real)
    groups, class_of = classes or equivalence_classes(ctx, rules)
    enc = Encoding(cp_model.CpModel(), ctx, groups, class_of, claims=merged.claims if merged else {})
    counts = class_counts(plan_alternatives(ctx.plans), class_of)
    for plan in ctx.plans:
        if plan.index % 32 == 0:
            _check_time(deadline)
        _requests(enc, plan, counts, bounded=merged is None or plan.alternatives()[0].id not in merged.merged)
    for rule in rules:
        _check_time(deadline)
        rule.encode(enc)
    if merged is None:
        return AllocationModel(enc.model, inv, real, groups, class_of, enc.vars, enc.assumptions)
    return AllocationModel(
        enc.model, inv, real, groups, class_of, enc.vars, enc.assumptions, merged.model_id, merged.merged, enc.per_label
    )


def _check_time(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise SolveTimeout("the time limit was reached while building the CP-SAT model (raise --timeout)")


def _requests(enc: Encoding, plan: ClaimPlan, counts: dict[AltId, dict[int, int]], bounded: bool = True) -> None:
    """Each request takes exactly one alternative, with its count of devices; the claim at most 32
    (``bounded``: a merged group's claims are each within it already)."""
    model = enc.model
    sizes = []
    for req in plan.requests:
        uses = []
        for alt in req.alternatives:
            use = model.new_bool_var(f"use[{plan.label}/{alt.result_name}]")
            uses.append(use)
            sizes.append(alt.count * use)
            takes, tops = _takes(enc, plan, alt, use, counts[alt.id])
            enc.vars[alt.id] = AltVars(alt, use, takes, tops)
            if alt.mode == "All" and alt.blocked:
                model.add(use == 0)
            elif alt.mode != "All":
                model.add(sum(takes.values()) == alt.count * use)
        model.add_exactly_one(uses)
    if bounded:
        model.add(sum(sizes) <= MAX_RESULTS)


def _takes(
    enc: Encoding, plan: ClaimPlan, alt: Alternative, use: cp_model.IntVar, per_class: dict[int, int]
) -> tuple[dict[int, cp_model.IntVar], dict[int, int]]:
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
