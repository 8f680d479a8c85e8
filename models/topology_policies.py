"""The kubelet's resource-manager policy words, apart from the models of the objects that carry them.

The scheduler's NUMA admission (``drasat.solver.scheduling.plugins``) reasons in these words on every
node, with or without a NodeResourceTopology or KubeletConfiguration in the input; kept out of
:mod:`.topology`, they do not make every ``solve`` and ``schedule`` import the pydantic models of those
two kinds (which :mod:`.kinds` imports when an input holds one).
"""

from __future__ import annotations

from enum import Enum


class TopologyPolicy(Enum):
    """``topologyManagerPolicy``."""

    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


class TopologyScope(Enum):
    """``topologyManagerScope``: hints per container, or once for the whole pod."""

    CONTAINER = "container"
    POD = "pod"


class CpuManagerPolicy(Enum):
    """``cpuManagerPolicy``: static gives Guaranteed pods' integer CPUs exclusively."""

    NONE = "none"
    STATIC = "static"


class MemoryManagerPolicy(Enum):
    """``memoryManagerPolicy``: Static pins Guaranteed pods' memory to NUMA nodes."""

    NONE = "None"
    STATIC = "Static"


OLD_POLICIES = {  # v1alpha1 topologyPolicies words: policy and scope in one
    "SingleNUMANodeContainerLevel": (TopologyPolicy.SINGLE_NUMA_NODE, TopologyScope.CONTAINER),
    "SingleNUMANodePodLevel": (TopologyPolicy.SINGLE_NUMA_NODE, TopologyScope.POD),
    "RestrictedContainerLevel": (TopologyPolicy.RESTRICTED, TopologyScope.CONTAINER),
    "RestrictedPodLevel": (TopologyPolicy.RESTRICTED, TopologyScope.POD),
    "BestEffortContainerLevel": (TopologyPolicy.BEST_EFFORT, TopologyScope.CONTAINER),
    "BestEffortPodLevel": (TopologyPolicy.BEST_EFFORT, TopologyScope.POD),
    "None": (TopologyPolicy.NONE, TopologyScope.CONTAINER),
}
