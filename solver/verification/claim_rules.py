"""Verifier rules about one claim's devices: taints, constraints, node selector, configuration.

Part of :mod:`drasat.solver.verification.verifier`. Each rule is re-derived from the semantics
document (taints §6.8, constraints §6.9, node selectors §2.5.3, configuration §2.5.2),
checking the *intended* behaviour where upstream has a [bug-compatible] defect:
list-mode matchAttribute is the intersection of all devices' values, and
distinctAttribute is pairwise over all devices (two shares of one device included).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from drasat.models.meta import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from drasat.models.resource import (
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
)
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import DeviceId, claim_key

from .pools import SeenDevice, device_text

RequestSpec: TypeAlias = ExactDeviceRequest | DeviceSubRequest


@dataclass(frozen=True)
class ResultEntry:
    """One result entry of a proposed allocation, resolved against the claim and the node's pools."""

    claim: str
    result: DeviceRequestAllocationResult
    request: DeviceRequest
    sub: DeviceSubRequest | None
    spec: RequestSpec
    seen: SeenDevice
    multi: bool  # a share of a multi-allocatable device (ConsumableCapacity on)
    admin: bool

    @property
    def id(self) -> DeviceId:
        return self.seen.id

    def where(self) -> str:
        return f"claim {self.claim}, request {self.result.request}: device {device_text(self.id)}"


# --- taints (§6.8) -------------------------------------------------------------------------


def tolerates(tol: DeviceToleration, taint: DeviceTaint) -> bool:
    """§6.8.2: effect, key, then operator (empty means Equal)."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator in (None, "", "Equal"):
        return (tol.value or "") == (taint.value or "")
    return tol.operator == "Exists"


def taint_violations(pick: ResultEntry) -> list[str]:
    """Every NoSchedule/NoExecute taint must be tolerated by some toleration of the (sub)request."""
    out = []
    for taint in pick.seen.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in pick.spec.tolerations):
            words = f"{taint.key}={taint.value}" if taint.value else taint.key  # as kubectl prints it
            out.append(f"{pick.where()} has taint {words}:{taint.effect} that the request does not tolerate")
    return out


# --- constraints (§6.9) ------------------------------------------------------------------------


def lookup_attribute(seen: SeenDevice, name: str) -> DeviceAttribute | None:
    """§6.9.2: the exact key, else the id part when the domain is the device's driver."""
    attrs = seen.device.attributes
    if name in attrs:
        return attrs[name]
    domain, sep, ident = name.partition("/")
    if sep and domain == seen.id[0]:
        return attrs.get(ident)
    return None


def scalar_value(attr: DeviceAttribute) -> tuple[str, object] | None:
    """The typed scalar of an attribute (type order string, int, bool, version), or None for lists."""
    for kind in ("string", "int_", "bool_", "version"):
        value = getattr(attr, kind)
        if value is not None:
            return kind, value
    return None


_LIST_KINDS = (("ints", "int_"), ("bools", "bool_"), ("strings", "string"), ("versions", "version"))


def typed_set(attr: DeviceAttribute) -> tuple[str, frozenset[object]] | None:
    """The attribute as a typed set (§6.9.4): non-empty lists first, then a scalar as a singleton."""
    for kind, _ in _LIST_KINDS:
        values = getattr(attr, kind)
        if values:
            return kind, frozenset(values)
    for kind, scalar in _LIST_KINDS:
        value = getattr(attr, scalar)
        if value is not None:
            return kind, frozenset([value])
    return None


def constraint_applies(constraint: DeviceConstraint, pick: ResultEntry) -> bool:
    """§6.9.1: empty list = every device of the claim; else the request or ``req/sub`` is listed."""
    if not constraint.requests:
        return True
    return pick.request.name in constraint.requests or pick.result.request in constraint.requests


