"""A node's NUMA layout and its kubelet's resource-manager policies, as two inputs describe them.

``NodeResourceTopology`` (``topology.node.k8s.io/v1alpha2``) is the CRD that the resource
topology exporter (or NFD's topology updater) publishes per node and the scheduler-plugins
NodeResourceTopologyMatch plugin reads: one object named after the node, NUMA cells as zones of
type ``Node`` (``node-0``, ``node-1``, ...) with each resource's capacity, allocatable and
available amounts, and the kubelet's Topology Manager policy and scope as attributes (or, in the
older form, one ``topologyPolicies`` word such as ``SingleNUMANodeContainerLevel``).

``KubeletConfiguration`` (``kubelet.config.k8s.io/v1beta1``) carries the policies themselves:
``cpuManagerPolicy``, ``memoryManagerPolicy``, ``topologyManagerPolicy``, ``topologyManagerScope``.
Given once, it applies to every node with a NodeResourceTopology (the attributes of that object
win); only the fields the admission prediction reads are modelled, others are kept unchecked. The policy
words themselves are :mod:`.topology_policies`.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from .meta import BUILT_ON_FIRST_USE, ApiModel, TypedObject, empty_list
from .quantity import Quantity

_OPEN = ConfigDict(extra="allow", defer_build=True)


class AttributeInfo(ApiModel):
    """One name/value attribute of a NodeResourceTopology or of one of its zones."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    value: str


class ResourceInfo(ApiModel):
    """One resource of a zone: how much the NUMA cell has, may give to pods, and has free now."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    capacity: Quantity
    allocatable: Quantity
    available: Quantity


class CostInfo(ApiModel):
    """The distance from this zone to another (the NUMA distance table)."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    value: int


class Zone(ApiModel):
    """A NUMA cell (``type: Node``) or another level of the topology, with its resources."""

    model_config = BUILT_ON_FIRST_USE

    name: str
    type: str
    parent: str | None = None
    costs: list[CostInfo] = Field(default_factory=empty_list)
    attributes: list[AttributeInfo] = Field(default_factory=empty_list)
    resources: list[ResourceInfo] = Field(default_factory=empty_list)


class NodeResourceTopology(TypedObject):
    """topology.node.k8s.io/v1alpha2 NodeResourceTopology: one node's NUMA zones and kubelet policy."""

    model_config = BUILT_ON_FIRST_USE

    topology_policies: list[str] = Field(default_factory=empty_list)  # v1alpha1's form, still served
    attributes: list[AttributeInfo] = Field(default_factory=empty_list)
    zones: list[Zone] = Field(default_factory=empty_list)


class KubeletConfiguration(TypedObject):
    """kubelet.config.k8s.io/v1beta1 KubeletConfiguration: the resource managers' policies."""

    model_config = _OPEN

    cpu_manager_policy: str | None = None
    memory_manager_policy: str | None = None
    topology_manager_policy: str | None = None
    topology_manager_scope: str | None = None
