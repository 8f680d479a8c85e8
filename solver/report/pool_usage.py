"""Cluster-wide view of pools and what is in use in them, for the reporting commands.

The allocator (``inventory.py``) looks at pools from one node's point of view. Pool
status, the inventory and the allocation map look at every pool at once, as
Kubernetes' pool status controller does: slices grouped by (driver, pool), only the
newest generation counted, a pool complete when all of its slices are there; a
device is in use when an allocated claim names it (admin-access results observe
and do not count), and counters are debited once per device in use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.errors import InputError, Location
from drasat.models.meta import TypedObject
from drasat.models.resource import Device, DeviceTaint, DeviceTaintRule, ResourceClaim, ResourceSlice
from drasat.models.validation.formats import Findings, index
from drasat.models.validation.shared import check_device_taint

from .headroom import Candidate, CounterState

PoolKey = tuple[str, str]  # (driver, pool)
UNSCHEDULABLE_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass
class GatheredPool:
    """The newest generation of one pool: its slices, devices (with their slice) and counter sets."""

    driver: str
    name: str
    generation: int
    expected_slices: int
    slices: list[ResourceSlice] = field(default_factory=list)

    @property
    def key(self) -> PoolKey:
        return self.driver, self.name

    @property
    def complete(self) -> bool:
        return len(self.slices) >= self.expected_slices

    @property
    def devices(self) -> list[tuple[ResourceSlice, Device]]:
        return [(s, d) for s in self.slices for d in s.spec.devices]

    @property
    def node_name(self) -> str | None:
        """The node of every slice, when they all name the same one (as the controller reports it)."""
        names = {s.spec.node_name or "" for s in self.slices}
        return names.pop() or None if len(names) == 1 else None

    def counter_capacity(self) -> dict[str, dict[str, Fraction]]:
        return {
            cs.name: {name: c.value.value for name, c in cs.counters.items()}
            for s in self.slices
            for cs in s.spec.shared_counters
        }


def gather_pools(
    slices: Iterable[ResourceSlice], driver: str | None = None, pool_name: str | None = None
) -> list[GatheredPool]:
    """Pools sorted by (driver, name), each with only its newest-generation slices (sorted by name)."""
    newest: dict[PoolKey, GatheredPool] = {}
    for s in slices:
        key = (s.spec.driver, s.spec.pool.name)
        if (driver is not None and key[0] != driver) or (pool_name is not None and key[1] != pool_name):
            continue
        pool = newest.get(key)
        if pool is None or s.spec.pool.generation > pool.generation:
            pool = newest[key] = GatheredPool(*key, s.spec.pool.generation, s.spec.pool.resource_slice_count)
        if s.spec.pool.generation == pool.generation:
            pool.slices.append(s)
    for pool in newest.values():
        pool.slices.sort(key=lambda s: s.name)
    return [newest[k] for k in sorted(newest)]


@dataclass
class DeviceUse:
    """Who holds one device: claims (namespace/name), how many allocation results (shares), capacity consumed.

    One claim can hold several shares of a device that allows multiple allocations
    (one result, with its own shareID, per share), so shares and claims differ.
    """

    claims: list[str] = field(default_factory=list)
    consumed: dict[str, Fraction] = field(default_factory=dict)
    shares: int = 0


@dataclass
class Usage:
    """Every device named by an allocated claim, keyed by pool then device name."""

    by_pool: dict[PoolKey, dict[str, DeviceUse]] = field(default_factory=dict)

    def in_pool(self, key: PoolKey) -> dict[str, DeviceUse]:
        return self.by_pool.get(key, {})


def usage_from_claims(claims: Iterable[ResourceClaim]) -> Usage:
    """Devices in use by claims with ``status.allocation``; admin-access results are observers and left out."""
    usage = Usage()
    for claim in claims:
        if claim.status is None or claim.status.allocation is None:
            continue
        owner = f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name
        for result in claim.status.allocation.devices.results:
            if result.admin_access:
                continue
            use = usage.by_pool.setdefault((result.driver, result.pool), {}).setdefault(result.device, DeviceUse())
            if owner not in use.claims:
                use.claims.append(owner)
            use.shares += 1
            for name, quantity in result.consumed_capacity.items():
                use.consumed[name] = use.consumed.get(name, Fraction(0)) + quantity.value
    return usage


def rule_selects(rule: DeviceTaintRule, driver: str, pool: str, device: str) -> bool:
    """The 1.37 selector: driver, pool and device names, all optional, ANDed; no selector selects nothing."""
    selector = rule.spec.device_selector
    if selector is None:
        return False
    return (
        (selector.driver is None or selector.driver == driver)
        and (selector.pool is None or selector.pool == pool)
        and (selector.device is None or selector.device == device)
    )


def device_taints(key: PoolKey, device: Device, rules: Sequence[DeviceTaintRule]) -> list[DeviceTaint]:
    """The device's own taints and those DeviceTaintRules add to it."""
    return list(device.taints) + [r.spec.taint for r in rules if rule_selects(r, *key, device.name)]


