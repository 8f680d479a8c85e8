"""Generated inputs for solve_bench.py, written as scenario files (../shared/scenarios/FORMAT.md).

*Tight packing* (:func:`tight_objects`): MIG-like nodes packed to a chosen share of their GPUs'
counter units. Every GPU has one counter set of 28 units and the partitions a MIG GPU offers: one full (28
units), two halves (14), four quarters (7), seven sevenths (4). The claims are made from a
packing that is known to exist — each GPU gets one of the mixes that fill it exactly, then
claims are dropped at random until the wanted share of units is asked for — and shuffled, so
the order Kubernetes' depth-first search walks them in is not the order they pack in. At
95–98 % of the units depth-first search backtracks for minutes (Kubernetes' allocator found
no answer in 60 s on such inputs, ../shared/reference/anchors.md); an allocation always exists.

*Wide* (:func:`wide_objects`): the shape of ../shared/scenarios/perf/wide-*: NUMA groups of 16 GPUs,
claims for 4 GPUs of one NUMA node (matchAttribute); depth-first search barely backtracks, so these
measure how the work grows with devices and claims.

Run ``python benchmarks/generated_inputs.py tight --gpus 64 --utilisation 0.97 --seed 1 > node.yaml``
(or ``wide --groups 32 --claims 128``) for a file ``drasat solve`` reads as it is.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import yaml

DRIVER = "gpu.example.com"
NODE = "node-1"
UNITS = 28
PROFILES = {"full": (28, 1), "half": (14, 2), "quarter": (7, 4), "seventh": (4, 7)}  # units, partitions per GPU
EXACT_MIXES = (("full",), ("half", "half"), ("half", "quarter", "quarter"), ("quarter",) * 4, ("seventh",) * 7)
GPUS_PER_COUNTER_SLICE = 8


def tight_objects(gpus: int, utilisation: float, seed: int) -> list[dict[str, Any]]:
    """The Kubernetes objects of one packed node, as plain dicts (API shape)."""
    rng = random.Random(seed)
    wanted = [profile for _ in range(gpus) for profile in rng.choice(EXACT_MIXES)]
    budget = utilisation * UNITS * gpus
    while sum(PROFILES[p][0] for p in wanted) > budget:
        wanted.pop(rng.randrange(len(wanted)))
    rng.shuffle(wanted)
    pool = {"name": NODE, "generation": 1, "resourceSliceCount": gpus + -(-gpus // GPUS_PER_COUNTER_SLICE)}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu-partition"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    ]
    for first in range(0, gpus, GPUS_PER_COUNTER_SLICE):
        sets = [
            {"name": f"gpu-{g}", "counters": {"units": {"value": str(UNITS)}}}
            for g in range(first, min(gpus, first + GPUS_PER_COUNTER_SLICE))
        ]
        objects.append(_slice(f"{NODE}-counters-{first // GPUS_PER_COUNTER_SLICE}", pool, sharedCounters=sets))
    for g in range(gpus):
        devices = [
            {
                "name": f"gpu-{g}-{profile}-{i}",
                "attributes": {"profile": {"string": profile}, "gpu": {"int": g}},
                "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"units": {"value": str(units)}}}],
            }
            for profile, (units, count) in PROFILES.items()
            for i in range(count)
        ]
        objects.append(_slice(f"{NODE}-gpu-{g}", pool, devices=devices))
    for i, profile in enumerate(wanted):
        selector = f'device.attributes["{DRIVER}"].profile == "{profile}"'
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"claim-{i}-{profile}", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": "gpu-partition",
                                    "selectors": [{"cel": {"expression": selector}}],
                                },
                            }
                        ]
                    }
                },
            }
        )
    return objects


def _slice(name: str, pool: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {"driver": DRIVER, "nodeName": NODE, "pool": pool, **spec},
    }


def wide_objects(groups: int, claims: int) -> list[dict[str, Any]]:
    """``groups`` NUMA nodes of 16 GPUs (three models, 40Gi or 80Gi) and ``claims`` claims for 4 GPUs of
    at least 10Gi on one NUMA node."""
    pool = {"name": NODE, "generation": 1, "resourceSliceCount": -(-groups // 8)}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    ]
    for first in range(0, groups, 8):  # 128 devices per slice, the API's limit
        devices = [
            {
                "name": f"gpu-{n}-{i}",
                "attributes": {"numa": {"int": n}, "model": {"string": f"m{i % 3}"}},
                "capacity": {"memory": {"value": "80Gi" if i % 4 == 3 else "40Gi"}},
            }
            for n in range(first, min(groups, first + 8))
            for i in range(16)
        ]
        objects.append(_slice(f"{NODE}-gpus-{first // 8}", pool, devices=devices))
    selector = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("10Gi")) >= 0'
    for c in range(claims):
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"claim-{c}", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpus",
                                "exactly": {
                                    "deviceClassName": DRIVER,
                                    "count": 4,
                                    "selectors": [{"cel": {"expression": selector}}],
                                },
                            }
                        ],
                        "constraints": [{"matchAttribute": f"{DRIVER}/numa"}],
                    }
                },
            }
        )
    return objects


def scenario(name: str, objects: list[dict[str, Any]], gates: dict[str, bool]) -> list[dict[str, Any]]:
    """The objects with a Scenario document: no reference answer (a timing input), every claim in order."""
    claims = [o["metadata"]["name"] for o in objects if o["kind"] == "ResourceClaim"]
    doc = {
        "apiVersion": "scenario.drasat.dev/v1",
        "kind": "Scenario",
        "metadata": {
            "name": name,
            "annotations": {
                "scenario.drasat.dev/skip": "timing input (benchmarks/generated_inputs.py): an allocation exists; "
                "check it with the verifier"
            },
        },
        "spec": {"node": NODE, "featureGates": gates, "claims": claims},
    }
    return [doc, *objects]


def tight_scenario(gpus: int, utilisation: float, seed: int) -> list[dict[str, Any]]:
    return scenario(
        f"tight-{gpus}gpu-{round(utilisation * 100)}pct-seed{seed}",
        tight_objects(gpus, utilisation, seed),
        {"DRAPartitionableDevices": True},
    )


def wide_scenario(groups: int, claims: int) -> list[dict[str, Any]]:
    return scenario(f"wide-{groups}x16-{claims}x4", wide_objects(groups, claims), {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = parser.add_subparsers(dest="kind", required=True)
    tight = kinds.add_parser("tight", help="a MIG-like node packed to --utilisation of its counter units")
    tight.add_argument("--gpus", type=int, default=64)
    tight.add_argument("--utilisation", type=float, default=0.97, help="share of the counter units asked for")
    tight.add_argument("--seed", type=int, default=1)
    wide = kinds.add_parser("wide", help="NUMA groups of 16 GPUs, claims for 4 GPUs on one NUMA node")
    wide.add_argument("--groups", type=int, default=32)
    wide.add_argument("--claims", type=int, default=128)
    args = parser.parse_args()
    docs = (
        tight_scenario(args.gpus, args.utilisation, args.seed)
        if args.kind == "tight"
        else wide_scenario(args.groups, args.claims)
    )
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
