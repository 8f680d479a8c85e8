"""The official kubernetes client's objects, and their to_dict(), are read as the API's own JSON."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from drasat.models.loader import load_objects, load_paths
from drasat.solver import allocate
from drasat.solver.allocation.problem import problem_from_objects
from drasat.solver.verification.verifier import verify

client = pytest.importorskip("kubernetes.client", reason="the kubernetes client (drasat[cluster]) is not installed")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _claim() -> object:
    return client.ResourceV1ResourceClaim(
        api_version="resource.k8s.io/v1",
        kind="ResourceClaim",
        metadata=client.V1ObjectMeta(
            name="from-client",
            namespace="default",
            creation_timestamp=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
        ),
        spec=client.V1ResourceClaimSpec(
            devices=client.V1DeviceClaim(
                requests=[
                    client.V1DeviceRequest(
                        name="gpus", exactly=client.V1ExactDeviceRequest(device_class_name="gpu.example.com", count=2)
                    )
                ]
            )
        ),
    )


@pytest.mark.parametrize("form", ["model", "to_dict"])
def test_client_objects_allocate_like_files(form: str) -> None:
    claim = _claim()
    item = claim if form == "model" else claim.to_dict()  # type: ignore[attr-defined]
    cluster = [o.obj for o in load_paths([str(EXAMPLES / "cluster.yaml")]).objects]
    bundle = load_objects([*cluster, item])
    assert bundle.problems == []
    (loaded,) = [o.obj for o in bundle.objects if o.obj.kind == "ResourceClaim"]
    assert loaded.name == "from-client" and loaded.metadata.creation_timestamp == "2026-01-01T00:00:00+00:00"
    problem = problem_from_objects([o.obj for o in bundle.objects], node="gpu-node-1")
    answer = allocate(problem)
    assert verify(problem, answer.results) == []
    assert len(answer.results["default/from-client"].devices.results) == 2


def test_a_to_dict_of_an_unknown_kind_is_a_problem_not_a_crash() -> None:
    bundle = load_objects([{"api_version": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}])
    assert [p.message for p in bundle.problems] == ["the kubernetes client has no model of example.com/v1 Gadget"]


def test_a_clusters_list_items_read_as_listed(tmp_path: Path) -> None:
    """The API server leaves kind and apiVersion out of a list's items: ``list_node().items`` are V1Nodes
    without them, and read as Nodes all the same (each kind from its model class), the whole example cluster
    allocating as its files do."""
    from kubernetes import config

    from .loopback_api import serve

    for _server, kubeconfig in serve(tmp_path):
        api = config.new_client_from_config(config_file=kubeconfig)
        core, resource = client.CoreV1Api(api), client.ResourceV1Api(api)
        items = [
            *core.list_node().items,
            *resource.list_device_class().items,
            *resource.list_resource_slice().items,
            *resource.list_resource_claim_for_all_namespaces().items,
        ]
        assert all(item.kind is None for item in items)
        bundle = load_objects(items, strict=True)
        read = sorted((o.obj.kind, o.obj.name) for o in bundle.objects)
        files = [o.obj for o in load_paths([str(EXAMPLES / "cluster.yaml"), str(EXAMPLES / "claims.yaml")]).objects]
        assert read == sorted((o.kind, o.name) for o in files)
        problem = problem_from_objects([o.obj for o in bundle.objects], node="gpu-node-1")
        assert verify(problem, allocate(problem).results) == []


def test_a_list_item_of_a_kind_drasat_does_not_read_is_skipped_by_its_kind() -> None:
    config_map = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"))
    bundle = load_objects([config_map], strict=True)
    assert bundle.objects == [] and bundle.notices == [
        "<objects>: skipped 1 ConfigMap object: drasat does not use this kind"
    ]
