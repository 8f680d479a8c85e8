"""Stage 5: turn chosen devices into ``status.allocation`` exactly as Kubernetes writes it.

Results per device in search order, configuration from classes then claims, and the
node selector that tells the scheduler where the allocation is usable.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from drasat.models.errors import AllocationError
from drasat.models.meta import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from drasat.models.quantity import Quantity
from drasat.models.resource import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
)
from drasat.models.trusted import builder, trusted
from drasat.solver.allocation.rules.reachability import node_local

from .inventory import Inventory
from .plan import ClaimPlan, Pick


def allocation_results(
    inv: Inventory, plans: Sequence[ClaimPlan], picks: Sequence[Sequence[Pick]]
) -> dict[str, AllocationResult]:
    """One AllocationResult per claim, keyed by the claim's key (``namespace/name``, ``claim_key``), in claim order."""
    results: dict[str, AllocationResult] = {}
    for plan, claim_picks in zip(plans, picks):
        results[plan.label] = allocation_result(inv, plan, claim_picks)
    return results


# Built without validation (models.trusted): every value comes from validated input. The usual shapes have
# builders of their own, called by position (a small call builds six of these objects).
_plain_result = builder(DeviceRequestAllocationResult, "request", "driver", "pool", "device")
_devices = builder(DeviceAllocationResult, "results")
_allocation = builder(AllocationResult, "devices", "node_selector")
_selector = builder(NodeSelector, "node_selector_terms")
_expressions_term = builder(NodeSelectorTerm, "match_expressions")
_requirement = builder(NodeSelectorRequirement, "key", "operator", "values")


