"""The verifier's own view of the world: which devices a node sees, and which are in use.

This is part of :mod:`drasat.solver.verification.verifier`, the independent checker of solver answers.
It re-derives pool gathering (semantics §3), node-selector matching (§8), DeviceTaintRule
application (§6.8.4) and the allocated state (§2.4) straight from the specification and
shares no code with the solver, so that a bug in the solver's inventory cannot hide
itself by being checked against itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.errors import SelectorParseError
from drasat.models.meta import NodeSelector, NodeSelectorRequirement
from drasat.models.resource import (
    CounterSet,
    Device,
    DeviceTaint,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
)
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import DeviceId, NodeInfo, Problem

PoolId = tuple[str, str]
"""(driver, pool): a pool's identity (never the pool name alone)."""


def device_text(device_id: DeviceId) -> str:
    """``driver/pool/device``, the way Kubernetes prints a device in messages."""
    return "/".join(device_id)


# --- node selectors (§8) -------------------------------------------------------------------


def _check_requirement(req: NodeSelectorRequirement, is_field: bool) -> None:
    """Kubernetes validates every requirement before matching; any error spoils the selector."""
    op, values = req.operator, req.values
    if is_field:
        if op not in ("In", "NotIn") or len(values) != 1 or req.key != "metadata.name":
            raise SelectorParseError(f"unsupported field requirement {req.key} {op} {values}")
        return
    if op in ("In", "NotIn") and not values:
        raise SelectorParseError(f"{req.key} {op} needs at least one value")
    elif op in ("Exists", "DoesNotExist") and values:
        raise SelectorParseError(f"{req.key} {op} takes no values")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorParseError(f"{req.key} {op} needs exactly one value")
        try:
            int(values[0])
        except ValueError:
            raise SelectorParseError(f"{req.key} {op} needs an integer, not {values[0]!r}") from None
    elif op not in ("In", "NotIn", "Exists", "DoesNotExist"):
        raise SelectorParseError(f"unknown operator {op!r}")


def _label_matches(req: NodeSelectorRequirement, labels: dict[str, str]) -> bool:
    present = req.key in labels
    value = labels.get(req.key)
    if req.operator == "In":
        return present and value in req.values
    if req.operator == "NotIn":
        return not present or value not in req.values
    if req.operator == "Exists":
        return present
    if req.operator == "DoesNotExist":
        return not present
    try:
        number = int(value or "") if present else None
    except ValueError:
        return False
    if number is None:
        return False
    limit = int(req.values[0])
    return number > limit if req.operator == "Gt" else number < limit


def selector_matches(node: NodeInfo, selector: NodeSelector) -> bool:
    """Node affinity: terms ORed, requirements inside a term ANDed, empty terms match nothing."""
    for term in selector.node_selector_terms:
        for req in term.match_expressions:
            _check_requirement(req, is_field=False)
        for req in term.match_fields:
            _check_requirement(req, is_field=True)
    labels = dict(node.labels)
    for term in selector.node_selector_terms:
        if not term.match_expressions and not term.match_fields:
            continue
        fields_ok = not node.name or all((node.name in r.values) == (r.operator == "In") for r in term.match_fields)
        if fields_ok and all(_label_matches(r, labels) for r in term.match_expressions):
            return True
    return False


def node_matches(node: NodeInfo, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None) -> bool:
    """NodeMatches of §3.1: the first field that is set decides, in the order nodeName (non-empty:
    equal to the node's name), allNodes (true: every node), nodeSelector (§8); none set: no node."""
    deciders = (
        (bool(node_name), lambda: node_name == node.name),
        (all_nodes is True, lambda: True),
        (selector is not None, lambda: selector is not None and selector_matches(node, selector)),
    )
    return next((decide() for is_set, decide in deciders if is_set), False)


# --- pools (§3) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SeenDevice:
    """One device in a usable pool's device slices, with what the checks need to know."""

    id: DeviceId
    device: Device
    slice: ResourceSlice
    on_node: bool  # false when per-device node selection excludes this node
    node_error: str | None  # a per-device node selector that does not parse
    taints: tuple[DeviceTaint, ...]  # the device's own taints plus DeviceTaintRule taints


@dataclass
class SeenPool:
    """A gathered pool: usable, incomplete or invalid (obsolete pools are not gathered)."""

    id: PoolId
    status: str  # "usable" | "incomplete" | "invalid"
    reason: str = ""
    devices: dict[str, SeenDevice] = field(default_factory=dict)
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    accounting: list[SeenDevice] = field(default_factory=list)  # devices whose allocation uses counters

    def text(self) -> str:
        return "/".join(self.id)


