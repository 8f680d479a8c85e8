"""What the kubelet's PodResources API (``List``) would report for each placed pod.

Field names are the v1 proto's (``cpu_ids``, ``memory``, ``dynamic_resources``), as ``grpcurl`` or a
monitoring agent prints them. Seed 004 (PodLevelResourceManagers, Kubernetes 1.37): with the
Topology Manager's ``pod`` scope the pod-level ``cpu_ids`` and ``memory`` hold the pod's whole
allocation; an exclusive (Guaranteed, integer-CPU) container's own fields hold its share cut from it,
a shared-pool container's stay empty. With ``container`` scope the pod-level fields stay empty and
each exclusive container reports what it got from the node. ``dynamic_resources`` lists, per
container, the devices of the claims it names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from drasat.models.resource import ResourceClaim
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.scheduling.plugins.numa_admission import Admission

PodResources = dict[str, Any]


def pod_resources(placements: Iterable[Placement]) -> list[PodResources]:
    """One PodResources entry per placed pod whose node has a NodeResourceTopology (others: unknown)."""
    return [_one(p, p.admission) for p in placements if p.node is not None and p.admission is not None]


def _one(placement: Placement, admission: Admission) -> PodResources:
    pod = placement.pod
    by_pod_claim = _claims_by_pod_claim(placement)
    containers = []
    shares = {s.name: s for s in admission.containers}
    for c in pod.spec.containers:
        share = shares.get(c.name)
        names = [claim.name for claim in (c.resources.claims if c.resources else [])]
        entry: dict[str, Any] = {"name": c.name, "devices": []}
        if share is not None and share.cpu_ids:
            entry["cpu_ids"] = list(share.cpu_ids)
        if share is not None and share.memory:
            entry["memory"] = _memory(share.memory)
        dynamic = [d for name in names if (d := _dynamic(by_pod_claim.get(name))) is not None]
        if dynamic:
            entry["dynamic_resources"] = dynamic
        containers.append(entry)
    out: PodResources = {"name": pod.name, "namespace": pod.metadata.namespace or "default", "containers": containers}
    if admission.pod_cpu_ids:
        out["cpu_ids"] = list(admission.pod_cpu_ids)
    if admission.pod_memory:
        out["memory"] = _memory(admission.pod_memory)
    return out


def _claims_by_pod_claim(placement: Placement) -> dict[str, ResourceClaim]:
    """The pod's claims by the pod claim that names them (generated claims by their status entry)."""
    pod = placement.pod
    generated = {s.name: s.resource_claim_name for s in (pod.status.resource_claim_statuses if pod.status else [])}
    by_name = {c.name: c for c in placement.claims}
    out = {}
    for entry in pod.spec.resource_claims:
        name = entry.resource_claim_name or generated.get(entry.name)
        if name in by_name:
            out[entry.name] = by_name[name]
    return out


def _dynamic(claim: ResourceClaim | None) -> dict[str, Any] | None:
    allocation = claim.status.allocation if claim is not None and claim.status else None
    if claim is None or allocation is None:
        return None
    return {
        "claim_name": claim.name,
        "claim_namespace": claim.metadata.namespace or "default",
        "claim_resources": [
            {"driver_name": r.driver, "pool_name": r.pool, "device_name": r.device} for r in allocation.devices.results
        ],
    }


def _memory(per_numa: Mapping[int, int]) -> list[dict[str, Any]]:
    """ContainerMemory entries: one block of memory per NUMA node it came from."""
    return [
        {"memory_type": "memory", "size": size, "topology": {"nodes": [{"ID": numa}]}}
        for numa, size in sorted(per_numa.items())
    ]


def cpu_ranges(ids: Sequence[int]) -> str:
    """``0-3,8`` for people (the kubelet's cpuset notation)."""
    parts: list[str] = []
    for cpu in sorted(ids):
        if parts and "-" in parts[-1] and int(parts[-1].split("-")[1]) == cpu - 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{cpu}"
        elif parts and "-" not in parts[-1] and int(parts[-1]) == cpu - 1:
            parts[-1] = f"{parts[-1]}-{cpu}"
        else:
            parts.append(str(cpu))
    return ",".join(parts)
