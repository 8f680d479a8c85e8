"""Small clusters for the scheduling tests: Kubernetes objects as plain dicts, loaded like user input.

Every builder returns the dict ``kubectl get -o yaml`` would print, so the tests go
through the same loader (and its validation) as the command line does.
"""

from __future__ import annotations

from typing import Any

import yaml

from drasat.models.loader import load_text
from drasat.solver import Features
from drasat.solver.scheduling.cluster import Cluster, cluster_from_objects
from drasat.solver.scheduling.one_by_one import Placement
from drasat.solver.verification.verifier import verify

GPU = "gpu.example.com"


def node(
    name: str,
    cpu: str = "8",
    memory: str = "32Gi",
    pods: str = "110",
    labels: dict | None = None,
    taints: list[dict] | None = None,
    **allocatable: str,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods, **allocatable}},
    }
    if taints:
        body["spec"] = {"taints": taints}
    return body


def gpu_slice(node_name: str, count: int = 2, driver: str = GPU, **device_fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", **device_fields} for i in range(count)],
        },
    }


def device_class(name: str = GPU, driver: str = GPU, extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def claim_spec(count: int = 1, cls: str = GPU) -> dict[str, Any]:
    return {
        "devices": {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": cls, "count": count, "allocationMode": "ExactCount"}}
            ]
        }
    }


def claim(name: str, namespace: str = "default", count: int = 1, **status: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": claim_spec(count),
    }
    if status:
        body["status"] = status
    return body


def template(name: str, namespace: str = "default", count: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim_spec(count)},
    }


def pod(
    name: str, namespace: str = "default", claims: list[dict] | None = None, requests: dict | None = None, **spec: Any
) -> dict[str, Any]:
    """A pod with one container using every pod claim; ``claims`` are spec.resourceClaims entries."""
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if claims:
        resources["claims"] = [{"name": c["name"]} for c in claims]
    if resources:
        container["resources"] = resources
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container], **spec},
    }
    if claims:
        body["spec"]["resourceClaims"] = claims
    return body


def make_cluster(*docs: dict[str, Any], gates: dict[str, bool] | None = None) -> Cluster:
    bundle = load_text(yaml.safe_dump_all(list(docs)))
    assert not bundle.problems, bundle.problems
    return cluster_from_objects([loaded.obj for loaded in bundle.objects], Features.from_mapping(gates or {}))


def violations(placements: list[Placement]) -> list[str]:
    """What the verifier finds wrong with the allocations made for the placed pods ([] when all is valid)."""
    out = []
    for p in placements:
        if p.problem is not None:
            out += [f"{p.label}: {v}" for v in verify(p.problem, p.allocations)]
    return out