def blocks_scheduling(taints: Iterable[DeviceTaint]) -> bool:
    """Whether any of the taints keeps requests away (NoSchedule or NoExecute)."""
    return any(t.effect in UNSCHEDULABLE_EFFECTS for t in taints)


def candidate_of(device: Device) -> Candidate:
    """A device as the headroom solver sees it: its counter costs and compatibility groups per set."""
    costs: dict[str, dict[str, Fraction]] = {}
    groups: dict[str, frozenset[str]] = {}
    for consumption in device.consumes_counters:
        into = costs.setdefault(consumption.counter_set, {})
        for name, counter in consumption.counters.items():
            into[name] = into.get(name, Fraction(0)) + counter.value.value
        if consumption.compatibility_groups:
            groups[consumption.counter_set] = frozenset(consumption.compatibility_groups)
    return Candidate(device.name, costs, groups)


def counter_state(pool: GatheredPool, in_use: Iterable[str]) -> CounterState:
    """Counters left after the devices in use (each debited once, however many claims share it)."""
    available = pool.counter_capacity()
    allocated_groups: dict[str, list[frozenset[str]]] = {}
    used = set(in_use)
    for _, device in pool.devices:
        if device.name not in used:
            continue
        candidate = candidate_of(device)
        for set_name, counters in candidate.costs.items():
            allocated_groups.setdefault(set_name, []).append(candidate.groups.get(set_name, frozenset()))
            left = available.get(set_name)
            for name, amount in counters.items():
                if left is not None and name in left:
                    left[name] -= amount
    return CounterState(available, allocated_groups)


def overcommitted(state: CounterState) -> bool:
    """A counter below zero blocks every counter-consuming device of the pool, as Kubernetes' allocator does."""
    return any(v < 0 for counters in state.available.values() for v in counters.values())


def refuse_bad_taints(
    slices: Iterable[ResourceSlice], rules: Iterable[DeviceTaintRule], locate: Callable[[TypedObject], Location | None]
) -> None:
    """InputError for any taint the API server would refuse (an unknown effect such as ``Bogus``).

    Counting such a taint as NoSchedule, or as nothing, would report numbers no cluster
    can have; ``locate`` names where each object was read.
    """
    found = Findings()
    for rule in rules:
        where = locate(rule) or Location(kind="DeviceTaintRule", name=rule.name)
        check_device_taint(found, where.child("spec.taint"), rule.spec.taint)
    for slice_ in slices:
        where = locate(slice_) or Location(kind="ResourceSlice", name=slice_.name)
        for i, device in enumerate(slice_.spec.devices):
            for j, taint in enumerate(device.taints):
                check_device_taint(found, index(index(where.child("spec.devices"), i).child("taints"), j), taint)
    if found.problems:
        raise InputError(found.problems)