def _skipped_by_gate(sl: ResourceSlice, features: Features) -> bool:
    spec = sl.spec
    return not features.partitionable and (spec.per_device_node_selection is not None or bool(spec.shared_counters))


def slice_relevant(sl: ResourceSlice, node: NodeInfo, features: Features) -> bool:
    """§3.1: is this slice one the node sees? Raises SelectorParseError for a broken slice selector."""
    spec = sl.spec
    if _skipped_by_gate(sl, features):
        return False
    if spec.node_name or spec.all_nodes or spec.node_selector is not None:
        return node_matches(node, spec.node_name or None, spec.all_nodes, spec.node_selector)
    if spec.per_device_node_selection:
        for dev in spec.devices:
            if _device_node_match(node, dev)[0]:
                return True
    return False


def _device_node_match(node: NodeInfo, dev: Device) -> tuple[bool, str | None]:
    """Per-device node selection: (matches, parse error text)."""
    try:
        return node_matches(node, dev.node_name, dev.all_nodes, dev.node_selector), None
    except SelectorParseError as exc:
        return False, str(exc)


def _is_counter_slice(sl: ResourceSlice, features: Features) -> bool:
    return features.partitionable and bool(sl.spec.shared_counters)


def rule_taints(sl: ResourceSlice, dev: Device, rules: Sequence[DeviceTaintRule]) -> list[DeviceTaint]:
    """§6.8.4: taints a DeviceTaintRule adds; a rule without a selector taints every device."""
    added: list[DeviceTaint] = []
    for rule in rules:
        sel = rule.spec.device_selector
        if sel is not None:
            if sel.driver and sel.driver != sl.spec.driver:
                continue
            if sel.pool and sel.pool != sl.spec.pool.name:
                continue
            if sel.device and sel.device != dev.name:
                continue
        added.append(rule.spec.taint)
    return added


def _seen(sl: ResourceSlice, dev: Device, node: NodeInfo, rules: Sequence[DeviceTaintRule]) -> SeenDevice:
    on_node, error = True, None
    if sl.spec.per_device_node_selection:
        on_node, error = _device_node_match(node, dev)
    taints = tuple(dev.taints) + tuple(rule_taints(sl, dev, rules))
    return SeenDevice((sl.spec.driver, sl.spec.pool.name, dev.name), dev, sl, on_node, error, taints)


def _validate_pool(
    device_slices: list[ResourceSlice],
    other_devices: list[ResourceSlice],
    counter_slices: list[ResourceSlice],
    features: Features,
) -> str:
    """§3.4 validation; returns why the pool is invalid, or "" when it is fine."""
    names = [d.name for sl in device_slices for d in sl.spec.devices]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        return f"device names {dupes} appear more than once"
    if not features.partitionable:
        return ""
    set_names = [cs.name for sl in counter_slices for cs in sl.spec.shared_counters]
    if len(set_names) != len(set(set_names)):
        return "a counter set name appears more than once"
    sets = {cs.name: cs for sl in counter_slices for cs in sl.spec.shared_counters}
    for sl in device_slices + other_devices:
        for dev in sl.spec.devices:
            for use in dev.consumes_counters:
                cs = sets.get(use.counter_set)
                if cs is None:
                    return f"device {dev.name} consumes from unknown counter set {use.counter_set}"
                missing = sorted(set(use.counters) - set(cs.counters))
                if missing:
                    return f"device {dev.name} consumes unknown counters {missing} of {use.counter_set}"
    return ""


def _build_pool(pid: PoolId, relevant: list[ResourceSlice], others: list[ResourceSlice], problem: Problem) -> SeenPool:
    """§3.4: split into device and counter-set slices, validate, index the visible devices."""
    features, rules = problem.features, _active_rules(problem)
    relevant = sorted(relevant, key=lambda s: s.name.encode())
    device_slices = [s for s in relevant if not _is_counter_slice(s, features)]
    counter_slices = [s for s in relevant if _is_counter_slice(s, features)]
    names = {s.name for s in relevant}
    not_targeting: list[ResourceSlice] = []
    for sl in others:
        if sl.name in names:
            continue
        (counter_slices if _is_counter_slice(sl, features) else not_targeting).append(sl)
    pool = SeenPool(pid, "usable")
    reason = _validate_pool(device_slices, not_targeting, counter_slices, features)
    if reason:
        return SeenPool(pid, "invalid", reason)
    node = problem.node
    for sl in device_slices:
        for dev in sl.spec.devices:
            seen = _seen(sl, dev, node, rules)
            pool.devices[dev.name] = seen
            pool.accounting.append(seen)
    for sl in not_targeting:
        pool.accounting.extend(_seen(sl, dev, node, rules) for dev in sl.spec.devices)
    if features.partitionable:
        pool.counter_sets = {cs.name: cs for sl in counter_slices for cs in sl.spec.shared_counters}
    if not features.compatibility_groups and _has_groups(pool.accounting):
        return SeenPool(
            pid, "incomplete", "its devices have compatibilityGroups, but DRADeviceCompatibilityGroups is off"
        )
    return pool


