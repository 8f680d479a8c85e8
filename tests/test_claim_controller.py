"""The resourceclaim controller's part before scheduling, and the smaller items of issue 26.

Seed 000, ResourceClaimTemplate: "Each resource claim Kubernetes generates from a template is bound to a
particular Pod. When the Pod terminates, Kubernetes deletes the corresponding resource claim" ("Кожний
запит ресурсу, який Kubernetes генерує на основі шаблону, привʼязується до певного Podʼа. Коли Pod
завершує роботу, Kubernetes видаляє відповідну заявку на ресурс."). kube-controller-manager's syncClaim
drops the reservation of a pod that "will not run anymore" (Succeeded or Failed) and deletes the claim it
generated for that pod, so a finished Job's claim frees its device for the next pod.
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

JOB = Path(__file__).resolve().parent / "data" / "controllers" / "finished-job.yaml"
DOCS = list(yaml.safe_load_all(JOB.read_text()))


def drasat(*args: str):
    load_all_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _write(tmp_path: Path, docs: list[dict]) -> str:
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _claim(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "ResourceClaim")


def test_a_finished_pods_generated_claim_frees_its_device():
    result = drasat("schedule", "-o", "json", str(JOB))
    assert result.exit_code == 0, result.stderr
    assert (
        "claim default/job-1-abcde-gpu-x7k2q is deleted: it was generated for pod default/job-1-abcde, which is "
        "Succeeded" in result.stderr
    )
    items = json.loads(result.stdout)["items"]
    assert [i["spec"]["nodeName"] for i in items if i["kind"] == "Pod"] == ["node-1"]
    claim = next(i for i in items if i["kind"] == "ResourceClaim")
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    placements = schedule(cluster_from_objects([o.obj for o in load_paths([str(JOB)]).objects], Features()))
    assert [p.node for p in placements] == ["node-1"] and violations(placements) == []


def test_a_shared_claim_keeps_its_allocation_while_another_pod_uses_it(tmp_path):
    docs = copy.deepcopy(DOCS)
    claim = _claim(docs)
    del claim["metadata"]["ownerReferences"]  # a claim made by hand, shared with a running pod
    claim["status"]["reservedFor"].append({"resource": "pods", "name": "running", "uid": "uid-running"})
    running = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "running", "namespace": "default", "uid": "uid-running"},
        "spec": {
            "nodeName": "node-1",
            "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}],
        },
    }
    job = next(d for d in docs if d["kind"] == "Pod" and d["metadata"]["name"] == "job-1-abcde")
    job["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    del job["status"]["resourceClaimStatuses"]
    result = drasat("schedule", "-o", "json", _write(tmp_path, [*docs, running]))
    assert "reservation for finished pod(s) job-1-abcde removed" in result.stderr
    assert "deallocated" not in result.stderr
    assert (
        result.exit_code == 1
        and "pod default/next is pending: 0/1 nodes are available: 1 cannot allocate" in result.stderr
    )
    # once the running pod is gone too, no one uses it: the controller deallocates it (the scheduler's finalizer)
    claim["status"]["reservedFor"] = claim["status"]["reservedFor"][:1]
    freed = drasat("schedule", "-o", "json", _write(tmp_path, docs))
    assert "no one else uses it, so it is deallocated" in freed.stderr and freed.exit_code == 0, freed.stderr


def test_a_bound_pod_with_an_unallocated_claim_is_reported(tmp_path):
    docs = copy.deepcopy(DOCS)
    unallocated = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "by-hand", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }
    stuck = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stuck", "namespace": "default"},
        "spec": {
            "nodeName": "node-1",
            "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "by-hand"}],
        },
    }
    result = drasat("schedule", "-o", "json", _write(tmp_path, [*docs, unallocated, stuck]))
    assert (
        "warning: pod default/stuck is bound to node node-1 (spec.nodeName) but claim default/by-hand is not "
        "allocated" in result.stderr
    )


def test_generated_claims_carry_a_stable_uid_of_their_own():
    first = json.loads(drasat("schedule", "-o", "json", str(JOB)).stdout)["items"]
    again = json.loads(drasat("schedule", "-o", "json", str(JOB)).stdout)["items"]
    claim = next(i for i in first if i["kind"] == "ResourceClaim")
    pod = next(i for i in first if i["kind"] == "Pod")
    uid = claim["metadata"]["uid"]
    assert uid and uid != claim["metadata"]["ownerReferences"][0]["uid"]
    assert uid == next(i for i in again if i["kind"] == "ResourceClaim")["metadata"]["uid"]
    assert pod["metadata"]["name"] == "next"


def test_validate_refuses_pod_level_requests_above_pod_level_limits(tmp_path):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "resources": {"requests": {"cpu": "8", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "2Gi"}},
            "containers": [{"name": "main", "image": "x"}],
        },
    }
    result = drasat("validate", _write(tmp_path, [pod]))
    assert result.exit_code == 2
    at = "Pod/default/big: spec.resources.requests"
    assert f'{at}: Invalid value: "8": must be less than or equal to cpu limit of 4' in result.stdout
    assert "memory limit" not in result.stdout  # within its limit: not reported
    scheduled = drasat("schedule", _write(tmp_path, [pod]))
    assert scheduled.exit_code == 2 and scheduled.stdout == ""
