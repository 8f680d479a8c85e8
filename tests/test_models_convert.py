"""Older resource.k8s.io versions convert to the same v1 objects as their v1 equivalents.

Fixtures in tests/data/convert/ come in groups ``<name>.<version>.yaml``; each older
version must load to exactly the object of ``<name>.v1.yaml``. The client's models
of v1beta2/v1beta1 (and v1alpha3 DeviceTaintRule) confirm that the older fixtures
are real shapes of those versions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasat.models.convert import to_v1
from drasat.models.errors import InputError, Location
from drasat.models.loader import load_paths, load_text
from drasat.models.resource import ResourceClaim
from drasat.models.validation import validate_object

from .helpers_models import DATA, client_class, client_view, differences, documents

FIXTURES = DATA / "convert"
OLDER = sorted(p for p in FIXTURES.glob("*.yaml") if not p.name.endswith(".v1.yaml"))


def _v1_twin(path: Path) -> Path:
    return FIXTURES / (path.name.split(".")[0] + ".v1.yaml")


@pytest.mark.parametrize("path", OLDER, ids=[p.name for p in OLDER])
def test_older_version_loads_to_the_v1_object(path: Path) -> None:
    older, newer = load_paths([str(path)]), load_paths([str(_v1_twin(path))])
    assert older.problems == [] and newer.problems == []
    (old_obj,), (new_obj,) = list(older), list(newer)
    assert old_obj.to_api() == new_obj.to_api()
    assert older.objects[0].converted_from == f"resource.k8s.io/{path.name.split('.')[1]}"


@pytest.mark.parametrize("path", OLDER, ids=[p.name for p in OLDER])
def test_older_fixture_is_a_real_shape_of_its_version(path: Path) -> None:
    ((_, data),) = list(documents(path))
    if client_class(data) is None:
        pytest.skip(f"the 1.37 client has no model of {data['apiVersion']} {data['kind']}")
    assert differences(client_view(data), data) == []


def test_conversion_notice_names_file_and_versions() -> None:
    bundle = load_paths([str(FIXTURES / "claim.v1beta1.yaml"), str(FIXTURES / "slice.v1beta1.yaml")])
    assert any("claim.v1beta1.yaml: converted 1 object from resource.k8s.io/v1beta1" in n for n in bundle.notices)
    assert len(bundle.notices) == 2


def test_conversion_does_not_change_its_input() -> None:
    ((_, data),) = list(documents(FIXTURES / "claim.v1beta1.yaml"))
    before = json.dumps(data, sort_keys=True)
    to_v1(data, Location("x.yaml", 0))
    assert json.dumps(data, sort_keys=True) == before


def test_v1_documents_pass_through_unchanged() -> None:
    ((_, data),) = list(documents(FIXTURES / "claim.v1.yaml"))
    assert to_v1(data, Location("x.yaml", 0)) is data


def test_request_with_both_flat_fields_and_first_available_keeps_both_and_fails_validation() -> None:
    """As in Kubernetes' conversion: both survive, and v1 validation then rejects the request."""
    text = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: both}
spec:
  devices:
    requests:
    - name: r
      deviceClassName: a.example.com
      firstAvailable: [{name: s, deviceClassName: b.example.com}]
"""
    (claim,) = list(load_text(text))
    assert isinstance(claim, ResourceClaim)
    request = claim.spec.devices.requests[0]
    assert request.exactly is not None and request.first_available
    messages = [p.message for p in validate_object(claim)]
    assert any("but both are set" in m for m in messages)


INEXPRESSIBLE = [
    (
        "claim controller",
        """
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata: {name: classic}
spec:
  controller: dra.example.com
  devices: {requests: [{name: r, deviceClassName: c}]}
""",
        "spec.controller",
        "cannot be expressed in resource.k8s.io/v1",
    ),
    (
        "allocation controller",
        """
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata: {name: classic}
spec: {devices: {requests: [{name: r, deviceClassName: c}]}}
status: {allocation: {controller: dra.example.com}}
""",
        "status.allocation.controller",
        "control-plane controller",
    ),
    (
        "deallocation requested",
        """
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata: {name: classic}
spec: {devices: {requests: [{name: r, deviceClassName: c}]}}
status: {deallocationRequested: true}
""",
        "status.deallocationRequested",
        "no equivalent in resource.k8s.io/v1",
    ),
    (
        "suitable nodes",
        """
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceClass
metadata: {name: classic}
spec:
  suitableNodes: {nodeSelectorTerms: [{matchExpressions: [{key: gpu, operator: Exists}]}]}
""",
        "spec.suitableNodes",
        "no equivalent in resource.k8s.io/v1",
    ),
    (
        "taint rule by class",
        """
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: by-class}
spec:
  deviceSelector: {deviceClassName: gpu.example.com}
  taint: {key: k, effect: NoSchedule}
""",
        "spec.deviceSelector.deviceClassName",
        "would taint more devices than intended",
    ),
    (
        "taint rule by CEL",
        """
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: by-cel}
spec:
  deviceSelector: {selectors: [{cel: {expression: "true"}}]}
  taint: {key: k, effect: NoSchedule}
""",
        "spec.deviceSelector.selectors",
        "cannot be expressed in resource.k8s.io/v1",
    ),
    (
        "field inside and outside basic",
        """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: twice}
spec:
  driver: d.example.com
  nodeName: n
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices: [{name: a, attributes: {}, basic: {attributes: {}}}]
""",
        "spec.devices[0].attributes",
        "both in the device and in its `basic` part",
    ),
]


@pytest.mark.parametrize("text, path, message", [c[1:] for c in INEXPRESSIBLE], ids=[c[0] for c in INEXPRESSIBLE])
def test_what_v1_cannot_express_is_an_error_naming_the_field(text: str, path: str, message: str) -> None:
    bundle = load_text(text, "old.yaml")
    assert list(bundle) == []
    (problem,) = bundle.problems
    assert problem.location.path == path and problem.location.file == "old.yaml"
    assert message in problem.message


def test_to_v1_raises_input_error_listing_every_field() -> None:
    data = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": "x"},
        "spec": {"controller": "c.example.com"},
        "status": {"deallocationRequested": True},
    }
    with pytest.raises(InputError) as caught:
        to_v1(data, Location("f.yaml", 2, "ResourceClaim", "x"))
    assert [p.location.path for p in caught.value.problems] == ["spec.controller", "status.deallocationRequested"]
    assert str(caught.value).startswith("f.yaml[2]: ResourceClaim/x: spec.controller:")
