"""A made-up GPU fleet: N nodes of G GPUs, some whole, some MIG-partitioned, partly allocated and tainted.

Used by the allocation map's browser test (100 nodes × 8 GPUs must stay readable) and
to draw the README's example screenshot. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from typing import Any

DRIVER = "gpu.example.com"
MIG_SLOTS = 7
MIG_LAYOUT = [("1g", [[i] for i in range(7)]), ("3g", [[0, 1, 2, 3], [4, 5, 6]]), ("7g", [list(range(7))])]


def fleet(nodes: int, gpus: int, seed: int = 1) -> list[dict[str, Any]]:
    """ResourceSlices, allocated ResourceClaims and one DeviceTaintRule, as manifests."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for n in range(nodes):
        node = f"node-{n:03d}"
        mig = n % 3 == 2
        docs += _mig_slices(node, gpus) if mig else [_whole_slice(node, gpus, rng)]
        docs += _claims(node, gpus, mig, rng)
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": {"name": "gpu-0-drain"},
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": "node-001", "device": "gpu-0"},
                "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "NoSchedule"},
            },
        }
    )
    return docs


def _slice(name: str, node: str, count: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
            **spec,
        },
    }


def _whole_slice(node: str, gpus: int, rng: random.Random) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    for g in range(gpus):
        device: dict[str, Any] = {"name": f"gpu-{g}", "attributes": {"index": {"int": g}}}
        if rng.random() < 0.05:
            device["taints"] = [{"key": "example.com/ecc-errors", "value": "high", "effect": "NoSchedule"}]
        devices.append(device)
    return _slice(f"{node}-gpus", node, 1, {"devices": devices})


def _mig_slices(node: str, gpus: int) -> list[dict[str, Any]]:
    """Counters in one slice, partitions of four GPUs per slice (a slice holds at most 64 such devices)."""
    counters = [
        {"name": f"gpu-{g}", "counters": {f"slice-{s}": {"value": "1"} for s in range(MIG_SLOTS)}} for g in range(gpus)
    ]
    groups = [range(start, min(start + 4, gpus)) for start in range(0, gpus, 4)]
    count = 1 + len(groups)
    slices = [_slice(f"{node}-counters", node, count, {"sharedCounters": counters})]
    for i, group in enumerate(groups):
        devices = [
            {
                "name": _mig_name(g, profile, p),
                "attributes": {"profile": {"string": profile}},
                "consumesCounters": [
                    {"counterSet": f"gpu-{g}", "counters": {f"slice-{s}": {"value": "1"} for s in slots}}
                ],
            }
            for g in group
            for profile, placements in MIG_LAYOUT
            for p, slots in enumerate(placements)
        ]
        slices.append(
            _slice(
                f"{node}-partitions-{i}",
                node,
                count,
                {"partitionTypeAttribute": f"{DRIVER}/profile", "devices": devices},
            )
        )
    return slices


def _mig_name(gpu: int, profile: str, index: int) -> str:
    return f"g{gpu}-{profile}-{index}"


def _claims(node: str, gpus: int, mig: bool, rng: random.Random) -> list[dict[str, Any]]:
    taken: list[str] = []
    for g in range(gpus):
        if rng.random() < 0.5:
            continue
        if not mig:
            taken.append(f"gpu-{g}")
        elif rng.random() < 0.5:
            taken.append(_mig_name(g, "3g", 0))
        else:
            taken += [_mig_name(g, "1g", i) for i in rng.sample(range(4, 7), rng.randint(1, 3))]
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"job-{node}-{i}", "namespace": "team-a"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {
                "allocation": {
                    "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node, "device": device}]}
                }
            },
        }
        for i, device in enumerate(taken)
    ]


def device_count(nodes: int, gpus: int) -> int:
    """How many devices ``fleet(nodes, gpus)`` publishes."""
    per_mig_gpu = sum(len(placements) for _, placements in MIG_LAYOUT)
    mig_nodes = sum(1 for n in range(nodes) if n % 3 == 2)
    return (nodes - mig_nodes) * gpus + mig_nodes * gpus * per_mig_gpu
