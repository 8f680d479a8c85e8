"""How a placement leaves the devices: what it touched, what stays whole, the largest partition still free.

Partitionable devices publish a counter set per physical device and one device per
partition that consumes some of its counters. A physical device is *whole* while no
allocated device consumes from its counter set; a device without counters is whole while
it is not allocated. A partition is *free* when it is not allocated and every counter it
consumes is still available; its size is the share of its physical device it takes (the largest
fraction of any counter it consumes: half a GPU is 1/2, a 3g MIG slice of 7 is 3/7; a plain device: 1).
These are what packing is about: the next large request fits only where a large partition
is still free.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from drasat.models.resource import Device, ResourceClaim
from drasat.solver.scheduling.cluster import Cluster

DeviceKey = tuple[str, str, str]  # driver, pool, device
CounterSetKey = tuple[str, str, str]  # driver, pool, counter set


@dataclass
class Usage:
    """Counts over the whole cluster, and the largest free partition per node type."""

    devices_touched: int = 0  # devices the new allocations hold
    counter_sets_touched: int = 0  # physical devices (counter sets) the new allocations draw on
    whole_devices_free: int = 0
    whole_free_by_driver: dict[str, int] = field(default_factory=dict)
    largest_free: dict[str, LargestFree] = field(default_factory=dict)  # per node type

    def to_data(self) -> dict[str, object]:
        return {
            "devicesTouched": self.devices_touched,
            "counterSetsTouched": self.counter_sets_touched,
            "wholeDevicesFree": self.whole_devices_free,
            "wholeFreeByDriver": self.whole_free_by_driver,
            "largestFreePartition": {
                t: {"size": str(f.size), "nodes": f.nodes, "ofNodes": f.of_nodes} for t, f in self.largest_free.items()
            },
        }


@dataclass(frozen=True)
class LargestFree:
    """The largest free partition on nodes of one type, and on how many of them it is free; ``partitioned``:
    the type has counter sets (partitionable devices), else its devices are whole or nothing."""

    size: Fraction  # share of a physical device (0: nothing free)
    nodes: int
    of_nodes: int
    partitioned: bool = False

    def __str__(self) -> str:
        """1/2 of a device on 3 of 4 nodes; a whole device said so (not "1 of a device"); or none free."""
        if not self.size:
            return "none free"
        what = "a whole device" if self.size == 1 else f"{self.size} of a device"
        return f"{what} on {self.nodes} of {self.of_nodes} nodes"

    @property
    def label(self) -> str:
        """What the row is about: the largest free partition, or on a type without partitions its devices."""
        return "largest free partition" if self.partitioned else "largest free device"


@dataclass
class _Node:
    devices: dict[DeviceKey, Device] = field(default_factory=dict)
    capacity: dict[CounterSetKey, dict[str, Fraction]] = field(default_factory=dict)


def usage(cluster: Cluster, new_claims: Iterable[ResourceClaim]) -> Usage:
    """The devices after ``new_claims`` (allocated by a placement) joined the input's allocated claims."""
    nodes = _node_devices(cluster)
    devices = {key: d for n in nodes.values() for key, d in n.devices.items()}
    new = {key for c in new_claims for key in _held(c)}
    held = new | {key for c in cluster.claims for key in _held(c)}
    consumed: dict[CounterSetKey, dict[str, Fraction]] = {}
    for key in held:
        for counter_set, amounts in _consumption(key, devices.get(key)).items():
            into = consumed.setdefault(counter_set, {})
            for name, value in amounts.items():
                into[name] = into.get(name, Fraction(0)) + value
    out = Usage(devices_touched=len(new))
    out.counter_sets_touched = len({cs for key in new for cs in _consumption(key, devices.get(key))})
    types: dict[str, list[Fraction]] = {}
    partitioned: set[str] = set()
    for _, node in sorted(nodes.items()):
        whole = [cs[0] for cs in node.capacity if cs not in consumed]
        whole += [key[0] for key, d in node.devices.items() if not d.consumes_counters and key not in held]
        for driver in whole:
            out.whole_free_by_driver[driver] = out.whole_free_by_driver.get(driver, 0) + 1
        out.whole_devices_free += len(whole)
        free = [
            _size(key, d, node) for key, d in node.devices.items() if key not in held and _fits(key, d, node, consumed)
        ]
        types.setdefault(_type_of(node), []).append(max(free, default=Fraction(0)))
        if node.capacity:
            partitioned.add(_type_of(node))
    for type_name, sizes in types.items():
        best = max(sizes)
        out.largest_free[type_name] = LargestFree(best, sizes.count(best), len(sizes), type_name in partitioned)
    return out


def _node_devices(cluster: Cluster) -> dict[str, _Node]:
    """Devices and counter sets of node-local slices, per node."""
    out: dict[str, _Node] = {n.name: _Node() for n in cluster.nodes}
    for s in cluster.slices:
        node = out.get(s.spec.node_name or "")
        if node is None:
            continue
        for d in s.spec.devices:
            node.devices[(s.spec.driver, s.spec.pool.name, d.name)] = d
        for cs in s.spec.shared_counters:
            node.capacity[(s.spec.driver, s.spec.pool.name, cs.name)] = {
                k: Fraction(c.value.value) for k, c in cs.counters.items()
            }
    return out


def _held(claim: ResourceClaim) -> list[DeviceKey]:
    allocation = claim.status.allocation if claim.status else None
    return [(r.driver, r.pool, r.device) for r in allocation.devices.results] if allocation else []


def _consumption(key: DeviceKey, device: Device | None) -> dict[CounterSetKey, dict[str, Fraction]]:
    if device is None:
        return {}
    return {
        (key[0], key[1], c.counter_set): {k: Fraction(v.value.value) for k, v in c.counters.items()}
        for c in device.consumes_counters
    }


def _size(key: DeviceKey, device: Device, node: _Node) -> Fraction:
    shares = [
        value / node.capacity[cs][name]
        for cs, amounts in _consumption(key, device).items()
        for name, value in amounts.items()
        if node.capacity.get(cs, {}).get(name)
    ]
    return max(shares, default=Fraction(1))


def _fits(key: DeviceKey, device: Device, node: _Node, consumed: dict[CounterSetKey, dict[str, Fraction]]) -> bool:
    for counter_set, amounts in _consumption(key, device).items():
        capacity = node.capacity.get(counter_set, {})
        used = consumed.get(counter_set, {})
        if any(
            used.get(name, Fraction(0)) + value > capacity.get(name, Fraction(0)) for name, value in amounts.items()
        ):
            return False
    return True


def _type_of(node: _Node) -> str:
    """A node type: how many devices of each driver it has, and how many counter sets ("4 gpu.example.com
    devices, 2 nic.example.com devices; 4 counter sets")."""
    drivers: dict[str, int] = {}
    for driver, _, _ in node.devices:
        drivers[driver] = drivers.get(driver, 0) + 1
    sets = len(node.capacity)
    text = ", ".join(f"{n} {driver} device{'s' * (n != 1)}" for driver, n in sorted(drivers.items())) or "no devices"
    return f"{text}; {sets} counter set{'s' * (sets != 1)}" if sets else text
