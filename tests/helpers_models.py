"""Shared helpers of the model, loader and validate tests: the shared inputs' objects, the client oracle.

The official Kubernetes client (``kubernetes`` >= 37, generated from the 1.37 API)
is the test oracle for field names and shapes. It is stricter than the API server
in one way that matters here: it refuses a bare number for a quantity, which the
API server accepts; :func:`client_view` therefore turns such numbers into text
before asking the client, and comparisons treat quantities and timestamps by
value.
"""

from __future__ import annotations

import copy
import datetime
import json
import re
import types
import typing
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from drasat.models.errors import InputProblem, Location
from drasat.models.kinds import lookup
from drasat.models.quantity import Quantity, QuantityError
from drasat.models.validation import validate_object
from drasat.models.yaml_io import parse_documents

from .shared_inputs import SHARED, shared_available, shared_files  # noqa: F401  (re-exported for the tests)

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"

CLIENT_CLASSES = {
    ("resource.k8s.io/v1", "DeviceClass"): "V1DeviceClass",
    ("resource.k8s.io/v1", "ResourceClaim"): "ResourceV1ResourceClaim",
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): "V1ResourceClaimTemplate",
    ("resource.k8s.io/v1", "ResourceSlice"): "V1ResourceSlice",
    ("resource.k8s.io/v1", "DeviceTaintRule"): "V1DeviceTaintRule",
    ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest"): "V1alpha3ResourcePoolStatusRequest",
    ("resource.k8s.io/v1beta2", "DeviceClass"): "V1beta2DeviceClass",
    ("resource.k8s.io/v1beta2", "ResourceClaim"): "V1beta2ResourceClaim",
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate"): "V1beta2ResourceClaimTemplate",
    ("resource.k8s.io/v1beta2", "ResourceSlice"): "V1beta2ResourceSlice",
    ("resource.k8s.io/v1beta2", "DeviceTaintRule"): "V1beta2DeviceTaintRule",
    ("resource.k8s.io/v1beta1", "DeviceClass"): "V1beta1DeviceClass",
    ("resource.k8s.io/v1beta1", "ResourceClaim"): "V1beta1ResourceClaim",
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate"): "V1beta1ResourceClaimTemplate",
    ("resource.k8s.io/v1beta1", "ResourceSlice"): "V1beta1ResourceSlice",
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"): "V1alpha3DeviceTaintRule",
    ("v1", "Node"): "V1Node",
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "Pod"): "V1Pod",
    ("scheduling.k8s.io/v1beta1", "PodGroup"): "V1beta1PodGroup",
    ("scheduling.k8s.io/v1alpha3", "PodGroup"): "V1alpha3PodGroup",
}


def documents(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, data) of each mapping document, parsed as drasat parses it (timestamps stay text)."""
    for document in parse_documents(path.read_text(), str(path)):
        if document.problem is None and isinstance(document.data, dict):
            yield document.index, document.data


def shared_objects(*subdirs: str) -> list[tuple[str, int, dict[str, Any]]]:
    """Every document of a kind drasat reads, as (file relative to shared/, index, data)."""
    found = []
    for path in shared_files(*subdirs):
        for index, data in documents(path):
            if lookup(str(data.get("apiVersion", "")), str(data.get("kind", ""))) is not None:
                found.append((str(path.relative_to(SHARED)), index, data))
    return found


def distinct(objects: list[tuple[str, int, dict[str, Any]]]) -> list[tuple[str, int, dict[str, Any]]]:
    """The first of each group of identical objects (scenarios repeat the same nodes and classes)."""
    seen: set[str] = set()
    out = []
    for where, index, data in objects:
        key = json.dumps(data, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append((where, index, data))
    return out


# --- the client oracle -----------------------------------------------------------------------


def client_class(data: dict[str, Any]) -> str | None:
    return CLIENT_CLASSES.get((data.get("apiVersion"), data.get("kind")))  # type: ignore[arg-type]


def client_view(data: dict[str, Any]) -> dict[str, Any]:
    """The client's reading of ``data`` as JSON (raises what the client raises when it refuses)."""
    import kubernetes.client

    api = kubernetes.client.ApiClient()
    name = client_class(data)
    assert name is not None, f"no client class for {data.get('apiVersion')} {data.get('kind')}"
    model = getattr(kubernetes.client, name)
    obj = api._ApiClient__deserialize(_numbers_as_text(data, model), name)  # type: ignore[attr-defined]
    return api.sanitize_for_serialization(obj)


def _numbers_as_text(value: Any, model: Any) -> Any:
    """Bare numbers where the client's field is text become text (Kubernetes accepts them for quantities)."""
    if isinstance(model, type) and issubclass(model, BaseModel) and isinstance(value, dict):
        by_wire = {getattr(model, "attribute_map", {}).get(n, n): f for n, f in model.model_fields.items()}
        return {k: _numbers_as_text(v, by_wire[k].annotation) if k in by_wire else v for k, v in value.items()}
    target = _unwrap(model)
    origin = typing.get_origin(target)
    if origin is list and isinstance(value, list):
        return [_numbers_as_text(v, typing.get_args(target)[0]) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: _numbers_as_text(v, typing.get_args(target)[1]) for k, v in value.items()}
    if isinstance(target, type) and issubclass(target, BaseModel):
        return _numbers_as_text(value, target)
    if target is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) in (typing.Union, typing.Annotated, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0]
    return annotation


