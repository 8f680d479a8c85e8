"""Small partitionable-GPU clusters for the capacity tests, and the brute-force oracle they are checked against.

A GPU here is a counter set of 4 units offering a MIG GPU's partitions at a small scale: one ``full``
(4 units), two ``half`` (2) and four ``quarter`` (1), each a device consuming the GPU's counters; a
DeviceClass and a ResourceClaimTemplate per size. The oracle never uses the counting model: it asks
Kubernetes' own depth-first allocator (``Solver.GREEDY``, exhaustive) whether a set of pods fits on one
node, and enumerates.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Any

from drasat.models.errors import Unschedulable
from drasat.solver.allocation.api import allocate
from drasat.solver.allocation.options import Solver
from drasat.solver.scheduling.cluster import Cluster
from drasat.solver.scheduling.cluster_state import ClusterState
from drasat.solver.scheduling.plugins.node_resources import pod_requests
from drasat.solver.scheduling.pods import resolve_pod_claims

DRIVER = "gpu.example.com"
PROFILES = {"full": (4, 1), "half": (2, 2), "quarter": (1, 4)}  # units, devices per GPU


def partitioned_node(name: str, gpus: int = 1, cpu: str = "8", taken: tuple[tuple[int, str, int], ...] = ()) -> list:
    """A Node with ``gpus`` partitionable GPUs (one pool), and a running pod per (gpu, profile, index) taken."""
    pool = {"name": name, "generation": 1, "resourceSliceCount": 2}
    devices = [
        {
            "name": f"gpu-{g}-{profile}-{i}",
            "attributes": {"profile": {"string": profile}},
            "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"units": {"value": str(units)}}}],
        }
        for g in range(gpus)
        for profile, (units, count) in PROFILES.items()
        for i in range(count)
    ]
    counters = [{"name": f"gpu-{g}", "counters": {"units": {"value": "4"}}} for g in range(gpus)]
    out = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-counters"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": pool, "sharedCounters": counters},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": pool, "devices": devices},
        },
    ]
    for g, profile, i in taken:
        out += running(name, f"gpu-{g}-{profile}-{i}", profile)
    return out


def running(
    node: str, device: str, profile: str, priority: int = 0, pod_name: str | None = None, labels: dict | None = None
) -> list:
    """A running pod on ``node`` holding ``device`` through an allocated claim of its own."""
    name = pod_name or f"run-{node}-{device}"
    uid = f"uid-{name}"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"gpu-{profile}"}}]}},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node, "device": device}]},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": name, "uid": uid}],
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid, "labels": labels or {}},
        "spec": {
            "nodeName": node,
            "priority": priority,
            "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
        },
        "status": {"phase": "Running"},
    }
    return [claim, pod]


def classes_and_templates() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for profile in PROFILES:
        expression = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].profile == "{profile}"'
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": f"gpu-{profile}"},
                "spec": {"selectors": [{"cel": {"expression": expression}}]},
            }
        )
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gpu-{profile}", "namespace": "default"},
                "spec": {
                    "spec": {
                        "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"gpu-{profile}"}}]}
                    }
                },
            }
        )
    return out


def pod_spec(profile: str | None, cpu: str | None = None) -> dict[str, Any]:
    """A pod spec asking for one partition of ``profile`` (None: no device) and ``cpu``."""
    resources: dict[str, Any] = {}
    if cpu:
        resources["requests"] = {"cpu": cpu}
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x", "resources": resources}]}
    if profile:
        resources["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": f"gpu-{profile}"}]
    return spec


def deployment(name: str, profile: str | None, cpu: str | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(profile, cpu)}},
    }


def pending_pod(name: str, profile: str | None, cpu: str | None = None, priority: int = 0) -> dict[str, Any]:
    spec = pod_spec(profile, cpu)
    spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


# --- the oracle -----------------------------------------------------------------------------------------


def fits_on_node(cluster: Cluster, node: str, pods: list) -> bool:
    """Whether ``pods`` (Pod models) all fit on ``node`` together, by Kubernetes' exhaustive depth-first allocator
    and the node's free cpu, memory and pods."""
    state = ClusterState(cluster)
    load = state.loads[node]
    for name in ("cpu", "memory"):
        asked = sum((pod_requests(p).get(name, Fraction(0)) for p in pods), Fraction(0))
        if asked > load.allocatable.get(name, Fraction(0)) - load.used.get(name, Fraction(0)):
            return False
    if len(pods) + load.pods > load.allocatable.get("pods", Fraction(110)):
        return False
    claims = []
    for i, pod in enumerate(pods):
        for use in resolve_pod_claims(pod, cluster, state.book).uses:
            claim = use.claim.model_copy(deep=True)
            claim.metadata.name = f"oracle-{i}-{claim.name}"
            claims.append(claim)
    if not claims:
        return True
    try:
        allocate(state.problem(node, claims), solver=Solver.GREEDY, time_limit=30)
    except Unschedulable:
        return False
    return True


def most_on_node(cluster: Cluster, node: str, make_pod: Any, cap: int = 12) -> int:
    """The most copies of ``make_pod(i)`` that fit on ``node`` alone (fitting is monotone: stop at the first miss)."""
    k = 0
    while k < cap and fits_on_node(cluster, node, [make_pod(i) for i in range(k + 1)]):
        k += 1
    return k


def best_split(cluster: Cluster, nodes: list[str], groups: list[list]) -> int:
    """Brute force: the most pods of ``groups`` placeable over ``nodes`` (every assignment of every pod to a node
    or to none, each node's share checked by the oracle)."""
    pods = [p for group in groups for p in group]
    best = 0
    for choice in product(range(len(nodes) + 1), repeat=len(pods)):
        placed = sum(1 for c in choice if c < len(nodes))
        if placed <= best:
            continue
        if all(fits_on_node(cluster, n, [p for p, c in zip(pods, choice) if c == i]) for i, n in enumerate(nodes)):
            best = placed
    return best
