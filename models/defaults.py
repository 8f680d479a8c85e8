"""The API server's defaulting for resource.k8s.io/v1 (allocation-semantics.md §10.6), as a pure function.

When an object is written through the API, the server fills in defaults before it
stores the object; objects read from files never went through that. The solver
therefore calls :func:`apply_defaults` on what it allocates. The loader does not:
dumping a loaded object must give back what the user wrote.

The defaults that matter for allocation:

- exact requests and subrequests: ``allocationMode`` empty → ``ExactCount``; with
  ``ExactCount``, ``count`` absent or 0 → 1;
- tolerations (in requests and in allocation results): ``operator`` empty → ``Equal``.

A taint's ``timeAdded`` is also defaulted by the server (to the time of writing);
nothing in allocation reads it, so it stays as written.
"""

from __future__ import annotations

from typing import TypeVar

from .resource import (
    DeviceRequest,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)

EXACT_COUNT = "ExactCount"
ALL = "All"
EQUAL = "Equal"

Defaultable = TypeVar("Defaultable", ResourceClaim, ResourceClaimTemplate, ResourceClaimSpec)


def apply_defaults(obj: Defaultable) -> Defaultable:
    """A defaulted deep copy of a claim, a claim template or a claim spec; ``obj`` is not changed."""
    out = obj.model_copy(deep=True)
    if isinstance(out, ResourceClaim):
        _default_spec(out.spec)
        allocation = out.status.allocation if out.status else None
        for result in allocation.devices.results if allocation else []:
            _default_tolerations(result.tolerations)
    elif isinstance(out, ResourceClaimTemplate):
        _default_spec(out.spec.spec)
    else:
        _default_spec(out)
    return out


def _default_spec(spec: ResourceClaimSpec) -> None:
    for request in spec.devices.requests:
        _default_request(request)


def _default_request(request: DeviceRequest) -> None:
    if request.exactly is not None:
        _default_mode_and_count(request.exactly)
        _default_tolerations(request.exactly.tolerations)
    for sub in request.first_available:
        _default_mode_and_count(sub)
        _default_tolerations(sub.tolerations)


def _default_mode_and_count(request: ExactDeviceRequest | DeviceSubRequest) -> None:
    if not request.allocation_mode:
        request.allocation_mode = EXACT_COUNT
    if request.allocation_mode == EXACT_COUNT and not request.count:
        request.count = 1


def _default_tolerations(tolerations: list[DeviceToleration]) -> None:
    for toleration in tolerations:
        if not toleration.operator:
            toleration.operator = EQUAL
