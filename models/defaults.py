"""The API server's defaulting for resource.k8s.io/v1 (allocation-semantics.md §10.6), as a pure function.

When an object is written through the API, the server fills in defaults before it
stores the object; objects read from files never went through that. The solver
therefore holds defaulted copies (:class:`drasat.solver.allocation.problem.Problem` applies
:func:`apply_defaults` to every claim it is given). The loader does not: dumping a
loaded object must give back what the user wrote.

The defaults (``k8s.io/kubernetes/pkg/apis/resource/v1/defaults.go`` and the
generated ``+default`` markers):

- exact requests and subrequests: ``allocationMode`` empty → ``ExactCount``; with
  ``ExactCount``, ``count`` absent or 0 → 1;
- tolerations (in requests and in allocation results): ``operator`` empty → ``Equal``.

A taint's ``timeAdded`` is also defaulted by the server (to the time of writing);
nothing in allocation reads it, so it stays as written.

Copies are made along the changed paths only (unchanged parts are shared, never
mutated): a Problem is built for every solve, and deep-copying a few dozen claims
would cost as much as solving them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .resource import (
    AllocationResult,
    DeviceClaim,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)

EXACT_COUNT = "ExactCount"
ALL = "All"
EQUAL = "Equal"

Defaultable = TypeVar("Defaultable", ResourceClaim, ResourceClaimTemplate, ResourceClaimSpec)
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def apply_defaults(obj: Defaultable) -> Defaultable:
    """``obj`` as the API server would store it; ``obj`` itself when nothing is missing; ``obj`` is not changed."""
    if isinstance(obj, ResourceClaim):
        return _replaced(obj, spec=_spec(obj.spec), status=_status(obj.status) if obj.status else None)
    if isinstance(obj, ResourceClaimTemplate):
        return _replaced(obj, spec=_replaced(obj.spec, spec=_spec(obj.spec.spec)))
    return _spec(obj)


def status_defaults(claim: ResourceClaim) -> ResourceClaim:
    """``claim`` with only its status defaulted: what an allocation in use is read for (its devices), on every
    problem around the claims holding them — the spec, walked for nothing there, is left as written. A claim
    this returned before is known to be defaulted and is not walked again (the scheduler builds a problem per
    node and pod around the same claims in use)."""
    if _DEFAULTED.get(id(claim)) is claim:
        return claim
    done = _replaced(claim, status=_status(claim.status)) if claim.status else claim
    if len(_DEFAULTED) >= DEFAULTED_KEPT:
        _DEFAULTED.clear()
    _DEFAULTED[id(done)] = done  # kept alive by the map, so its id names no other object meanwhile
    return done


DEFAULTED_KEPT = 100_000
_DEFAULTED: dict[int, ResourceClaim] = {}


def _spec(spec: ResourceClaimSpec) -> ResourceClaimSpec:
    return _replaced(spec, devices=_devices(spec.devices))


def _devices(devices: DeviceClaim) -> DeviceClaim:
    return _replaced(devices, requests=_each(devices.requests, _request))


def _request(request: DeviceRequest) -> DeviceRequest:
    return _replaced(
        request,
        exactly=_exact(request.exactly) if request.exactly else None,
        first_available=_each(request.first_available, _exact),
    )


R = TypeVar("R", ExactDeviceRequest, DeviceSubRequest)


def _exact(request: R) -> R:
    mode = request.allocation_mode or EXACT_COUNT
    count = 1 if mode == EXACT_COUNT and not request.count else request.count
    return _replaced(request, allocation_mode=mode, count=count, tolerations=_each(request.tolerations, _toleration))


def _status(status: ResourceClaimStatus) -> ResourceClaimStatus:
    return _replaced(status, allocation=_allocation(status.allocation) if status.allocation else None)


def _allocation(allocation: AllocationResult) -> AllocationResult:
    results = _each(allocation.devices.results, _result)
    return _replaced(allocation, devices=_replaced(allocation.devices, results=results))


def _result(result: DeviceRequestAllocationResult) -> DeviceRequestAllocationResult:
    return _replaced(result, tolerations=_each(result.tolerations, _toleration))


def _toleration(toleration: DeviceToleration) -> DeviceToleration:
    return _replaced(toleration, operator=toleration.operator or EQUAL)


def _each(items: list[T], default: Callable[[T], T]) -> list[T]:
    """``items`` with each defaulted: the same list when no item changed."""
    out = [default(item) for item in items]
    return items if all(new is old for new, old in zip(out, items)) else out


def _replaced(model: M, **fields: Any) -> M:
    """``model`` with these field values: itself when each is the value it has, else a shallow copy."""
    update = {name: value for name, value in fields.items() if not _same(value, getattr(model, name))}
    return model.model_copy(update=update) if update else model


def _same(new: Any, old: Any) -> bool:
    return new == old if isinstance(new, (str, int, type(None))) else new is old
