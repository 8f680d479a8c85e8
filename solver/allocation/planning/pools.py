"""Stage 1a: a node's pools — usable, incomplete or invalid — with their counters left after what is in use.

Pools come from slices grouped by (driver, pool); only the newest generation counts;
a pool missing slices is incomplete and one with contradictory slices is invalid
(both contribute no devices). Where Kubernetes' code has a marked bug, this stage does
the intended thing: slices holding both devices and counter sets keep their devices,
and counters are kept per (driver, pool), not per pool name.

Also what is in use (:class:`InUse`): the devices allocated claims hold, which only the
counters of a pool (and the later stages) depend on — not which devices a node has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from drasat.models.resource import ResourceClaim, ResourceSlice
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import DeviceId, NodeInfo
from drasat.solver.allocation.rules.reachability import slice_reaches

from .plan import EMPTY_MAPPING

PoolKey = tuple[str, str]
Counters = dict[str, dict[str, Fraction]]


@dataclass
class Pool:
    """A gathered pool: usable, incomplete or invalid, with its counters left after what is in use."""

    key: PoolKey
    state: str  # "usable" | "incomplete" | "invalid"
    has_binding_conditions: bool = False
    counters: Counters = field(default_factory=dict)
    allocated_groups: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    problem: str = ""

    @property
    def overcommitted(self) -> bool:
        """An over-committed counter blocks every counter-consuming device of the pool (as upstream).

        Asked for every device candidate selection looks at: the answer is kept for the counters it
        was computed from (a pool's counters are set once, when the inventory is built)."""
        known = self.__dict__.get("_overcommitted")
        if known is None or known[0] is not self.counters:
            known = self.__dict__["_overcommitted"] = (
                self.counters,
                any(v < 0 for counters in self.counters.values() for v in counters.values()),
            )
        return known[1]

    def label(self) -> str:
        return "/".join(self.key)


@dataclass(frozen=True)
class InUse:
    """Devices already allocated by claims that have ``status.allocation``. Frozen, its maps read-only by
    type: every problem without allocated claims shares :data:`NOTHING_IN_USE`, across calls and threads."""

    exclusive: AbstractSet[DeviceId] = frozenset()
    shared: AbstractSet[tuple[DeviceId, str]] = frozenset()
    capacity: Mapping[DeviceId, Mapping[str, Fraction]] = field(default_factory=dict)
    holders: Mapping[DeviceId, str] = field(default_factory=dict)  # namespace/name of the claim holding a device

    def allocated(self, device: DeviceId) -> bool:
        """Whether the device holds anything at all (counters count it as consumed then)."""
        return device in self.exclusive or device in self.capacity or any(d == device for d, _ in self.shared)


NOTHING_IN_USE = InUse(frozenset(), frozenset(), EMPTY_MAPPING, EMPTY_MAPPING)
"""What is in use where no claim is allocated: the usual problem, on every call."""


def _slice_name(s: ResourceSlice) -> str:
    return s.name


def pool_order(pool: Pool) -> tuple[bool, PoolKey]:
    """Kubernetes' enumeration order of pools: by (driver, name), pools with binding conditions last."""
    return pool.has_binding_conditions, pool.key


def in_use_state(allocated: Sequence[ResourceClaim], features: Features) -> InUse:
    """Kubernetes' allocated state: admin results never block; shares only with consumable capacity."""
    if not allocated:
        return NOTHING_IN_USE
    exclusive: set[DeviceId] = set()
    shared: set[tuple[DeviceId, str]] = set()
    capacity: dict[DeviceId, dict[str, Fraction]] = {}
    holders: dict[DeviceId, str] = {}
    for claim in allocated:
        allocation = claim.status.allocation if claim.status else None
        for result in allocation.devices.results if allocation else ():
            device = (result.driver, result.pool, result.device)
            if result.admin_access:
                continue
            if features.consumable_capacity and result.share_id:
                shared.add((device, result.share_id))
                if result.consumed_capacity:
                    sums = capacity.setdefault(device, {})
                    for name, q in result.consumed_capacity.items():
                        sums[name] = sums.get(name, Fraction(0)) + q.value
            else:
                exclusive.add(device)
                holders.setdefault(device, f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name)
    return InUse(exclusive, shared, capacity, holders)


def gather(
    slices: Sequence[ResourceSlice], node: NodeInfo, features: Features
) -> list[tuple[PoolKey, list[ResourceSlice], list[ResourceSlice]]]:
    """Per pool: its relevant slices of the newest generation seen on this node, and the other slices
    of that generation (needed for completeness and counters). Obsolete pools are dropped.

    As in Kubernetes, a generation that is complete from this node's point of view is used
    even while a newer one is being published elsewhere (the conformance scenario
    multi-host-resource-pool-incomplete-update-from-node-1-to-node-2 pins this).
    """
    gathered: list[tuple[PoolKey, list[ResourceSlice], list[ResourceSlice]]] = []
    for key, chosen in _newest_reaching(slices, node, features).items():
        reference = chosen[0].spec.pool
        if len(chosen) == reference.resource_slice_count:
            gathered.append((key, chosen, []))
            continue
        same_pool = [s for s in slices if (s.spec.driver, s.spec.pool.name) == key]
        if any(s.spec.pool.generation > reference.generation for s in same_pool):
            continue  # obsolete: a newer generation exists
        others = [
            s for s in same_pool if s.spec.pool.generation == reference.generation and not any(s is c for c in chosen)
        ]
        gathered.append((key, chosen, others))
    return gathered


def _newest_reaching(
    slices: Sequence[ResourceSlice], node: NodeInfo, features: Features
) -> dict[PoolKey, list[ResourceSlice]]:
    """Per pool, the slices of its newest generation that reach ``node`` (this node's own slices first, then
    those without a node name, as upstream lists them); slices the gates hide are not seen."""
    local: list[ResourceSlice] = []
    shared: list[ResourceSlice] = []
    for s in slices:  # one pass: this node's slices first, then those without a node name
        name = s.spec.node_name
        if not name:
            shared.append(s)
        elif name == node.name:
            local.append(s)
    relevant: dict[PoolKey, list[ResourceSlice]] = {}
    partitionable = features.partitionable
    for s in local + shared if shared else local:
        spec = s.spec
        if not partitionable and (spec.per_device_node_selection is not None or spec.shared_counters):
            continue
        if not slice_reaches(node, s):
            continue
        key = (spec.driver, spec.pool.name)
        current = relevant.setdefault(key, [s])
        if current[0] is s:
            continue
        if spec.pool.generation > current[0].spec.pool.generation:
            relevant[key] = [s]
        elif spec.pool.generation == current[0].spec.pool.generation:
            current.append(s)
    return relevant


def build_pool(
    key: PoolKey, relevant: list[ResourceSlice], others: list[ResourceSlice], features: Features, in_use: InUse
) -> tuple[Pool, list[ResourceSlice]]:
    """One gathered pool, usable or why not, with its counters left after ``in_use``; and the slices whose
    devices it contributes (none unless usable)."""
    reference = relevant[0].spec.pool  # the first slice seen, as upstream
    if len(relevant) > 1:
        relevant = sorted(relevant, key=_slice_name)
    binding, grouped, repeated, counters = _pool_facts(relevant, others)
    pool = Pool(key, "usable", binding)
    if len(relevant) + len(others) != reference.resource_slice_count:
        pool.state = "incomplete"
        pool.problem = (
            f"{len(relevant) + len(others)} slice(s) of generation {reference.generation} published, "
            f"resourceSliceCount says {reference.resource_slice_count}"
        )
        return pool, []
    every = relevant + others if others else relevant
    if not features.compatibility_groups and grouped:
        pool.state = "incomplete"  # the seed: with the gate off, grouped pools are skipped as incomplete
        pool.problem = "its devices use compatibilityGroups, and DRADeviceCompatibilityGroups is disabled"
        return pool, []
    problem = (
        f"device name {repeated} is not unique in the pool"
        if repeated is not None
        else _counters_problem(every)
        if features.partitionable
        else ""
    )
    if problem:
        pool.state, pool.problem = "invalid", problem
        return pool, []
    if features.partitionable and counters:
        pool.counters = _available_counters(key, every, in_use)
        pool.allocated_groups = _allocated_groups(key, every, in_use)
    for s in relevant:  # the usual pool: every slice has devices, and the list is taken as is (no copy)
        if not s.spec.devices:
            return pool, [s for s in relevant if s.spec.devices]
    return pool, relevant


class PoolFacts(NamedTuple):
    """What one pass over a pool's slices and devices finds (:func:`_pool_facts`)."""

    binding: bool  # a relevant slice's device has binding conditions (such pools are enumerated last)
    grouped: bool  # a device consumes counters with compatibility groups
    repeated: str | None  # the first device name the relevant slices repeat (None: each is unique)
    counters: bool  # a slice shares counters


def _pool_facts(relevant: list[ResourceSlice], others: list[ResourceSlice]) -> PoolFacts:
    """The pool's facts in one pass over its slices and devices (a small call has one pool, every call)."""
    binding = grouped = counters = False
    repeated: str | None = None
    seen: set[str] = set()
    for s in relevant:
        counters = counters or bool(s.spec.shared_counters)
        for d in s.spec.devices:
            if d.binding_conditions:
                binding = True
            if d.consumes_counters and not grouped:
                grouped = any(use.compatibility_groups for use in d.consumes_counters)
            if repeated is None and d.name in seen:
                repeated = d.name
            seen.add(d.name)
    for s in others:
        counters = counters or bool(s.spec.shared_counters)
        for d in s.spec.devices:
            if d.consumes_counters and not grouped:
                grouped = any(use.compatibility_groups for use in d.consumes_counters)
    return PoolFacts(binding, grouped, repeated, counters)


def _counters_problem(every: list[ResourceSlice]) -> str:
    """Why Kubernetes would call a pool of partitionable devices invalid for its counters, or "" when fine."""
    sets: dict[str, set[str]] = {}
    for s in every:
        for cs in s.spec.shared_counters:
            if cs.name in sets:
                return f"counter set {cs.name} is defined twice"
            sets[cs.name] = set(cs.counters)
    for s in every:
        for d in s.spec.devices:
            for use in d.consumes_counters:
                if use.counter_set not in sets:
                    return f"device {d.name} consumes from unknown counter set {use.counter_set}"
                missing = set(use.counters) - sets[use.counter_set]
                if missing:
                    return f"device {d.name} consumes unknown counter {sorted(missing)[0]} of {use.counter_set}"
    return ""


def _available_counters(key: PoolKey, every: list[ResourceSlice], in_use: InUse) -> Counters:
    counters: Counters = {
        cs.name: {n: c.value.value for n, c in cs.counters.items()} for s in every for cs in s.spec.shared_counters
    }
    for s in every:
        for d in s.spec.devices:
            if in_use.allocated((key[0], key[1], d.name)):
                for use in d.consumes_counters:
                    for name, c in use.counters.items():
                        counters[use.counter_set][name] -= c.value.value
    return counters


def _allocated_groups(key: PoolKey, every: list[ResourceSlice], in_use: InUse) -> dict[str, list[frozenset[str]]]:
    groups: dict[str, list[frozenset[str]]] = {}
    for s in every:
        for d in s.spec.devices:
            if in_use.allocated((key[0], key[1], d.name)):
                for use in d.consumes_counters:
                    groups.setdefault(use.counter_set, []).append(frozenset(use.compatibility_groups or ()))
    return groups
