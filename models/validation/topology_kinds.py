"""Checks of the kubelet's NUMA inputs: the policy words the kubelet (and the topology exporter) accept.

A KubeletConfiguration with an unknown ``topologyManagerPolicy`` makes the kubelet refuse to start, and
a NodeResourceTopology attribute with one would say nothing true of its node: either is refused with
the field named, as drasat refuses every other object it cannot take as the cluster would.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from drasat.models.errors import Location
from drasat.models.topology_policies import (
    OLD_POLICIES,
    CpuManagerPolicy,
    MemoryManagerPolicy,
    TopologyPolicy,
    TopologyScope,
)

from .formats import Findings, index

if TYPE_CHECKING:  # annotations only: the two kinds' models are imported when an input holds them
    from drasat.models.topology import KubeletConfiguration, NodeResourceTopology

_WORDS: dict[str, type[Enum]] = {
    "topologyManagerPolicy": TopologyPolicy,
    "topologyManagerScope": TopologyScope,
    "cpuManagerPolicy": CpuManagerPolicy,
    "memoryManagerPolicy": MemoryManagerPolicy,
}


def _word(out: Findings, at: Location, kind: type[Enum], value: str | None) -> None:
    if value is not None and value not in {m.value for m in kind}:
        out.add(at, f"{value!r} is not one of {', '.join(str(m.value) for m in kind)}")


def check_kubelet_configuration(out: Findings, where: Location, obj: KubeletConfiguration) -> None:
    """The four resource-manager policy fields drasat reads."""
    for name, value in (
        ("topologyManagerPolicy", obj.topology_manager_policy),
        ("topologyManagerScope", obj.topology_manager_scope),
        ("cpuManagerPolicy", obj.cpu_manager_policy),
        ("memoryManagerPolicy", obj.memory_manager_policy),
    ):
        _word(out, where.child(name), _WORDS[name], value)


def check_node_resource_topology(out: Findings, where: Location, obj: NodeResourceTopology) -> None:
    """Policy attributes and words, and NUMA zones named ``node-N``."""
    if not obj.metadata.name:
        out.add(where.child("metadata.name"), "is required: the name of the node it describes")
    for i, word in enumerate(obj.topology_policies):
        if word not in OLD_POLICIES:
            out.add(index(where.child("topologyPolicies"), i), f"{word!r} is not one of {', '.join(OLD_POLICIES)}")
    for i, attribute in enumerate(obj.attributes):
        if attribute.name in _WORDS:
            _word(out, index(where.child("attributes"), i).child("value"), _WORDS[attribute.name], attribute.value)
    for i, zone in enumerate(obj.zones):
        if zone.type == "Node" and not zone.name.rsplit("-", 1)[-1].isdigit():
            out.add(index(where.child("zones"), i).child("name"), f"{zone.name!r} is not a NUMA zone name like node-0")
