"""Fragmented MIG-like clusters where every node is unlike the others: the joint-placement benchmark's input.

The shape of the joint-placement issue: each node has 8 GPUs; each GPU is one counter set of 28
units and offers the partitions a MIG GPU does — 1 full (28 units), 2 halves (14), 4 quarters (7),
7 sevenths (4) — as devices consuming that counter set, the size in a ``profile`` attribute (the
layout of ``generated_inputs.tight_objects``, spread over a fleet). About 30 % of the units already
run small partitions, each an allocated ResourceClaim reserved for a running Pod bound to the node.
The fragmentation is drawn per node and no two nodes get the same one (not even up to the order of
their GPUs): node equivalence classes, which make ``mig_cluster``'s fleet cheap, buy nothing here.
Pending pods ask for one partition of one of the four sizes (a template per size, a DeviceClass
with a CEL selector on ``profile``), and gangs are 8 whole-GPU pods under a gang PodGroup (no
topology constraint: any 8 whole GPUs in the cluster), each at a random place in the queue.

Why so: at 20 pending pods a node (``--nodes 10 --pods 200``, ``100/2000``) the cluster is
over-subscribed and whole GPUs are scarce, so the order partitions are carved in decides how many
pods run — kube-scheduler's one-by-one breaks whole GPUs a later gang needed. ``500/4000/40`` (8 a
node) all fit; ``200/2000`` and ``10000/40000`` are the scale points without gangs.

:func:`fleet` draws the parameters (per GPU what already runs; the queue), which the counting
optimum (``counting_optimum.py``) reads directly; :func:`objects` turns them into Kubernetes API
dicts, the shape ``kubectl get -o yaml`` gives. Deterministic for a given seed.

Run ``python benchmarks/frag_cluster.py --nodes 10 --pods 200 --gangs 2 cluster.yaml`` and then
``drasat schedule --batch cluster.yaml``.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

DRIVER = "gpu.example.com"
GPUS = 8
UNITS = 28
PROFILES = {"full": (28, 1), "half": (14, 2), "quarter": (7, 4), "seventh": (4, 7)}  # units, devices per GPU
GANG_SIZE = 8
TAKEN_SHARE = (0.22, 0.38)  # per node, drawn uniformly: ~30 % of the units on average
RUNNING = {"seventh": 6, "quarter": 3, "half": 1}  # what the running partitions are (weights)
PENDING = {"full": 6, "half": 16, "quarter": 34, "seventh": 44}  # what single pending pods ask for (weights)
NAMESPACE, RUNNING_NAMESPACE = "default", "serving"
# The issue's sizes: nodes -> (pods, gangs); pods counts every pending pod, the gangs' members included.
PRESETS = {10: (200, 2), 100: (2000, 10), 500: (4000, 40), 200: (2000, 0), 10000: (40000, 0)}


@dataclass(frozen=True)
class Pending:
    name: str
    size: str
    gang: str | None = None


@dataclass(frozen=True)
class Fleet:
    """The generator's parameters: per node, per GPU, the (profile, device index) already running; the queue."""

    taken: list[list[list[tuple[str, int]]]]
    queue: list[Pending]
    gangs: list[str]

    def node_name(self, n: int) -> str:
        return f"node-{n:05d}"


