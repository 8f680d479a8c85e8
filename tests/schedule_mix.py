"""Small random clusters that exercise what ``schedule``'s shortcuts must not change.

Nodes in two zones, some tainted (PreferNoSchedule or NoSchedule), some with a device
plugin's ``example.com/gpu``, with 0-3 GPUs of two sizes; a DeviceClass backing that
extended resource. Pods drawn from a few specs (so several pods share one spec and the
per-spec caches are used), each spec with tolerations, preferred or required zone
affinity, a node-name pin, and claims: templates (one GPU, two, a big one, firstAvailable),
a claim shared by name, a claim allocated already on n0, a PodGroup's claim, or the
extended resource. The "one" template differs between the two namespaces.
"""

from __future__ import annotations

import random
from typing import Any

from .cluster_factory import GPU

NAMESPACES = ("default", "other")


def _request(name: str, count: int = 1, selector: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": count, "allocationMode": "ExactCount"}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": exactly}


CLAIMS: dict[str, dict[str, Any]] = {
    "one": {"devices": {"requests": [_request("gpu")]}},
    "two": {"devices": {"requests": [_request("gpu", count=2)]}},
    "big": {"devices": {"requests": [_request("gpu", selector=f'device.attributes["{GPU}"].mem >= 2')]}},
    "fa": {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "two", "deviceClassName": "gpu", "count": 2, "allocationMode": "ExactCount"},
                        {"name": "one", "deviceClassName": "gpu", "count": 1, "allocationMode": "ExactCount"},
                    ],
                }
            ]
        }
    },
}
TAINTS = {
    "soft": {"key": "soft", "value": "x", "effect": "PreferNoSchedule"},
    "soft2": {"key": "soft2", "value": "y", "effect": "PreferNoSchedule"},
    "hard": {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
}
CLAIM_SETS = (
    [],
    [],
    ["one"],
    ["two"],
    ["big"],
    ["fa"],
    ["shared"],
    ["pinned"],
    ["one", "shared"],
    ["ext"],
    ["group"],
    ["group", "one"],
)


def _node(r: random.Random, i: int) -> list[dict[str, Any]]:
    name = f"n{i}"
    allocatable = {"cpu": str(r.randint(2, 8)), "memory": f"{r.choice([4, 8, 16])}Gi", "pods": str(r.choice([3, 110]))}
    if r.random() < 0.2:
        allocatable["example.com/gpu"] = str(r.randint(1, 2))
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": r.choice("ab")}},
        "status": {"allocatable": allocatable},
    }
    taint = r.choice([None, None, *TAINTS])
    if taint:
        body["spec"] = {"taints": [TAINTS[taint]]}
    count = r.randint(1 if i == 0 else 0, 3)  # n0 has gpu-0, which the "pinned" claim holds
    if not count:
        return [body]
    devices = [{"name": f"gpu-{k}", "attributes": {"mem": {"int": r.choice([1, 2])}}} for k in range(count)]
    return [
        body,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-gpu"},
            "spec": {
                "driver": GPU,
                "nodeName": name,
                "devices": devices,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            },
        },
    ]


def _shared_objects(r: random.Random) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Class, templates, claims and PodGroups; and each namespace's PodGroup claim template."""
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {
                "selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}],
                "extendedResourceName": "example.com/gpu",
            },
        }
    ]
    differ = r.random() < 0.5
    group_templates = {}
    for ns in NAMESPACES:
        for name, spec in CLAIMS.items():
            if differ and ns == "other" and name == "one":
                spec = CLAIMS["big"]
            docs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"spec": spec},
                }
            )
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "shared", "namespace": ns},
                "spec": CLAIMS[r.choice(["one", "big"])],
            }
        )
        group_templates[ns] = r.choice(["one", "big"])
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "grp", "namespace": ns},
                "spec": {"resourceClaims": [{"name": "gshared", "resourceClaimTemplateName": group_templates[ns]}]},
            }
        )
    pin = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "pinned", "namespace": "default"},
            "spec": CLAIMS["one"],
            "status": {
                "allocation": {
                    "nodeSelector": pin,
                    "devices": {"results": [{"request": "gpu", "driver": GPU, "pool": "n0", "device": "gpu-0"}]},
                }
            },
        }
    )
    return docs, group_templates


def _spec(r: random.Random) -> dict[str, Any]:
    claims = r.choice(CLAIM_SETS)
    return {
        "cpu": r.choice(["1", "1", "2", "500m"]),
        "tolerate": r.choice([None, None, "soft", "all"]),
        "prefer": r.choice([None, None, "a", "b"]),
        "require": r.choice([None, None, None, "a"]),
        "pin": r.choice([None, None, None, None, "name", "fields"]),
        "claims": claims,
        "ns": "default" if "pinned" in claims else r.choice(["default", "default", "other"]),
    }


def _affinity(spec: dict[str, Any]) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    terms = []
    if spec["require"]:
        terms = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": [spec["require"]]}]}]
    if spec["pin"] == "fields":  # two terms: either node
        terms = [
            {**t, "matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
            for name in ("n0", "n2")
            for t in (terms or [{}])
        ]
    if terms:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if spec["prefer"]:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": 5,
                "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": [spec["prefer"]]}]},
            }
        ]
    return affinity


def _pod(i: int, spec: dict[str, Any], group_templates: dict[str, str]) -> dict[str, Any]:
    requests = {"cpu": spec["cpu"]}
    container: dict[str, Any] = {"name": "main", "image": "busybox", "resources": {"requests": requests}}
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": spec["ns"]},
        "spec": {"containers": [container]},
    }
    pod_spec = body["spec"]
    entries = []
    for k, name in enumerate(spec["claims"]):
        if name == "ext":
            requests["example.com/gpu"] = "1"
        elif name == "group":
            entries.append({"name": "gshared", "resourceClaimTemplateName": group_templates[spec["ns"]]})
            pod_spec["schedulingGroup"] = {"podGroupName": "grp"}
        elif name in ("shared", "pinned"):
            entries.append({"name": f"c{k}", "resourceClaimName": name})
        else:
            entries.append({"name": f"c{k}", "resourceClaimTemplateName": name})
    if entries:
        pod_spec["resourceClaims"] = entries
        container["resources"]["claims"] = [{"name": e["name"]} for e in entries]
    if spec["tolerate"]:
        pod_spec["tolerations"] = [
            {"key": "soft", "operator": "Exists"} if spec["tolerate"] == "soft" else {"operator": "Exists"}
        ]
    if spec["pin"] == "name":
        pod_spec["nodeName"] = "n1"
    affinity = _affinity(spec)
    if affinity:
        pod_spec["affinity"] = {"nodeAffinity": affinity}
    return body


def mixed_cluster(r: random.Random) -> tuple[list[dict[str, Any]], dict[str, bool]]:
    """The documents of one random cluster, and its feature gates."""
    docs, group_templates = _shared_objects(r)
    for i in range(r.randint(1, 5)):
        docs += _node(r, i)
    specs = [_spec(r) for _ in range(r.randint(1, 3))]
    docs += [_pod(i, r.choice(specs), group_templates) for i in range(r.randint(2, 10))]
    return docs, {"DRAWorkloadResourceClaims": r.random() < 0.7}
