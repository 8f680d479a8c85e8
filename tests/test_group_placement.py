"""KEP-5732 topology-aware workload scheduling in one-by-one mode: a PodGroup's pods share a domain.

The TopologyPlacement plugin's PlacementGenerate makes one placement per value of
``spec.schedulingConstraints.topology[0].key`` (only the domain of already-scheduled pods, when some
are: "the scheduler will force all new incoming pods to land on the exact same topology domain where
the existing pods currently reside"); PodGroupPodsCount and NodeResourcesFit (MostAllocated) rank them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule

from .cluster_factory import violations

GATE = ("--feature-gates", "TopologyAwareWorkloadScheduling=true")


def _node(name: str, rack: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"example.com/rack": rack}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def _slice(node: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
        },
    }


def _pod(name: str, node: str | None = None) -> dict:
    spec: dict = {
        "schedulingGroup": {"podGroupName": "trainers"},
        "containers": [
            {"name": "main", "image": "x", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}
        ],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


BASE = [
    _node("n1", "a"),
    _node("n2", "b"),
    _node("n3", "b"),
    *(_slice(n) for n in ("n1", "n2", "n3")),
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
        },
    },
    {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "trainers", "namespace": "default"},
        "spec": {"schedulingConstraints": {"topology": [{"key": "example.com/rack"}]}},
    },
]


def drasat(*args: str):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _write(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _nodes(result) -> dict[str, str]:
    items = json.loads(result.stdout)["items"] if result.stdout else []
    return {i["metadata"]["name"]: i["spec"].get("nodeName") for i in items if i["kind"] == "Pod"}


def test_the_group_goes_to_the_one_rack_that_holds_it_whole(tmp_path):
    path = _write(tmp_path, [*BASE, _pod("t-0"), _pod("t-1")])
    result = drasat("schedule", "-o", "json", *GATE, path)
    assert result.exit_code == 0, result.stderr
    assert _nodes(result) == {"t-0": "n2", "t-1": "n3"}  # rack b: both fit; rack a holds one GPU only
    features = Features.from_mapping({"TopologyAwareWorkloadScheduling": True})
    placements = schedule(cluster_from_objects([o.obj for o in load_paths([path]).objects], features))
    assert {p.pod.name: p.node for p in placements} == {"t-0": "n2", "t-1": "n3"} and violations(placements) == []


def test_without_the_gate_the_pods_are_placed_one_by_one_across_racks(tmp_path):
    result = drasat("schedule", "-o", "json", _write(tmp_path, [*BASE, _pod("t-0"), _pod("t-1")]))
    assert _nodes(result) == {"t-0": "n1", "t-1": "n2"}  # the name tie-break splits the group


def test_new_pods_join_the_domain_of_the_pods_already_running(tmp_path):
    running = _pod("t-0", node="n1")
    running["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}  # a launcher without a GPU
    del running["spec"]["resourceClaims"]
    result = drasat("schedule", "-o", "json", *GATE, _write(tmp_path, [*BASE, running, _pod("t-1"), _pod("t-2")]))
    assert result.exit_code == 1
    assert _nodes(result) == {"t-1": "n1"}  # rack a, where t-0 runs, though rack b would hold both
    assert "pod default/t-2 is pending: 0/1 nodes are available: 1 cannot allocate all claims." in result.stderr


def test_no_node_with_the_key_leaves_the_group_pending(tmp_path):
    docs = copy.deepcopy([*BASE, _pod("t-0")])  # BASE's own PodGroup stays as it is for the other tests
    docs[-2]["spec"]["schedulingConstraints"]["topology"][0]["key"] = "example.com/pod"
    result = drasat("schedule", "-o", "json", *GATE, _write(tmp_path, docs))
    assert result.exit_code == 1 and "no node has the topology key example.com/pod" in result.stderr


def test_explain_takes_the_groups_turn_as_schedule_does(tmp_path):
    """``explain`` walks the queue as ``schedule`` does: the group placed together in rack b, each pod judged there
    (one by one, t-0 would take n1 in rack a)."""
    path = _write(tmp_path, [*BASE, _pod("t-0"), _pod("t-1")])
    every = json.loads(drasat("explain", "-o", "json", *GATE, path).stdout)["pods"]
    assert [(p["pod"], p["node"], p["placedBefore"]) for p in every] == [
        ("default/t-0", "n2", 0),
        ("default/t-1", "n3", 1),
    ]
    one = json.loads(drasat("explain", "-o", "json", *GATE, "--pods", "default/t-1", path).stdout)["pods"]
    assert [(p["pod"], p["node"]) for p in one] == [("default/t-1", "n3")]