def _fragment(rng: random.Random) -> list[list[tuple[str, int]]]:
    """One node's running partitions: a random share of its units, on a random subset of its GPUs (the
    rest stay whole), each partition on a random free device of its profile."""
    gpus: list[list[tuple[str, int]]] = [[] for _ in range(GPUS)]
    busy = rng.sample(range(GPUS), rng.randint(GPUS // 2, GPUS))
    target, used = rng.uniform(*TAKEN_SHARE) * GPUS * UNITS, 0
    names, weights = zip(*RUNNING.items())
    for _ in range(1000):  # gives up on a target the chosen GPUs cannot take
        if used >= target:
            break
        g, profile = rng.choice(busy), rng.choices(names, weights)[0]
        units, devices = PROFILES[profile]
        free = [i for i in range(devices) if (profile, i) not in gpus[g]]
        if free and sum(PROFILES[p][0] for p, _ in gpus[g]) + units <= UNITS:
            gpus[g].append((profile, rng.choice(free)))
            used += units
    return gpus


def _signature(gpus: list[list[tuple[str, int]]]) -> tuple:
    """What a node can still take, whatever the devices' names: its GPUs' running profiles, GPU order aside."""
    return tuple(sorted(tuple(sorted(Counter(p for p, _ in gpu).items())) for gpu in gpus))


def _queue(rng: random.Random, pods: int, gangs: int) -> tuple[list[Pending], list[str]]:
    """Single pods of random sizes in random order; each gang's 8 pods together at a random place."""
    names, weights = zip(*PENDING.items())
    singles = pods - gangs * GANG_SIZE
    if singles < 0:
        raise ValueError(f"{pods} pods cannot hold {gangs} gangs of {GANG_SIZE}")
    queue: list[list[Pending]] = [[Pending(f"pod-{i:05d}", rng.choices(names, weights)[0])] for i in range(singles)]
    groups = [f"gang-{k:03d}" for k in range(gangs)]
    for group in groups:
        queue.insert(rng.randrange(len(queue) + 1), [Pending(f"{group}-{m}", "full", group) for m in range(GANG_SIZE)])
    return [p for block in queue for p in block], groups


def fleet(nodes: int, pods: int, gangs: int = 0, seed: int = 1) -> Fleet:
    """``nodes`` nodes, each fragmented unlike any other, and ``pods`` pending pods of which ``gangs`` gangs."""
    rng = random.Random(seed)
    seen: set[tuple] = set()
    taken: list[list[list[tuple[str, int]]]] = []
    while len(taken) < nodes:
        gpus = _fragment(rng)
        if _signature(gpus) not in seen:
            seen.add(_signature(gpus))
            taken.append(gpus)
    queue, groups = _queue(rng, pods, gangs)
    return Fleet(taken, queue, groups)


def _meta(kind: str, name: str, api: str = "resource.k8s.io/v1", namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def device_name(gpu: int, profile: str, index: int) -> str:
    return f"gpu-{gpu}-{profile}-{index}"


def node_objects(name: str) -> list[dict[str, Any]]:
    """The Node, one slice of its 8 counter sets, and one slice of partitions per GPU (one pool)."""
    node = _meta("Node", name, "v1")
    node["metadata"]["labels"] = {"kubernetes.io/hostname": name}
    node["status"] = {"allocatable": {"cpu": "128", "memory": "1Ti", "pods": "110"}}  # never the limit: <= 56 pods
    pool = {"name": name, "generation": 1, "resourceSliceCount": 1 + GPUS}

    def resource_slice(suffix: str, **spec: Any) -> dict[str, Any]:
        return {
            **_meta("ResourceSlice", f"{name}-{suffix}"),
            "spec": {"driver": DRIVER, "nodeName": name, "pool": pool, **spec},
        }

    out = [
        node,
        resource_slice(
            "counters",
            sharedCounters=[{"name": f"gpu-{g}", "counters": {"units": {"value": str(UNITS)}}} for g in range(GPUS)],
        ),
    ]
    for g in range(GPUS):
        out.append(
            resource_slice(
                f"gpu-{g}",
                devices=[
                    {
                        "name": device_name(g, profile, i),
                        "attributes": {"profile": {"string": profile}, "gpu": {"int": g}},
                        "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"units": {"value": str(units)}}}],
                    }
                    for profile, (units, count) in PROFILES.items()
                    for i in range(count)
                ],
            )
        )
    return out


def _container(claim: str) -> dict[str, Any]:
    return {
        "name": "main",
        "image": "registry.example.com/inference:1",
        "resources": {"requests": {"cpu": "1", "memory": "4Gi"}, "claims": [{"name": claim}]},
    }


def running_objects(n: int, node: str, gpus: list[list[tuple[str, int]]]) -> list[dict[str, Any]]:
    """Each running partition: its allocated claim, reserved for a running Pod bound to ``node``."""
    out = []
    for g, gpu in enumerate(gpus):
        for profile, index in gpu:
            name, uid = f"run-{node}-{device_name(g, profile, index)}", f"{n:08x}-{g:04x}-4000-8000-{index:012x}"
            claim = {
                **_meta("ResourceClaim", name, namespace=RUNNING_NAMESPACE),
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"gpu-{profile}"}}]}},
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "gpu",
                                    "driver": DRIVER,
                                    "pool": node,
                                    "device": device_name(g, profile, index),
                                }
                            ]
                        },
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
                **_meta("Pod", name, "v1", RUNNING_NAMESPACE),
                "spec": {
                    "nodeName": node,
                    "containers": [_container("gpu")],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
                },
                "status": {"phase": "Running"},
            }
            pod["metadata"]["uid"] = uid
            out += [claim, pod]
    return out


