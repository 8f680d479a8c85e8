"""Kubernetes' validation of claims, claim templates, device classes and device taint rules.

Rules and limits follow ``pkg/apis/resource/validation`` of Kubernetes 1.37.
Fields the API server defaults before validating (``allocationMode``, ``count``,
a toleration's ``operator``) are judged as if defaulted, so a manifest that leaves
them out is valid, as it is for ``kubectl apply``. CEL expressions are checked for
presence and length here; whether they compile is checked by the CEL layer through
:func:`drasat.models.validation.register_checker`.
"""

from __future__ import annotations

from drasat.models.errors import Location
from drasat.models.resource import (
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaintRule,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimTemplate,
)

from .claim_status import check_claim_status
from .formats import (
    Findings,
    check_conditions,
    check_dns_label,
    check_dns_subdomain,
    check_driver_name,
    check_fully_qualified_name,
    check_max_items,
    check_object_meta,
    check_pool_name,
    check_template_meta,
    check_unique,
    index,
    show,
    too_long,
)
from .pod_resources import is_extended
from .shared import RequestNames, check_device_taint, check_opaque, check_request_refs, check_toleration

MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_TOLERATIONS = 16
MAX_DERIVED_ATTRIBUTES = 32
MAX_CEL_LENGTH = 10 * 1024
MAX_TAINT_RULE_CONDITIONS = 8


# --- kinds --------------------------------------------------------------------------------------


def check_device_class(out: Findings, where: Location, obj: DeviceClass) -> None:
    """A DeviceClass as the API server validates it: metadata, selectors, config."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    spec, at = obj.spec, where.child("spec")
    check_selectors(out, at.child("selectors"), spec.selectors)
    if check_max_items(out, at.child("config"), spec.config, MAX_CONFIGS):
        for i, config in enumerate(spec.config):
            check_opaque(out, index(at.child("config"), i).child("opaque"), config.opaque)
    name = spec.extended_resource_name
    if name is not None and not is_extended(name):
        out.add(
            at.child("extendedResourceName"),
            f"{show(name)} is not an extended resource name: it needs a "
            "domain prefix other than kubernetes.io (for example example.com/gpu)",
        )


def check_resource_claim(out: Findings, where: Location, obj: ResourceClaim) -> None:
    """A ResourceClaim as the API server validates it: spec, then status against the request names."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    names = check_device_claim(out, where.child("spec.devices"), obj.spec.devices)
    if obj.status is not None:
        check_claim_status(out, where.child("status"), obj.status, names)