def _match_violation(values: list[DeviceAttribute], list_mode: bool) -> str:
    """Why the devices' values do not all match ("" when they do)."""
    if not values:
        return ""
    if list_mode:
        maybe = [typed_set(v) for v in values]
        sets = [s for s in maybe if s is not None]
        if len(sets) < len(maybe):
            return "a device has no usable value"
        if len({kind for kind, _ in sets}) > 1:
            return "the values have different types"
        return "" if frozenset.intersection(*(s for _, s in sets)) else "no value is common to all devices"
    if len(values) < 2:
        return ""
    scalars = [scalar_value(v) for v in values]
    if any(s is None for s in scalars):
        return "a list value cannot match another device without list-type attributes"
    return "" if len(set(scalars)) == 1 else "the values differ"


def _distinct_violation(values: list[DeviceAttribute], list_mode: bool) -> str:
    """Why two devices' values coincide ("" when all are pairwise distinct).

    Upstream accepts a value without a comparable form only for the first device it
    sees, so at most one such device can be part of a valid answer.
    """
    converted = [typed_set(v) if list_mode else scalar_value(v) for v in values]
    if len(values) > 1 and sum(c is None for c in converted) > 1:
        return "several devices have no comparable value"
    present = [c for c in converted if c is not None]
    for i, a in enumerate(present):
        for b in present[i + 1 :]:
            if a[0] != b[0]:
                continue
            shared = (a[1] & b[1]) if isinstance(a[1], frozenset) and isinstance(b[1], frozenset) else None
            if shared or (shared is None and a[1] == b[1]):
                return f"two devices share the value {sorted(shared, key=str) if shared else a[1]!r}"
    return ""


Deriver = Callable[[ResultEntry, str], "DeviceAttribute | None | str"]


def _no_derived(pick: ResultEntry, name: str) -> None:
    return None


def constraint_violations(
    claim: ResourceClaim, picks: Sequence[ResultEntry], features: Features, derive: Deriver = _no_derived
) -> list[str]:
    """matchAttribute / distinctAttribute over every device each constraint covers.

    ``derive`` gives a request's derived attribute of that name for the pick (it shadows the
    device's own), None when the request derives none, or the text of an evaluation error.
    """
    out = []
    for i, constraint in enumerate(claim.spec.devices.constraints):
        name = constraint.match_attribute or constraint.distinct_attribute
        if name is None:
            out.append(f"claim {claim_key(claim)}, constraint #{i}: empty constraint (no allocation is valid)")
            continue
        covered = [p for p in picks if constraint_applies(constraint, p)]
        derived = [derive(p, name) for p in covered]
        errors = [f"{device_text(p.id)}: {d}" for p, d in zip(covered, derived) if isinstance(d, str)]
        if errors:
            out.append(f"claim {claim_key(claim)}, constraint #{i}: derived attribute {name} fails: {errors[0]}")
            continue
        values = [d if d is not None else lookup_attribute(p.seen, name) for p, d in zip(covered, derived)]
        missing = [device_text(p.id) for p, v in zip(covered, values) if v is None]
        kind = "matchAttribute" if constraint.match_attribute else "distinctAttribute"
        if missing:
            out.append(
                f"claim {claim_key(claim)}, constraint #{i} ({kind} {name}): devices {missing} lack the attribute"
            )
            continue
        present = [v for v in values if isinstance(v, DeviceAttribute)]
        why = (
            _match_violation(present, features.list_attributes)
            if constraint.match_attribute
            else _distinct_violation(present, features.list_attributes)
        )
        if why:
            out.append(f"claim {claim_key(claim)}, constraint #{i} ({kind} {name}) is broken: {why}")
    return out


# --- node selector (§2.5.3) ----------------------------------------------------------------------


def node_name_selector(node_name: str) -> NodeSelector:
    """The node selector Kubernetes writes for a node-local allocation (``metadata.name`` In the node)."""
    field = NodeSelectorRequirement(key="metadata.name", operator="In", values=[node_name])
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[field])])


def _same_requirement(a: NodeSelectorRequirement, b: NodeSelectorRequirement) -> bool:
    return a.key == b.key and a.operator == b.operator and set(a.values) == set(b.values)