def classes_and_templates() -> list[dict[str, Any]]:
    """A DeviceClass and a ResourceClaimTemplate per partition size."""
    out = []
    for profile in PROFILES:
        expression = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].profile == "{profile}"'
        out.append(
            {**_meta("DeviceClass", f"gpu-{profile}"), "spec": {"selectors": [{"cel": {"expression": expression}}]}}
        )
        out.append(
            {
                **_meta("ResourceClaimTemplate", f"gpu-{profile}", namespace=NAMESPACE),
                "spec": {
                    "spec": {
                        "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"gpu-{profile}"}}]}
                    }
                },
            }
        )
    return out


def pending_objects(f: Fleet) -> list[dict[str, Any]]:
    """The gangs' PodGroups, then the pending pods in queue order."""
    out = [
        {
            **_meta("PodGroup", group, "scheduling.k8s.io/v1beta1", NAMESPACE),
            "spec": {"schedulingPolicy": {"gang": {"minCount": GANG_SIZE}}},
        }
        for group in f.gangs
    ]
    for p in f.queue:
        spec: dict[str, Any] = {
            "containers": [_container("gpu")],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"gpu-{p.size}"}],
        }
        if p.gang:
            spec["schedulingGroup"] = {"podGroupName": p.gang}
        out.append({**_meta("Pod", p.name, "v1", NAMESPACE), "spec": spec})
    return out


def objects(f: Fleet) -> Iterator[dict[str, Any]]:
    """Every object of the cluster, one by one (10,000 nodes are half a million objects)."""
    yield from classes_and_templates()
    for n, gpus in enumerate(f.taken):
        yield from node_objects(f.node_name(n))
        yield from running_objects(n, f.node_name(n), gpus)
    yield from pending_objects(f)


def cluster_objects(nodes: int, pods: int, gangs: int = 0, seed: int = 1) -> list[dict[str, Any]]:
    return list(objects(fleet(nodes, pods, gangs, seed)))


def describe(f: Fleet) -> str:
    """One line on what was drawn: how much is taken, how many GPUs are whole, what is asked for."""
    units = sum(PROFILES[p][0] for gpus in f.taken for gpu in gpus for p, _ in gpu)
    whole = sum(1 for gpus in f.taken for gpu in gpus if not gpu)
    asked = Counter(p.size for p in f.queue)
    demand = sum(PROFILES[s][0] * k for s, k in asked.items())
    total = len(f.taken) * GPUS * UNITS
    return (
        f"{len(f.taken)} nodes, {units / total:.1%} of {total} units taken, {whole} whole GPUs free; "
        f"{len(f.queue)} pods ({', '.join(f'{asked[s]} {s}' for s in PROFILES)}; {len(f.gangs)} gangs) "
        f"asking {demand} units = {demand / (total - units):.0%} of the free units"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="the multi-document YAML to write ('-' for stdout)")
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--pods", type=int, help="pending pods, gang members included (default: the preset's)")
    parser.add_argument("--gangs", type=int, help="gangs of 8 whole-GPU pods (default: the preset's)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pods, gangs = PRESETS.get(args.nodes, (20 * args.nodes, 0))
    f = fleet(
        args.nodes, pods if args.pods is None else args.pods, gangs if args.gangs is None else args.gangs, args.seed
    )
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out = sys.stdout if args.path == "-" else open(args.path, "w")
    with out:
        yaml.dump_all(objects(f), out, Dumper=dumper, sort_keys=False)
    print(describe(f), file=sys.stderr)


if __name__ == "__main__":
    main()
