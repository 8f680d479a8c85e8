"""Every size limit of the API at its boundary: the limit itself passes, one more fails.

The limits are Kubernetes 1.37's (``k8s.io/api/resource/v1/types.go`` constants, checked
where ``pkg/apis/resource/validation`` checks them); whole numbers beyond int64 are
refused while loading, as the API server's decoder refuses them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from drasat.models.int64 import INT64_MAX, INT64_MIN
from drasat.models.loader import load_paths

from .helpers_models import CLAIM as CLAIM_BASE
from .helpers_models import TAINT, device, many, problems

D0 = "spec.devices[0]"
R0 = "spec.devices.requests[0].exactly"


def attributes(n: int) -> dict[str, Any]:
    """``n`` attributes and capacities together: the base device has one capacity."""
    return {f"a{i}": {"int": i} for i in range(n - 1)}


def requests(n: int) -> list[dict[str, Any]]:
    """The base claim's two requests (its constraint names them) and ``n - 2`` more."""
    return [copy.deepcopy(r) for r in CLAIM_BASE["spec"]["devices"]["requests"]] + [
        {"name": f"r{i}", "exactly": {"deviceClassName": "gpu.example.com"}} for i in range(n - 2)
    ]


# (id, base, field, value for a size n, limit, field where the problem is, words of the message)
LIMITS: list[tuple[str, str, str, Callable[[int], Any], int, str, str]] = [
    (
        "devices per slice",
        "slice",
        "spec.devices",
        lambda n: many(n, device),
        128,
        "spec.devices",
        "Too many: 129: must have at most 128 items",
    ),
    (
        "devices per slice with taints",
        "slice",
        "spec.devices",
        lambda n: many(n, lambda i: device(i, taints=[TAINT])),
        64,
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "attributes per device",
        "slice",
        f"{D0}.attributes",
        attributes,
        32,
        f"{D0}",
        "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
    ),
    (
        "taints per device",
        "slice",
        f"{D0}.taints",
        lambda n: many(n, lambda i: dict(TAINT, key=f"k{i}")),
        16,
        f"{D0}.taints",
        "Too many: 17: must have at most 16 items",
    ),
    (
        "string attribute length",
        "slice",
        f'{D0}.attributes["model"]',
        lambda n: {"string": "x" * n},
        64,
        f"{D0}.attributes[model].string",
        "Too long: may not be more than 64 bytes",
    ),
    (
        "list attribute values",
        "slice",
        f'{D0}.attributes["model"]',  # the base device's other attribute is one value
        lambda n: {"strings": [f"v{i}" for i in range(n - 1)]},
        48,
        f"{D0}",
        "Invalid value: 49: the total number of attribute values must not exceed 48",
    ),
    (
        "attribute id length",
        "slice",
        f'{D0}.attributes["{{}}"]',
        None,
        32,
        "",
        "Too long: may not be more than 32 bytes",
    ),
    (
        "driver name length",
        "slice",
        "spec.driver",
        lambda n: "a" * (n - 4) + ".com",
        63,
        "spec.driver",
        "Too long: may not be more than 63 bytes",
    ),
    (
        "requests per claim",
        "claim",
        "spec.devices.requests",
        requests,
        32,
        "spec.devices.requests",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "subrequests",
        "claim",
        "spec.devices.requests[1].firstAvailable",
        lambda n: [{"name": f"s{i}", "deviceClassName": "nic.example.com"} for i in range(n)],
        8,
        "spec.devices.requests[1].firstAvailable",
        "Too many: 9: must have at most 8 items",
    ),
    (
        "selectors per request",
        "claim",
        f"{R0}.selectors",
        lambda n: [{"cel": {"expression": "true"}}] * n,
        32,
        f"{R0}.selectors",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "tolerations per request",
        "claim",
        f"{R0}.tolerations",
        lambda n: [{"key": f"k{i}", "operator": "Exists"} for i in range(n)],
        16,
        f"{R0}.tolerations",
        "Too many: 17: must have at most 16 items",
    ),
    (
        "CEL expression bytes",
        "claim",
        f"{R0}.selectors",
        lambda n: [{"cel": {"expression": "true" + " " * (n - 4)}}],
        10 * 1024,
        f"{R0}.selectors[0].cel.expression",
        "Too long: may not be more than 10240 bytes",
    ),
    (
        "class selectors",
        "class",
        "spec.selectors",
        lambda n: [{"cel": {"expression": "true"}}] * n,
        32,
        "spec.selectors",
        "Too many: 33: must have at most 32 items",
    ),
]