def allocation_result(inv: Inventory, plan: ClaimPlan, picks: Sequence[Pick]) -> AllocationResult:
    """One claim's AllocationResult from its picks: devices in request order, share IDs, config, node selector."""
    ordered = sorted(picks, key=_request_then_device) if len(picks) > 1 else picks
    if len(ordered) == 1:  # the usual claim: no comprehension (on Python 3.11 a call of its own)
        results = [_result(inv, plan, ordered[0], 0)]
    else:
        results = [_result(inv, plan, pick, n) for n, pick in enumerate(ordered)]
    configured = bool(plan.claim.spec.devices.config)  # most claims and classes have none: _config is skipped
    if not configured:
        for pick in ordered:
            if pick.alt.device_class.spec.config:
                configured = True
                break
    config = _config(plan, ordered) if configured else None
    devices = trusted(DeviceAllocationResult, results=results, config=config) if config else _devices(results)
    selector = node_selector(inv, plan, ordered)
    if selector is not None and not inv.features.binding_conditions:
        return _allocation(devices, selector)  # the usual shape, by its own builder
    fields: dict[str, Any] = {"devices": devices}
    if selector is not None:
        fields["node_selector"] = selector
    if inv.features.binding_conditions:
        # kube-scheduler stamps the allocation when it writes it (with both binding gates on).
        fields["allocation_timestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return trusted(AllocationResult, **fields)


SHARE_IDS = uuid.UUID("6b0c6a52-3d7e-5d0e-9a51-646472617361")
"""The namespace of drasat's share IDs (a fixed UUID, so that the same answer always prints the same IDs)."""


def _share_id(owner: str, inv: Inventory, pick: Pick, position: int) -> str:
    """A share's ID, derived from the claim (uid, else namespace/name), request, device and its place
    in the result: reproducible from run to run, unlike Kubernetes' random ones, and still unique."""
    driver, pool, device = inv.devices[pick.device].id
    return str(uuid.uuid5(SHARE_IDS, f"{owner}/{pick.alt.result_name}/{driver}/{pool}/{device}/{position}"))


def _result(inv: Inventory, plan: ClaimPlan, pick: Pick, position: int) -> DeviceRequestAllocationResult:
    dev = inv.devices[pick.device]
    alt = pick.alt
    driver, pool, name = dev.id
    if not (
        alt.admin
        or alt.tolerations
        or pick.share is not None
        or dev.device.binding_conditions
        or dev.slice.spec.skip_node_operations
    ):
        return _plain_result(alt.result_name, driver, pool, name)  # the usual device: four fields
    fields: dict = {"request": alt.result_name, "driver": driver, "pool": pool, "device": name}
    if alt.admin:
        fields["admin_access"] = True
    if alt.tolerations:
        fields["tolerations"] = [t.model_copy() for t in alt.tolerations]
    if inv.features.binding_conditions and dev.device.binding_conditions:
        fields["binding_conditions"] = list(dev.device.binding_conditions)
        fields["binding_failure_conditions"] = list(dev.device.binding_failure_conditions)
    if pick.share is not None:
        fields["share_id"] = _share_id(plan.claim.metadata.uid or plan.label, inv, pick, position)
        if pick.share:
            fields["consumed_capacity"] = {
                name: Quantity(amount, dev.device.capacity[name].value.format) for name, amount in pick.share.items()
            }
    if dev.slice.spec.skip_node_operations and inv.features["DRAOptionalNodeOperations"]:
        fields["skip_node_operations"] = list(dev.slice.spec.skip_node_operations)
    return trusted(DeviceRequestAllocationResult, **fields)


def _request_then_device(pick: Pick) -> tuple[int, int]:
    return pick.alt.request, pick.device


def _config(plan: ClaimPlan, picks: Sequence[Pick]) -> list[DeviceAllocationConfiguration]:
    """Class configs (FromClass) for the classes used, then claim configs (FromClaim) that apply."""
    selected = {p.alt.request: p.alt for p in picks}
    names = {r: alt.result_name for r, alt in selected.items()}
    entries: list[DeviceAllocationConfiguration] = []
    by_class: dict[str, list[DeviceAllocationConfiguration]] = {}
    for r in sorted(selected):
        cls = selected[r].device_class
        if cls.name in by_class:
            for entry in by_class[cls.name]:
                entry.requests.append(names[r])
            continue
        by_class[cls.name] = [
            DeviceAllocationConfiguration(
                source="FromClass", requests=[names[r]], opaque=c.opaque.model_copy(deep=True)
            )
            for c in cls.spec.config
            if c.opaque is not None
        ]
        entries.extend(by_class[cls.name])
    for c in plan.claim.spec.devices.config:
        if c.opaque is None:
            continue
        if not c.requests or any(
            req.name in c.requests or names.get(req.index) in c.requests for req in plan.requests if req.index in names
        ):
            entries.append(
                DeviceAllocationConfiguration(
                    source="FromClaim", requests=list(c.requests), opaque=c.opaque.model_copy(deep=True)
                )
            )
    return [_collapsed(entry, plan, names) for entry in entries]


def _collapsed(
    entry: DeviceAllocationConfiguration, plan: ClaimPlan, names: dict[int, str]
) -> DeviceAllocationConfiguration:
    """A config naming every request of the claim applies to all: written without ``requests``."""
    if entry.requests and all(
        req.name in entry.requests or names.get(req.index) in entry.requests for req in plan.requests
    ):
        return DeviceAllocationConfiguration(source=entry.source, opaque=entry.opaque)
    return entry


def node_selector(inv: Inventory, plan: ClaimPlan, picks: Sequence[Pick]) -> NodeSelector | None:
    """Where the allocation can be used: the node itself if any device is node-local, else merged labels."""
    expressions: list[NodeSelectorRequirement] = []
    fields: list[NodeSelectorRequirement] = []
    for pick in picks:
        dev = inv.devices[pick.device]
        owner = dev.device if dev.slice.spec.per_device_node_selection else dev.slice.spec
        if node_local(dev):
            return _selector(
                [trusted(NodeSelectorTerm, match_fields=[_requirement("metadata.name", "In", [inv.node.name])])]
            )
        selector = owner.node_selector
        if selector is None or not selector.node_selector_terms:
            continue
        if len(selector.node_selector_terms) > 1:
            raise AllocationError(
                f"create NodeSelector for claim {plan.claim.name}: unsupported "
                f"ResourceSlice.NodeSelector with {len(selector.node_selector_terms)} terms"
            )
        term = selector.node_selector_terms[0]
        if term.match_fields:
            _merge(fields, term.match_fields)
        if term.match_expressions:
            _merge(expressions, term.match_expressions)
    if not fields:
        return _selector([_expressions_term(expressions)]) if expressions else None
    term = (
        trusted(NodeSelectorTerm, match_expressions=expressions, match_fields=fields)
        if expressions
        else trusted(NodeSelectorTerm, match_fields=fields)
    )
    return _selector([term])


def _merge(into: list[NodeSelectorRequirement], new: Sequence[NodeSelectorRequirement]) -> None:
    for req in new:
        if into and any(
            r.key == req.key and r.operator == req.operator and set(r.values) == set(req.values) for r in into
        ):
            continue
        if "values" in req.__pydantic_fields_set__:  # printed as written: Exists and DoesNotExist have none
            into.append(_requirement(req.key, req.operator, list(req.values)))
        else:
            into.append(trusted(NodeSelectorRequirement, key=req.key, operator=req.operator))
