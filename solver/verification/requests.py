"""Verifier rules about requests, result entries and device use across claims.

Part of :mod:`drasat.solver.verification.verifier`: the per-request checks of §4 (gates, classes,
modes, the All-device list, the 32-device limit), the result fields of §2.5.1, and
the in-use rules of §6.3 with the intended admin-access semantics (admin picks never
block others, but a claim never gets the same exclusive device twice).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from drasat.models.resource import (
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceToleration,
    ResourceClaim,
)
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import DeviceId, claim_key

from .claim_rules import RequestSpec, ResultEntry
from .pools import AllocatedState, device_text

if TYPE_CHECKING:
    from .verifier import World

MAX_RESULTS = 32
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def find_request(claim: ResourceClaim, result_name: str) -> tuple[DeviceRequest, RequestSpec] | str:
    """The request and the (sub)request spec a result name (``req`` or ``req/sub``) stands for."""
    top, sep, sub = result_name.partition("/")
    req = next((r for r in claim.spec.devices.requests if r.name == top), None)
    if req is None:
        return f"names request {result_name!r}, which the claim does not have"
    if req.first_available:
        if not sep:
            return f"must name one of the subrequests of {top} as {top}/<subrequest>"
        spec = next((s for s in req.first_available if s.name == sub), None)
        return (req, spec) if spec is not None else f"names unknown subrequest {result_name!r}"
    if sep:
        return f"names subrequest {result_name!r}, but request {top} has no firstAvailable list"
    if req.exactly is None:
        return f"request {top} has neither exactly nor firstAvailable"
    return req, req.exactly


def _mode(spec: RequestSpec) -> str:
    return spec.allocation_mode or "ExactCount"


def _specs(req: DeviceRequest) -> list[RequestSpec]:
    if req.first_available:
        return list(req.first_available)
    return [req.exactly] if req.exactly is not None else []


def _gate_violations(features: Features, req: DeviceRequest) -> list[str]:
    """Fields used while their feature gate is off: Kubernetes refuses the claim outright."""
    out = []
    if req.first_available and not features.prioritized_list:
        out.append("has subrequests, but the DRAPrioritizedList feature is disabled")
    if not features.consumable_capacity:
        if (req.exactly and req.exactly.capacity is not None) or any(
            s.capacity is not None for s in req.first_available
        ):
            out.append("has capacity requests, but the DRAConsumableCapacity feature is disabled")
    if req.exactly and req.exactly.admin_access is not None and not features.admin_access and not req.first_available:
        out.append("admin access is requested, but the feature is disabled")
    if not req.first_available and req.exactly is None:
        out.append("has neither exactly nor firstAvailable (unsupported request type)")
    return out


def _spec_violations(world: World, spec: RequestSpec) -> list[str]:
    """§4.2 for one (sub)request: selectors, class, mode, and the All-device list."""
    out = [f"selector #{i}: CEL expression empty" for i, s in enumerate(spec.selectors) if s.cel is None]
    if not spec.device_class_name:
        out.append("missing device class name")
    elif spec.device_class_name not in world.classes:
        out.append(f"device class {spec.device_class_name} does not exist")
    if _mode(spec) not in ("ExactCount", "All"):
        out.append(f"unsupported count mode {_mode(spec)}")
    elif _mode(spec) == "All" and not out:
        devices = world.all_devices(spec)
        if isinstance(devices, str):
            out.append(f"asks for all devices, but {devices}")
    return out


def _minimum(world: World, req: DeviceRequest) -> int:
    """The fewest devices the request can take (§4.4 sums these against the limit of 32)."""
    counts = []
    for spec in _specs(req):
        if _mode(spec) == "All":
            devices = world.all_devices(spec)
            counts.append(len(devices) if isinstance(devices, list) else 0)
        else:
            counts.append(spec.count or 1)
    return min(counts, default=0)


def request_violations(
    world: World, claim: ResourceClaim, results: Sequence[DeviceRequestAllocationResult]
) -> list[str]:
    """Every request: valid under the gates, exactly one alternative used, the right devices."""
    by_request: dict[str, list[DeviceRequestAllocationResult]] = {}
    for res in results:
        by_request.setdefault(res.request.partition("/")[0], []).append(res)
    out: list[str] = []
    for req in claim.spec.devices.requests:
        where = f"claim {claim_key(claim)}, request {req.name}"
        problems = _gate_violations(world.problem.features, req)
        for spec in _specs(req):
            name = f"{req.name}/{spec.name}" if isinstance(spec, DeviceSubRequest) else req.name
            problems += [f"({name}) {p}" for p in _spec_violations(world, spec)]
        out += [f"{where}: {p} (no allocation is valid)" for p in problems]
        out += [f"{where}: {p}" for p in _result_count_violations(world, claim, req, by_request.pop(req.name, []))]
    total = sum(_minimum(world, r) for r in claim.spec.devices.requests)
    if total > MAX_RESULTS:
        out.append(f"claim {claim_key(claim)}: number of requested devices {total} exceeds the claim limit of 32")
    return out


def _result_count_violations(
    world: World, claim: ResourceClaim, req: DeviceRequest, results: list[DeviceRequestAllocationResult]
) -> list[str]:
    """One alternative; ExactCount gets exactly count devices, each once; All gets exactly its list."""
    if not results:
        return ["got no devices"]
    names = list(dict.fromkeys(r.request for r in results))
    if len(names) > 1:
        return [f"uses several alternatives at once: {names}"]
    found = find_request(claim, names[0])
    if isinstance(found, str):
        return []  # reported per result entry
    spec = found[1]
    ids: Counter[DeviceId] = Counter((r.driver, r.pool, r.device) for r in results)
    out = [f"gets device {device_text(d)} {n} times" for d, n in sorted(ids.items()) if n > 1]
    if _mode(spec) == "All":
        devices = world.all_devices(spec)
        if isinstance(devices, str):
            return out  # why no allocation can exist is reported by the request checks
        missing = sorted(device_text(d) for d in set(devices) - set(ids))
        extra = sorted(device_text(d) for d in set(ids) - set(devices))
        if missing:
            out.append(f"asks for all matching devices but lacks {missing}")
        if extra:
            out.append(f"asks for all matching devices but got {extra}, which are not among them")
        return out
    count = spec.count or 1
    if len(results) != count:
        out.append(f"({names[0]}) needs exactly {count} devices, got {len(results)}")
    return out


def _toleration(tol: DeviceToleration) -> tuple[object, ...]:
    """A toleration up to API defaulting (an empty operator is Equal), so a defaulted copy still counts."""
    return (tol.key or "", tol.operator or "Equal", tol.value or "", tol.effect or "", tol.toleration_seconds)


def result_field_violations(pick: ResultEntry, features: Features) -> list[str]:
    """§2.5.1: adminAccess, tolerations, binding conditions and consumedCapacity as Kubernetes writes them."""
    res, out = pick.result, []
    if pick.admin and res.admin_access is not True:
        out.append("adminAccess must be true: the request asks for admin access")
    if not pick.admin and res.admin_access is not None:
        out.append(f"adminAccess must be absent, not {res.admin_access}: the request does not ask for admin access")
    want = [_toleration(t) for t in pick.spec.tolerations]
    if [_toleration(t) for t in res.tolerations] != want:
        out.append(f"tolerations must be a copy of the request's {[t.to_api() for t in pick.spec.tolerations]}")
    dev = pick.seen.device
    cond = (dev.binding_conditions, dev.binding_failure_conditions) if features.binding_conditions else ([], [])
    if (res.binding_conditions, res.binding_failure_conditions) != cond:
        out.append(f"bindingConditions/bindingFailureConditions must be {cond[0]}/{cond[1]}")
    if not pick.multi and res.consumed_capacity:
        out.append("consumedCapacity must be absent for a device that is not shared")
    return [f"{pick.where()}: {p}" for p in out]


def share_id_violations(picks: Sequence[ResultEntry], state: AllocatedState) -> list[str]:
    """A fresh lower-case UUID for every share of a multi-allocatable device, and for nothing else."""
    out, used = [], {(d, s) for d, s in state.shares}
    for pick in picks:
        sid = pick.result.share_id
        if not pick.multi:
            if sid is not None:
                out.append(f"{pick.where()}: shareID must be absent (the device is not allocated as a share)")
        elif sid is None or not _UUID.match(sid):
            out.append(f"{pick.where()}: shareID must be a lower-case UUID, not {sid!r}")
        elif (pick.id, sid) in used:
            out.append(f"{pick.where()}: shareID {sid} is already used for this device")
        else:
            used.add((pick.id, sid))
    return out


def use_violations(picks: Sequence[ResultEntry], state: AllocatedState) -> list[str]:
    """§6.3 with intended admin semantics: already-allocated devices, and exclusive devices twice."""
    out = []
    for pick in picks:
        if not pick.admin and pick.id in state.exclusive:
            out.append(f"{pick.where()} is already allocated to another claim")
    exclusive: dict[DeviceId, list[ResultEntry]] = {}
    for pick in picks:
        if not pick.multi:
            exclusive.setdefault(pick.id, []).append(pick)
    for device_id, users in sorted(exclusive.items()):
        normal = sorted({p.claim for p in users if not p.admin})
        if len(normal) > 1:
            out.append(f"device {device_text(device_id)} is allocated exclusively to several claims: {normal}")
        per_claim = Counter(p.claim for p in {(p.claim, p.request.name): p for p in users}.values())
        out += [
            f"claim {c} gets exclusive device {device_text(device_id)} in several requests"
            for c, n in sorted(per_claim.items())
            if n > 1
        ]
    return out
