"""NodeResourceTopologyMatch as drasat runs it: a node passes only if its kubelet would admit the pod.

Asked after the devices step, because the kubelet admits the pod with the DRA devices already chosen
(their NUMA nodes are part of the answer). A node without a NodeResourceTopology is not asked: nothing
is known of its NUMA layout, as the plugin lets such nodes through. When the pod is bound, the same
admission is run on the node's layout itself, so that the next pod finds the CPUs and memory taken.
"""

from __future__ import annotations

from drasat.models.resource import AllocationResult
from drasat.solver.allocation.problem import claim_key
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.pods import PodClaims

from .numa_admission import Admission, PlacedDevice, admit
from .numa_layout import device_counts, device_numa


def placed_devices(state: ClusterState, pc: PodClaims, allocations: dict[str, AllocationResult]) -> list[PlacedDevice]:
    """The pod's devices with the pod claim naming them ("" for the extended-resource claim)."""
    out = []
    owners = {claim_key(u.claim): u for u in pc.uses}
    chosen = dict(allocations)
    for use in pc.uses:
        key = claim_key(use.claim)
        if key not in chosen and use.claim.status and use.claim.status.allocation:
            chosen[key] = use.claim.status.allocation
    for key, allocation in chosen.items():
        pod_claim = owners[key].pod_claim if key in owners else ""
        for r in allocation.devices.results:
            device = state.device(r.driver, r.pool, r.device)
            numa = device_numa(r.driver, device) if device is not None else None
            out.append(PlacedDevice(pod_claim, r.driver, r.pool, r.device, numa))
    return out


def node_device_counts(state: ClusterState, node: str) -> dict[str, int]:
    """The node's devices per driver and NUMA node (how narrow a device hint can be there)."""
    devices = state.nodes[node]
    return device_counts((s.spec.driver, d) for s in devices.slices for d in s.spec.devices)


def numa_refusal(state: ClusterState, pc: PodClaims, node: str, allocations: dict[str, AllocationResult]) -> list[str]:
    """NodeResourceTopologyMatch's reason when the node's kubelet would refuse the pod ([] when it admits)."""
    layout = state.numa.get(node)
    if layout is None:
        return []
    verdict = admit(layout.copy(), pc.pod, placed_devices(state, pc, allocations), node_device_counts(state, node))
    return [] if verdict.admitted else [verdict.reason]


def admitted_on(
    state: ClusterState, pc: PodClaims, node: str, allocations: dict[str, AllocationResult]
) -> Admission | None:
    """The kubelet's admission on the node's own layout (taken from it), when the node has one."""
    layout = state.numa.get(node)
    if layout is None:
        return None
    return admit(layout, pc.pod, placed_devices(state, pc, allocations), node_device_counts(state, node))
