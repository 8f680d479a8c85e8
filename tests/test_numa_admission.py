"""The kubelet's Topology Manager admission, predicted (issue 26, item 3; seed 004).

The merge follows pkg/kubelet/cm/topologymanager (policy.go's filterProvidersHints and
mergeFilteredHints, policy_single_numa_node.go's filterSingleNumaHints, bitmask IsNarrowerThan) and
the CPU manager's generateCPUTopologyHints; the cases below are those functions' own test cases
restated. Through the command line: a node where single-numa-node cannot align 2 GPUs with 16
exclusive CPUs on one NUMA node and one where it can, in container and pod scope.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.models.topology_policies import TopologyPolicy
from drasat.solver import Features
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.topology_manager import Hint, generate_hints, merge

from .cluster_factory import violations

NODES = Path(__file__).resolve().parent / "data" / "topology" / "numa-nodes.yaml"
DOCS = list(yaml.safe_load_all(NODES.read_text()))
N0, N1, BOTH = frozenset({0}), frozenset({1}), frozenset({0, 1})


# --- the policy code, case by case ------------------------------------------------------------


def test_generate_hints_prefers_the_narrowest_mask_the_cells_could_hold():
    hints = generate_hints([0, 1], 16, {0: 16, 1: 16}, {0: 16, 1: 16})
    assert hints == [Hint(N0, True), Hint(N1, True), Hint(BOTH, False)]
    assert generate_hints([0, 1], 20, {0: 16, 1: 16}, {0: 16, 1: 16}) == [Hint(BOTH, True)]
    # preferred width comes from the cells' totals, not what is free: 16 free only across both cells
    assert generate_hints([0, 1], 16, {0: 16, 1: 16}, {0: 8, 1: 8}) == [Hint(BOTH, False)]
    assert generate_hints([0, 1], 40, {0: 16, 1: 16}, {0: 16, 1: 16}) == []


def test_merge_takes_the_preferred_then_the_narrower_and_lower_mask():
    cpu = [Hint(N0, True), Hint(N1, True), Hint(BOTH, False)]
    device = [Hint(N1, True), Hint(BOTH, False)]
    assert merge(TopologyPolicy.RESTRICTED, [0, 1], [cpu, device]) == (Hint(N1, True), True)
    assert merge(TopologyPolicy.RESTRICTED, [0, 1], [cpu, None]) == (Hint(N0, True), True)  # None: don't care


def test_each_policy_admits_as_upstream():
    spanning = [[Hint(BOTH, True)]]  # e.g. 2 GPUs one per cell: the narrowest their NUMA nodes allow
    assert merge(TopologyPolicy.RESTRICTED, [0, 1], spanning) == (Hint(BOTH, True), True)
    assert merge(TopologyPolicy.SINGLE_NUMA_NODE, [0, 1], spanning)[1] is False  # filtered: multi-NUMA
    assert merge(TopologyPolicy.BEST_EFFORT, [0, 1], [[]]) == (Hint(BOTH, False), True)  # []: no alignment
    assert merge(TopologyPolicy.RESTRICTED, [0, 1], [[]])[1] is False
    assert merge(TopologyPolicy.SINGLE_NUMA_NODE, [0, 1], [None]) == (Hint(None, True), True)
    assert merge(TopologyPolicy.NONE, [0, 1], [[]]) == (Hint(None, True), True)


# --- through the command line -------------------------------------------------------------------


def drasat(*args: str):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _only(node: str, scope: str = "container", docs: list[dict] | None = None) -> list[dict]:
    """The input with one node (its Node, NodeResourceTopology and slice) and the given scope."""
    docs = copy.deepcopy(docs or DOCS)
    out = []
    for d in docs:
        name = d.get("metadata", {}).get("name", "")
        if d["kind"] in ("Node", "NodeResourceTopology", "ResourceSlice") and not name.startswith(node):
            continue
        if d["kind"] == "NodeResourceTopology":
            d["attributes"] = [a for a in d["attributes"] if a["name"] != "topologyManagerScope"]
            d["attributes"].append({"name": "topologyManagerScope", "value": scope})
        out.append(d)
    return out


def _write(tmp_path: Path, docs: list[dict], name: str = "input.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _two_containers(docs: list[dict]) -> list[dict]:
    """The trainer as two containers of 8 exclusive CPUs and one GPU each (a claim per container)."""
    docs = copy.deepcopy(docs)
    template = next(d for d in docs if d["kind"] == "ResourceClaimTemplate")
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 1
    pod = next(d for d in docs if d["kind"] == "Pod")
    half = {"requests": {"cpu": "8", "memory": "4Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}}
    pod["spec"]["containers"] = [
        {"name": "a", "image": "x", "resources": {**half, "claims": [{"name": "gpu-a"}]}},
        {"name": "b", "image": "x", "resources": {**half, "claims": [{"name": "gpu-b"}]}},
    ]
    pod["spec"]["resourceClaims"] = [
        {"name": "gpu-a", "resourceClaimTemplateName": "two-gpus"},
        {"name": "gpu-b", "resourceClaimTemplateName": "two-gpus"},
    ]
    return docs


@pytest.mark.parametrize("scope, reason", [("container", "cannot align container: main"), ("pod", "cannot align pod")])
def test_single_numa_node_cannot_align_two_gpus_with_16_cpus_across_cells(tmp_path, scope, reason):
    result = drasat("schedule", "-o", "json", _write(tmp_path, _only("split-node", scope)))
    assert result.exit_code == 1 and json.loads(result.stdout)["items"] == []  # nothing placed: an empty List
    assert f"pod default/trainer is pending: 0/1 nodes are available: 1 {reason}." in result.stderr


@pytest.mark.parametrize("scope", ["container", "pod"])
def test_single_numa_node_aligns_them_where_one_cell_has_both_gpus(tmp_path, scope):
    path = _write(tmp_path, _only("aligned-node", scope))
    result = drasat("podresources", "-o", "json", path)
    assert result.exit_code == 0, result.stderr
    pod = json.loads(result.stdout)["pod_resources"][0]
    main = pod["containers"][0]
    assert main["cpu_ids"] == list(range(16))  # NUMA cell 0's CPUs, with its two GPUs
    assert [d["device_name"] for d in main["dynamic_resources"][0]["claim_resources"]] == ["gpu-0", "gpu-1"]
    if scope == "pod":  # seed 004: pod-level fields hold the pod's allocation, the container its cut of it
        assert pod["cpu_ids"] == list(range(16))
        assert pod["memory"] == [{"memory_type": "memory", "size": 8 * 2**30, "topology": {"nodes": [{"ID": 0}]}}]
        assert "memory" not in main
    else:  # container scope: pod-level fields empty, the container's own memory on cell 0
        assert "cpu_ids" not in pod and main["memory"][0]["topology"] == {"nodes": [{"ID": 0}]}
    placements = schedule(cluster_from_objects([o.obj for o in load_paths([path]).objects], Features()))
    assert [p.node for p in placements] == ["aligned-node"] and violations(placements) == []


def test_the_scheduler_skips_the_node_its_kubelet_would_refuse(tmp_path):
    docs = copy.deepcopy(DOCS)
    for d in docs:  # the split node first in the scheduler's order (aligned-node would win ties by name)
        if d["kind"] == "Node" and d["metadata"]["name"] == "aligned-node":
            d["status"]["allocatable"]["cpu"] = "24"
    result = drasat("schedule", "-o", "json", "-v", _write(tmp_path, docs))
    assert result.exit_code == 0, result.stderr
    assert [i["spec"]["nodeName"] for i in json.loads(result.stdout)["items"] if i["kind"] == "Pod"] == ["aligned-node"]
    without = [d for d in docs if d["kind"] not in ("NodeResourceTopology", "KubeletConfiguration")]
    blind = drasat("schedule", "-o", "json", _write(tmp_path, without, "blind.yaml"))
    assert [i["spec"]["nodeName"] for i in json.loads(blind.stdout)["items"] if i["kind"] == "Pod"] == ["split-node"]


def test_two_containers_align_one_by_one_in_container_scope_but_not_as_one_pod(tmp_path):
    docs = _two_containers(_only("split-node"))
    ok = drasat("podresources", "-o", "json", _write(tmp_path, docs))
    assert ok.exit_code == 0, ok.stderr
    a, b = json.loads(ok.stdout)["pod_resources"][0]["containers"]
    assert (a["cpu_ids"], b["cpu_ids"]) == (list(range(8)), list(range(16, 24)))  # gpu-0 on cell 0, gpu-1 on 1
    refused = drasat("schedule", _write(tmp_path, _two_containers(_only("split-node", "pod")), "pod.yaml"))
    assert refused.exit_code == 1 and "1 cannot align pod." in refused.stderr


def test_restricted_admits_what_single_numa_node_refuses(tmp_path):
    docs = _only("split-node")
    for d in docs:
        if d["kind"] == "NodeResourceTopology":
            d["attributes"] = [{"name": "topologyManagerPolicy", "value": "restricted"}]
    result = drasat("podresources", "-o", "json", _write(tmp_path, docs))
    assert result.exit_code == 0, result.stderr  # two GPUs one per cell are the narrowest that node allows


def test_policies_from_the_older_topology_policies_field_and_bad_words(tmp_path):
    docs = _only("split-node")
    for d in docs:
        if d["kind"] == "NodeResourceTopology":
            d["attributes"] = []
            d["topologyPolicies"] = ["SingleNUMANodePodLevel"]
    assert "1 cannot align pod." in drasat("schedule", _write(tmp_path, docs)).stderr
    docs[0]["topologyManagerPolicy"] = "strictest"
    bad = drasat("schedule", _write(tmp_path, docs))
    assert bad.exit_code == 2 and bad.stdout == ""
    assert "input.yaml[0]: KubeletConfiguration/?: topologyManagerPolicy: 'strictest' is not one of none" in bad.stderr


def test_podresources_help_and_table(tmp_path):
    helped = drasat("podresources", "--help")
    assert helped.exit_code == 0 and "NodeResourceTopology" in helped.stdout
    table = drasat("podresources", _write(tmp_path, _only("aligned-node", "pod")))
    assert table.exit_code == 0
    assert table.stdout.splitlines()[1].split() == ["default/trainer", "(pod)", "0-15", "8Gi@NUMA0"]


def test_pod_level_resources_are_the_pods_budget_with_a_shared_pool(tmp_path):
    """Seed 004's table for pod scope: an exclusive (Guaranteed) container's own fields are "filled with the
    container's dedicated subset" ("Заповнюється виділеною підмножиною контейнера") of the pod-level allocation;
    a shared-pool container's are "empty" ("Порожньо"), which "avoids double counting" ("Уникає подвійного
    підрахунку")."""
    docs = _only("aligned-node", "pod")
    pod = next(d for d in docs if d["kind"] == "Pod")
    pod["spec"]["resources"] = {"requests": {"cpu": "12", "memory": "8Gi"}, "limits": {"cpu": "12", "memory": "8Gi"}}
    pod["spec"]["containers"] = [
        {
            "name": "worker",
            "image": "x",
            "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}, "claims": [{"name": "gpus"}]},
        },
        {"name": "sidecar", "image": "x"},
    ]
    result = drasat("podresources", "-o", "json", _write(tmp_path, docs))
    assert result.exit_code == 0, result.stderr
    entry = json.loads(result.stdout)["pod_resources"][0]
    worker, sidecar = entry["containers"]
    assert entry["cpu_ids"] == list(range(12)) and worker["cpu_ids"] == [0, 1, 2, 3]
    assert "cpu_ids" not in sidecar and "memory" not in sidecar and "dynamic_resources" not in sidecar
    assert [d["device_name"] for d in worker["dynamic_resources"][0]["claim_resources"]] == ["gpu-0", "gpu-1"]
