"""Device binding conditions over time (seed 000, "Device Binding Conditions"), through the command line.

The seed: "The scheduler waits up to 600 seconds (by default) for all bindingConditions to become True.
If the timeout is reached or any bindingFailureConditions are True, the scheduler clears the allocation
and reschedules the Pod" ("Планувальник чекає до 600 секунд (стандартно), щоб усі bindingConditions
стали True. Якщо тайм-аут досягається або будь-які bindingFailureConditions є True, планувальник очищає
виділення та перенаправляє Pod"), and the behaviour "is implemented in the PreBind phase". The
conditions are read where kube-scheduler's isClaimReadyForBinding reads them: the claim's
status.devices entry of the allocated device.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path

import yaml
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver import Features
from drasat.solver.scheduling.cluster import cluster_from_objects
from drasat.solver.scheduling.one_by_one import schedule
from drasat.solver.scheduling.plugins.binding_conditions import BindingClock, parse_timestamp

from .cluster_factory import violations

FABRIC = Path(__file__).resolve().parent / "data" / "binding" / "fabric-gpus.yaml"
DOCS = list(yaml.safe_load_all(FABRIC.read_text()))
ALLOCATED = "2026-12-02T18:00:00Z"
PREPARED, FAILED = "dra.example.com/is-prepared", "dra.example.com/preparing-failed"


def _claim(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "ResourceClaim")


def _with(tmp_path: Path, conditions=None, reserved_for=None) -> str:
    """The fabric input with the device's conditions (type -> status) and, when given, other consumers."""
    docs = copy.deepcopy(DOCS)
    claim = _claim(docs)
    if conditions is not None:
        claim["status"]["devices"] = [
            {
                "driver": "dra.example.com",
                "pool": "node-a",
                "device": "gpu-a",
                "conditions": [
                    {
                        "type": t,
                        "status": s,
                        "reason": "Fabric",
                        "message": "attach failed" if t == FAILED else "ok",
                        "lastTransitionTime": ALLOCATED,
                    }
                    for t, s in conditions.items()
                ],
            }
        ]
    if reserved_for is not None:
        claim["status"]["reservedFor"] += reserved_for
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def drasat(*args: str):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _items(result) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in json.loads(result.stdout)["items"]}


def _library(path: str, now: str, timeout: float = 600):
    objects = [o.obj for o in load_paths([path]).objects]
    clock = BindingClock(parse_timestamp(now, "now"), timedelta(seconds=timeout))
    return schedule(cluster_from_objects(objects, Features(), clock))


def test_failure_condition_true_deallocates_and_the_pod_goes_elsewhere(tmp_path):
    path = _with(tmp_path, {PREPARED: "False", FAILED: "True"})
    result = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:01:00Z", path)
    assert result.exit_code == 1  # it then waits in PreBind on node-b for gpu-b's conditions
    assert 'binding failed: reason=Fabric, message="attach failed"' in result.stderr
    assert "the scheduler deallocated the claim (PostFilter)" in result.stderr
    claim = _items(result)["trainer-gpu"]
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-b"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2026-12-02T18:01:00Z"
    assert "devices" not in claim["status"]  # the old device status went with the allocation
    assert "pod default/trainer waits in PreBind on node node-b" in result.stderr
    assert "gives up at 2026-12-02T18:11:00Z" in result.stderr
    assert "nodeName" not in _items(result)["trainer"]["spec"]  # not bound while PreBind waits
    placements = _library(path, "2026-12-02T18:01:00Z")
    assert [p.node for p in placements] == ["node-b"] and violations(placements) == []


