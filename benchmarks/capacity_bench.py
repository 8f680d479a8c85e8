"""``fit`` and ``scale-up`` on the fragmented clusters of ``frag_cluster``: seconds, the answer, proven or the gap.

fit: a Deployment whose pods each ask for one partition (``--profile``, default quarter) on the cluster as it
runs (its pending pods left aside): the most replicas, per node, devices verified. scale-up: the preset's
pending pods (``frag_cluster.PRESETS``) with one node template, a fresh node of the same 8 GPUs (cost 1,
``--max-nodes`` copies at most), beside cluster-autoscaler's first-fit-decreasing estimate. The input is
built in memory (``load_objects``), so the seconds exclude reading YAML; each row's time limit is
``--timeout`` (the answer is then the best so far, and the row says so).

Run ``python benchmarks/capacity_bench.py --sizes 100,500 [--timeout 60] [--max-nodes 40] [--skip-scale-up]``.

Measured on the 2-core machine (shared with other work), 2 December 2026, seed 1, ``--max-nodes 40``:

     nodes  what                answer                  seconds   standing
       100  fit quarter     1971 replicas                     2.4 s  proven
       100  scale-up 2000p    14 nodes  FFD 15 (+0 left)       51.5 s  gap 14 nodes (bound 0)
       500  fit quarter     9883 replicas                    20.7 s  proven
       500  scale-up 4000p     0 nodes, 4000 pods not placed  FFD 0 (+2790 left)     58.9 s  not proven, no bound
    (--timeout 300)
       500  scale-up 4000p     0 nodes  FFD 0 (+0 left)       254.4 s  gap 0 nodes (bound 0)

The last row is proven since (no pod left, no node added: nothing is cheaper). CP-SAT's cost bound stays 0
where nodes are added: the relaxation opens a fraction of a node, so such answers are not proven.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import frag_cluster  # noqa: E402

from drasat.models.errors import Location  # noqa: E402
from drasat.models.loader import load_objects  # noqa: E402
from drasat.models.workloads import workload_from_data  # noqa: E402
from drasat.solver import AllocateOptions, cluster_from_objects, fit_workload, node_templates, scale_up  # noqa: E402


def _cluster(objects: list[dict[str, Any]]) -> Any:
    bundle = load_objects(objects)
    assert not bundle.problems, bundle.problems[:3]
    return cluster_from_objects([loaded.obj for loaded in bundle.objects])


def _deployment(profile: str) -> Any:
    data = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "bench", "namespace": frag_cluster.NAMESPACE},
        "spec": {
            "template": {
                "spec": {
                    "containers": [frag_cluster._container("gpu")],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"gpu-{profile}"}],
                }
            }
        },
    }
    return workload_from_data(data, Location("bench", 0))


def fit_row(nodes: int, profile: str, timeout: float) -> str:
    objects = [o for o in frag_cluster.cluster_objects(nodes, 0) if o["kind"] != "Pod" or o["spec"].get("nodeName")]
    cluster = _cluster(objects)
    started = time.monotonic()
    result = fit_workload(cluster, _deployment(profile), options=AllocateOptions(time_limit=timeout))
    seconds = time.monotonic() - started
    standing = "proven" if result.proven else f"bound {result.bound}" if result.bound is not None else "no bound"
    return f"{nodes:>6}  fit {profile:<8} {result.copies:>7} replicas {'':>14} {seconds:>8.1f} s  {standing}"


def scale_up_row(nodes: int, timeout: float, max_nodes: int) -> str:
    pods, gangs = frag_cluster.PRESETS.get(nodes, (20 * nodes, 0))
    cluster = _cluster(frag_cluster.cluster_objects(nodes, pods, gangs))
    template = _cluster([*frag_cluster.classes_and_templates(), *frag_cluster.node_objects("template")])
    templates = node_templates([*template.nodes, *template.slices], lambda _: None, max_nodes=max_nodes)
    started = time.monotonic()
    result = scale_up(cluster, templates, max_nodes=max_nodes, options=AllocateOptions(time_limit=timeout))
    seconds = time.monotonic() - started
    if result.proven:
        standing = "proven"
    elif result.cost_bound is not None:
        standing = f"gap {result.cost - result.cost_bound:g} nodes (bound {result.cost_bound:g})"
    else:
        standing = "not proven, no bound"
    ffd = result.ffd
    ffd_text = f"FFD {ffd.added} (+{len(ffd.pending)} left)" if ffd else "FFD -"
    left = f", {len(result.pending)} pods not placed" if result.pending else ""
    return (
        f"{nodes:>6}  scale-up {pods}p {len(result.added):>5} nodes{left}  {ffd_text:<18} {seconds:>8.1f} s  {standing}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,500")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--max-nodes", type=int, default=40)
    parser.add_argument("--profile", default="quarter", choices=sorted(frag_cluster.PROFILES))
    parser.add_argument("--skip-scale-up", action="store_true")
    args = parser.parse_args()
    print(f"{'nodes':>6}  what                answer                  seconds   standing")
    for nodes in (int(s) for s in args.sizes.split(",")):
        print(fit_row(nodes, args.profile, args.timeout), flush=True)
        if not args.skip_scale_up:
            print(scale_up_row(nodes, args.timeout, args.max_nodes), flush=True)


if __name__ == "__main__":
    main()
