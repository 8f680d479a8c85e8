"""A fragmented MIG-like GPU cluster with a mixed queue of pending pods (the batch benchmark's input).

Each node has 8 partitionable GPUs and 2 NICs. A GPU's seven compute slices are counters of
one counter set; each MIG-like profile is a device consuming its slices at fixed placements
(1g: any slice; 2g: 0-1, 2-3, 4-5; 3g: 0-2, 4-6; 4g: 0-3; 7g: all), as NVIDIA's A100 lays
them out. Part of the cluster is already allocated: each node carries one of a few
fragmentation patterns (small partitions left running in the middle of GPUs), so nodes fall
into a handful of equivalence classes, as real fleets built from a few machine types and job
mixes do. Pending pods ask for one partition of a given profile, for "a whole GPU or else
half of one" (firstAvailable, kubernetes#138765), or for a GPU partition and a NIC; some come
as 8-pod gangs (a PodGroup each). Deterministic for a given seed.
"""

from __future__ import annotations

import random
from typing import Any

GPU, NIC = "gpu.example.com", "nic.example.com"
SLICES = 7
PLACEMENTS = {
    "1g": [[i] for i in range(7)],
    "2g": [[0, 1], [2, 3], [4, 5]],
    "3g": [[0, 1, 2], [4, 5, 6]],
    "4g": [[0, 1, 2, 3]],
    "7g": [list(range(7))],
}
GPUS, NICS = 8, 2
# Already-running partitions per fragmentation pattern: (gpu, profile, placement index).
PATTERNS: list[list[tuple[int, str, int]]] = [
    [(g, "7g", 0) for g in range(4)],
    [(g, "1g", 6) for g in range(GPUS)] + [(g, "4g", 0) for g in range(4)],
    [(g, "3g", 0) for g in range(GPUS)],
    [(g, "2g", 1) for g in range(GPUS)] + [(g, "1g", 6) for g in range(4)],
    [(g, "1g", (g * 3) % 7) for g in range(4)]
    + [(g, "3g", 1) for g in range(4, GPUS)]
    + [(g, "1g", 0) for g in range(4, GPUS)],
    [(0, "7g", 0), (1, "7g", 0), (2, "4g", 0), (3, "4g", 0), (4, "3g", 1)] + [(g, "1g", 2) for g in range(5, GPUS)],
]
# Pending pod shapes: (template, weight).
SHAPES = [
    ("mig-1g", 20),
    ("mig-2g", 15),
    ("mig-3g", 15),
    ("mig-4g", 15),
    ("mig-7g", 15),
    ("whole-or-half", 10),
    ("mig-1g-and-nic", 10),
]


