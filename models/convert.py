"""Older ``resource.k8s.io`` shapes (v1beta2, v1beta1, v1alpha3) turned into v1, at the dict level.

The API server converts between versions for its clients; a tool that reads
files must do it itself (allocation-semantics.md §10). Conversion works on the
parsed YAML, before any model sees it, so the v1 models stay the one shape the
rest of drasat knows. It never mutates its input.

What changed between the versions:

- v1beta2 has the v1 shape: only the apiVersion changes.
- v1beta1 has flat requests (``deviceClassName``, ``count``, ... directly in the
  request) which become ``exactly``; devices wrap their fields in ``basic``, which
  is flattened; a slice's ``nodeName: ""`` and ``allNodes: false`` mean "not set".
- v1alpha3 is v1beta1 plus: ``adminAccess: false`` means "not set"; capacities may
  be plain quantities (they become ``{value: ...}``); and fields of classic DRA
  (a control-plane ``controller`` that allocates a claim, ``suitableNodes``,
  ``deallocationRequested``) and DeviceTaintRule selection by class or CEL, which
  v1 cannot express. Those are errors naming the field, unless they hold their
  empty value, which means the same as absent.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .errors import InputError, InputProblem, Location
from .kinds import RESOURCE_GROUP, split_api_version

V1 = f"{RESOURCE_GROUP}/v1"
OLD_VERSIONS = ("v1beta2", "v1beta1", "v1alpha3")

# Request fields that v1beta1/v1alpha3 keep directly in a request and v1 keeps under `exactly`.
_FLAT_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "derivedAttributes",
)


class _Context:
    """The version being converted and the problems found so far."""

    def __init__(self, version: str, location: Location) -> None:
        self.version = version
        self.location = location
        self.problems: list[InputProblem] = []

    def error(self, path: str, message: str) -> None:
        self.problems.append(InputProblem(self.location.child(path), message))


def needs_conversion(api_version: str) -> bool:
    """True for the older resource.k8s.io versions this module converts."""
    group, version = split_api_version(api_version)
    return group == RESOURCE_GROUP and version in OLD_VERSIONS


def to_v1(doc: dict[str, Any], location: Location) -> dict[str, Any]:
    """A copy of ``doc`` in the v1 shape; InputError listing every field v1 cannot express.

    ``doc`` is one object of kind DeviceClass, ResourceClaim, ResourceClaimTemplate,
    ResourceSlice or DeviceTaintRule in an older resource.k8s.io version. Values of
    the wrong type are left alone: the v1 model reports them with their path.
    """
    _, version = split_api_version(str(doc.get("apiVersion", "")))
    if version not in OLD_VERSIONS:
        return doc
    out = copy.deepcopy(doc)
    out["apiVersion"] = V1
    context = _Context(version, location)
    if version != "v1beta2":
        _CONVERTERS.get(str(doc.get("kind")), _nothing)(out, context)
    if context.problems:
        raise InputError(context.problems)
    return out


def _nothing(doc: dict[str, Any], context: _Context) -> None:
    """Kinds whose older shape equals v1."""


# --- DeviceClass ------------------------------------------------------------------------------


def _device_class(doc: dict[str, Any], context: _Context) -> None:
    spec = doc.get("spec")
    if isinstance(spec, dict) and "suitableNodes" in spec:
        if spec.pop("suitableNodes") not in (None, {}):
            context.error(
                "spec.suitableNodes",
                "suitableNodes (classic DRA, removed in Kubernetes 1.32) has no "
                "equivalent in resource.k8s.io/v1; select nodes through the devices' slices instead",
            )


# --- ResourceClaim and ResourceClaimTemplate ---------------------------------------------------


def _claim(doc: dict[str, Any], context: _Context) -> None:
    spec = doc.get("spec")
    if isinstance(spec, dict):
        _claim_spec(spec, "spec", context)
    status = doc.get("status")
    if isinstance(status, dict):
        _claim_status(status, context)


def _claim_template(doc: dict[str, Any], context: _Context) -> None:
    spec = doc.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("spec"), dict):
        _claim_spec(spec["spec"], "spec.spec", context)


def _claim_spec(spec: dict[str, Any], path: str, context: _Context) -> None:
    if "controller" in spec:
        if spec.pop("controller") not in (None, ""):
            context.error(
                f"{path}.controller",
                "a claim allocated by a DRA control-plane controller (the v1alpha3 "
                "field `controller`, removed in Kubernetes 1.32) cannot be expressed in "
                "resource.k8s.io/v1, where the scheduler allocates every claim; remove the field",
            )
    devices = spec.get("devices")
    requests = devices.get("requests") if isinstance(devices, dict) else None
    if isinstance(requests, list):
        for index, request in enumerate(requests):
            if isinstance(request, dict):
                requests[index] = _request(request, context.version)


def _request(request: dict[str, Any], version: str) -> dict[str, Any]:
    """A flat request as v1 writes it: the single-request fields move into ``exactly``.

    As in Kubernetes' conversion, ``exactly`` is built when any of those fields holds
    a non-empty value; ``firstAvailable`` is kept. A request with both ends up with
    both, which v1 validation then rejects (as the API server does).
    """
    exactly: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for key, value in request.items():
        if key not in _FLAT_REQUEST_FIELDS:
            out[key] = value
        elif _meaningful(key, value, version):
            exactly[key] = value
    if exactly:
        out["exactly"] = exactly
    return out


def _meaningful(key: str, value: Any, version: str) -> bool:
    """Whether a flat request field says something (its empty value means "not set")."""
    if value is None:
        return False
    if key in ("deviceClassName", "allocationMode"):
        return value != ""
    if key == "count":
        return value != 0
    if key == "adminAccess" and version == "v1alpha3":
        return value is not False
    return True


def _claim_status(status: dict[str, Any], context: _Context) -> None:
    if "deallocationRequested" in status:
        if status.pop("deallocationRequested") not in (None, False):
            context.error(
                "status.deallocationRequested",
                "deallocationRequested (classic DRA, removed in Kubernetes "
                "1.32) has no equivalent in resource.k8s.io/v1",
            )
    allocation = status.get("allocation")
    if isinstance(allocation, dict) and "controller" in allocation:
        if allocation.pop("controller") not in (None, ""):
            context.error(
                "status.allocation.controller",
                "an allocation made by a DRA control-plane controller "
                "(classic DRA, removed in Kubernetes 1.32) cannot be expressed in resource.k8s.io/v1",
            )


# --- ResourceSlice -----------------------------------------------------------------------------


def _slice(doc: dict[str, Any], context: _Context) -> None:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("nodeName") == "":
        del spec["nodeName"]
    if spec.get("allNodes") is False:
        del spec["allNodes"]
    devices = spec.get("devices")
    if isinstance(devices, list):
        for index, device in enumerate(devices):
            if isinstance(device, dict):
                devices[index] = _device(device, f"spec.devices[{index}]", context)


def _device(device: dict[str, Any], path: str, context: _Context) -> dict[str, Any]:
    """``{name, basic: {...}}`` → ``{name, ...}``; plain v1alpha3 capacities → ``{value: ...}``."""
    if "basic" not in device or not isinstance(device["basic"], dict):
        return device
    out = {key: value for key, value in device.items() if key != "basic"}
    for key, value in device["basic"].items():
        if key in out:
            context.error(f"{path}.{key}", f"`{key}` is given both in the device and in its `basic` part")
        out[key] = value
    capacity = out.get("capacity")
    if context.version == "v1alpha3" and isinstance(capacity, dict):
        out["capacity"] = {
            key: value if isinstance(value, dict) else {"value": value} for key, value in capacity.items()
        }
    return out


# --- DeviceTaintRule ---------------------------------------------------------------------------


def _taint_rule(doc: dict[str, Any], context: _Context) -> None:
    spec = doc.get("spec")
    selector = spec.get("deviceSelector") if isinstance(spec, dict) else None
    if not isinstance(selector, dict):
        return
    for key in ("deviceClassName", "selectors"):
        if key in selector and selector.pop(key) not in (None, "", []):
            context.error(
                f"spec.deviceSelector.{key}",
                f"selecting tainted devices by `{key}` (v1alpha3, dropped "
                "in Kubernetes 1.35) cannot be expressed in resource.k8s.io/v1, which selects by driver, "
                "pool and device name only; ignoring it would taint more devices than intended",
            )


_CONVERTERS: dict[str, Callable[[dict[str, Any], _Context], None]] = {
    "DeviceClass": _device_class,
    "ResourceClaim": _claim,
    "ResourceClaimTemplate": _claim_template,
    "ResourceSlice": _slice,
    "DeviceTaintRule": _taint_rule,
}