def expected_node_selector(claim: str, picks: Sequence[ResultEntry], node_name: str) -> NodeSelector | None | str:
    """The selector Kubernetes writes for these devices; a string when it would be an error."""
    term = NodeSelectorTerm()
    for pick in picks:
        sl, dev = pick.seen.slice, pick.seen.device
        source = dev if sl.spec.per_device_node_selection else sl.spec
        if source.node_name is not None or dev.binds_to_node:
            return node_name_selector(node_name)
        selector = source.node_selector
        if selector is None or not selector.node_selector_terms:
            continue
        if len(selector.node_selector_terms) > 1:
            return (
                f"create NodeSelector for claim {claim}: unsupported ResourceSlice.NodeSelector "
                f"with {len(selector.node_selector_terms)} terms"
            )
        only = selector.node_selector_terms[0]
        for mine, theirs in ((term.match_fields, only.match_fields), (term.match_expressions, only.match_expressions)):
            mine.extend(r for r in theirs if not any(_same_requirement(r, m) for m in mine))
    if term.match_fields or term.match_expressions:
        return NodeSelector(node_selector_terms=[term])
    return None


def selector_key(selector: NodeSelector | None) -> object:
    """An order-insensitive form of a selector, for comparing what was written with what must be."""
    if selector is None:
        return None

    def reqs(items: list[NodeSelectorRequirement]) -> tuple:
        return tuple(sorted((r.key, r.operator, tuple(sorted(set(r.values)))) for r in items))

    return tuple(sorted((reqs(t.match_expressions), reqs(t.match_fields)) for t in selector.node_selector_terms))


# --- configuration (§2.5.2) -----------------------------------------------------------------------


def _covered(claim: ResourceClaim, names: list[str], chosen: Mapping[str, str]) -> bool:
    return all(r.name in names or chosen.get(r.name, r.name) in names for r in claim.spec.devices.requests)


def _class_configs(
    claim: ResourceClaim, chosen: Mapping[str, str], classes: Mapping[str, DeviceClass]
) -> list[DeviceAllocationConfiguration]:
    entries: list[DeviceAllocationConfiguration] = []
    by_class: dict[str, list[DeviceAllocationConfiguration]] = {}
    for req in claim.spec.devices.requests:
        name = chosen.get(req.name)
        spec = _chosen_spec(req, name)
        if spec is None or name is None:
            continue
        if spec.device_class_name in by_class:
            for entry in by_class[spec.device_class_name]:
                entry.requests.append(name)
            continue
        cls = classes.get(spec.device_class_name)
        made = [
            DeviceAllocationConfiguration(source="FromClass", requests=[name], opaque=c.opaque)
            for c in (cls.spec.config if cls else [])
        ]
        by_class[spec.device_class_name] = made
        entries.extend(made)
    return entries


def _chosen_spec(req: DeviceRequest, name: str | None) -> RequestSpec | None:
    if name is None:
        return None
    if req.first_available:
        sub = name.partition("/")[2]
        return next((s for s in req.first_available if s.name == sub), None)
    return req.exactly


def expected_config(
    claim: ResourceClaim, chosen: Mapping[str, str], classes: Mapping[str, DeviceClass]
) -> list[DeviceAllocationConfiguration]:
    """§2.5.2: class configs of the classes used, then claim configs of selected requests, collapsed."""
    entries = _class_configs(claim, chosen, classes)
    for cfg in claim.spec.devices.config:
        if not cfg.requests:
            entries.append(DeviceAllocationConfiguration(source="FromClaim", requests=[], opaque=cfg.opaque))
            continue
        used = any(
            r.name in cfg.requests or (r.first_available and chosen.get(r.name) in cfg.requests)
            for r in claim.spec.devices.requests
        )
        if used:
            entries.append(
                DeviceAllocationConfiguration(source="FromClaim", requests=list(cfg.requests), opaque=cfg.opaque)
            )
    for entry in entries:
        if entry.requests and _covered(claim, entry.requests, chosen):
            entry.requests = []
    return entries


def config_key(configs: Sequence[DeviceAllocationConfiguration]) -> list[tuple]:
    """Allocation configs in a comparable form (source, requests, opaque parameters)."""
    return [(c.source, tuple(c.requests), None if c.opaque is None else repr(c.opaque.to_api())) for c in configs]
