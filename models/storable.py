"""What the API server would never have stored, checked on the objects an allocation uses.

One rule: an object the API server would not store is never allocated from. ``drasat solve`` (and
``schedule``, ``explain``, ``compare``) run ``drasat validate``'s API rules on every object they use
and refuse a breach with validate's own message — a ResourceSlice with three compatibility groups
is refused by both, as is a claim with a negative count. An object the question does not use is
validate's business alone.

One thing validate checks is left to the allocator, as the API server leaves it for stored
objects: CEL. The API server does not re-check the expressions of an object it has stored
(``validateDeviceClaim``'s ``stored``), so a selector Kubernetes' estimate now calls too complex
can still reach an allocator from an older cluster; Kubernetes' allocator stops it at run time,
and drasat does the same ("actual cost limit exceeded"). A selector that does not compile is an
allocator error in the allocator's own words.

Kubernetes' allocator unit tests, whose fixtures drasat's conformance scenarios replay, feed the
allocator objects the API server refuses on purpose (subrequest names that are not DNS labels,
capacity names that are not C identifiers, a count with allocationMode All) and pin what it does
with them. For those, ``--allow-invalid-objects`` (:func:`allowing_invalid`) keeps only the checks
without which nothing meaningful is left to allocate: a name, counts not negative, constraints and
config naming requests the claim has, a slice of counter sets or devices but not both. Numbers beyond
int64 never get this far: the loader refuses them, as the API server's decoder does
(:data:`drasat.models.meta.Int64`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import InputProblem, Location
from .meta import TypedObject
from .resource import DeviceClaim, ResourceClaim, ResourceSlice
from .validation import rule_problems
from .validation.claims import check_count_not_negative, request_names
from .validation.formats import Findings, check_name_given, index
from .validation.shared import check_request_known
from .validation.slices import check_counters_or_devices

_ALLOW_INVALID: ContextVar[bool] = ContextVar("drasat_allow_invalid_objects", default=False)
_CHECKED: ContextVar[dict[int, tuple[TypedObject, list[InputProblem]]] | None] = ContextVar(
    "drasat_checked_objects", default=None
)


@contextmanager
def allowing_invalid(allowed: bool = True) -> Iterator[None]:
    """Within the block, allocations accept objects that break API rules (the allocator tests' fixtures)."""
    token = _ALLOW_INVALID.set(allowed)
    try:
        yield
    finally:
        try:
            _ALLOW_INVALID.reset(token)
        except ValueError:  # closed by the collector in another context (an abandoned run): nothing to undo there
            pass


@contextmanager
def checking_once() -> Iterator[None]:
    """Within the block, each object is checked once, however often it is asked about.

    ``solve`` builds its question in two steps that each check the objects they use (the pods' question,
    then every pending claim's), and a 1,000-node fleet's 4,000 slices took 6 s a pass. Loaded objects
    are not changed after loading (stages copy what they change), so one answer holds for the block;
    each object is held with its answer, so that its id stays its own while the block lasts."""
    token = _CHECKED.set({} if _CHECKED.get() is None else _CHECKED.get())
    try:
        yield
    finally:
        _CHECKED.reset(token)


def unstorable_problems(obj: TypedObject, where: Location | None = None) -> list[InputProblem]:
    """The ways ``obj`` breaks a rule that means the API server would never have stored it."""
    checked = _CHECKED.get()
    if checked is None:
        return _unstorable_problems(obj, where)
    known = checked.get(id(obj))
    if known is None or known[0] is not obj:
        known = checked[id(obj)] = (obj, _unstorable_problems(obj, where))
    return known[1]


def _unstorable_problems(obj: TypedObject, where: Location | None) -> list[InputProblem]:
    where = where or Location(kind=obj.kind, name="/".join(filter(None, (obj.namespace, obj.name))) or None)
    out = Findings()
    if _ALLOW_INVALID.get():
        _check_minimal(out, where, obj)
    else:
        out.extend(rule_problems(obj, where))
    if isinstance(obj, ResourceClaim) and not obj.metadata.name and obj.metadata.generate_name:
        out.add(
            where.child("metadata.name"),
            "a claim to allocate needs its name; generateName is only turned "
            "into one when the API server stores the claim",
        )
    return out.problems


def _check_minimal(out: Findings, where: Location, obj: TypedObject) -> None:
    """What even an allocator fixture must have for an allocation to mean anything."""
    check_name_given(out, where.child("metadata"), obj.metadata)
    if isinstance(obj, ResourceClaim):
        devices = where.child("spec.devices")
        _check_counts(out, devices.child("requests"), obj.spec.devices)
        _check_references(out, devices, obj.spec.devices)
    if isinstance(obj, ResourceSlice):  # counters from such a slice are ones no node's devices could draw on
        check_counters_or_devices(out, where.child("spec"), obj.spec)


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