# --- comparing JSON by value -----------------------------------------------------------------


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Where two JSON trees differ; quantities and timestamps compare by value."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = []
        for key in sorted(set(ours) | set(theirs), key=str):
            if key not in ours or key not in theirs:
                out.append(f"{path}.{key}: {'missing in ours' if key not in ours else 'missing in client'}")
            else:
                out.extend(differences(ours[key], theirs[key], f"{path}.{key}"))
        return out
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if same_scalar(ours, theirs) else [f"{path}: {ours!r} != {theirs!r}"]


def same_scalar(a: Any, b: Any) -> bool:
    if a == b and type(a) is type(b):
        return True
    for parse in (_quantity, _timestamp):
        x, y = parse(a), parse(b)
        if x is not None and x == y:
            return True
    return False


def _quantity(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        return Quantity.parse(value).value
    except QuantityError:
        return None


def _timestamp(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


# --- valid base objects and edits for the validation rule tests ----------------------------------

SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpus"},
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "node-1",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {"model": {"string": "GX-80"}, "example.com/numa": {"int": 0}},
                "capacity": {"memory": {"value": "80Gi"}},
            }
        ],
    },
}
SHARED_DEVICE = {  # a consumable-capacity device: allowMultipleAllocations with a request policy
    "name": "nic-0",
    "allowMultipleAllocations": True,
    "capacity": {
        "bandwidth": {
            "value": "100",
            "requestPolicy": {"default": "10", "validRange": {"min": "10", "max": "100", "step": "10"}},
        }
    },
}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ml"},
    "spec": {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {"deviceClassName": "gpu.example.com", "selectors": [{"cel": {"expression": "true"}}]},
                },
                {
                    "name": "nic",
                    "firstAvailable": [
                        {"name": "fast", "deviceClassName": "nic.example.com"},
                        {"name": "any", "deviceClassName": "nic.example.com"},
                    ],
                },
            ],
            "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "example.com/numa"}],
            "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}],
        }
    },
}
ALLOCATED = copy.deepcopy(CLAIM) | {
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                    {
                        "request": "nic/fast",
                        "driver": "nic.example.com",
                        "pool": "node-1",
                        "device": "nic-0",
                        "shareID": "7f3c9a52-1b4e-4d6a-9e2f-3c5b7d9a1e40",
                    },
                ],
                "config": [
                    {
                        "source": "FromClaim",
                        "requests": ["gpu"],
                        "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}},
                    }
                ],
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u-1"}],
        "devices": [
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "gpu-0",
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "Prepared",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
                "networkData": {"interfaceName": "eth1", "ips": ["10.0.0.5/24"]},
            }
        ],
    }
}
CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {
        "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
        "extendedResourceName": "example.com/gpu",
    },
}
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "t", "namespace": "ml"},
    "spec": {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}},
    },
}
RULE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "r"},
    "spec": {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
        "taint": {"key": "example.com/broken", "value": "yes", "effect": "NoExecute"},
    },
}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"zone": "a"}},
    "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {
        "nodeSelector": {"zone": "a"},
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "resources": {"claims": [{"name": "gpu"}], "requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
            }
        ],
    },
}
POD_GROUP = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "g", "namespace": "ml"},
    "spec": {"resourceClaims": [{"name": "shared", "resourceClaimName": "c"}]},
}
POOL_REQUEST = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourcePoolStatusRequest",
    "metadata": {"name": "q"},
    "spec": {"driver": "gpu.example.com", "limit": 10},
}

BASES = {
    "slice": SLICE,
    "claim": CLAIM,
    "allocated": ALLOCATED,
    "class": CLASS,
    "template": TEMPLATE,
    "rule": RULE,
    "node": NODE,
    "namespace": NAMESPACE,
    "pod": POD,
    "podgroup": POD_GROUP,
    "pool": POOL_REQUEST,
}
_TOKEN = re.compile(r'\.?([A-Za-z_][\w-]*)|\[(\d+)\]|\["([^"]*)"\]')


def _steps(path: str) -> list[str | int]:
    return [m[0] or (int(m[1]) if m[1] else m[2]) for m in _TOKEN.findall(path)]  # type: ignore[misc]


def edit(data: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, with value DELETE, remove) the field at an API path like ``spec.devices[0].attributes["x"]``."""
    *parents, last = _steps(path)
    here: Any = data
    for step in parents:
        here = here[step]
    if value is DELETE:
        del here[last]
    elif isinstance(here, list) and last == len(here):
        here.append(copy.deepcopy(value))
    else:
        here[last] = copy.deepcopy(value)


DELETE = object()
Edits = dict[str, Any]


def problems(base: str, edits: Edits) -> list[InputProblem]:
    data = copy.deepcopy(BASES[base])
    for path, value in edits.items():
        edit(data, path, value)
    info = lookup(data["apiVersion"], data["kind"])
    assert info is not None
    obj = info.model.model_validate(data)
    return validate_object(obj, Location("case.yaml", 0, obj.kind, obj.name))


def many(n: int, make: Callable[[int], Any]) -> list[Any]:
    return [make(i) for i in range(n)]


def device(i: int, **extra: Any) -> dict[str, Any]:
    return {"name": f"d-{i}", **extra}


TAINT = {"key": "k", "effect": "NoSchedule"}
CONDITION = {"type": "Ready", "status": "True", "reason": "Ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}
