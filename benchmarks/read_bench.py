"""Reading big inputs: a whole ``drasat solve`` on a generated cluster, this tree against another commit.

Run: ``python benchmarks/read_bench.py [--nodes 1000,10000] [--against ddbf246] [--repeat 1] [--keep DIR]
[--cluster mig|kubectl]``.

Writes the same cluster as multi-document YAML (``---`` between objects, as helm and kustomize print
it; for ``mig`` also with leaf collections in flow style, as PyYAML prints by default), as one ``kind: List`` document (``kubectl get -o yaml``) and as an indented JSON List (``kubectl
get -o json``); 10,000 nodes and more as multi-document YAML only. ``mig`` (the default) is
``mig_cluster.py``'s fleet with nothing to allocate: 8 partitionable GPUs with their 104 partitions and
counters and 2 NICs per node, and about nine allocated claims each; ``kubectl`` is this file's cluster
with the bookkeeping metadata kubectl prints (managed fields, conditions, images) and Pods. Each input
is read by ``drasat solve --node node-0000 -o json`` in a process of its own, for this tree and for
``--against`` (checked out into a temporary worktree and put on ``PYTHONPATH``, both sides through the
same ``python -m drasat.cli``), and the table gives the whole command's wall and CPU seconds (user +
system: on a busy machine the wall time waits for other work, CPU time does not) and its peak resident
memory (``os.wait4``'s own rusage of that process); the best of ``--repeat`` runs. Nothing is compared
with a fixed number: the table is the measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml
from mig_cluster import cluster_objects
from solve_bench import checkout

HERE = Path(__file__).resolve().parent

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


class _NoAliases(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """kubectl prints no anchors: objects the generator shares (a pool's dict) are written out each time."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def fleet(nodes: int, shape: str) -> list[dict[str, Any]]:
    """The objects of one generated cluster, the same for every run with these arguments."""
    return cluster_objects(nodes, 0) if shape == "mig" else cluster(nodes)


def write_inputs(folder: Path, nodes: int, shape: str) -> list[Path]:
    """The cluster in each form, written object by object (a 10,000-node one is 240 MB of text)."""
    dumper = _NoAliases
    paths = [folder / f"{shape}-{nodes}.yaml"]
    with paths[0].open("w") as out:
        out.writelines(_mig_documents(nodes) if shape == "mig" else _documents(fleet(nodes, shape)))
    if nodes <= 1000 and shape == "mig":  # the same with leaf collections in flow style: PyYAML's default
        paths.append(folder / f"{shape}-{nodes}-flow.yaml")
        with paths[-1].open("w") as out:
            out.writelines(_mig_documents(nodes, flow=None))
    if nodes <= 1000:
        items = fleet(nodes, shape)
        listing = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
        paths.append(folder / f"{shape}-{nodes}-list.yaml")
        paths[-1].write_text(yaml.dump(listing, Dumper=dumper, sort_keys=False))
        paths.append(folder / f"{shape}-{nodes}-list.json")
        paths[-1].write_text(json.dumps(listing))  # compact (kubectl indents: 4x the size; the old 32 MiB cap)
        del items, listing
    return paths


def _documents(items: list[dict[str, Any]], flow: bool | None = False) -> Iterator[str]:
    for i, item in enumerate(items):
        yield ("---\n" if i else "") + _dump(item, flow)


def _dump(item: dict[str, Any], flow: bool | None) -> str:
    return yaml.dump(item, Dumper=_NoAliases, sort_keys=False, default_flow_style=flow)


def _mig_documents(nodes: int, flow: bool | None = False) -> Iterator[str]:
    """``_documents(cluster_objects(nodes, 0))``, written from one dumped template per fragmentation
    pattern with the node's name put in (dumping 140,000 objects one by one takes minutes)."""
    import random

    from mig_cluster import PATTERNS, classes_and_templates, node_objects, used_claims

    rng = random.Random(1)  # as cluster_objects draws the patterns
    yield from _documents(classes_and_templates(), flow)
    node = "node-@@@@"
    templates = [
        "".join(f"---\n{_dump(d, flow)}" for d in [*node_objects(node), *used_claims(node, p)])
        for p in range(len(PATTERNS))
    ]
    for n in range(nodes):
        yield templates[rng.randrange(len(PATTERNS))].replace("node-@@@@", f"node-{n:04d}")


def run(path: Path, pythonpath: Path) -> dict[str, Any]:
    """One ``drasat solve`` of ``path`` with the drasat found on ``pythonpath``: exit, seconds, peak MiB.

    The peak is GNU time's report of its own child: a process forked from this one starts with this one's
    peak (Linux keeps it across exec), so ``os.wait4``'s figure is used only where ``/usr/bin/time`` is not."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "drasat.cli", "solve", "--node", "node-0000", "-o", "json", str(path)]
    timer = ["/usr/bin/time", "-f", "peak %M"] if os.path.exists("/usr/bin/time") else []
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(
            timer + command, env=env, stdout=sink, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
        assert child.stderr is not None
        said = child.stderr.read().decode(errors="replace").splitlines()
        _, status, usage = os.wait4(child.pid, 0)
    peaks = [int(line.split()[1]) for line in said if line.startswith("peak ") and line.split()[1].isdigit()]
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall": time.perf_counter() - started,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak": (peaks[-1] if peaks else usage.ru_maxrss) / 1024,
        "said": next((line for line in said if line.startswith("error")), "")[:90],
    }


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return min(runs, key=lambda r: r["cpu"])


@contextmanager
def this_tree() -> Iterator[Path]:
    """This working tree laid out as an importable ``drasat`` package, as :func:`checkout` lays out another."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "drasat").mkdir()
        for package in ("models", "solver", "cli"):
            (Path(tmp) / "drasat" / package).symlink_to(HERE.parent / package)
        (Path(tmp) / "drasat" / "__init__.py").write_text("")
        yield Path(tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="1000,10000", help="comma-separated node counts")
    parser.add_argument("--against", default="ddbf246", metavar="REV", help="the other commit ('' for none)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cluster", choices=("mig", "kubectl"), default="mig")
    parser.add_argument("--keep", metavar="DIR", help="write the generated files here and keep them")
    args = parser.parse_args()
    with ExitStack() as stack:
        folder = Path(args.keep or stack.enter_context(tempfile.TemporaryDirectory(prefix="drasat-read-")))
        folder.mkdir(parents=True, exist_ok=True)
        sides = {"after": stack.enter_context(this_tree())}
        if args.against:
            sides = {f"before ({args.against})": stack.enter_context(checkout(args.against)), **sides}
        paths = [p for n in args.nodes.split(",") for p in write_inputs(folder, int(n), args.cluster)]
        print(f"{args.cluster} cluster; parsers: {_parsers()}; load average before: {_load()}")
        print(f"{'input':<26}{'size':>9}  {'drasat':<18}{'exit':>5}{'wall s':>9}{'cpu s':>8}{'peak MiB':>10}")
        for path in paths:
            for side, root in sides.items():
                measured = best([run(path, root) for _ in range(args.repeat)])
                print(
                    f"{path.name:<26}{path.stat().st_size / 1e6:>7.1f}MB  {side:<18}{measured['exit']:>5}"
                    f"{measured['wall']:>9.1f}{measured['cpu']:>8.1f}{measured['peak']:>10,.0f}  {measured['said']}",
                    flush=True,
                )
        print(f"load average after: {_load()}")


def _parsers() -> str:
    """Which parsers read big inputs here: the fast extra's where installed, else the reference ones."""
    import importlib.util

    fast = [name for name in ("yaml_rs", "orjson") if importlib.util.find_spec(name) is not None]
    return ", ".join(fast) + " (the fast extra)" if fast else "PyYAML, json (pip install 'drasat[fast]' for more)"


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