def check_resource_claim_template(out: Findings, where: Location, obj: ResourceClaimTemplate) -> None:
    """A ResourceClaimTemplate: its metadata and the claim spec it stamps out."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    if obj.spec.metadata is not None:
        check_template_meta(out, where.child("spec.metadata"), obj.spec.metadata)
    check_device_claim(out, where.child("spec.spec.devices"), obj.spec.spec.devices)


def check_device_taint_rule(out: Findings, where: Location, obj: DeviceTaintRule) -> None:
    """A DeviceTaintRule: its selector and taint."""
    check_object_meta(out, where.child("metadata"), obj.metadata)
    at = where.child("spec")
    selector = obj.spec.device_selector
    if selector is not None:
        if selector.driver is not None:
            check_driver_name(out, at.child("deviceSelector.driver"), selector.driver)
        if selector.pool is not None:
            check_pool_name(out, at.child("deviceSelector.pool"), selector.pool)
        if selector.device is not None:
            check_dns_label(out, at.child("deviceSelector.device"), selector.device)
    check_device_taint(out, at.child("taint"), obj.spec.taint)
    if obj.status is not None:
        check_conditions(out, where.child("status.conditions"), obj.status.conditions, MAX_TAINT_RULE_CONDITIONS)


# --- claims -----------------------------------------------------------------------------------


def request_names(claim: DeviceClaim) -> RequestNames:
    """The names a constraint or config may refer to: requests, and request/subrequest pairs."""
    return {r.name: {s.name for s in r.first_available} for r in claim.requests}


def check_device_claim(out: Findings, at: Location, claim: DeviceClaim) -> RequestNames:
    """Requests, constraints and config of a claim; returns the request names for reference checks."""
    names = request_names(claim)
    used = _constraint_attributes(claim.constraints)
    if check_max_items(out, at.child("requests"), claim.requests, MAX_REQUESTS):
        for i, request in enumerate(claim.requests):
            _check_request(out, index(at.child("requests"), i), request, used)
        check_unique(out, at.child("requests"), [r.name for r in claim.requests])
    if check_max_items(out, at.child("constraints"), claim.constraints, MAX_CONSTRAINTS):
        for i, constraint in enumerate(claim.constraints):
            _check_constraint(out, index(at.child("constraints"), i), constraint, names)
    if check_max_items(out, at.child("config"), claim.config, MAX_CONFIGS):
        for i, config in enumerate(claim.config):
            here = index(at.child("config"), i)
            check_request_refs(out, here.child("requests"), config.requests, names)
            check_opaque(out, here.child("opaque"), config.opaque)
    return names


def _check_request(out: Findings, at: Location, request: DeviceRequest, used: dict[str, set[str]]) -> None:
    check_dns_label(out, at.child("name"), request.name)
    if request.exactly is None and not request.first_available:
        out.add(at, "exactly one of `exactly` or `firstAvailable` is required")
    elif request.exactly is not None and request.first_available:
        out.add(at, "exactly one of `exactly` or `firstAvailable` is required, but both are set")
    elif request.exactly is not None:
        _check_exact(out, at.child("exactly"), request.exactly, used, request.name)
    else:
        subs = at.child("firstAvailable")
        if check_max_items(out, subs, request.first_available, MAX_SUBREQUESTS):
            for i, sub in enumerate(request.first_available):
                check_dns_label(out, index(subs, i).child("name"), sub.name)
                _check_exact(out, index(subs, i), sub, used, f"{request.name}/{sub.name}")
            check_unique(out, subs, [s.name for s in request.first_available])


def _check_exact(
    out: Findings, at: Location, request: ExactDeviceRequest | DeviceSubRequest, used: dict[str, set[str]], name: str
) -> None:
    """What an exact request and a subrequest share: class, selectors, mode and count, tolerations."""
    if request.device_class_name:
        check_dns_subdomain(out, at.child("deviceClassName"), request.device_class_name)
    else:
        out.add(at.child("deviceClassName"), "a device class name is required")
    check_selectors(out, at.child("selectors"), request.selectors)
    _check_derived(out, at.child("derivedAttributes"), request, used, name)
    mode, count = request.allocation_mode or "ExactCount", request.count or 0
    if mode == "All" and count != 0:
        out.add(at.child("count"), "must not be set when allocationMode is All")
    elif mode not in ("All", "ExactCount"):
        out.add(at.child("allocationMode"), f"{show(mode)} is not an allocation mode: use ExactCount or All")
    check_count_not_negative(out, at, request)
    if check_max_items(out, at.child("tolerations"), request.tolerations, MAX_TOLERATIONS):
        for i, toleration in enumerate(request.tolerations):
            check_toleration(out, index(at.child("tolerations"), i), toleration)


def check_count_not_negative(out: Findings, at: Location, request: ExactDeviceRequest | DeviceSubRequest) -> None:
    """ExactCount with a negative count: refused by validate, and by solve for the claims it allocates."""
    if (request.allocation_mode or "ExactCount") == "ExactCount" and (request.count or 0) < 0:
        out.add(at.child("count"), f"{request.count} must be greater than zero")


def _constraint_attributes(constraints: list[DeviceConstraint]) -> dict[str, set[str]]:
    """Request reference ("" for all requests) → attribute names its constraints compare."""
    used: dict[str, set[str]] = {}
    for constraint in constraints:
        name = constraint.match_attribute or constraint.distinct_attribute
        if name:
            for ref in constraint.requests or [""]:
                used.setdefault(ref, set()).add(name)
    return used


def _check_derived(
    out: Findings, at: Location, request: ExactDeviceRequest | DeviceSubRequest, used: dict[str, set[str]], name: str
) -> None:
    attributes = request.derived_attributes
    if not check_max_items(out, at, attributes, MAX_DERIVED_ATTRIBUTES):
        return
    parent = name.split("/")[0]
    visible = used.get("", set()) | used.get(name, set()) | (used.get(parent, set()) if "/" in name else set())
    for i, derived in enumerate(attributes):
        here = index(at, i)
        check_fully_qualified_name(out, here.child("name"), derived.name)
        if derived.name and derived.name not in visible:
            out.add(
                here.child("name"),
                f"{show(derived.name)} must be used by at least one matchAttribute or "
                "distinctAttribute constraint that applies to this request",
            )
        check_expression(out, here.child("expression"), derived.expression)
    check_unique(out, at, [d.name for d in attributes])


def _check_constraint(out: Findings, at: Location, constraint: DeviceConstraint, names: RequestNames) -> None:
    check_request_refs(out, at.child("requests"), constraint.requests, names)
    if constraint.match_attribute is not None and constraint.distinct_attribute is not None:
        out.add(at, "exactly one of `matchAttribute` or `distinctAttribute` is required, but both are set")
    elif constraint.match_attribute is not None:
        check_fully_qualified_name(out, at.child("matchAttribute"), constraint.match_attribute)
    elif constraint.distinct_attribute is not None:
        check_fully_qualified_name(out, at.child("distinctAttribute"), constraint.distinct_attribute)
    else:
        out.add(at, "exactly one of `matchAttribute` or `distinctAttribute` is required")


def check_selectors(out: Findings, at: Location, selectors: list[DeviceSelector]) -> None:
    """Selectors: each has a CEL expression, within the API server's size and cost limits."""
    if check_max_items(out, at, selectors, MAX_SELECTORS):
        for i, selector in enumerate(selectors):
            if selector.cel is None:
                out.add(index(at, i).child("cel"), "is required: a selector needs a CEL expression")
            else:
                check_expression(out, index(at, i).child("cel.expression"), selector.cel.expression)


def check_expression(out: Findings, at: Location, expression: str) -> None:
    """Presence and length of a CEL expression (compilation is the CEL layer's check)."""
    if not expression:
        out.add(at, "a CEL expression is required and must not be empty")
    elif len(expression.encode()) > MAX_CEL_LENGTH:
        out.add(at, too_long(MAX_CEL_LENGTH))
