"""Partitionable GPUs: how fast each solver places mixed-size claims, and how many fit.

Each node has 8 GPUs, each published as 1 full + 2 half + 4 quarter + 7 seventh
partitions drawing on one shared counter set per GPU (28 units: 28/14/7/4). The
``groups`` variant adds 4 vGPU devices per GPU and marks partitions ``mig`` and vGPUs
``vgpu`` in compatibility groups, so one GPU runs in one mode only.

Run: ``python benchmarks/partition_bench.py [--claims N] [--seed S]``. Prints, per
variant, the time of one solve of all placeable claims for both solvers, and how
many claims are placed when fed one after another (each allocated as it comes, as a
scheduler does) versus all together (the longest prefix of the list that can be
allocated at once).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from rich.console import Console
from rich.table import Table

from drasat.models.errors import DrasatError, SolveTimeout, Unschedulable
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceClaimStatus, ResourceSlice
from drasat.solver import Features, NodeInfo, Problem, allocate
from drasat.solver.allocation.problem import claim_key
from drasat.solver.verification.verifier import verify

SIZES = {"full": (1, 28), "half": (2, 14), "quarter": (4, 7), "seventh": (7, 4)}
DRIVER = "gpu.example.com"
GATES = {"DRAPartitionableDevices": True, "DRADeviceCompatibilityGroups": True}


def _slice(name: str, spec: dict) -> ResourceSlice:
    return ResourceSlice.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}
    )


def gpu_slices(groups: bool) -> list[ResourceSlice]:
    pool = {"name": "node-1", "generation": 1, "resourceSliceCount": 9}
    counters = _slice(
        "node-1-counters",
        {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": pool,
            "sharedCounters": [{"name": f"gpu-{g}", "counters": {"units": {"value": "28"}}} for g in range(8)],
        },
    )
    slices = [counters]
    for g in range(8):
        devices = []
        for profile, (copies, units) in SIZES.items():
            for i in range(copies):
                devices.append(_device(f"gpu-{g}-{profile}-{i}", g, profile, units, "mig" if groups else None))
        if groups:
            devices += [_device(f"gpu-{g}-vgpu-{i}", g, "vgpu", 7, "vgpu") for i in range(4)]
        slices.append(
            _slice(f"node-1-gpu-{g}", {"driver": DRIVER, "nodeName": "node-1", "pool": pool, "devices": devices})
        )
    return slices


def _device(name: str, gpu: int, profile: str, units: int, group: str | None) -> dict:
    use: dict = {"counterSet": f"gpu-{gpu}", "counters": {"units": {"value": str(units)}}}
    if group:
        use["compatibilityGroups"] = [group]
    return {
        "name": name,
        "attributes": {"profile": {"string": profile}, "gpu": {"int": gpu}},
        "consumesCounters": [use],
    }


def claims(count: int, seed: int, groups: bool) -> list[ResourceClaim]:
    rng = random.Random(seed)
    profiles = list(SIZES) + (["vgpu"] if groups else [])
    weights = [1, 2, 4, 6] + ([3] if groups else [])
    out = []
    for c in range(count):
        profile = rng.choices(profiles, weights)[0]
        out.append(
            ResourceClaim.model_validate(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"claim-{c}-{profile}"},
                    "spec": {
                        "devices": {
                            "requests": [
                                {
                                    "name": "gpu",
                                    "exactly": {
                                        "deviceClassName": "gpu-partition",
                                        "selectors": [
                                            {
                                                "cel": {
                                                    "expression": f'device.attributes["{DRIVER}"].profile == "{profile}"'
                                                }
                                            }
                                        ],
                                    },
                                }
                            ]
                        }
                    },
                }
            )
        )
    return out


def problem(slices: list[ResourceSlice], wanted: list[ResourceClaim], allocated: list[ResourceClaim]) -> Problem:
    cls = DeviceClass.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu-partition"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    )
    return Problem(NodeInfo("node-1"), slices, [cls], wanted, allocated, features=Features.from_mapping(GATES))


def one_after_another(slices, wanted, **options) -> str:
    """Claims placed when each is allocated as it arrives: the prefix before the first
    failure, and the total when failing claims are skipped."""
    allocated: list[ResourceClaim] = []
    prefix = None
    for i, claim in enumerate(wanted):
        try:
            answer = allocate(problem(slices, [claim], allocated), **options)
        except Unschedulable:
            prefix = i if prefix is None else prefix
            continue
        status = ResourceClaimStatus(allocation=answer.results[claim_key(claim)])
        allocated.append(claim.model_copy(update={"status": status}))
    return f"{len(wanted) if prefix is None else prefix} (skipping failures: {len(allocated)})"


def together(slices, wanted, **options) -> str:
    """The longest prefix of the claims that can be allocated all at once (binary search)."""
    low, high = 0, len(wanted)
    while low < high:
        middle = (low + high + 1) // 2
        try:
            allocate(problem(slices, wanted[:middle], []), **options)
            low = middle
        except Unschedulable:
            high = middle - 1
        except SolveTimeout:
            return f">= {low} (undecided at {middle}: time limit)"
    return str(low)


def timed(p: Problem, repeat: int, **options) -> str:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            answer = allocate(p, **options)
        except DrasatError as exc:
            return f"{type(exc).__name__}"
        times.append(time.perf_counter() - started)
        assert verify(p, answer.results) == [], "the verifier rejected an answer"
    return f"{statistics.median(times) * 1000:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--greedy-seconds", type=float, default=10.0, help="time limit per greedy solve")
    args = parser.parse_args()
    table = Table(title=f"Partitioned GPUs: 8 GPUs x (1+2+4+7) partitions, {args.claims} mixed claims")
    for column in (
        "variant",
        "devices",
        "prefix placed one by one",
        "prefix placed together (greedy)",
        "prefix placed together (cp-sat)",
        "claims in timed solve",
        "greedy ms",
        "cp-sat ms (default)",
        "cp-sat alone ms",
    ):
        table.add_column(column)
    for groups in (False, True):
        slices = gpu_slices(groups)
        wanted = claims(args.claims, args.seed, groups)
        sequential = one_after_another(slices, wanted, solver="greedy")
        greedy_n = together(slices, wanted, solver="greedy", time_limit=args.greedy_seconds)
        cp_n = together(slices, wanted)
        p = problem(slices, wanted[: int(cp_n)], [])
        devices = sum(len(s.spec.devices) for s in slices)
        table.add_row(
            "mig+vgpu groups" if groups else "mig partitions",
            str(devices),
            sequential,
            greedy_n,
            cp_n,
            cp_n,
            timed(p, args.repeat, solver="greedy", time_limit=args.greedy_seconds),
            timed(p, args.repeat),
            timed(p, args.repeat, greedy_budget=0),
        )
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
