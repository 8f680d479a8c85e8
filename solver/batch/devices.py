"""Devices read straight off the counting model's solution: each pod's claims filled from the counted classes.

The solution says, per node, how many pods take each alternative and how many devices of each
equivalence class those pods take together. Devices of a class are interchangeable for every rule,
so handing them out in inventory order, ``count`` at a time per pod, is an allocation whenever the
counts are exact — with no search at all, where allocating the node's claims again costs a
CP-SAT solve per node on tightly packed GPUs. Claims whose devices must agree with each other
(constraints) or that bypass exclusivity (admin access) are left to the per-node allocator: the
caller falls back to it whenever this returns None, and the verifier checks every answer either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ortools.sat.python import cp_model

from drasat.models.resource import AllocationResult, ResourceClaim
from drasat.solver.allocation.planning.plan import Alternative, ClaimPlan, Pick
from drasat.solver.allocation.planning.results import allocation_result
from drasat.solver.allocation.problem import claim_key
from drasat.solver.allocation.rules.base import Encoding

from .lifted import CountedNode

Value = Callable[[cp_model.IntVar], int]


def read_devices(
    counted: CountedNode, value: Value, claims_by_class: dict[int, list[Sequence[ResourceClaim]]]
) -> dict[str, AllocationResult] | None:
    """Every pod's claims allocated from the solution (``claims_by_class``: per pod class, each of its pods on
    the node with its claims, in the representative's order), keyed by claim (namespace/name); None where this cannot tell."""
    enc = counted.enc
    if enc is None:
        return None
    free = {group.index: list(group.devices) for group in enc.groups}
    results: dict[str, AllocationResult] = {}
    for p, pods in claims_by_class.items():
        for j, plan in enumerate(counted.plans_of.get(p, [])):
            if plan.constraints or any(alt.admin for alt in plan.alternatives()):
                return None
            picks = _claim_picks(enc, plan, len(pods), value, free)
            if picks is None:
                return None
            for claims, claim_picks in zip(pods, picks):
                claim = claims[j]
                results[claim_key(claim)] = allocation_result(
                    enc.inv, replace(plan, claim=claim, label=claim_key(claim)), claim_picks
                )
    return results


def _claim_picks(
    enc: Encoding, plan: ClaimPlan, pods: int, value: Value, free: dict[int, list[int]]
) -> list[list[Pick]] | None:
    """Per pod, the picks of one claim: each request's pods split over its alternatives as counted."""
    picks: list[list[Pick]] = [[] for _ in range(pods)]
    for req in plan.requests:
        pod = 0
        for alt in req.alternatives:
            record = enc.vars[alt.id]
            left = {k: n for k, var in record.takes.items() if (n := value(var))}
            for _ in range(value(record.use)):
                got = _draw(enc, alt, left, free)
                if got is None or pod >= pods:
                    return None
                picks[pod] += got
                pod += 1
        if pod != pods:
            return None
    return picks


def _draw(enc: Encoding, alt: Alternative, left: dict[int, int], free: dict[int, list[int]]) -> list[Pick] | None:
    """One pod's devices for ``alt``: its whole list in All mode, else ``alt.count`` from the classes counted
    for it (a shared device once per pod: its shares are counted per pod)."""
    if alt.mode == "All":
        for device in alt.candidates:
            for devices in free.values():
                if device in devices:
                    devices.remove(device)
        return [Pick(alt, device, alt.share.get(device)) for device in alt.candidates]
    got: list[Pick] = []
    for k in sorted(left):
        while left[k] and len(got) < alt.count:
            group = enc.groups[k]
            if group.shared:
                device = group.devices[0]
                if any(pick.device == device for pick in got):
                    break
            elif free[k]:
                device = free[k].pop(0)
            else:
                return None
            got.append(Pick(alt, device, alt.share.get(device)))
            left[k] -= 1
    return got if len(got) == alt.count else None
