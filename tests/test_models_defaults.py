"""The API server's defaults, applied on demand and never to the loaded objects themselves."""

from __future__ import annotations

from drasat.models.defaults import apply_defaults
from drasat.models.loader import load_text
from drasat.models.resource import ResourceClaim, ResourceClaimTemplate

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: plain
      exactly:
        deviceClassName: gpu.example.com
        tolerations: [{key: a, value: b}, {key: c, operator: Exists}]
    - name: zero
      exactly: {deviceClassName: gpu.example.com, count: 0}
    - name: all
      exactly: {deviceClassName: gpu.example.com, allocationMode: All}
    - name: three
      exactly: {deviceClassName: gpu.example.com, count: 3}
    - name: alternatives
      firstAvailable:
      - {name: big, deviceClassName: gpu.example.com, tolerations: [{key: a}]}
      - {name: all, deviceClassName: gpu.example.com, allocationMode: All}
status:
  allocation:
    devices:
      results:
      - {request: plain, driver: gpu.example.com, pool: p, device: d, tolerations: [{key: a, value: b}]}
"""


def _claim() -> ResourceClaim:
    (claim,) = list(load_text(CLAIM))
    assert isinstance(claim, ResourceClaim)
    return claim


def test_allocation_mode_count_and_operator_are_defaulted() -> None:
    out = apply_defaults(_claim())
    requests = out.spec.devices.requests
    modes = [(r.exactly.allocation_mode, r.exactly.count) for r in requests[:4] if r.exactly]
    assert modes == [("ExactCount", 1), ("ExactCount", 1), ("All", None), ("ExactCount", 3)]
    assert [t.operator for t in requests[0].exactly.tolerations] == ["Equal", "Exists"]  # type: ignore[union-attr]
    big, everything = requests[4].first_available
    assert (big.allocation_mode, big.count, big.tolerations[0].operator) == ("ExactCount", 1, "Equal")
    assert (everything.allocation_mode, everything.count) == ("All", None)
    result = out.status.allocation.devices.results[0]  # type: ignore[union-attr]
    assert result.tolerations[0].operator == "Equal"


def test_the_input_is_not_changed_and_dumps_as_written() -> None:
    claim = _claim()
    before = claim.to_api()
    defaulted = apply_defaults(claim)
    assert claim.to_api() == before
    assert "allocationMode" not in before["spec"]["devices"]["requests"][0]["exactly"]
    assert defaulted.to_api()["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"


def test_templates_and_specs_are_defaulted_too() -> None:
    text = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests: [{name: r, exactly: {deviceClassName: c}}]
"""
    (template,) = list(load_text(text))
    assert isinstance(template, ResourceClaimTemplate)
    out = apply_defaults(template)
    assert out.spec.spec.devices.requests[0].exactly.count == 1  # type: ignore[union-attr]
    assert template.spec.spec.devices.requests[0].exactly.count is None  # type: ignore[union-attr]
    spec = apply_defaults(template.spec.spec)
    assert spec.devices.requests[0].exactly.allocation_mode == "ExactCount"  # type: ignore[union-attr]


def test_loading_does_not_default() -> None:
    exact = _claim().spec.devices.requests[0].exactly
    assert exact is not None and exact.allocation_mode is None and exact.count is None


def test_defaulting_twice_gives_back_the_same_object_and_shares_unchanged_parts() -> None:
    claim = _claim()
    once = apply_defaults(claim)
    assert apply_defaults(once) is once
    assert once.spec.devices.constraints is claim.spec.devices.constraints
    assert once.metadata is claim.metadata
