"""Optional node operations and Node Declared Features (seed 000, "Optional node operations").

The seed: "When a Pod uses a ResourceClaim with skipNodeOperations configured, the Kubernetes scheduler
verifies that the target node declares support for the DRAOptionalNodeOperations feature in its
.status.declaredFeatures before scheduling the Pod" ("планувальник Kubernetes перевіряє, що цільовий
вузол оголошує підтримку функції DRAOptionalNodeOperations у своєму .status.declaredFeatures, перш ніж
планувати Pod"), and "the scheduler copies the skipNodeOperations list from the ResourceSlice into the
allocation result".
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

INPUT = Path(__file__).resolve().parent / "data" / "node_operations" / "control-plane.yaml"
DOCS = list(yaml.safe_load_all(INPUT.read_text()))
GATE = ("--feature-gates", "DRAOptionalNodeOperations=true")


def drasat(*args: str):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _write(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _placed(result) -> tuple[dict[str, str], list[dict]]:
    items = json.loads(result.stdout)["items"]
    pods = {i["metadata"]["name"]: i["spec"].get("nodeName") for i in items if i["kind"] == "Pod"}
    results = [
        r for i in items if i["kind"] == "ResourceClaim" for r in i["status"]["allocation"]["devices"]["results"]
    ]
    return pods, results


def _library(path: str, gate: bool):
    objects = [o.obj for o in load_paths([path]).objects]
    return schedule(cluster_from_objects(objects, Features.from_mapping({"DRAOptionalNodeOperations": gate})))


def test_only_a_node_declaring_the_feature_takes_the_pod():
    result = drasat("schedule", "-o", "json", *GATE, str(INPUT))
    assert result.exit_code == 0, result.stderr
    pods, results = _placed(result)
    assert pods == {"app": "worker-1"}  # worker-2 scores higher but does not declare the feature
    assert results[0]["device"] == "virtual-device-1" and results[0]["skipNodeOperations"] == ["*"]
    placements = _library(str(INPUT), True)
    assert [p.node for p in placements] == ["worker-1"] and violations(placements) == []


def test_with_the_gate_off_the_field_is_dropped_and_any_node_will_do():
    result = drasat("schedule", "-o", "json", str(INPUT))
    pods, results = _placed(result)
    assert pods == {"app": "worker-2"} and "skipNodeOperations" not in results[0]
    assert violations(_library(str(INPUT), False)) == []


def test_a_pod_that_must_run_on_the_undeclared_node_stays_pending(tmp_path):
    docs = copy.deepcopy(DOCS)
    pod = next(d for d in docs if d["kind"] == "Pod")
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-2"]}]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    result = drasat("schedule", "-o", "json", *GATE, _write(tmp_path, docs))
    assert result.exit_code == 1 and json.loads(result.stdout)["items"] == []  # nothing placed: an empty List
    assert "pod default/app is pending: 0/2 nodes are available: 1 cannot allocate all claims" in result.stderr
    explained = drasat("explain", "--pods", "default/app", *GATE, _write(tmp_path, docs))
    assert "does not declare DRAOptionalNodeOperations in status.declaredFeatures" in explained.stdout


def test_exact_count_takes_a_plain_sibling_on_the_undeclared_node(tmp_path):
    docs = copy.deepcopy(DOCS)
    plain = copy.deepcopy(next(d for d in docs if d.get("metadata", {}).get("name") == "control-plane-resources-2"))
    plain["metadata"]["name"] = "plain-2"
    plain["spec"]["pool"]["name"] = "plain-pool-2"
    del plain["spec"]["skipNodeOperations"]
    plain["spec"]["devices"] = [{"name": "plain-device-2"}]
    path = _write(tmp_path, [*docs, plain])
    result = drasat("schedule", "-o", "json", *GATE, path)
    pods, results = _placed(result)
    assert pods == {"app": "worker-2"} and results[0]["device"] == "plain-device-2"
    assert violations(_library(path, True)) == []
    # allocationMode All lists the device that skips node operations too: not satisfiable on worker-2
    template = next(d for d in docs if d["kind"] == "ResourceClaimTemplate")
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All"
    every = drasat("solve", "--node", "worker-2", *GATE, _write(tmp_path, [*docs, plain]))
    assert every.exit_code == 1 and every.stdout == ""


def test_an_allocated_claim_that_skips_node_operations_keeps_its_pods_on_declaring_nodes(tmp_path):
    docs = [d for d in copy.deepcopy(DOCS) if d["kind"] != "ResourceClaimTemplate"]
    pod = next(d for d in docs if d["kind"] == "Pod")
    pod["spec"]["resourceClaims"] = [{"name": "virtual", "resourceClaimName": "shared"}]
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "virtual", "exactly": {"deviceClassName": "control-plane.example.com"}}]}
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "virtual",
                            "driver": "control-plane.example.com",
                            "pool": "central-pool-1",
                            "device": "virtual-device-1",
                            "skipNodeOperations": ["*"],
                        }
                    ]
                }
            }
        },
    }
    result = drasat("schedule", "-o", "json", "-v", *GATE, _write(tmp_path, [*docs, shared]))
    assert result.exit_code == 0, result.stderr
    assert _placed(result)[0] == {"app": "worker-1"}
    docs[0]["status"]["declaredFeatures"] = []  # now neither node declares it
    pending = drasat("schedule", "-o", "json", *GATE, _write(tmp_path, [*docs, shared]))
    assert pending.exit_code == 1
    assert "2 node(s) didn't declare DRAOptionalNodeOperations" in pending.stderr


def test_batch_placement_respects_declared_features_too(tmp_path):
    result = drasat("schedule", "--batch", "-o", "json", *GATE, str(INPUT))
    assert result.exit_code == 0, result.stderr
    assert _placed(result)[0] == {"app": "worker-1"}
    gone = {"worker-1", "control-plane-resources-1"}
    only_undeclared = [d for d in DOCS if d.get("metadata", {}).get("name") not in gone]
    pending = drasat("schedule", "--batch", "-o", "json", *GATE, _write(tmp_path, only_undeclared))
    assert pending.exit_code == 1 and "pod default/app is pending: 0/1 nodes are available" in pending.stderr
