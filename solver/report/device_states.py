"""What is free on each node, and how fragmented it is: the data behind ``drasat inventory``.

Every published device (newest generation of its pool) gets one state, in this order
of precedence:

- ``shared``: it allows multiple allocations and claims hold shares of it (how many
  shares, one per allocation result, and the capacity left, never below zero, as
  pool-status's shareableSummary);
- ``allocated``: a claim holds it;
- ``tainted``: a NoSchedule or NoExecute taint (its own or a DeviceTaintRule's) keeps
  new claims away unless they tolerate it;
- ``blocked``: free, but the counters it needs are used up by allocated partitions,
  or the compatibility groups already on its counter set exclude it;
- ``incomplete``: its pool is missing slices, so Kubernetes allocates nothing from it;
- ``free``: a claim could get it now.

Per node, the fragmentation line is "the largest request of each partition type
that still fits": the exact headroom (:mod:`.headroom`) over the untainted free
devices of that type, summed over the node's pools (one request may take devices
from several pools); then "free whole devices": devices without a partition type
that can still be allocated together (plain free ones, plus the exact headroom of
counter-consuming ones, whose placements may overlap).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.quantity import Quantity
from drasat.models.resource import Device, DeviceTaint, ResourceSlice

from .headroom import CounterState, fits_alone, max_allocatable
from .pool_status import PoolInputs, partition_type
from .pool_usage import (
    DeviceUse,
    GatheredPool,
    Usage,
    blocks_scheduling,
    candidate_of,
    counter_state,
    device_taints,
    gather_pools,
    overcommitted,
    usage_from_claims,
)

ALL_NODES = "(all nodes)"
SELECTED_NODES = "(node selector)"
STATES = ("free", "allocated", "shared", "tainted", "blocked", "incomplete")


@dataclass
class DeviceReport:
    """One device, its state and what explains it."""

    driver: str
    pool: str
    name: str
    state: str
    claims: list[str] = field(default_factory=list)
    taints: list[str] = field(default_factory=list)
    reason: str = ""
    partition_type: str | None = None
    counter_sets: list[str] = field(default_factory=list)
    capacity_left: dict[str, Quantity] = field(default_factory=dict)
    shares: int = 0  # allocation results on a shared device (one claim may hold several)


@dataclass
class CounterReport:
    """One counter of one counter set: capacity, used by allocated devices, left."""

    driver: str
    pool: str
    counter_set: str
    counter: str
    capacity: Quantity
    used: Quantity

    @property
    def left(self) -> Quantity:
        return self.capacity - self.used


@dataclass
class NodeReport:
    """A node's devices, counters, and the largest request per partition type that still fits."""

    node: str
    devices: list[DeviceReport] = field(default_factory=list)
    counters: list[CounterReport] = field(default_factory=list)
    largest_fit: dict[tuple[str, str], int] = field(default_factory=dict)  # (driver, type) -> devices
    free_whole: dict[str, int] = field(default_factory=dict)  # driver -> free devices without a partition type
    set_fit: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    """(driver, pool, counter set, type) -> how many of the free partitions of that type on that counter set
    fit together (fewer than are free: they overlap; the map shades them apart from the ones that all fit)."""