def _meta(kind: str, name: str, api: str = "resource.k8s.io/v1", namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def _mig_name(gpu: int, profile: str, index: int) -> str:
    return f"gpu-{gpu}-{profile}-{index}"


def node_objects(name: str) -> list[dict[str, Any]]:
    """The Node, its GPU partitions with their counters, and its NICs (one NUMA node per four GPUs)."""
    node = _meta("Node", name, "v1")
    node["metadata"]["labels"] = {"kubernetes.io/hostname": name}
    node["status"] = {"allocatable": {"cpu": "128", "memory": "1Ti", "pods": "110"}}
    counters = [{"name": f"gpu-{g}", "counters": {f"s{s}": {"value": "1"} for s in range(SLICES)}} for g in range(GPUS)]
    devices = [
        {
            "name": _mig_name(g, profile, i),
            "attributes": {"profile": {"string": profile}, "numa": {"int": g // 4}},
            "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {f"s{s}": {"value": "1"} for s in slots}}],
        }
        for g in range(GPUS)
        for profile, placements in PLACEMENTS.items()
        for i, slots in enumerate(placements)
    ]
    pool = {"name": name, "generation": 1, "resourceSliceCount": 3}  # counters, and two halves of the devices
    halves = len(devices) // 2  # a slice holds at most 64 devices that consume counters
    gpu_slices = [
        {
            **_meta("ResourceSlice", f"{name}-counters"),
            "spec": {"driver": GPU, "nodeName": name, "pool": pool, "sharedCounters": counters},
        }
    ]
    gpu_slices += [
        {
            **_meta("ResourceSlice", f"{name}-gpus-{part}"),
            "spec": {"driver": GPU, "nodeName": name, "pool": pool, "devices": chunk},
        }
        for part, chunk in enumerate((devices[:halves], devices[halves:]))
    ]
    nics = {
        **_meta("ResourceSlice", f"{name}-nics"),
        "spec": {
            "driver": NIC,
            "nodeName": name,
            "pool": {"name": f"{name}-nic", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"nic-{n}", "attributes": {"numa": {"int": n}}} for n in range(NICS)],
        },
    }
    return [node, *gpu_slices, nics]


def _class(name: str, expression: str) -> dict[str, Any]:
    return {**_meta("DeviceClass", name), "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def classes_and_templates() -> list[dict[str, Any]]:
    """One DeviceClass per profile and the NIC class; one template per pending pod shape."""
    out = [
        _class(f"mig-{p}", f'device.driver == "{GPU}" && device.attributes["{GPU}"].profile == "{p}"')
        for p in PLACEMENTS
    ]
    out.append(_class("nic", f'device.driver == "{NIC}"'))

    def template(name: str, devices: dict[str, Any]) -> dict[str, Any]:
        return {**_meta("ResourceClaimTemplate", name, namespace="default"), "spec": {"spec": {"devices": devices}}}

    for p in PLACEMENTS:
        out.append(template(f"mig-{p}", {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"mig-{p}"}}]}))
    out.append(
        template(
            "whole-or-half",
            {
                "requests": [
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {"name": "whole", "deviceClassName": "mig-7g"},
                            {"name": "half", "deviceClassName": "mig-3g"},
                        ],
                    }
                ]
            },
        )
    )
    out.append(
        template(
            "mig-1g-and-nic",
            {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "mig-1g"}},
                    {"name": "nic", "exactly": {"deviceClassName": "nic"}},
                ],
                "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "numa"}],
            },
        )
    )
    return out


def used_claims(node: str, pattern: int) -> list[dict[str, Any]]:
    """The partitions already running on ``node`` (allocated claims, no pods needed)."""
    return [
        {
            **_meta("ResourceClaim", f"running-{node}-{i}", namespace="batch"),
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"mig-{profile}"}}]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "gpu", "driver": GPU, "pool": node, "device": _mig_name(g, profile, index)}
                        ]
                    }
                }
            },
        }
        for i, (g, profile, index) in enumerate(PATTERNS[pattern])
    ]


def pod(name: str, template: str, group: str | None = None, priority: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "claims": [{"name": "dev"}]}}
        ],
        "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": template}],
    }
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority:
        spec["priority"] = priority
    return {**_meta("Pod", name, "v1", "default"), "spec": spec}


def pod_group(name: str, members: int) -> dict[str, Any]:
    return {
        **_meta("PodGroup", name, "scheduling.k8s.io/v1beta1", "default"),
        "spec": {"schedulingPolicy": {"gang": {"minCount": members}}},
    }


def cluster_objects(nodes: int, pods: int, seed: int = 1, gang_every: int = 100) -> list[dict[str, Any]]:
    """``nodes`` MIG nodes, fragmented, and ``pods`` pending pods; one 8-pod gang per ``gang_every`` pods."""
    rng = random.Random(seed)
    docs = classes_and_templates()
    for n in range(nodes):
        name = f"node-{n:04d}"
        docs += node_objects(name)
        docs += used_claims(name, rng.randrange(len(PATTERNS)))
    names, weights = zip(*SHAPES)
    i = 0
    while i < pods:
        if gang_every and i % gang_every == gang_every - 8 and i + 8 <= pods:
            group = f"gang-{i}"
            docs.append(pod_group(group, 8))
            shape = rng.choice(["mig-4g", "mig-7g", "mig-3g"])
            docs += [pod(f"{group}-{m}", shape, group) for m in range(8)]
            i += 8
            continue
        docs.append(pod(f"pod-{i:05d}", rng.choices(names, weights)[0]))
        i += 1
    return docs
