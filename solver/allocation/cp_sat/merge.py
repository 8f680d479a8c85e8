"""Alike claims as one count: the CP-SAT model of first-fit decoding without claims that only swap devices.

Claims with one request of one alternative, no constraints and no per-device bookkeeping (admin
access, shared devices) differ only in how many devices they want once their candidates are the
same: in any allocation two of them can swap devices and it stays an allocation. A model with a
variable per claim and class makes CP-SAT prove every "no" once per permutation of such claims —
seconds per solve at 150 claims on 64 packed GPUs. Here they become one *merged* alternative whose
count is their total, and decoding (:mod:`.objectives`) tracks how many devices of each class the
claims decided so far have drawn from it: "claim c takes one more from class k" is "the merged
count of class k exceeds what was drawn", since whichever claim of the group took it could swap
with c. The answer is still Kubernetes' first-fit answer, device for device.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drasat.solver.allocation.planning.constraints import labels
from drasat.solver.allocation.planning.inventory import Inventory
from drasat.solver.allocation.planning.plan import Alternative, AltId, ClaimPlan, RequestPlan
from drasat.solver.allocation.rules.matching import constraint_attribute

if TYPE_CHECKING:
    from .objectives import Staged


class SplitMatched(Exception):
    """Decoding reached a claim merged under a match constraint that it must decide on its own (the guess went
    wrong there): the caller builds the model again with such claims apart (``merge_alike(matched=False)``).
    ``found``: the allocation the merged model had found, decoded as it stands (not exact), for when time runs
    out before the model built again finds one."""

    def __init__(self, message: str, found: Staged | None = None) -> None:
        super().__init__(message)
        self.found = found


@dataclass(frozen=True)
class Merged:
    """The plans the model is built from, and where each real alternative's variables are."""

    plans: list[ClaimPlan]  # for the model: claims left alone, and one plan per merged group
    model_id: dict[AltId, AltId]  # a real alternative -> the model alternative holding its variables
    merged: frozenset[AltId]  # the model alternatives that stand for several claims
    claims: dict[AltId, int]  # a merged model alternative -> how many claims it stands for


def merge_alike(inv: Inventory, plans: Sequence[ClaimPlan], matched: bool = True) -> Merged:
    """Plans for the model, with groups of alike claims (two or more) merged into one, in first-claim order
    (``matched``: claims under a match constraint too)."""
    groups: dict[Hashable, list[ClaimPlan]] = {}
    known: dict[tuple, bool] = {}  # what each distinct candidate list was found to be: asked once per list
    for plan in plans:
        kind = _kind(inv, plan, known)
        if kind is not None and kind[0] == "match" and not matched:
            kind = None
        groups.setdefault(kind or ("alone", plan.index), []).append(plan)
    model_plans: list[ClaimPlan] = []
    model_id: dict[AltId, AltId] = {}
    merged: set[AltId] = set()
    claims: dict[AltId, int] = {}
    for members in sorted(groups.values(), key=lambda g: g[0].index):
        index = len(model_plans)
        if len(members) == 1:
            plan = _renumbered(members[0], index)
            for real, alt in zip(members[0].alternatives(), plan.alternatives()):
                model_id[real.id] = alt.id
        else:
            plan = _merged(members, index)
            merged.add(plan.requests[0].alternatives[0].id)
            claims[plan.requests[0].alternatives[0].id] = len(members)
            for member in members:
                model_id[member.requests[0].alternatives[0].id] = plan.requests[0].alternatives[0].id
        model_plans.append(plan)
    return Merged(model_plans, model_id, frozenset(merged), claims)


def _kind(inv: Inventory, plan: ClaimPlan, known: dict[tuple, bool]) -> tuple | None:
    """What the claim must share with others to merge with them; None when it cannot merge."""
    if len(plan.requests) != 1 or len(plan.requests[0].alternatives) != 1:
        return None
    alt = plan.requests[0].alternatives[0]
    if alt.mode != "ExactCount" or alt.admin or alt.share or alt.errors or alt.derived_specs:
        return None
    if ("shared", alt.candidates) not in known:
        known["shared", alt.candidates] = any(inv.devices[d].shared for d in alt.candidates)
    if known["shared", alt.candidates]:
        return None
    if not plan.constraints:
        return ("merge", alt.candidates)
    constraint = plan.constraints[0]
    if len(plan.constraints) > 1 or constraint.kind != "match" or not constraint.applies(alt) or alt.derived:
        return None
    key = (alt.candidates, constraint.attribute)
    if key not in known:
        known[key] = _one_label_each(inv, alt, constraint.attribute)
    # Such claims each take their devices under one label: their group counts claims per label (rules/matching.py).
    return ("match", alt.candidates, alt.count, constraint.attribute) if known[key] else None


def _one_label_each(inv: Inventory, alt: Alternative, attribute: str) -> bool:
    """Whether every candidate has exactly one label for a match on ``attribute``: then "all devices of a claim
    share a label" is "all under one label", which counts of claims per label say for a group of claims."""
    for device in alt.candidates:
        found = labels(constraint_attribute(inv, alt, device, attribute), "match", inv.features.list_attributes)
        if found is None or len(found) != 1:
            return False
    return True


def _renumbered(plan: ClaimPlan, index: int) -> ClaimPlan:
    if plan.index == index:
        return plan
    requests = tuple(
        RequestPlan(r.index, r.name, tuple(_moved(a, index, a.count) for a in r.alternatives), r.first_available)
        for r in plan.requests
    )
    return ClaimPlan(index, plan.claim, plan.label, requests, plan.constraints)


def _merged(members: list[ClaimPlan], index: int) -> ClaimPlan:
    first = members[0]
    total = sum(m.requests[0].alternatives[0].count for m in members)
    alt = _moved(first.requests[0].alternatives[0], index, total)
    request = RequestPlan(0, first.requests[0].name, (alt,), False)
    return ClaimPlan(index, first.claim, f"{len(members)} claims like {first.label}", (request,), first.constraints)


def _moved(alt: Alternative, claim: int, count: int) -> Alternative:
    """The alternative as claim ``claim`` of the model, wanting ``count`` devices (its fields copied, without
    re-running ``__init__``)."""
    copy = object.__new__(Alternative)
    copy.__dict__.update(alt.__dict__, claim=claim, count=count)
    copy.__dict__.pop("id", None)  # the cached AltId of the original
    return copy