def _case(base: str, field: str, make: Callable[[int], Any] | None, n: int) -> dict[str, Any]:
    if make is None:  # the attribute id itself has the size
        return {field.replace("{}", "a" * n): {"int": 1}}
    return {field: make(n)}


@pytest.mark.parametrize("base, field, make, limit, at, words", [c[1:] for c in LIMITS], ids=[c[0] for c in LIMITS])
def test_the_limit_passes_one_more_fails(
    base: str, field: str, make: Callable[[int], Any] | None, limit: int, at: str, words: str
) -> None:
    assert [str(p) for p in problems(base, _case(base, field, make, limit))] == []
    found = problems(base, _case(base, field, make, limit + 1))
    assert found, f"{limit + 1} should be refused"
    assert any(words in p.message and (not at or p.location.path.startswith(at)) for p in found), [
        str(p) for p in found
    ]


SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: gpu.example.com
  nodeName: n
  pool: {{name: p, generation: {generation}, resourceSliceCount: 1}}
  devices:
  - name: d
    attributes: {{numa: {{int: {value}}}}}
"""
CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: default}}
spec:
  devices:
    requests:
    - name: r
      exactly: {{deviceClassName: gpu, count: {count}}}
    config:
    - opaque: {{driver: gpu.example.com, parameters: {{big: 99999999999999999999999}}}}
"""


@pytest.mark.parametrize(
    "value, ok", [(INT64_MAX, True), (INT64_MAX + 1, False), (INT64_MIN, True), (INT64_MIN - 1, False)]
)
def test_int64_attributes_and_generation(tmp_path, value: int, ok: bool) -> None:
    path = tmp_path / "slice.yaml"
    path.write_text(SLICE.format(generation=1, value=value))
    bundle = load_paths([str(path)])
    assert (bundle.problems == []) is ok, bundle.problems
    if not ok:
        assert [str(p) for p in bundle.problems] == [
            f"{path}[0]: ResourceSlice/s: spec.devices[0].attributes[numa].int: {value} does not fit in a 64-bit "
            f"integer ({INT64_MIN} to {INT64_MAX}); the API server cannot decode it"
        ]


@pytest.mark.parametrize("count, ok", [(INT64_MAX, True), (INT64_MAX + 1, False)])
def test_int64_count_but_not_opaque_parameters(tmp_path, count: int, ok: bool) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(CLAIM.format(count=count))
    bundle = load_paths([str(path)])
    assert [p.location.path for p in bundle.problems] == ([] if ok else ["spec.devices.requests[0].exactly.count"])


def test_a_bare_number_where_a_quantity_goes_is_no_int64(tmp_path) -> None:
    """Quantities have any size (a bare number there is a quantity): only int64 fields are refused."""
    path = tmp_path / "slice.yaml"
    path.write_text(
        SLICE.format(generation=1, value=1).replace(
            "    attributes:", "    capacity: {memory: {value: 99999999999999999999999}}\n    attributes:"
        )
    )
    assert load_paths([str(path)]).problems == []


@pytest.mark.parametrize("value, ok", [("é" * 32, True), ("é" * 32 + "a", False), ("a" * 64, True)])
def test_a_string_attribute_is_limited_in_bytes_as_go_counts_them(value: str, ok: bool) -> None:
    """64 bytes, not 64 characters: 33 characters of which 32 are two-byte "é" are 65 bytes, refused."""
    found = [str(p) for p in problems("slice", {f'{D0}.attributes["model"]': {"string": value}})]
    assert found == (
        []
        if ok
        else [
            f"case.yaml[0]: ResourceSlice/node-1-gpus: {D0}.attributes[model].string: Too long: may not be more than 64 bytes"
        ]
    )


@pytest.mark.parametrize("repeat, ok", [(5110, True), (5116, True), (5117, False)])
def test_opaque_parameters_are_measured_as_the_utf8_bytes_sent(repeat: int, ok: bool) -> None:
    """{"x":"é…"} with 5,110 "é" is 10,228 bytes of UTF-8 JSON (within 10,240), though 30,668 ASCII-escaped."""
    config = [{"opaque": {"driver": "gpu.example.com", "parameters": {"x": "é" * repeat}}}]
    found = [str(p) for p in problems("claim", {"spec.devices.config": config})]
    at = "spec.devices.config[0].opaque.parameters"
    assert found == ([] if ok else [f"case.yaml[0]: ResourceClaim/c: {at}: Too long: may not be more than 10240 bytes"])
