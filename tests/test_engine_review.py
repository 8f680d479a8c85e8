"""Engine review: small inputs where drasat disagreed with the allocation semantics (each failed before its fix)."""

from __future__ import annotations

import pytest

from drasat.models.errors import AllocationError, EvaluationError, InputError, Unschedulable
from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import Features, NodeInfo, Problem, allocate
from drasat.solver.verification.verifier import verify

NODE = NodeInfo("node-1", {"zone": "a"})
DRIVER = "d.example.com"
SOLVERS = [{"solver": "greedy"}, {"solver": "cp-sat", "greedy_budget": 0}]


def slice_(name: str, devices: list[dict], pool: str = "p", **spec) -> ResourceSlice:
    body = {
        "driver": DRIVER,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": spec.pop("count", 1)},
        "devices": devices,
    }
    if not any(k in spec for k in ("nodeName", "allNodes", "nodeSelector", "perDeviceNodeSelection")):
        body["nodeName"] = NODE.name
    body.update(spec)
    return ResourceSlice.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}
    )


def claim(
    name: str,
    requests: list[dict],
    constraints: list[dict] = (),
    namespace: str | None = None,
    status: dict | None = None,
) -> ResourceClaim:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": {"devices": {"requests": requests, "constraints": list(constraints)}},
    }
    if status:
        body["status"] = status
    return ResourceClaim.model_validate(body)


def problem(slices, claims, allocated=(), gates=None) -> Problem:
    any_class = DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}}
    )
    return Problem(
        node=NODE,
        slices=slices,
        classes=[any_class],
        claims=claims,
        allocated=list(allocated),
        features=Features.from_mapping(gates or {}),
    )


def picked(p: Problem, **options) -> dict[str, list[tuple[str, str]]]:
    results = allocate(p, **options).results
    assert verify(p, results) == []
    return {name: [(r.request, r.device) for r in res.devices.results] for name, res in results.items()}


def exact(name: str = "r", **body) -> dict:
    return {"name": name, "exactly": {"deviceClassName": "any", **body}}


# --- allocationMode All: the fixed list is allocated in order ---------------------------------------------


@pytest.mark.parametrize("options", SOLVERS)
def test_all_mode_constraint_error_before_a_later_blocked_device(options):
    """Kubernetes allocates d1, then d2 breaks the matchAttribute constraint: a fatal error, although d3
    (tainted) would have made the request fail later anyway. drasat used to give up at once ("no
    allocation") because some listed device was blocked."""
    devices = [
        {"name": "d1", "attributes": {"m": {"string": "a"}}},
        {"name": "d2", "attributes": {"m": {"string": "b"}}},
        {"name": "d3", "attributes": {"m": {"string": "a"}}, "taints": [{"key": "k", "effect": "NoSchedule"}]},
    ]
    p = problem(
        [slice_("s", devices)], [claim("c", [exact(allocationMode="All")], [{"matchAttribute": f"{DRIVER}/m"}])]
    )
    with pytest.raises(AllocationError, match=f"request r: cannot add device {DRIVER}/p/d2 because a claim constraint"):
        allocate(p, **options)


@pytest.mark.parametrize("options", SOLVERS)
def test_all_mode_blocked_device_before_a_constraint_break_just_fails(options):
    devices = [
        {"name": "d1", "attributes": {"m": {"string": "a"}}},
        {"name": "d2", "attributes": {"m": {"string": "a"}}, "taints": [{"key": "k", "effect": "NoSchedule"}]},
        {"name": "d3", "attributes": {"m": {"string": "b"}}},
    ]
    p = problem(
        [slice_("s", devices)], [claim("c", [exact(allocationMode="All")], [{"matchAttribute": f"{DRIVER}/m"}])]
    )
    with pytest.raises(Unschedulable):
        allocate(p, **options)


# --- per-device node selection: the device's node is checked after the selectors -------------------------


@pytest.mark.parametrize("options", SOLVERS)
def test_selector_error_on_an_off_node_device_is_reached_first(options):
    """Kubernetes evaluates class and request selectors before a device's own node selection, so a CEL
    runtime error on an earlier device of another node is the answer. drasat used to drop off-node
    devices while gathering and allocated d1."""
    selecting = DeviceClass.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "foo"},
            "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].foo == "x"'}}]},
        }
    )
    devices = [
        {"name": "d0", "nodeName": "other"},
        {"name": "d1", "nodeName": NODE.name, "attributes": {"foo": {"string": "x"}}},
    ]
    p = problem(
        [slice_("s", devices, perDeviceNodeSelection=True)],
        [claim("c", [{"name": "r", "exactly": {"deviceClassName": "foo"}}])],
    )
    p = Problem(node=p.node, slices=p.slices, classes=[selecting], claims=p.claims)
    with pytest.raises(EvaluationError, match=f"class foo: selector #0 on device {DRIVER}/p/d0: CEL runtime error"):
        allocate(p, **options)


