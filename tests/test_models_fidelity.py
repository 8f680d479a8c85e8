"""Field fidelity against the official Kubernetes client: same fields, same JSON, same verdicts.

A field drasat drops or renames fails here: the schemas are compared field by
field, and every shared object is read by both the client and drasat and must
come out as the same JSON (quantities and timestamps compared by value).
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import kubernetes.client
import pytest
from pydantic import BaseModel

from drasat.models.bundle import Bundle
from drasat.models.core import Namespace, Node, Pod, PodGroup
from drasat.models.errors import Location
from drasat.models.kinds import lookup
from drasat.models.loader import load_text
from drasat.models.pool_status_request import ResourcePoolStatusRequest
from drasat.models.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from drasat.models.validation import validate_object

from .helpers_models import client_view, differences, distinct, shared_objects
from .shared_inputs import params

FULL = [
    (DeviceClass, "V1DeviceClass"),
    (ResourceClaim, "ResourceV1ResourceClaim"),
    (ResourceClaimTemplate, "V1ResourceClaimTemplate"),
    (ResourceSlice, "V1ResourceSlice"),
    (DeviceTaintRule, "V1DeviceTaintRule"),
    (ResourcePoolStatusRequest, "V1alpha3ResourcePoolStatusRequest"),
    (Namespace, "V1Namespace"),
    (PodGroup, "V1beta1PodGroup"),
]
SUBSET = [(Node, "V1Node"), (Pod, "V1Pod")]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    origin = typing.get_origin(annotation)
    if origin is None:
        return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _schema_differences(
    ours: type[BaseModel], theirs: type, path: str, subset: bool, seen: set[tuple[type, type]]
) -> list[str]:
    """Wire names missing on either side, recursively; ``subset`` allows ours to leave client fields out."""
    if (ours, theirs) in seen:
        return []
    seen.add((ours, theirs))
    our_fields = {f.alias or n: f for n, f in ours.model_fields.items()}
    their_fields = {theirs.attribute_map[n]: f for n, f in theirs.model_fields.items()}
    out = [f"{path}.{k}: not in the client" for k in our_fields if k not in their_fields]
    open_model = ours.model_config.get("extra") == "allow"
    if not (subset and open_model):
        out += [f"{path}.{k}: missing in drasat" for k in their_fields if k not in our_fields]
    for key in our_fields.keys() & their_fields.keys():
        mine, client = _model_of(our_fields[key].annotation), _model_of(their_fields[key].annotation)
        if mine is not None and client is not None:
            out += _schema_differences(mine, client, f"{path}.{key}", subset, seen)
        elif mine is not None and client is None:
            out.append(f"{path}.{key}: an object in drasat, a plain value in the client")
    return out


@pytest.mark.parametrize("ours, theirs", FULL, ids=[m.__name__ for m, _ in FULL])
def test_every_client_field_exists_with_the_same_wire_name(ours: type[BaseModel], theirs: str) -> None:
    assert _schema_differences(ours, getattr(kubernetes.client, theirs), ours.__name__, False, set()) == []


@pytest.mark.parametrize("ours, theirs", SUBSET, ids=[m.__name__ for m, _ in SUBSET])
def test_typed_parts_of_large_kinds_match_the_client(ours: type[BaseModel], theirs: str) -> None:
    assert _schema_differences(ours, getattr(kubernetes.client, theirs), ours.__name__, True, set()) == []


def test_schema_comparison_catches_a_renamed_field() -> None:
    class Renamed(BaseModel):
        counter_set: str
        counterz: dict[str, str]

    theirs = kubernetes.client.V1DeviceCounterConsumption
    found = _schema_differences(Renamed, theirs, "x", False, set())
    assert "x.counterz: not in the client" in found
    assert "x.counters: missing in drasat" in found


OBJECTS = distinct(shared_objects("scenarios/upstream", "scenarios/cel", "scenarios/perf", "seeds/examples"))


def _client_accepts(data: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return client_view(data)
    except Exception:  # noqa: BLE001  (the client refusing is the answer)
        return None


def test_there_are_shared_objects_to_compare(shared: Path) -> None:
    assert len(OBJECTS) > 300


@pytest.mark.parametrize("where, index, data", params(OBJECTS, 3), ids=[f"{w}[{i}]" for w, i, _ in OBJECTS] or None)
def test_what_the_client_accepts_drasat_reads_to_the_same_json(
    where: str, index: int, data: dict, shared: Path
) -> None:
    theirs = _client_accepts(data)
    bundle = load_text_of(data, where)
    if theirs is None:
        # The client refused (a required field is missing): the API server refuses too, so must drasat,
        # when loading or when validating.
        assert bundle.problems or any(validate_object(o) for o in bundle), f"{where}[{index}] accepted"
        return
    assert bundle.problems == [], [str(p) for p in bundle.problems]
    (obj,) = list(bundle)
    assert differences(obj.to_api(), theirs) == []


def load_text_of(data: dict[str, Any], where: str) -> Bundle:
    return load_text(json.dumps(data), where)


@pytest.mark.parametrize("where, index, data", params(OBJECTS, 3), ids=[f"{w}[{i}]" for w, i, _ in OBJECTS] or None)
def test_load_dump_load_gives_equal_objects(where: str, index: int, data: dict, shared: Path) -> None:
    info = lookup(data["apiVersion"], data["kind"])
    assert info is not None
    first = info.model.model_validate(data, by_alias=True, by_name=False)
    dumped = first.to_api()
    second = info.model.model_validate(dumped, by_alias=True, by_name=False)
    assert second == first
    assert second.to_api() == dumped
    assert differences(dumped, data) == []  # quantities keep their value, nothing is lost


def test_counter_set_without_counters_is_refused_by_client_and_by_drasat() -> None:
    """The case the issue names: the client refuses it outright, drasat's validation refuses it too."""
    data = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d.example.com",
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [{"name": "set-1"}],
        },
    }
    assert _client_accepts(data) is None
    obj = ResourceSlice.model_validate(data)
    problems = validate_object(obj, Location(kind="ResourceSlice", name="s"))
    assert [(p.location.path, p.message) for p in problems] == [
        ("spec.sharedCounters[0].counters", "at least one counter is required")
    ]


def test_bare_numbers_are_quantities_as_for_the_api_server() -> None:
    """The client refuses `value: 4`; Kubernetes (and drasat) read it as the quantity 4."""
    data = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d.example.com",
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "a", "capacity": {"mem": {"value": 4}}}],
        },
    }
    api = kubernetes.client.ApiClient()
    with pytest.raises(ValueError, match="valid string"):  # the client's pydantic ValidationError
        api._ApiClient__deserialize(data, "V1ResourceSlice")
    obj = ResourceSlice.model_validate(data)
    assert obj.to_api()["spec"]["devices"][0]["capacity"]["mem"] == {"value": "4"}
    assert client_view(data)["spec"]["devices"][0]["capacity"]["mem"] == {"value": "4"}
