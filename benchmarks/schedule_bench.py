"""``schedule`` on generated clusters: 10, 100 and 1,000 GPU nodes, 1,000 pods of mixed shapes.

Run: ``python benchmarks/schedule_bench.py [--nodes 10,100,1000] [--pods 1000] [--fragmented]
[--processes N | --ray auto|ADDRESS] [--objective pack]``.
With ``--batch`` (``batch_bench``): the fragmented MIG-like cluster of ``mig_cluster``, one-by-one
against ``schedule --batch``; ``--plot FILE.png`` draws it (needs the ``plot`` extra, matplotlib).
Each node has 8 GPUs (the last two partitionable into two halves sharing a
memory counter) and 2 NICs, one per NUMA node; pods ask for one GPU through a
template, two GPUs as an extended resource, a GPU and a NIC on the same NUMA node
(matchAttribute), or one GPU half. Prints pods placed, wall time and time per pod
for each size; a sample of the placements is checked by the verifier.

``--fragmented`` allocates a different handful of each node's whole GPUs beforehand, so that
nodes stop being alike (every node its own class: the allocator runs per node, not per
class). ``--processes N`` / ``--ray`` (the names drasat schedule uses) run the classes'
allocations on N local processes or on Ray (``solver/scheduling/parallel.py``); the placements must equal
the serial run's, which is checked.

``--frag NODES/PODS/GANGS`` (e.g. ``500/4000/40``): one-by-one on ``frag_cluster``'s fragmented
MIG-like cluster (the one ``joint_bench`` uses, seed 1), built in memory as ``joint_bench`` builds
it; CPU time is ``time.process_time`` of ``schedule`` alone (the machine is shared: wall time
depends on the other engineers' load), peak memory the process's. ``--save FILE`` writes each pod's
node, devices and reason as JSON; ``--same-as FILE`` checks them against a saved run (the answer
before a speed-up must be the answer after it).

Measured on the shared 2-core machine, 2 December 2026, ``--frag 500/4000/40``, main's code and this
branch's run one after the other (four pairs, load average 0.4 to 3.9: CPU time varies by a third
between runs, so each cell gives the range; every pair's placements were identical):

| code | pods placed | CPU s | pods/s CPU | wall s | pods/s wall | peak RSS |
|---|---|---|---|---|---|---|
| before (main a2f4c49) | 4,000 | 47.7-64.2 | 62-84 | 48.1-66.4 | 60-83 | 1,141 MB |
| after (plugin registry, per-node memos, shared device records) | 4,000, same nodes and devices | 29.7-35.7 | 112-135 | 29.8-37.7 | 106-134 | 835 MB |
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time

from rich.console import Console
from rich.table import Table

from drasat.models.core import Node, Pod
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from drasat.solver import Features
from drasat.solver.scheduling.cluster import Cluster
from drasat.solver.scheduling.one_by_one import Placement, schedule
from drasat.solver.scheduling.parallel import executor
from drasat.solver.scheduling.plugins.dynamic_resources import AllocateOptions
from drasat.solver.verification.verifier import verify

GPU, NIC = "gpu.example.com", "nic.example.com"


def _slice(node: str, name: str, driver: str, count: int, body: dict) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{name}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": f"{node}-{driver}", "generation": 1, "resourceSliceCount": count},
            **body,
        },
    }


def _gpus(node: str) -> list[dict]:
    """Six whole GPUs, and two that are either whole or two halves (one memory counter each)."""

    def gpu(name: str, numa: int, kind: str, memory: str | None, counter: str | None = None) -> dict:
        device: dict = {"name": name, "attributes": {"example.com/numa": {"int": numa}, "kind": {"string": kind}}}
        if counter:
            device["consumesCounters"] = [{"counterSet": counter, "counters": {"mem": {"value": memory}}}]
        return device

    devices = [gpu(f"gpu-{i}", i // 4, "full", None) for i in range(6)]
    for i in (6, 7):
        devices.append(gpu(f"gpu-{i}", 1, "full", "80Gi", f"gpu-{i}-mem"))
        devices += [gpu(f"gpu-{i}-half-{h}", 1, "half", "40Gi", f"gpu-{i}-mem") for h in range(2)]
    counters = [{"name": f"gpu-{i}-mem", "counters": {"mem": {"value": "80Gi"}}} for i in (6, 7)]
    return [
        _slice(node, "gpus", GPU, 2, {"devices": devices}),
        _slice(node, "gpu-counters", GPU, 2, {"sharedCounters": counters}),
    ]


def _nics(node: str) -> dict:
    return _slice(
        node,
        "nics",
        NIC,
        1,
        {"devices": [{"name": f"nic-{n}", "attributes": {"example.com/numa": {"int": n}}} for n in range(2)]},
    )


def _class(name: str, expression: str, extended: str | None = None) -> DeviceClass:
    spec: dict = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}
    )


def _template(name: str, requests: list[dict], constraints: list[dict] | None = None) -> ResourceClaimTemplate:
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return ResourceClaimTemplate.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": devices}},
        }
    )


def _pod(i: int) -> Pod:
    shape = i % 5
    container: dict = {"name": "main", "resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}
    spec: dict = {"containers": [container]}
    if shape == 1:
        container["resources"]["requests"]["example.com/gpu"] = "2"
    else:
        template = {0: "one-gpu", 2: "gpu-and-nic", 3: "one-gpu", 4: "half-gpu"}[shape]
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template}]
        container["resources"]["claims"] = [{"name": "dev"}]
    return Pod.model_validate(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": "default"}, "spec": spec}
    )


def _held(node: str, n: int) -> ResourceClaim | None:
    """What node ``n`` already runs: a different mix of whole GPUs and GPU halves on almost every node."""
    rng = random.Random(n)
    taken = [f"gpu-{g}" for g in range(6) if rng.random() < 0.4]
    taken += [f"gpu-{g}-half-{h}" for g in (6, 7) for h in range(2) if rng.random() < 0.3]
    if not taken:
        return None
    return ResourceClaim.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"held-{node}", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU}}]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "gpu", "driver": GPU, "pool": f"{node}-{GPU}", "device": d} for d in taken
                        ]
                    }
                }
            },
        }
    )


def cluster(nodes: int, pods: int, fragmented: bool = False) -> Cluster:
    node_objects = [
        Node.model_validate(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{n:04d}"},
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
            }
        )
        for n in range(nodes)
    ]
    slices = [ResourceSlice.model_validate(s) for n in node_objects for s in (*_gpus(n.name), _nics(n.name))]
    classes = [
        _class(GPU, f'device.driver == "{GPU}" && device.attributes["{GPU}"].kind == "full"', "example.com/gpu"),
        _class("gpu-half", f'device.driver == "{GPU}" && device.attributes["{GPU}"].kind == "half"'),
        _class(NIC, f'device.driver == "{NIC}"'),
    ]
    templates = [
        _template("one-gpu", [{"name": "gpu", "exactly": {"deviceClassName": GPU}}]),
        _template("half-gpu", [{"name": "gpu", "exactly": {"deviceClassName": "gpu-half"}}]),
        _template(
            "gpu-and-nic",
            [
                {"name": "gpu", "exactly": {"deviceClassName": GPU}},
                {"name": "nic", "exactly": {"deviceClassName": NIC}},
            ],
            [{"requests": ["gpu", "nic"], "matchAttribute": "example.com/numa"}],
        ),
    ]
    held = [c for i, n in enumerate(node_objects) if (c := _held(n.name, i))] if fragmented else []
    return Cluster(
        nodes=node_objects,
        pods=[_pod(i) for i in range(pods)],
        slices=slices,
        classes=classes,
        claims=held,
        templates=templates,
        features=Features(),
    )


def _placements(nodes: int, args: argparse.Namespace) -> tuple[list[Placement], float, float]:
    """The placements, the wall time, and the CPU time of this process (the rest ran on the workers)."""
    options = AllocateOptions(objective=args.objective)
    with executor(args.processes, args.ray) as ex:
        started, cpu = time.perf_counter(), time.process_time()
        placements = schedule(cluster(nodes, args.pods, args.fragmented), options=options, executor=ex)
        return placements, time.perf_counter() - started, time.process_time() - cpu


def frag_run(text: str, save: str | None, same_as: str | None) -> None:
    """One-by-one on ``frag_cluster``'s cluster: pods placed, CPU and wall time, peak memory; placements saved
    or compared (``--save``, ``--same-as``)."""
    from frag_cluster import fleet, objects

    from drasat.models.loader import load_objects
    from drasat.solver import cluster_from_objects
    from drasat.solver.scheduling.pods import pending_pods

    nodes, pods, gangs = (int(n) for n in text.split("/"))
    built = cluster_from_objects(
        [o.obj for o in load_objects(objects(fleet(nodes, pods, gangs, 1))).objects], Features()
    )
    pending = pending_pods(built)
    started, cpu = time.perf_counter(), time.process_time()
    placements = schedule(built, pending)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - started
    answer = {p.label: [p.node, p.reason, _devices(p)] for p in placements}
    same = "not compared"
    if same_as:
        with open(same_as) as f:
            same = "yes" if json.load(f) == json.loads(json.dumps(answer)) else "NO"
    if save:
        with open(save, "w") as f:
            json.dump(answer, f, sort_keys=True)
    sample = [p for p in placements if p.problem is not None][::50]
    bad = sum(1 for p in sample if verify(p.problem, p.allocations))
    table = Table(title=f"schedule one-by-one, frag_cluster {text} (seed 1)")
    row = {
        "pods placed": f"{sum(1 for p in placements if p.node)}/{len(pending)}",
        "CPU": f"{cpu:.1f} s",
        "pods/s CPU": f"{len(pending) / cpu:.0f}",
        "wall": f"{wall:.1f} s",
        "pods/s wall": f"{len(pending) / wall:.0f}",
        "peak RSS": f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB",
        "verified sample": f"{len(sample) - bad}/{len(sample)} valid",
        "same as saved": same,
    }
    table.add_column("measure")
    table.add_column("value", justify="right")
    for measure, value in row.items():  # one row per measure: fits an 80-column terminal
        table.add_row(measure, value)
    Console().print(table)


def _devices(p: Placement) -> list[list[str]]:
    return [
        [key, r.request, r.driver, r.pool, r.device]
        for key, a in sorted(p.allocations.items())
        for r in a.devices.results
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="10,100,1000")
    parser.add_argument("--pods", default="1000", help="pods per size (one number, or one per size with --batch)")
    parser.add_argument("--fragmented", action="store_true", help="a different part of each node in use")
    parser.add_argument("--objective", default="first-fit", choices=["first-fit", "prioritized-list", "pack"])
    parser.add_argument("--processes", type=int, default=1, help="local processes for the per-class allocations")
    parser.add_argument("--ray", metavar="auto|ADDRESS", help="run them on Ray instead")
    parser.add_argument("--batch", action="store_true", help="one-by-one vs joint placement on fragmented MIG nodes")
    parser.add_argument("--plot", metavar="FILE.png", help="with --batch: pods placed and time vs cluster size")
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="with --batch: the batch's deadline for its whole run, seconds (drasat's --timeout, default 60)",
    )
    parser.add_argument("--frag", metavar="NODES/PODS/GANGS", help="one-by-one on frag_cluster (e.g. 500/4000/40)")
    parser.add_argument("--save", metavar="FILE.json", help="with --frag: write each pod's node, reason and devices")
    parser.add_argument("--same-as", metavar="FILE.json", help="with --frag: compare them with a saved run")
    args = parser.parse_args()
    if args.frag:
        frag_run(args.frag, args.save, args.same_as)
        return
    if args.batch:
        from batch_bench import run

        run([int(n) for n in args.nodes.split(",")], [int(p) for p in args.pods.split(",")], args.plot, args.timeout)
        return
    args.pods = int(args.pods)
    parallel = args.processes > 1 or args.ray
    table = Table(
        title=f"schedule: {args.pods} pods, one at a time over every node"
        + (" (fragmented)" if args.fragmented else "")
        + (f", processes {args.ray and 'ray ' + args.ray or args.processes}" if parallel else "")
    )
    for column in (
        "nodes",
        "pods placed",
        "wall time",
        "per pod",
        "cpu here",
        "verified sample",
        *(["= serial"] * bool(parallel)),
    ):
        table.add_column(column, justify="right")
    for nodes in (int(n) for n in args.nodes.split(",")):
        placements, seconds, cpu = _placements(nodes, args)
        sample = [p for p in placements if p.problem is not None][::50]
        bad = sum(1 for p in sample if verify(p.problem, p.allocations))
        placed = sum(1 for p in placements if p.node)
        same = []
        if parallel:
            serial = schedule(
                cluster(nodes, args.pods, args.fragmented), options=AllocateOptions(objective=args.objective)
            )
            same = ["yes" if _outcome(serial) == _outcome(placements) else "NO"]
        table.add_row(
            str(nodes),
            str(placed),
            f"{seconds:.1f} s",
            f"{seconds / args.pods * 1000:.1f} ms",
            f"{cpu:.1f} s",
            f"{len(sample) - bad}/{len(sample)} valid",
            *same,
        )
    Console().print(table)


def _outcome(placements: list[Placement]) -> list[tuple]:
    """Each pod's node and devices, to compare two runs."""
    return [
        (p.label, p.node, sorted((name, r.device) for name, a in p.allocations.items() for r in a.devices.results))
        for p in placements
    ]


if __name__ == "__main__":
    main()