@pytest.mark.parametrize("options", SOLVERS)
def test_off_node_devices_of_per_device_slices_are_never_picked(options):
    devices = [
        {"name": "d0", "nodeName": "other"},
        {"name": "d1", "nodeName": NODE.name},
        {"name": "d2", "allNodes": True},
    ]
    p = problem([slice_("s", devices, perDeviceNodeSelection=True)], [claim("c", [exact(count=2)])])
    assert picked(p, **options) == {"c": [("r", "d1"), ("r", "d2")]}
    with pytest.raises(Unschedulable):
        allocate(problem(p.slices, [claim("c", [exact(count=3)])]), **options)
    assert picked(problem(p.slices, [claim("c", [exact(allocationMode="All")])]), **options) == {
        "c": [("r", "d1"), ("r", "d2")]
    }


# --- results are keyed by claim, namespace/name ----------------------------------------------------------------


@pytest.mark.parametrize("options", SOLVERS)
def test_claims_of_one_name_in_two_namespaces_are_allocated_apart(options: dict) -> None:
    """Results were keyed by bare name: both claims got one entry, a/c's allocation (d1) was lost and the CLI
    then wrote b/c's device d2 into both claims. Keyed by namespace/name, each claim has its own device."""
    p = problem(
        [slice_("s", [{"name": "d1"}, {"name": "d2"}])],
        [claim("c", [exact()], namespace="a"), claim("c", [exact()], namespace="b")],
    )
    answer = allocate(p, **options)
    assert verify(p, answer.results) == []
    assert {key: [r.device for r in result.devices.results] for key, result in answer.results.items()} == {
        "a/c": ["d1"],
        "b/c": ["d2"],
    }


def test_a_claim_given_twice_is_refused():
    p = problem([slice_("s", [{"name": "d1"}, {"name": "d2"}])], [claim("c", [exact()], namespace="a")] * 2)
    with pytest.raises(InputError, match="^claim a/c is given twice among the claims to allocate: allocate it once$"):
        allocate(p)


OVERDRAWN = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: d.example.com
  nodeName: node-1
  pool: {name: pool-0, generation: 1, resourceSliceCount: 2}
  sharedCounters: [{name: mem, counters: {gib: {value: "2"}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: partitions}
spec:
  driver: d.example.com
  nodeName: node-1
  pool: {name: pool-0, generation: 1, resourceSliceCount: 2}
  devices:
  - {name: dev-0-0, consumesCounters: [{counterSet: mem, counters: {gib: {value: "1"}}}]}
  - {name: dev-0-1, consumesCounters: [{counterSet: mem, counters: {gib: {value: "2"}}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: plain}
spec:
  driver: d.example.com
  nodeName: node-1
  pool: {name: pool-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev-1-0}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: any}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim-0, namespace: default}
spec:
  devices:
    requests:
    - name: r0
      firstAvailable:
      - {name: all, deviceClassName: any, allocationMode: All}
      - {name: one, deviceClassName: any, allocationMode: ExactCount, count: 1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: already, namespace: default}
spec:
  devices:
    requests: [{name: held, exactly: {deviceClassName: any, allocationMode: ExactCount, count: 2}}]
status:
  allocation:
    devices:
      results:
      - {request: held, driver: d.example.com, pool: pool-0, device: dev-0-0}
      - {request: held, driver: d.example.com, pool: pool-0, device: dev-0-1}
"""


@pytest.mark.parametrize("options", [{"solver": "greedy"}, {"greedy_budget": 0}, {"objective": "prioritized-list"}])
def test_an_overdrawn_counter_set_blocks_its_devices_not_the_whole_allocation(options: dict) -> None:
    """Found by the property test: counters already in use beyond the set (3 of 2) made the CP-SAT
    model infeasible outright, so prioritized-list said 'no allocation' where greedy allocates
    the one device of another pool."""
    from drasat.models.loader import load_text
    from drasat.solver.allocation.problem import problem_from_objects

    problem = problem_from_objects(list(load_text(OVERDRAWN)), node="node-1")
    answer = allocate(problem, **options)
    assert verify(problem, answer.results) == []
    assert [(r.request, r.pool, r.device) for r in answer.results["default/claim-0"].devices.results] == [
        ("r0/one", "pool-1", "dev-1-0")
    ]
