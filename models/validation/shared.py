"""Validation rules shared by slices, claims and allocation results.

Device taints and tolerations, binding conditions, skipped node operations, opaque
driver configuration and references to a claim's requests appear in several kinds;
each rule lives here once. Limits follow Kubernetes 1.37.
"""

from __future__ import annotations

from drasat.models.errors import Location
from drasat.models.resource import DeviceTaint, DeviceToleration, OpaqueDeviceConfiguration

from .formats import (
    Findings,
    check_dns_label,
    check_driver_name,
    check_json_object,
    check_label_key,
    check_label_value,
    check_max_items,
    check_unique,
    index,
    show,
)

MAX_REQUEST_REFS = 32
MAX_BINDING_CONDITIONS = 4
MAX_OPAQUE_PARAMETERS = 10 * 1024
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
SKIP_OPERATIONS = ("NodePrepareResources", "NodeUnprepareResources", "*")

RequestNames = dict[str, set[str]]
"""Request name → its subrequest names (empty for an exact request)."""


def check_request_refs(out: Findings, at: Location, refs: list[str], names: RequestNames) -> None:
    """References to ``request`` or ``request/subrequest`` of this claim, each once, at most 32."""
    if not check_max_items(out, at, refs, MAX_REQUEST_REFS):
        return
    for i, ref in enumerate(refs):
        check_request_ref(out, index(at, i), ref, names)
    check_unique(out, at, refs)


def check_request_ref(out: Findings, at: Location, ref: str, names: RequestNames) -> None:
    """One reference: DNS labels, and a request (or request/subrequest) that exists in the claim."""
    for part in ref.split("/")[:2]:
        check_dns_label(out, at, part)
    check_request_known(out, at, ref, names)


def check_request_known(out: Findings, at: Location, ref: str, names: RequestNames) -> None:
    """The reference names a request (or request/subrequest) of the claim; else the allocator would ignore it."""
    parts = ref.split("/")
    known = len(parts) <= 2 and parts[0] in names and (len(parts) == 1 or parts[1] in names[parts[0]])
    if not known:
        out.add(
            at,
            f"{show(ref)} must name a request of this claim, or a request and one of its subrequests separated by '/'",
        )


def check_opaque(out: Findings, at: Location, opaque: OpaqueDeviceConfiguration | None) -> None:
    """Opaque configuration: a driver name and JSON parameters within the size limit."""
    if opaque is None:
        out.add(at, "is required: a configuration entry needs opaque driver parameters")
        return
    check_driver_name(out, at.child("driver"), opaque.driver)
    check_json_object(out, at.child("parameters"), opaque.parameters, MAX_OPAQUE_PARAMETERS)


# --- taints, tolerations, binding conditions, node operations ---------------------------------


def check_device_taint(out: Findings, at: Location, taint: DeviceTaint) -> None:
    """A device taint: key, value and a known effect."""
    check_label_key(out, at.child("key"), taint.key)
    if taint.value:
        check_label_value(out, at.child("value"), taint.value)
    if not taint.effect:
        out.add(at.child("effect"), "is required: NoSchedule, NoExecute or None")
    elif taint.effect not in TAINT_EFFECTS:
        out.add(
            at.child("effect"), f"{show(taint.effect)} is not a device taint effect: use NoSchedule, NoExecute or None"
        )


def check_toleration(out: Findings, at: Location, toleration: DeviceToleration) -> None:
    """A device toleration: key, operator, value and effect as the API server accepts them."""
    if toleration.key:
        check_label_key(out, at.child("key"), toleration.key)
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        if toleration.value:
            out.add(at.child("value"), "must be empty when the operator is Exists")
    elif operator == "Equal":
        check_label_value(out, at.child("value"), toleration.value or "")
    else:
        out.add(at.child("operator"), f"{show(operator)} is not a toleration operator: use Equal or Exists")
    if toleration.effect and toleration.effect not in TAINT_EFFECTS:
        out.add(
            at.child("effect"),
            f"{show(toleration.effect)} is not a device taint effect: use NoSchedule, "
            "NoExecute or None (or leave it empty for all)",
        )


def check_binding_conditions(out: Findings, at: Location, conditions: list[str], failures: list[str]) -> None:
    """Condition types, at most 4 of each, no duplicates, no overlap, one list only with the other."""
    for field, items in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        if check_max_items(out, at.child(field), items, MAX_BINDING_CONDITIONS):
            for i, item in enumerate(items):
                check_label_key(out, index(at.child(field), i), item)
        check_unique(out, at.child(field), items)
    for i, item in enumerate(failures):
        if item in conditions:
            out.add(
                index(at.child("bindingFailureConditions"), i),
                f"{show(item)} is also a binding condition: the two lists must not overlap",
            )
    if failures and not conditions:
        out.add(at.child("bindingConditions"), "are required when bindingFailureConditions are given")
    if conditions and not failures:
        out.add(at.child("bindingFailureConditions"), "are required when bindingConditions are given")


def check_skip_node_operations(out: Findings, at: Location, operations: list[str]) -> None:
    """The node operations a slice may skip: known names, no repeats."""
    for i, operation in enumerate(operations):
        if operation not in SKIP_OPERATIONS:
            out.add(
                index(at, i),
                f"{show(operation)} is not a node operation: use NodePrepareResources, NodeUnprepareResources or *",
            )
    check_unique(out, at, operations)
    if "NodePrepareResources" in operations and not {"NodeUnprepareResources", "*"} & set(operations):
        out.add(at, "NodePrepareResources may only be skipped together with NodeUnprepareResources (or *)")