def test_unmet_conditions_wait_in_prebind_until_the_timeout(tmp_path):
    path = _with(tmp_path, {PREPARED: "False"})
    result = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:09:59Z", path)
    assert result.exit_code == 1
    assert "pod default/trainer waits in PreBind on node node-a" in result.stderr
    assert f"{PREPARED} on dra.example.com/node-a/gpu-a" in result.stderr
    assert "gives up at 2026-12-02T18:10:00Z" in result.stderr and "deallocated" not in result.stderr
    claim = _items(result)["trainer-gpu"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == ALLOCATED  # the same allocation, kept


def test_past_the_timeout_the_claim_is_deallocated(tmp_path):
    path = _with(tmp_path, {PREPARED: "False"})
    result = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:10:01Z", path)
    assert "binding timeout (allocated at 2026-12-02T18:00:00Z, bindingTimeout 600 s" in result.stderr
    claim = _items(result)["trainer-gpu"]
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-b"


def test_binding_timeout_is_the_schedulers_configuration(tmp_path):
    """The seed's KubeSchedulerConfiguration example sets bindingTimeout: 60s."""
    path = _with(tmp_path, {PREPARED: "False"})
    result = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:01:01Z", "--binding-timeout", "60", path)
    assert "binding timeout (allocated at 2026-12-02T18:00:00Z, bindingTimeout 60 s" in result.stderr
    early = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:00:59Z", "--binding-timeout", "60", path)
    assert "gives up at 2026-12-02T18:01:00Z" in early.stderr and "deallocated" not in early.stderr


def test_all_conditions_true_binds_on_the_allocated_node(tmp_path):
    path = _with(tmp_path, {PREPARED: "True", FAILED: "False"})
    result = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:30:00Z", path)
    assert result.exit_code == 0, result.stderr
    assert _items(result)["trainer"]["spec"]["nodeName"] == "node-a"
    assert "PreBind" not in result.stderr


def test_a_claim_others_still_use_is_not_deallocated(tmp_path):
    other = [{"resource": "pods", "name": "other", "uid": "0b7e61a2-0000-4000-8000-0000000000ff"}]
    path = _with(tmp_path, {FAILED: "True"}, reserved_for=other)
    result = drasat("schedule", "-o", "json", "--now", "2026-12-02T18:01:00Z", path)
    assert result.exit_code == 1 and json.loads(result.stdout)["items"] == []  # nothing placed: an empty List
    assert "0/2 nodes are available: 2 resourceclaim not available on the node." in result.stderr
    explained = drasat("explain", "--now", "2026-12-02T18:01:00Z", path)
    assert explained.exit_code == 1
    assert "reserved for others, so the scheduler cannot deallocate it" in explained.stdout


def test_explain_and_solve_tell_the_same_story(tmp_path):
    path = _with(tmp_path, {FAILED: "True"})
    explained = drasat("explain", "-o", "json", "--now", "2026-12-02T18:01:00Z", path)
    pod = json.loads(explained.stdout)["pods"][0]
    assert explained.exit_code == 0 and pod["node"] == "node-b"
    assert any("deallocated the claim" in note for note in pod["binding"])
    assert any("would wait in PreBind on node node-b" in note for note in pod["binding"])
    solved = drasat("solve", "-o", "json", "--node", "node-b", "--now", "2026-12-02T18:01:00Z", path)
    assert solved.exit_code == 0, solved.stderr
    allocation = _items(solved)["trainer-gpu"]["status"]["allocation"]
    assert allocation["devices"]["results"][0]["device"] == "gpu-b"
    assert allocation["allocationTimestamp"] == "2026-12-02T18:01:00Z"
    assert "waits in PreBind" in solved.stderr and "deallocated the claim" in solved.stderr


def test_gates_off_ignore_binding_conditions(tmp_path):
    """With DRADeviceBindingConditions off the conditions are not looked at (and such devices not picked)."""
    path = _with(tmp_path, {FAILED: "True"})
    result = drasat(
        "schedule",
        "-o",
        "json",
        "--now",
        "2026-12-02T18:01:00Z",
        "--feature-gates",
        "DRADeviceBindingConditions=false",
        path,
    )
    assert result.exit_code == 0, result.stderr
    assert _items(result)["trainer"]["spec"]["nodeName"] == "node-a"  # the allocation kept, bound at once
    assert "deallocated" not in result.stderr and "PreBind" not in result.stderr


def test_a_bad_now_is_refused():
    result = drasat("schedule", "--now", "yesterday", str(FABRIC))
    assert result.exit_code == 2 and result.stdout == "" and "--now" in result.stderr
    assert "RFC 3339" in result.stderr


def test_batch_placement_follows_the_same_binding_story(tmp_path):
    path = _with(tmp_path, {FAILED: "True"})
    result = drasat("schedule", "--batch", "-o", "json", "--now", "2026-12-02T18:01:00Z", path)
    assert "the scheduler deallocated the claim (PostFilter)" in result.stderr
    claim = _items(result)["trainer-gpu"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2026-12-02T18:01:00Z"  # stamped at --now
    assert "gives up at 2026-12-02T18:11:00Z" in result.stderr and result.exit_code == 1


def test_the_table_marks_a_pod_waiting_in_prebind(tmp_path):
    result = drasat("schedule", "-o", "table", "--now", "2026-12-02T18:05:00Z", _with(tmp_path, {PREPARED: "False"}))
    assert "node-a (PreBind)" in result.stdout


def test_explain_judges_a_pod_after_the_queues_recovery(tmp_path):
    """The queue's PostFilter frees trainer's failed gpu-a before anyone is placed (``schedule`` recovers the
    whole queue first): trainer goes to node-b, and the pod after it gets gpu-a on node-a. Explained alone,
    without the queue or without its recovery, it would be sent to node-b (gpu-a still held)."""
    docs = list(yaml.safe_load_all(Path(_with(tmp_path, {FAILED: "True"})).read_text()))
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"}
    template["metadata"] = {"name": "gpu", "namespace": "default"}
    template["spec"] = {
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
    }
    after = copy.deepcopy(next(d for d in docs if d["kind"] == "Pod" and d["metadata"]["name"] == "trainer"))
    after["metadata"] = {"name": "trainer-next", "namespace": "default"}
    after["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    path = tmp_path / "queue.yaml"
    path.write_text(yaml.safe_dump_all([*docs, template, after]))
    now = ("--now", "2026-12-02T18:01:00Z")
    scheduled = drasat("schedule", "-o", "json", *now, str(path))
    assert "pod default/trainer-next waits in PreBind on node node-a" in scheduled.stderr
    explained = drasat("explain", "-o", "json", *now, "--pods", "default/trainer-next", str(path))
    pod = json.loads(explained.stdout)["pods"][0]
    assert (pod["node"], pod["placedBefore"]) == ("node-a", 1), explained.stdout
    assert any("would wait in PreBind on node node-a" in note for note in pod["binding"])
    both = json.loads(drasat("explain", "-o", "json", *now, str(path)).stdout)["pods"]
    assert [(p["pod"], p["node"]) for p in both] == [("default/trainer", "node-b"), ("default/trainer-next", "node-a")]
    assert any("deallocated the claim" in note for note in both[0]["binding"]) and not both[1]["binding"][1:]