def _has_groups(devices: Iterable[SeenDevice]) -> bool:
    """Seed document: with the gate off, a pool that has grouped devices counts as incomplete
    (the API server would have dropped the field); empty or null lists do not count."""
    return any(use.compatibility_groups for seen in devices for use in seen.device.consumes_counters)


def _active_rules(problem: Problem) -> Sequence[DeviceTaintRule]:
    return problem.taint_rules if problem.features.taint_rules else ()


def _newest_relevant(problem: Problem) -> tuple[dict[PoolId, list[ResourceSlice]], list[str]]:
    """§3.1–3.2: relevant slices per pool, keeping the highest generation seen among them."""
    node, features = problem.node, problem.features
    pools: dict[PoolId, list[ResourceSlice]] = {}
    errors: list[str] = []
    local = [s for s in problem.slices if s.spec.node_name == node.name]
    shared = [s for s in problem.slices if not s.spec.node_name]
    for sl in local + shared:
        try:
            if not slice_relevant(sl, node, features):
                continue
        except SelectorParseError as exc:
            errors.append(
                f"slice {sl.name} has a node selector that does not parse ({exc}): "
                "Kubernetes refuses to allocate anything"
            )
            continue
        pid = (sl.spec.driver, sl.spec.pool.name)
        current = pools.get(pid)
        if current is None or sl.spec.pool.generation > current[0].spec.pool.generation:
            pools[pid] = [sl]
        elif sl.spec.pool.generation == current[0].spec.pool.generation:
            current.append(sl)
    return pools, errors


def gather_pools(problem: Problem) -> tuple[dict[PoolId, SeenPool], list[str]]:
    """§3.3: the pools a node sees, each usable, incomplete or invalid; plus fatal gathering errors."""
    relevant, errors = _newest_relevant(problem)
    pools: dict[PoolId, SeenPool] = {}
    for pid, slices in relevant.items():
        ref = slices[0].spec.pool
        if len(slices) == ref.resource_slice_count:
            pools[pid] = _build_pool(pid, slices, [], problem)
            continue
        same = [s for s in problem.slices if (s.spec.driver, s.spec.pool.name) == pid]
        if any(s.spec.pool.generation > ref.generation for s in same):
            continue  # obsolete: dropped silently
        current = [s for s in same if s.spec.pool.generation == ref.generation]
        if len(current) == ref.resource_slice_count:
            pools[pid] = _build_pool(pid, slices, current, problem)
        else:
            pools[pid] = SeenPool(pid, "incomplete", f"has {len(current)} of {ref.resource_slice_count} slices")
    return pools, errors


# --- allocated state (§2.4) ----------------------------------------------------------------


@dataclass
class AllocatedState:
    """Devices already in use by claims that hold an allocation (admin-access results excluded)."""

    exclusive: set[DeviceId] = field(default_factory=set)
    shares: set[tuple[DeviceId, str]] = field(default_factory=set)
    shared_devices: set[DeviceId] = field(default_factory=set)
    capacity: dict[DeviceId, dict[str, Fraction]] = field(default_factory=dict)

    def is_allocated(self, device_id: DeviceId) -> bool:
        """The counter-accounting predicate: exclusively held, shared, or with capacity in use."""
        return device_id in self.exclusive or device_id in self.capacity or device_id in self.shared_devices


def allocated_state(claims: Iterable[ResourceClaim], features: Features) -> AllocatedState:
    """§2.4, rule by rule, over every result of every claim that holds an allocation:
    (1) admin access never counts; (2) with DRAConsumableCapacity a result with a share ID is a
    share, whose consumedCapacity (when present) adds to the device's aggregated capacity;
    (3) anything else holds the device exclusively."""
    state = AllocatedState()
    results = [r for c in claims if c.status and c.status.allocation for r in c.status.allocation.devices.results]
    for res in (r for r in results if not r.admin_access):
        device_id = (res.driver, res.pool, res.device)
        if not (features.consumable_capacity and res.share_id):
            state.exclusive.add(device_id)
            continue
        state.shares.add((device_id, res.share_id))
        state.shared_devices.add(device_id)
        if res.consumed_capacity is not None:
            aggregated = state.capacity.setdefault(device_id, {})
            for name, quantity in res.consumed_capacity.items():
                aggregated[name] = aggregated.get(name, Fraction(0)) + quantity.value
    return state
