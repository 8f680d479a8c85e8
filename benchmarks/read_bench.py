"""Reading big inputs: a generated cluster as `kubectl get -A -o yaml` (or `-o json`) prints it.

Run: ``python benchmarks/read_bench.py [--nodes 1000] [--keep DIR]``.
Writes one YAML and one JSON file of the same cluster (Nodes with their status,
ResourceSlices of GPUs and NICs, allocated ResourceClaims, Pods, all with the
bookkeeping metadata kubectl prints), then times drasat's reading of each —
parsing and models — and prints a table. Nothing is compared with a fixed number:
the table is the measurement.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from drasat.models.loader import load_paths

GPUS, NICS, PODS_PER_NODE = 8, 2, 6


def _meta(name: str, namespace: str | None = None, i: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"{i:08x}-1111-2222-3333-{i:012x}",
        "resourceVersion": str(100000 + i),
        "creationTimestamp": "2026-11-01T10:00:00Z",
        "labels": {"app.kubernetes.io/part-of": "bench", "team": f"t{i % 7}"},
        "managedFields": [
            {
                "manager": "kube-controller-manager",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-11-01T10:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}},
            }
        ],
    }
    if namespace:
        meta["namespace"] = namespace
    return meta


def _node(n: int) -> dict[str, Any]:
    name = f"node-{n:04d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            **_meta(name, i=n),
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": f"zone-{n % 3}",
                "node.kubernetes.io/instance-type": "gpu-8x",
            },
        },
        "spec": {"podCIDR": f"10.{n // 256}.{n % 256}.0/24", "providerID": f"cloud://{name}"},
        "status": {
            "capacity": {"cpu": "96", "memory": "1024Gi", "pods": "110"},
            "allocatable": {"cpu": "95", "memory": "1000Gi", "pods": "110"},
            "conditions": [
                {
                    "type": t,
                    "status": "False",
                    "reason": f"Kubelet{t}",
                    "lastHeartbeatTime": "2026-11-30T10:00:00Z",
                    "lastTransitionTime": "2026-11-01T10:00:00Z",
                    "message": f"kubelet has no {t}",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure")
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{n // 256}.{n % 256}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.37.0",
                "containerRuntimeVersion": "containerd://2.1.0",
                "kernelVersion": "6.12.0",
                "osImage": "Debian GNU/Linux 13",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
            "images": [
                {"names": [f"registry.example.com/image-{k}@sha256:{k:064x}"], "sizeBytes": 100000000 + k}
                for k in range(8)
            ],
        },
    }


def _slice(n: int, driver: str, prefix: str, count: int) -> dict[str, Any]:
    node = f"node-{n:04d}"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": _meta(f"{node}-{driver}-x7k2p", i=n),
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"{prefix}-{d}",
                    "attributes": {
                        "model": {"string": "a100" if prefix == "gpu" else "cx7"},
                        "uuid": {"string": f"{prefix}-{n:04d}-{d:02d}-5f1c"},
                        "driverVersion": {"version": "1.2.3"},
                        "numa": {"int": d % 2},
                        "pcieRoot": {"string": f"pci0000:{d // 4:02x}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for d in range(count)
            ],
        },
    }


def _claim_and_pod(n: int, p: int) -> list[dict[str, Any]]:
    node, i = f"node-{n:04d}", n * PODS_PER_NODE + p
    ns, name = f"team-{i % 7}", f"job-{i:05d}"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": _meta(f"{name}-gpu-abcde", ns, i),
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": f"gpu-{p}"}]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": name, "uid": f"pod-{i}"}],
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, ns, i),
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/train:1",
                    "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        },
        "status": {
            "phase": "Running",
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"{name}-gpu-abcde"}],
        },
    }
    return [claim, pod]


def cluster(nodes: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for n in range(nodes):
        items += [_node(n), _slice(n, "gpu.example.com", "gpu", GPUS), _slice(n, "nic.example.com", "nic", NICS)]
        for p in range(PODS_PER_NODE):
            items += _claim_and_pod(n, p)
    return items


def _time(path: Path) -> tuple[float, float, int, int]:
    """Wall and CPU seconds (CPU time tells the work apart from a busy machine's waiting)."""
    started, cpu = time.perf_counter(), time.process_time()
    bundle = load_paths([str(path)])
    return time.perf_counter() - started, time.process_time() - cpu, len(bundle.objects), len(bundle.problems)


def _parsers() -> str:
    """Which parsers read big inputs here: the fast extra's where installed, else the reference ones."""
    import importlib.util

    fast = [name for name in ("yaml_rs", "orjson") if importlib.util.find_spec(name) is not None]
    return ", ".join(fast) + " (the fast extra)" if fast else "PyYAML, json (pip install 'drasat[fast]' for more)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--keep", metavar="DIR", help="write the generated files here and keep them")
    args = parser.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="drasat-read-"))
    folder.mkdir(parents=True, exist_ok=True)
    listing = {"apiVersion": "v1", "kind": "List", "items": cluster(args.nodes), "metadata": {"resourceVersion": ""}}
    as_yaml, as_json = folder / "cluster.yaml", folder / "cluster.json"
    as_yaml.write_text(yaml.safe_dump(listing, sort_keys=False))
    as_json.write_text(json.dumps(listing))  # compact: kubectl indents, which would pass the 32 MiB file limit
    print(f"{args.nodes} nodes, {len(listing['items']):,} objects; parsers: {_parsers()}")
    del listing  # the reading is timed without the generated objects still in memory
    print(f"{'input':<14}{'size':>10}{'wall':>10}{'cpu':>10}{'objects':>10}{'problems':>10}")
    for path in (as_yaml, as_json):
        wall, cpu, objects, problems = _time(path)
        print(
            f"{path.name:<14}{path.stat().st_size / 1e6:>8.1f}MB{wall:>9.2f}s{cpu:>9.2f}s{objects:>10,}{problems:>10}"
        )


if __name__ == "__main__":
    main()