def node_reports(
    cluster: PoolInputs,
    *,
    node: str | None = None,
    default_attribute: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[NodeReport]:
    """One report per node (sorted; cluster-wide devices under "(all nodes)"), or only ``node``'s.
    ``progress(done, total)`` is called as each pool is taken up (the progress bar)."""
    usage = usage_from_claims(cluster.claims)
    reports: dict[str, NodeReport] = {}
    pools = gather_pools(cluster.slices)
    for done, pool in enumerate(pools, 1):
        if progress is not None:
            progress(done, len(pools))
        in_use = usage.in_pool(pool.key)
        state = counter_state(pool, in_use)
        pool_blocked = overcommitted(state)
        for slice_, device in pool.devices:
            where = _node_of(slice_, device)
            if node is not None and where != node:
                continue
            report = reports.setdefault(where, NodeReport(where))
            taints = device_taints(pool.key, device, cluster.taint_rules)
            found = partition_type(pool, slice_, device, default_attribute)
            kind = found[1] if isinstance(found, tuple) and device.consumes_counters else None
            report.devices.append(
                _device_report(pool, device, in_use.get(device.name), taints, (state, pool_blocked), kind)
            )
        _add_counters(reports, pool, state, node)
    by_key = {p.key: p for p in pools}
    for report in reports.values():
        _fragmentation(report, by_key, usage)
    return [reports[name] for name in sorted(reports)]


def _node_of(slice_: ResourceSlice, device: Device) -> str:
    if slice_.spec.node_name:
        return slice_.spec.node_name
    if device.node_name:
        return device.node_name
    return ALL_NODES if slice_.spec.all_nodes or device.all_nodes else SELECTED_NODES


def _device_report(
    pool: GatheredPool,
    device: Device,
    use: DeviceUse | None,
    taints: list[DeviceTaint],
    counters: tuple[CounterState, bool],
    kind: str | None,
) -> DeviceReport:
    """``counters``: what is left in the pool, and whether a counter is over-committed."""
    state, pool_blocked = counters
    report = DeviceReport(
        pool.driver,
        pool.name,
        device.name,
        "free",
        partition_type=kind,
        taints=[f"{t.key}={t.value or ''}:{t.effect}" for t in taints],
        counter_sets=[c.counter_set for c in device.consumes_counters],
    )
    if use is not None:
        report.claims = list(use.claims)
    if use is not None and device.allow_multiple_allocations:
        report.state, report.shares = "shared", use.shares
        report.capacity_left = {
            name: Quantity(max(Fraction(0), c.value.value - use.consumed.get(name, Fraction(0))), c.value.format)
            for name, c in device.capacity.items()
        }
    elif use is not None:
        report.state = "allocated"
    elif not pool.complete:
        report.state, report.reason = "incomplete", f"pool has {len(pool.slices)} of {pool.expected_slices} slices"
    elif blocks_scheduling(taints):
        report.state = "tainted"
    elif device.consumes_counters and (pool_blocked or not fits_alone(candidate_of(device), state)):
        report.state, report.reason = "blocked", _blocked_reason(device, state, pool_blocked)
    return report


def _blocked_reason(device: Device, state: CounterState, pool_blocked: bool) -> str:
    if pool_blocked:
        return "a counter of this pool is over-committed"
    short = [
        f"{c.counter_set}/{name}"
        for c in device.consumes_counters
        for name, need in c.counters.items()
        if state.available.get(c.counter_set, {}).get(name, Fraction(-1)) < need.value
    ]
    if short:
        return "not enough " + ", ".join(short) + " left"
    return "compatibility groups of allocated devices exclude it"


def _add_counters(reports: dict[str, NodeReport], pool: GatheredPool, state: CounterState, node: str | None) -> None:
    """Counter sets belong to the node of the slice that publishes them."""
    for slice_ in pool.slices:
        where = slice_.spec.node_name or (ALL_NODES if slice_.spec.all_nodes else SELECTED_NODES)
        if (node is not None and where != node) or not slice_.spec.shared_counters:
            continue
        report = reports.setdefault(where, NodeReport(where))
        for counter_set in slice_.spec.shared_counters:
            for name, counter in counter_set.counters.items():
                left = state.available.get(counter_set.name, {}).get(name, counter.value.value)
                used = Quantity(counter.value.value - left, counter.value.format)
                report.counters.append(
                    CounterReport(pool.driver, pool.name, counter_set.name, name, counter.value, used)
                )


def _fragmentation(report: NodeReport, pools: dict[tuple[str, str], GatheredPool], usage: Usage) -> None:
    """Largest request per (driver, partition type) over free, untainted devices; free whole devices per driver."""
    by_pool: dict[tuple[str, str], list[DeviceReport]] = {}
    for device in report.devices:
        by_pool.setdefault((device.driver, device.pool), []).append(device)
    for key, devices in sorted(by_pool.items()):
        pool = pools[key]
        state = counter_state(pool, usage.in_pool(key))
        blocked = overcommitted(state)
        free = {d.name for d in devices if d.state in ("free", "blocked")}
        objects = {d.name: d for _, d in pool.devices}
        for kind in sorted({d.partition_type for d in devices if d.partition_type is not None}):
            chosen = [candidate_of(objects[d.name]) for d in devices if d.partition_type == kind and d.name in free]
            fit = 0 if blocked else max_allocatable(chosen, state).count
            report.largest_fit[(key[0], kind)] = report.largest_fit.get((key[0], kind), 0) + fit
            if fit < len(chosen):  # some free ones overlap: say on which counter set, and by how much
                _set_fits(
                    report,
                    key,
                    kind,
                    [d for d in devices if d.partition_type == kind and d.name in free],
                    objects,
                    state,
                    blocked,
                )
        whole = _untyped_fit(devices, objects, state, blocked)
        if whole:
            report.free_whole[key[0]] = report.free_whole.get(key[0], 0) + whole


def _set_fits(
    report: NodeReport,
    key: tuple[str, str],
    kind: str,
    devices: list[DeviceReport],
    objects: dict[str, Device],
    state: CounterState,
    blocked: bool,
) -> None:
    """Per counter set, how many free partitions of ``kind`` fit together, where that is fewer than are free."""
    by_set: dict[str, list[DeviceReport]] = {}
    for d in devices:
        if d.state == "free" and len(d.counter_sets) == 1:
            by_set.setdefault(d.counter_sets[0], []).append(d)
    for counter_set, members in sorted(by_set.items()):
        fit = 0 if blocked else max_allocatable([candidate_of(objects[d.name]) for d in members], state).count
        if fit < len(members):
            report.set_fit[(key[0], key[1], counter_set, kind)] = fit


def _untyped_fit(devices: list[DeviceReport], objects: dict[str, Device], state: CounterState, blocked: bool) -> int:
    """How many more devices without a partition type can be allocated together.

    Plain free devices count one each; free devices that draw on shared counters may
    overlap (two placements of one slice), so for them the exact headroom counts, not
    the number of free ones.
    """
    untyped = [d for d in devices if d.partition_type is None and d.state in ("free", "blocked")]
    plain = sum(1 for d in untyped if d.state == "free" and not objects[d.name].consumes_counters)
    partitions = [candidate_of(objects[d.name]) for d in untyped if objects[d.name].consumes_counters]
    return plain + (max_allocatable(partitions, state).count if partitions and not blocked else 0)


def fragmentation_line(report: NodeReport) -> str:
    """``node-a: largest request that still fits: gpu.example.com 1g×6, 2g×3; free whole devices: ...``."""
    parts = []
    drivers = sorted({driver for driver, _ in report.largest_fit})
    for driver in drivers:
        fits = ", ".join(f"{kind}×{n}" for (d, kind), n in sorted(report.largest_fit.items()) if d == driver)
        parts.append(f"{driver} {fits}")
    text = f"{report.node}: largest request that still fits: " + ("; ".join(parts) if parts else "no partition types")
    if report.free_whole:
        text += "; free whole devices: " + ", ".join(f"{d} {n}" for d, n in sorted(report.free_whole.items()))
    return text


def states_count(reports: Sequence[NodeReport]) -> dict[str, int]:
    """How many devices are in each state, over all the reports (every state listed, even at 0)."""
    counts = {state: 0 for state in STATES}
    for report in reports:
        for device in report.devices:
            counts[device.state] += 1
    return counts
