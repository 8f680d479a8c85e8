"""A node's NUMA cells and its kubelet's policies, read from NodeResourceTopology and KubeletConfiguration.

The policies come from the NodeResourceTopology's attributes (``topologyManagerPolicy``,
``topologyManagerScope``, and ``cpuManagerPolicy``/``memoryManagerPolicy`` where an exporter adds
them) or its older ``topologyPolicies`` word, else from a KubeletConfiguration in the input (one for
every node), else the kubelet's defaults (none). Zones of type ``Node`` are the NUMA cells, numbered by
their name (``node-N``); their ``cpu`` and ``memory`` resources give what the kubelet may hand out
(allocatable) and what is free now (available). A device's NUMA node is its
``resource.kubernetes.io/numaNode`` attribute, or the driver's own ``numaNode``/``numa`` name for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from drasat.models.errors import InputError
from drasat.models.resource import Device
from drasat.models.topology_policies import (
    OLD_POLICIES,
    CpuManagerPolicy,
    MemoryManagerPolicy,
    TopologyPolicy,
    TopologyScope,
)

if TYPE_CHECKING:  # annotations only: the two kinds' models are imported when an input holds them
    from drasat.models.topology import KubeletConfiguration, NodeResourceTopology

NUMA_ATTRIBUTES = ("resource.kubernetes.io/numaNode",)  # the standard name; drivers' own below
DRIVER_NUMA_NAMES = ("numaNode", "numa", "numa_node", "numaNodeID")  # e.g. gpu.example.com/numaNode
E = TypeVar("E", bound=Enum)


@dataclass(frozen=True)
class Policies:
    """The kubelet's resource-manager policies for one node."""

    topology: TopologyPolicy = TopologyPolicy.NONE
    scope: TopologyScope = TopologyScope.CONTAINER
    cpu: CpuManagerPolicy = CpuManagerPolicy.NONE
    memory: MemoryManagerPolicy = MemoryManagerPolicy.NONE


@dataclass
class NumaCell:
    """One NUMA node's CPUs and memory: all of them, and what is free now."""

    cpus: int
    free_cpus: int
    memory: int
    free_memory: int
    first_cpu: int = 0


@dataclass
class NumaLayout:
    """A node's NUMA cells and policies, as the node stands (free amounts shrink as pods are admitted)."""

    node: str
    policies: Policies
    cells: dict[int, NumaCell]

    @property
    def numa_nodes(self) -> list[int]:
        return sorted(self.cells)

    def key(self) -> str:
        """Equal for nodes whose kubelet would answer alike (policies and free amounts per cell)."""
        return repr((self.policies, sorted((n, c.free_cpus, c.free_memory) for n, c in self.cells.items())))

    def copy(self) -> NumaLayout:
        return NumaLayout(self.node, self.policies, {n: NumaCell(**vars(c)) for n, c in self.cells.items()})


def layouts(
    topologies: Sequence[NodeResourceTopology], kubelet: Sequence[KubeletConfiguration]
) -> dict[str, NumaLayout]:
    """The NUMA layout of each node a NodeResourceTopology describes (named after its node)."""
    base = _kubelet_policies(kubelet[0] if kubelet else None)
    return {t.metadata.name or "": _layout(t, base) for t in topologies if t.metadata.name}


def _kubelet_policies(config: KubeletConfiguration | None) -> Policies:
    if config is None:
        return Policies()
    where = "KubeletConfiguration"
    return Policies(
        _choice(TopologyPolicy, config.topology_manager_policy, f"{where}: topologyManagerPolicy", TopologyPolicy.NONE),
        _choice(
            TopologyScope, config.topology_manager_scope, f"{where}: topologyManagerScope", TopologyScope.CONTAINER
        ),
        _choice(CpuManagerPolicy, config.cpu_manager_policy, f"{where}: cpuManagerPolicy", CpuManagerPolicy.NONE),
        _choice(
            MemoryManagerPolicy, config.memory_manager_policy, f"{where}: memoryManagerPolicy", MemoryManagerPolicy.NONE
        ),
    )


def _choice(kind: type[E], text: str | None, where: str, default: E) -> E:
    if text is None:
        return default
    try:
        return kind(text)
    except ValueError:
        words = ", ".join(str(m.value) for m in kind)
        raise InputError(f"{where}: {text!r} is not one of {words}") from None


def _layout(topology: NodeResourceTopology, base: Policies) -> NumaLayout:
    name = topology.metadata.name or ""
    where = f"NodeResourceTopology/{name}"
    policy, scope = base.topology, base.scope
    for word in topology.topology_policies:
        if word not in OLD_POLICIES:
            raise InputError(f"{where}: topologyPolicies: {word!r} is not one of {', '.join(OLD_POLICIES)}")
        policy, scope = OLD_POLICIES[word]
    attributes = {a.name: a.value for a in topology.attributes}
    policies = Policies(
        _choice(TopologyPolicy, attributes.get("topologyManagerPolicy"), f"{where}: attributes", policy),
        _choice(TopologyScope, attributes.get("topologyManagerScope"), f"{where}: attributes", scope),
        _choice(CpuManagerPolicy, attributes.get("cpuManagerPolicy"), f"{where}: attributes", base.cpu),
        _choice(MemoryManagerPolicy, attributes.get("memoryManagerPolicy"), f"{where}: attributes", base.memory),
    )
    cells: dict[int, NumaCell] = {}
    first = 0
    for i, zone in enumerate(z for z in topology.zones if z.type == "Node"):
        numa = _numa_id(zone.name, f"{where}: zones[{i}].name")
        res = {r.name: r for r in zone.resources}
        cpu, memory = res.get("cpu"), res.get("memory")
        cell = NumaCell(
            cpus=int(cpu.allocatable.value) if cpu else 0,
            free_cpus=int(cpu.available.value) if cpu else 0,
            memory=int(memory.allocatable.value) if memory else 0,
            free_memory=int(memory.available.value) if memory else 0,
            first_cpu=first,
        )
        first += int(cpu.capacity.value) if cpu else 0
        cells[numa] = cell
    return NumaLayout(name, policies, cells)


def _numa_id(zone: str, where: str) -> int:
    digits = zone.rsplit("-", 1)[-1]
    if not digits.isdigit():
        raise InputError(f"{where}: {zone!r} is not a NUMA zone name like node-0")
    return int(digits)


def device_numa(driver: str, device: Device) -> int | None:
    """The NUMA node a device reports, by the standard attribute or the driver's own name for it."""
    names = (*NUMA_ATTRIBUTES, *(f"{driver}/{n}" for n in DRIVER_NUMA_NAMES), *DRIVER_NUMA_NAMES)
    for name in names:
        attribute = device.attributes.get(name)
        if attribute is not None and attribute.int_ is not None:
            return int(attribute.int_)
    return None


def device_counts(devices: Iterable[tuple[str, Device]]) -> dict[str, int]:
    """How many devices each driver has on each NUMA node of the node (``driver/numa`` keys)."""
    counts: dict[str, int] = {}
    for driver, device in devices:
        numa = device_numa(driver, device)
        if numa is not None:
            counts[f"{driver}/{numa}"] = counts.get(f"{driver}/{numa}", 0) + 1
    return counts
