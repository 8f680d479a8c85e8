"""What the API server could never have stored, checked on the objects ``drasat solve`` uses.

``drasat validate`` reports every rule the API server enforces. ``drasat solve`` cannot
refuse all of them: the conformance scenarios come from Kubernetes' allocator tests,
which feed the allocator objects that validation refuses (subrequest names that are
not DNS labels, a count with allocationMode All) and pin what it does with them. Some
breaches leave nothing meaningful to allocate, though — a negative count, an object
without a name, a constraint or configuration naming a request the claim does not
have (which the allocator would silently ignore), a slice with both counter sets and devices
(since 1.35 none of its devices can draw on its counters) — and no allocator ever meets them,
because the API server never stores such an object. ``solve`` refuses those, with
validate's own messages (the checks are the same functions), for the objects it uses;
an object it does not use is validate's business alone. Numbers beyond int64 never get this far: the loader
refuses them, as the API server's decoder does (:data:`drasat.models.meta.Int64`).
"""

from __future__ import annotations

from .errors import InputProblem, Location
from .meta import TypedObject
from .resource import DeviceClaim, ResourceClaim, ResourceSlice
from .validation.claims import check_count_not_negative, request_names
from .validation.formats import Findings, check_name_given, index
from .validation.shared import check_request_known
from .validation.slices import check_counters_or_devices


def unstorable_problems(obj: TypedObject, where: Location | None = None) -> list[InputProblem]:
    """The ways ``obj`` breaks a rule that means the API server would never have stored it."""
    where = where or Location(kind=obj.kind, name="/".join(filter(None, (obj.namespace, obj.name))) or None)
    out = Findings()
    check_name_given(out, where.child("metadata"), obj.metadata)
    if isinstance(obj, ResourceClaim):
        _check_claim(out, where, obj)
    if isinstance(obj, ResourceSlice):  # counters from such a slice are ones no node's devices could draw on
        check_counters_or_devices(out, where.child("spec"), obj.spec)
    return out.problems


def _check_claim(out: Findings, where: Location, claim: ResourceClaim) -> None:
    if not claim.metadata.name and claim.metadata.generate_name:
        out.add(
            where.child("metadata.name"),
            "a claim to allocate needs its name; generateName is only turned "
            "into one when the API server stores the claim",
        )
    devices = where.child("spec.devices")
    _check_counts(out, devices.child("requests"), claim.spec.devices)
    _check_references(out, devices, claim.spec.devices)


def _check_counts(out: Findings, requests: Location, devices: DeviceClaim) -> None:
    for i, request in enumerate(devices.requests):
        at = index(requests, i)
        if request.exactly is not None:
            check_count_not_negative(out, at.child("exactly"), request.exactly)
        for j, sub in enumerate(request.first_available):
            check_count_not_negative(out, index(at.child("firstAvailable"), j), sub)


def _check_references(out: Findings, where: Location, devices: DeviceClaim) -> None:
    """Constraints and configuration must name requests the claim has: the allocator would skip the others."""
    names = request_names(devices)
    for part, lists in (
        ("constraints", [c.requests for c in devices.constraints]),
        ("config", [c.requests for c in devices.config]),
    ):
        for i, refs in enumerate(lists):
            at = index(where.child(part), i).child("requests")
            for k, ref in enumerate(refs):
                check_request_known(out, index(at, k), ref, names)
