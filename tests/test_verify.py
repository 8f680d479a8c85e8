"""Tests of the independent verifier: for each rule, a valid answer passes and a broken one is named.

Selectors are evaluated by a small fake CEL engine (``FakeCel``) so that these tests do not
depend on drasat's CEL module; one test runs the real engine when it is importable.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from drasat.models.resource import AllocationResult, DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from drasat.solver.allocation.features import Features
from drasat.solver.allocation.problem import NodeInfo, Problem
from drasat.solver.verification.verifier import check_or_raise, verify

API = "resource.k8s.io/v1"
NODE = NodeInfo("node-1", {"region": "region-1", "planet": "earth"})
UUID1 = "0b9c1a2e-3f4d-4e5f-8a6b-7c8d9e0f1a2b"
UUID2 = "1b9c1a2e-3f4d-4e5f-8a6b-7c8d9e0f1a2b"
NODE_SEL: dict[str, Any] = {
    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]
}


class FakeCel:
    """Knows ``device.driver == "X"`` and ``device.attributes["dom"].name == V``; "boom" fails."""

    def matches(self, expression: str, device: Any) -> bool:
        if "boom" in expression:
            raise RuntimeError("boom")
        m = re.fullmatch(r'device\.driver == "(.*)"', expression)
        if m:
            return device.driver == m.group(1)
        m = re.fullmatch(r'device\.attributes\["(.*)"\]\.(\w+) == (.*)', expression)
        if m:
            domain, ident, want = m.groups()
            for key, raw in device.attributes.items():
                dom, _, name = key.rpartition("/")
                if (dom or device.driver) == domain and name == ident:
                    return repr(next(iter(raw.values()))).replace("'", '"') == want
            raise RuntimeError(f"no such key: {ident}")
        raise ValueError(f"FakeCel does not understand {expression!r}")


# --- builders -------------------------------------------------------------------------------


def dev(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


def slice_(
    name: str,
    devices: list[dict[str, Any]],
    *,
    driver: str = "driver-a",
    pool: str = "pool-1",
    gen: int = 1,
    count: int = 1,
    node: str | None = "node-1",
    **spec: Any,
) -> ResourceSlice:
    body: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": gen, "resourceSliceCount": count}}
    if devices:
        body["devices"] = devices
    if node is not None:
        body["nodeName"] = node
    body.update(spec)
    return ResourceSlice.model_validate(
        {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}
    )


def klass(name: str = "class-a", driver: str = "driver-a", config: list[dict[str, Any]] | None = None) -> DeviceClass:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if config:
        spec["config"] = config
    return DeviceClass.model_validate(
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}
    )


def req(name: str = "req-0", cls: str = "class-a", **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, **exactly}}


def claim(
    name: str,
    requests: list[dict[str, Any]],
    *,
    constraints: list[dict[str, Any]] | None = None,
    config: list[dict[str, Any]] | None = None,
    results: list[dict[str, Any]] | None = None,
) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    body: dict[str, Any] = {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": devices},
    }
    if results is not None:
        body["status"] = {"allocation": {"devices": {"results": results}}}
    return ResourceClaim.model_validate(body)


def res(request: str, device: str, *, pool: str = "pool-1", driver: str = "driver-a", **extra: Any) -> dict[str, Any]:
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


def alloc(
    *results: dict[str, Any],
    node_selector: dict[str, Any] | None = NODE_SEL,
    config: list[dict[str, Any]] | None = None,
) -> AllocationResult:
    body: dict[str, Any] = {"devices": {"results": list(results)}}
    if config:
        body["devices"]["config"] = config
    if node_selector is not None:
        body["nodeSelector"] = node_selector
    return AllocationResult.model_validate(body)


def problem(
    slices: list[ResourceSlice],
    claims: list[ResourceClaim],
    *,
    classes: list[DeviceClass] | None = None,
    allocated: list[ResourceClaim] = (),
    rules: list[dict[str, Any]] = (),
    **gates: bool,
) -> Problem:
    taint_rules = [
        DeviceTaintRule.model_validate(
            {"apiVersion": API, "kind": "DeviceTaintRule", "metadata": {"name": f"rule-{i}"}, "spec": r}
        )
        for i, r in enumerate(rules)
    ]
    return Problem(
        NODE,
        slices,
        classes if classes is not None else [klass()],
        claims,
        list(allocated),
        taint_rules,
        Features.from_mapping(gates),
    )


def check(prob: Problem, allocations: dict[str, AllocationResult]) -> list[str]:
    return verify(prob, allocations, evaluator=FakeCel())


def assert_valid(prob: Problem, allocations: dict[str, AllocationResult]) -> None:
    assert check(prob, allocations) == []


def assert_broken(prob: Problem, allocations: dict[str, AllocationResult], *fragments: str) -> list[str]:
    problems = check(prob, allocations)
    assert problems, "the verifier accepted a broken allocation"
    text = "\n".join(problems)
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
    return problems


ONE = [slice_("slice-1", [dev("device-1"), dev("device-2"), dev("device-3")])]


# --- claims and requests --------------------------------------------------------------------


def test_every_claim_answered_and_nothing_extra() -> None:
    prob = problem(ONE, [claim("claim-0", [req()])])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-1"))})
    assert_broken(prob, {}, "claim claim-0: no allocation proposed")
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1")), "claim-9": alloc()}, "'claim-9'")


def test_result_must_name_an_existing_request() -> None:
    prob = problem(ONE, [claim("claim-0", [req()])])
    assert_broken(
        prob, {"claim-0": alloc(res("req-9", "device-1"))}, "req-9", "does not have", "request req-0: got no devices"
    )
    assert_broken(prob, {"claim-0": alloc(res("req-0/sub-0", "device-1"))}, "has no firstAvailable list")


def test_exact_count_is_met_exactly() -> None:
    prob = problem(ONE, [claim("claim-0", [req(count=2)])])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-3"))})
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "needs exactly 2 devices, got 1")
    assert_broken(
        prob,
        {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-1"))},
        "gets device driver-a/pool-1/device-1 2 times",
    )


def test_first_available_uses_exactly_one_alternative() -> None:
    fa = {
        "name": "req-0",
        "firstAvailable": [
            {"name": "sub-0", "deviceClassName": "class-a", "count": 2},
            {"name": "sub-1", "deviceClassName": "class-a"},
        ],
    }
    prob = problem(ONE, [claim("claim-0", [fa])])
    assert_valid(prob, {"claim-0": alloc(res("req-0/sub-1", "device-2"))})
    assert_broken(
        prob, {"claim-0": alloc(res("req-0/sub-0", "device-1"), res("req-0/sub-1", "device-2"))}, "several alternatives"
    )
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-2"))}, "must name one of the subrequests")
    all_sub = {
        "name": "req-0",
        "firstAvailable": [
            {"name": "sub-0", "deviceClassName": "class-a", "allocationMode": "All"},
            {"name": "sub-1", "deviceClassName": "class-a"},
        ],
    }
    updating = ONE + [slice_("slice-z", [dev("z")], driver="driver-z", count=2)]
    assert_broken(
        problem(updating, [claim("claim-0", [all_sub])]),
        {"claim-0": alloc(res("req-0/sub-1", "device-2"))},
        "(req-0/sub-0) asks for all devices, but resource pool driver-z/pool-1 is incomplete",
    )
    off = problem(ONE, [claim("claim-0", [fa])], DRAPrioritizedList=False)
    assert_broken(off, {"claim-0": alloc(res("req-0/sub-1", "device-2"))}, "DRAPrioritizedList feature is disabled")


def test_claim_limit_of_32_devices() -> None:
    many = [slice_("slice-1", [dev(f"device-{i}") for i in range(40)])]
    ok = problem(many, [claim("claim-0", [req(count=32)])])
    assert_valid(ok, {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in range(32)))})
    over = problem(many, [claim("claim-0", [req(count=33)])])
    assert_broken(
        over,
        {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in range(33)))},
        "more than the limit of 32",
        "exceeds the claim limit of 32",
    )


def test_gate_off_fields_make_every_answer_invalid() -> None:
    admin = problem(ONE, [claim("claim-0", [req(adminAccess=False)])], DRAAdminAccess=False)
    assert_broken(
        admin, {"claim-0": alloc(res("req-0", "device-1"))}, "admin access is requested, but the feature is disabled"
    )
    cap = problem(ONE, [claim("claim-0", [req(capacity={"requests": {"mem": "1"}})])], DRAConsumableCapacity=False)
    assert_broken(cap, {"claim-0": alloc(res("req-0", "device-1"))}, "DRAConsumableCapacity feature is disabled")
    unknown = problem(ONE, [claim("claim-0", [req(cls="class-x")])])
    assert_broken(unknown, {"claim-0": alloc(res("req-0", "device-1"))}, "device class class-x does not exist")


# --- pools and visibility -------------------------------------------------------------------


def test_device_must_exist_on_the_node() -> None:
    slices = ONE + [slice_("slice-2", [dev("device-9")], pool="pool-2", node="node-2")]
    prob = problem(slices, [claim("claim-0", [req()])])
    assert_broken(
        prob, {"claim-0": alloc(res("req-0", "device-9", pool="pool-2"))}, "pool driver-a/pool-2 is not visible"
    )
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-7"))}, "has no device device-7")
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1", driver="driver-b"))}, "not visible")


def test_incomplete_and_complete_multi_slice_pools() -> None:
    half = [slice_("slice-1", [dev("device-1")], count=2)]
    prob = problem(half, [claim("claim-0", [req()])])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "pool driver-a/pool-1 is incomplete")
    whole = half + [slice_("slice-2", [dev("device-2")], count=2, node="node-2")]
    assert_valid(problem(whole, [claim("claim-0", [req()])]), {"claim-0": alloc(res("req-0", "device-1"))})


def test_only_the_newest_generation_counts() -> None:
    slices = [slice_("slice-1", [dev("device-1")], count=2), slice_("slice-2", [dev("device-2")], gen=2, count=2)]
    prob = problem(slices, [claim("claim-0", [req()])])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "incomplete")
    newer = [slice_("slice-1", [dev("device-1")]), slice_("slice-2", [dev("device-2")], gen=2)]
    prob = problem(newer, [claim("claim-0", [req()])])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-2"))})
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "has no device device-1")


def test_invalid_pool_with_duplicate_device_names() -> None:
    slices = [slice_("slice-1", [dev("device-1")], count=2), slice_("slice-2", [dev("device-1")], count=2)]
    prob = problem(slices, [claim("claim-0", [req()])])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "is invalid", "appear more than once")


def test_per_device_node_selection() -> None:
    sl = slice_(
        "slice-1",
        [
            dev("device-1", nodeName="node-1"),
            dev("device-2", nodeName="node-2"),
            dev(
                "device-3",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}
                    ]
                },
            ),
        ],
        node=None,
        perDeviceNodeSelection=True,
    )
    prob = problem([sl], [claim("claim-0", [req()])])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-1"))})
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-2"))}, "per-device node selection excludes node node-1")
    region = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]
    }
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-3"), node_selector=region)})


# --- selectors ------------------------------------------------------------------------------


def test_class_and_request_selectors() -> None:
    slices = ONE + [
        slice_("slice-b", [dev("device-b", attributes={"model": {"string": "x"}})], driver="driver-b", pool="pool-b")
    ]
    classes = [klass(), klass("class-b", "driver-b")]
    sel = [{"cel": {"expression": 'device.attributes["driver-b"].model == "x"'}}]
    prob = problem(slices, [claim("claim-0", [req(cls="class-b", selectors=sel)])], classes=classes)
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-b", driver="driver-b", pool="pool-b"))})
    wrong = problem(slices, [claim("claim-0", [req()])], classes=classes)
    assert_broken(
        wrong,
        {"claim-0": alloc(res("req-0", "device-b", driver="driver-b", pool="pool-b"))},
        "class class-a selector #0 rejects it",
    )
    sel_y = [{"cel": {"expression": 'device.attributes["driver-b"].model == "y"'}}]
    picky = problem(slices, [claim("claim-0", [req(cls="class-b", selectors=sel_y)])], classes=classes)
    assert_broken(
        picky,
        {"claim-0": alloc(res("req-0", "device-b", driver="driver-b", pool="pool-b"))},
        "request selector #0 rejects it",
    )


def test_failing_or_unavailable_cel_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    boom = [{"cel": {"expression": "boom"}}]
    prob = problem(ONE, [claim("claim-0", [req(selectors=boom)])])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "request selector #0 fails")
    import drasat.solver.verification.verifier as module
    from drasat.solver.cel import CelDevice

    monkeypatch.setattr(module, "_default_cel", lambda need=True: (None, CelDevice))
    problems = verify(problem(ONE, [claim("claim-0", [req()])]), {"claim-0": alloc(res("req-0", "device-1"))})
    assert any("cannot evaluate CEL" in p for p in problems)


def test_real_cel_engine() -> None:
    slices = [
        slice_(
            "slice-1",
            [
                dev("device-1", attributes={"model": {"string": "a100"}}),
                dev("device-2", attributes={"model": {"string": "l4"}}),
            ],
        )
    ]
    sel = [{"cel": {"expression": 'device.attributes["driver-a"].model == "a100"'}}]
    prob = problem(slices, [claim("claim-0", [req(selectors=sel)])])
    assert verify(prob, {"claim-0": alloc(res("req-0", "device-1"))}) == []
    assert any("rejects it" in p for p in verify(prob, {"claim-0": alloc(res("req-0", "device-2"))}))


def test_binding_conditions_need_the_gate_and_are_copied() -> None:
    slices = [slice_("slice-1", [dev("device-1", bindingConditions=["ready"], bindingFailureConditions=["failed"])])]
    prob = problem(slices, [claim("claim-0", [req()])])
    copied = res("req-0", "device-1", bindingConditions=["ready"], bindingFailureConditions=["failed"])
    assert_valid(prob, {"claim-0": alloc(copied)})
    assert_broken(
        prob, {"claim-0": alloc(res("req-0", "device-1"))}, "bindingConditions/bindingFailureConditions must be"
    )
    off = problem(slices, [claim("claim-0", [req()])], DRADeviceBindingConditions=False)
    assert_broken(off, {"claim-0": alloc(res("req-0", "device-1"))}, "has binding conditions, but")


# --- use of devices -------------------------------------------------------------------------


def test_allocated_devices_are_in_use_except_for_admin_access() -> None:
    taken = claim("allocated-0", [req("req-allocated")], results=[res("req-allocated", "device-1")])
    prob = problem(ONE, [claim("claim-0", [req()])], allocated=[taken])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-2"))})
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "is already allocated to another claim")
    admin = problem(ONE, [claim("claim-0", [req(adminAccess=True)])], allocated=[taken])
    assert_valid(admin, {"claim-0": alloc(res("req-0", "device-1", adminAccess=True))})
    admin_taken = claim(
        "allocated-0", [req("req-allocated")], results=[res("req-allocated", "device-1", adminAccess=True)]
    )
    assert_valid(
        problem(ONE, [claim("claim-0", [req()])], allocated=[admin_taken]), {"claim-0": alloc(res("req-0", "device-1"))}
    )


def test_exclusive_device_once_across_claims_admin_excepted() -> None:
    prob = problem(ONE, [claim("claim-0", [req()]), claim("claim-1", [req()])])
    assert_broken(
        prob,
        {"claim-0": alloc(res("req-0", "device-1")), "claim-1": alloc(res("req-0", "device-1"))},
        "allocated exclusively to several claims: ['claim-0', 'claim-1']",
    )
    mixed = problem(ONE, [claim("claim-0", [req(adminAccess=True)]), claim("claim-1", [req()])])
    assert_valid(
        mixed,
        {"claim-0": alloc(res("req-0", "device-1", adminAccess=True)), "claim-1": alloc(res("req-0", "device-1"))},
    )
    same = problem(ONE, [claim("claim-0", [req(adminAccess=True), req("req-1", adminAccess=True)])])
    assert_broken(
        same,
        {"claim-0": alloc(res("req-0", "device-1", adminAccess=True), res("req-1", "device-1", adminAccess=True))},
        "claim claim-0 gets exclusive device driver-a/pool-1/device-1 in several requests",
    )


def test_admin_access_result_field() -> None:
    prob = problem(ONE, [claim("claim-0", [req(adminAccess=True)]), claim("claim-1", [req(adminAccess=False)])])
    good = {"claim-0": alloc(res("req-0", "device-1", adminAccess=True)), "claim-1": alloc(res("req-0", "device-2"))}
    assert_valid(prob, good)
    assert_broken(prob, {**good, "claim-0": alloc(res("req-0", "device-1"))}, "adminAccess must be true")
    assert_broken(
        prob, {**good, "claim-1": alloc(res("req-0", "device-2", adminAccess=False))}, "adminAccess must be absent"
    )


# --- taints ---------------------------------------------------------------------------------


def test_taints_must_be_tolerated() -> None:
    taint = {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}
    slices = [
        slice_("slice-1", [dev("device-1", taints=[taint]), dev("device-2", taints=[{**taint, "effect": "None"}])])
    ]
    tol = [{"key": "example.com/broken", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}]
    prob = problem(slices, [claim("claim-0", [req()])])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "has taint example.com/broken=yes:NoSchedule")
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-2"))})
    tolerant = problem(slices, [claim("claim-0", [req(tolerations=tol)])])
    assert_valid(tolerant, {"claim-0": alloc(res("req-0", "device-1", tolerations=tol))})
    assert_broken(tolerant, {"claim-0": alloc(res("req-0", "device-1"))}, "tolerations must be a copy")
    off = problem(slices, [claim("claim-0", [req()])], DRADeviceTaints=False)
    assert_valid(off, {"claim-0": alloc(res("req-0", "device-1"))})


def test_device_taint_rules() -> None:
    rule = {
        "deviceSelector": {"driver": "driver-a", "device": "device-1"},
        "taint": {"key": "maintenance", "effect": "NoExecute"},
    }
    prob = problem(ONE, [claim("claim-0", [req()])], rules=[rule])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"))}, "has taint maintenance:NoExecute")
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-2"))})
    everything = problem(ONE, [claim("claim-0", [req()])], rules=[{"taint": {"key": "all", "effect": "NoSchedule"}}])
    assert_broken(everything, {"claim-0": alloc(res("req-0", "device-2"))}, "has taint all:NoSchedule")
    off = problem(ONE, [claim("claim-0", [req()])], rules=[rule], DRADeviceTaintRules=False)
    assert_valid(off, {"claim-0": alloc(res("req-0", "device-1"))})


# --- counters and compatibility groups ------------------------------------------------------


def _counter_pool(*devices: dict[str, Any], budget: str = "8Gi", driver: str = "driver-a") -> list[ResourceSlice]:
    counters = slice_(
        "counters",
        [],
        driver=driver,
        count=2,
        sharedCounters=[
            {"name": "gpu-0", "counters": {"memory": {"value": budget}}},
            {"name": "gpu-1", "counters": {"memory": {"value": budget}}},
        ],
    )
    return [counters, slice_("devices", list(devices), driver=driver, count=2)]


def _uses(amount: str, groups: list[str] | None = None, counter_set: str = "gpu-0") -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"counterSet": counter_set, "counters": {"memory": {"value": amount}}}
    if groups is not None:
        entry["compatibilityGroups"] = groups
    return [entry]


def test_counters_stay_within_budget() -> None:
    slices = _counter_pool(
        dev("part-1", consumesCounters=_uses("4Gi")),
        dev("part-2", consumesCounters=_uses("6Gi")),
        dev("part-3", consumesCounters=_uses("4Gi")),
    )
    prob = problem(slices, [claim("claim-0", [req(count=2)])])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "part-1"), res("req-0", "part-3"))})
    assert_broken(
        prob,
        {"claim-0": alloc(res("req-0", "part-1"), res("req-0", "part-2"))},
        "counter gpu-0/memory is over budget by 2147483648",
    )
    off = problem(slices, [claim("claim-0", [req()])], DRAPartitionableDevices=False)
    assert_broken(
        off, {"claim-0": alloc(res("req-0", "part-1"))}, "consumes counters, but DRAPartitionableDevices is off"
    )


def test_counters_include_allocations_on_other_nodes_and_over_commitment() -> None:
    counters = slice_(
        "a-counters",
        [],
        count=3,
        node=None,
        allNodes=True,
        sharedCounters=[
            {"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}},
            {"name": "gpu-1", "counters": {"memory": {"value": "8Gi"}}},
        ],
    )
    here = slice_(
        "b-here",
        [
            dev("part-1", consumesCounters=_uses("4Gi")),
            dev("part-3", consumesCounters=_uses("1Gi", counter_set="gpu-1")),
        ],
        count=3,
    )
    there = slice_("c-there", [dev("part-2", consumesCounters=_uses("6Gi"))], count=3, node="node-2")
    taken = claim("allocated-0", [req("r")], results=[res("r", "part-2")])
    prob = problem([counters, here, there], [claim("claim-0", [req()])], allocated=[taken])
    assert_broken(prob, {"claim-0": alloc(res("req-0", "part-1"))}, "counter gpu-0/memory is over budget")
    assert_valid(
        problem([counters, here, there], [claim("claim-0", [req()])]), {"claim-0": alloc(res("req-0", "part-1"))}
    )
    there_big = slice_("c-there", [dev("part-2", consumesCounters=_uses("9Gi"))], count=3, node="node-2")
    over = problem([counters, here, there_big], [claim("claim-0", [req()])], allocated=[taken])
    assert_broken(over, {"claim-0": alloc(res("req-0", "part-3"))}, "counter gpu-0/memory is over budget")


def test_counters_are_kept_per_driver_and_pool() -> None:
    slices = _counter_pool(dev("part-1", consumesCounters=_uses("6Gi"))) + [
        s.model_copy(update={"metadata": s.metadata.model_copy(update={"name": s.name + "-b"})})
        for s in _counter_pool(dev("part-1", consumesCounters=_uses("6Gi")), driver="driver-b")
    ]
    classes = [klass(), klass("class-b", "driver-b")]
    prob = problem(slices, [claim("claim-0", [req(), req("req-1", cls="class-b")])], classes=classes)
    assert_valid(prob, {"claim-0": alloc(res("req-0", "part-1"), res("req-1", "part-1", driver="driver-b"))})


def test_multi_allocatable_device_consumes_counters_once() -> None:
    slices = _counter_pool(dev("part-1", consumesCounters=_uses("6Gi"), allowMultipleAllocations=True))
    prob = problem(slices, [claim("claim-0", [req()]), claim("claim-1", [req()])])
    assert_valid(
        prob,
        {
            "claim-0": alloc(res("req-0", "part-1", shareID=UUID1)),
            "claim-1": alloc(res("req-0", "part-1", shareID=UUID2)),
        },
    )
    excl = problem(
        _counter_pool(dev("part-1", consumesCounters=_uses("6Gi"))),
        [claim("claim-0", [req(adminAccess=True)]), claim("claim-1", [req(adminAccess=True)])],
    )
    assert_broken(
        excl,
        {
            "claim-0": alloc(res("req-0", "part-1", adminAccess=True)),
            "claim-1": alloc(res("req-0", "part-1", adminAccess=True)),
        },
        "over budget",
    )


def test_compatibility_groups() -> None:
    slices = _counter_pool(
        dev("mig-1", consumesCounters=_uses("2Gi", ["mig"])),
        dev("mig-2", consumesCounters=_uses("2Gi", ["mig", "x"])),
        dev("vgpu-1", consumesCounters=_uses("2Gi", ["vgpu"])),
        dev("plain-1", consumesCounters=_uses("2Gi")),
        dev("plain-2", consumesCounters=_uses("2Gi")),
    )
    on = {"DRADeviceCompatibilityGroups": True}
    prob = problem(slices, [claim("claim-0", [req(count=2)])], **on)
    assert_valid(prob, {"claim-0": alloc(res("req-0", "mig-1"), res("req-0", "mig-2"))})
    assert_valid(prob, {"claim-0": alloc(res("req-0", "plain-1"), res("req-0", "plain-2"))})
    assert_broken(
        prob, {"claim-0": alloc(res("req-0", "mig-1"), res("req-0", "vgpu-1"))}, "share no compatibility group"
    )
    assert_broken(
        prob, {"claim-0": alloc(res("req-0", "mig-1"), res("req-0", "plain-1"))}, "with and without compatibility"
    )
    taken = claim("allocated-0", [req("r")], results=[res("r", "vgpu-1")])
    later = problem(slices, [claim("claim-0", [req()])], allocated=[taken], **on)
    assert_broken(later, {"claim-0": alloc(res("req-0", "mig-1"))}, "share no compatibility group")
    off = problem(slices, [claim("claim-0", [req(count=2)])])
    assert_broken(
        off,
        {"claim-0": alloc(res("req-0", "plain-1"), res("req-0", "plain-2"))},
        "pool driver-a/pool-1 is incomplete",
        "DRADeviceCompatibilityGroups is off",
    )
    empty = _counter_pool(
        dev("plain-1", consumesCounters=_uses("2Gi", [])), dev("plain-2", consumesCounters=_uses("2Gi"))
    )
    assert_valid(
        problem(empty, [claim("claim-0", [req(count=2)])]),
        {"claim-0": alloc(res("req-0", "plain-1"), res("req-0", "plain-2"))},
    )


# --- consumable capacity --------------------------------------------------------------------


def _shared(capacity: dict[str, Any], name: str = "device-1") -> dict[str, Any]:
    return dev(name, allowMultipleAllocations=True, capacity=capacity)


RANGE = {
    "memory": {"value": "10", "requestPolicy": {"default": "2", "validRange": {"min": "2", "max": "4", "step": "2"}}}
}


def test_shares_fit_in_capacity_and_record_rounded_amounts() -> None:
    slices = [slice_("slice-1", [_shared(RANGE)])]
    one = {"requests": {"memory": "3"}}
    prob = problem(slices, [claim("claim-0", [req(capacity=one)]), claim("claim-1", [req()])])
    good = {
        "claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "4"})),
        "claim-1": alloc(res("req-0", "device-1", shareID=UUID2, consumedCapacity={"memory": "2"})),
    }
    assert_valid(prob, good)
    assert_broken(
        prob,
        {**good, "claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "3"}))},
        "consumedCapacity is {memory: 3} but must be {memory: 4}",
    )
    taken = claim(
        "allocated-0", [req("r")], results=[res("r", "device-1", shareID=UUID1, consumedCapacity={"memory": "8"})]
    )
    full = problem(slices, [claim("claim-0", [req(capacity=one)])], allocated=[taken])
    assert_broken(
        full,
        {"claim-0": alloc(res("req-0", "device-1", shareID=UUID2, consumedCapacity={"memory": "4"}))},
        "its shares consume 12 of capacity memory",
    )


def test_capacity_policy_and_unknown_names() -> None:
    slices = [slice_("slice-1", [_shared(RANGE)])]
    big = problem(slices, [claim("claim-0", [req(capacity={"requests": {"memory": "6"}})])])
    assert_broken(
        big,
        {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "6"}))},
        "violates its request policy",
    )
    other = problem(slices, [claim("claim-0", [req(capacity={"requests": {"cores": "1"}})])])
    assert_broken(
        other,
        {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "2"}))},
        "has no capacity 'cores'",
    )
    values = {"memory": {"value": "4", "requestPolicy": {"default": "1", "validValues": ["1", "3"]}}}
    vv = problem(
        [slice_("slice-1", [_shared(values)])], [claim("claim-0", [req(capacity={"requests": {"memory": "2"}})])]
    )
    assert_valid(vv, {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "3"}))})


def test_fractional_range_rounding_follows_its_gate() -> None:
    fractional = {
        "memory": {
            "value": "2",
            "requestPolicy": {"default": "500m", "validRange": {"min": "500m", "max": "2", "step": "250m"}},
        }
    }
    slices = [slice_("slice-1", [_shared(fractional)])]
    ask = [claim("claim-0", [req(capacity={"requests": {"memory": "600m"}})])]
    milli = problem(slices, ask)  # DRAFractionalCapacityRange is on by default (1.37)
    assert_valid(
        milli, {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "750m"}))}
    )
    integer = problem(slices, ask, DRAFractionalCapacityRange=False)
    assert_valid(integer, {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "1"}))})
    assert_broken(
        integer,
        {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "750m"}))},
        "must be {memory: 1}",
    )


def test_no_policy_shares_consume_everything_and_exclusive_devices_filter() -> None:
    slices = [
        slice_("slice-1", [_shared({"memory": {"value": "2"}}), dev("device-2", capacity={"memory": {"value": "1"}})])
    ]
    prob = problem(slices, [claim("claim-0", [req()]), claim("claim-1", [req()])])
    assert_broken(
        prob,
        {
            "claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "2"})),
            "claim-1": alloc(res("req-0", "device-1", shareID=UUID2, consumedCapacity={"memory": "2"})),
        },
        "its shares consume 4 of capacity memory",
    )
    excl = problem(slices, [claim("claim-0", [req(capacity={"requests": {"memory": "2"}})])])
    assert_broken(excl, {"claim-0": alloc(res("req-0", "device-2"))}, "capacity memory needs 2 but only 1 is free")


def test_share_ids() -> None:
    slices = [slice_("slice-1", [dev("device-1", allowMultipleAllocations=True), dev("device-2")])]
    prob = problem(slices, [claim("claim-0", [req()]), claim("claim-1", [req()])])
    assert_valid(
        prob,
        {
            "claim-0": alloc(res("req-0", "device-1", shareID=UUID1)),
            "claim-1": alloc(res("req-0", "device-1", shareID=UUID2)),
        },
    )
    assert_broken(
        prob,
        {
            "claim-0": alloc(res("req-0", "device-1", shareID=UUID1.upper())),
            "claim-1": alloc(res("req-0", "device-2", shareID=UUID2)),
        },
        "must be a lower-case UUID",
        "shareID must be absent",
    )
    assert_broken(
        prob,
        {
            "claim-0": alloc(res("req-0", "device-1", shareID=UUID1)),
            "claim-1": alloc(res("req-0", "device-1", shareID=UUID1)),
        },
        "is already used",
    )
    off = problem(slices, [claim("claim-0", [req()]), claim("claim-1", [req()])], DRAConsumableCapacity=False)
    assert_broken(
        off,
        {"claim-0": alloc(res("req-0", "device-1")), "claim-1": alloc(res("req-0", "device-1"))},
        "allocated exclusively to several claims",
    )


# --- constraints ----------------------------------------------------------------------------


def _attr_slice(key: str, *values: dict[str, Any]) -> list[ResourceSlice]:
    return [
        slice_("slice-1", [dev(f"device-{i + 1}", attributes={key: v}) for i, v in enumerate(values)] + [dev("bare")])
    ]


def test_match_attribute_scalar() -> None:
    slices = _attr_slice("numa", {"int": 1}, {"int": 1}, {"int": 2})
    match = [{"matchAttribute": "driver-a/numa"}]
    prob = problem(slices, [claim("claim-0", [req(count=2)], constraints=match)])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-2"))})
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-3"))}, "the values differ")
    assert_broken(prob, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "bare"))}, "lack the attribute")


def test_match_attribute_list_mode_needs_a_common_value() -> None:
    slices = _attr_slice(
        "links",
        {"strings": ["v1", "v2"]},
        {"strings": ["v2", "v3"]},
        {"strings": ["v3", "v1"]},
        {"strings": ["v2", "v4"]},
    )
    match = [{"matchAttribute": "driver-a/links"}]
    on = problem(slices, [claim("claim-0", [req(count=3)], constraints=match)], DRAListTypeAttributes=True)
    assert_broken(on, {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in (1, 2, 3)))}, "no value is common")
    assert_valid(on, {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in (1, 2, 4)))})
    off = problem(slices, [claim("claim-0", [req(count=3)], constraints=match)])
    assert_broken(off, {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in (1, 2, 4)))}, "list value cannot match")


def test_distinct_attribute_is_pairwise_over_all_devices() -> None:
    slices = _attr_slice("numa", {"int": 1}, {"int": 2}, {"int": 1}, {"int": 3})
    distinct = [{"distinctAttribute": "driver-a/numa"}]
    prob = problem(slices, [claim("claim-0", [req(count=3)], constraints=distinct)])
    assert_valid(prob, {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in (1, 2, 4)))})
    assert_broken(
        prob, {"claim-0": alloc(*(res("req-0", f"device-{i}") for i in (1, 2, 3)))}, "two devices share the value 1"
    )
    multi = [slice_("slice-1", [dev("device-1", allowMultipleAllocations=True, attributes={"numa": {"int": 1}})])]
    twice = problem(multi, [claim("claim-0", [req(), req("req-1")], constraints=distinct)])
    assert_broken(
        twice,
        {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1), res("req-1", "device-1", shareID=UUID2))},
        "two devices share the value 1",
    )
    lists = _attr_slice("links", {"strings": ["v1", "v2"]}, {"strings": ["v2", "v3"]}, {"strings": ["v3", "v4"]})
    on = problem(
        lists,
        [claim("claim-0", [req(count=2)], constraints=[{"distinctAttribute": "driver-a/links"}])],
        DRAListTypeAttributes=True,
    )
    assert_valid(on, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-3"))})
    assert_broken(on, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-2"))}, "share the value ['v2']")


def test_constraint_scope_follows_its_request_list() -> None:
    slices = _attr_slice("numa", {"int": 1}, {"int": 2}, {"int": 1})
    match = [{"matchAttribute": "driver-a/numa", "requests": ["req-0"]}]
    prob = problem(slices, [claim("claim-0", [req(count=2), req("req-1")], constraints=match)])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-3"), res("req-1", "device-2"))})
    assert_broken(
        prob,
        {"claim-0": alloc(res("req-0", "device-1"), res("req-0", "device-2"), res("req-1", "device-3"))},
        "constraint #0 (matchAttribute driver-a/numa) is broken",
    )


# --- allocation mode All --------------------------------------------------------------------


def test_all_mode_takes_exactly_the_matching_devices() -> None:
    slices = ONE + [slice_("slice-b", [dev("device-b")], driver="driver-b", pool="pool-b")]
    prob = problem(slices, [claim("claim-0", [req(allocationMode="All")])])
    every = [res("req-0", f"device-{i}") for i in (1, 2, 3)]
    assert_valid(prob, {"claim-0": alloc(*every)})
    assert_broken(prob, {"claim-0": alloc(*every[:2])}, "lacks ['driver-a/pool-1/device-3']")
    assert_broken(prob, {"claim-0": alloc(*every, every[0])}, "gets device driver-a/pool-1/device-1 2 times")
    assert_broken(
        prob,
        {"claim-0": alloc(*every, res("req-0", "device-b", driver="driver-b", pool="pool-b"))},
        "which are not among them",
    )
    broken_pool = slices + [slice_("slice-z", [dev("z")], driver="driver-z", count=2)]
    assert_broken(
        problem(broken_pool, [claim("claim-0", [req(allocationMode="All")])]),
        {"claim-0": alloc(*every)},
        "asks for all devices, but resource pool driver-z/pool-1 is incomplete",
    )


def test_all_mode_capacity_prefilter_and_in_use() -> None:
    slices = [slice_("slice-1", [_shared({"memory": {"value": "2"}}), dev("device-2")])]
    cap = {"requests": {"memory": "2"}}
    prob = problem(slices, [claim("claim-0", [req(allocationMode="All", capacity=cap)])])
    assert_valid(prob, {"claim-0": alloc(res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "2"}))})
    taken = claim("allocated-0", [req("r")], results=[res("r", "device-2")])
    busy = problem(slices, [claim("claim-0", [req(allocationMode="All")])], allocated=[taken])
    assert_broken(
        busy,
        {
            "claim-0": alloc(
                res("req-0", "device-1", shareID=UUID1, consumedCapacity={"memory": "2"}), res("req-0", "device-2")
            )
        },
        "device-2 is already allocated",
    )


# --- node selector and configuration --------------------------------------------------------


def test_node_selector_of_the_result() -> None:
    region = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]
    }
    planet = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "planet", "operator": "In", "values": ["earth"]}]}]}
    slices = [
        slice_("s-1", [dev("device-1")], pool="p-1", node=None, nodeSelector=region),
        slice_("s-2", [dev("device-2")], pool="p-2", node=None, nodeSelector=planet),
        slice_("s-3", [dev("device-3")], pool="p-3", node=None, allNodes=True),
        slice_("s-4", [dev("device-4", bindsToNode=True)], pool="p-4", node=None, allNodes=True),
    ]
    prob = problem(slices, [claim("claim-0", [req(count=2)])])
    both = {
        "nodeSelectorTerms": [
            {
                "matchExpressions": region["nodeSelectorTerms"][0]["matchExpressions"]
                + planet["nodeSelectorTerms"][0]["matchExpressions"]
            }
        ]
    }
    pair = [res("req-0", "device-1", pool="p-1"), res("req-0", "device-2", pool="p-2")]
    assert_valid(prob, {"claim-0": alloc(*pair, node_selector=both)})
    assert_broken(prob, {"claim-0": alloc(*pair, node_selector=region)}, "nodeSelector is")
    loose = [res("req-0", "device-3", pool="p-3"), res("req-0", "device-1", pool="p-1")]
    assert_valid(prob, {"claim-0": alloc(*loose, node_selector=region)})
    one = problem(slices, [claim("claim-0", [req()])])
    assert_valid(one, {"claim-0": alloc(res("req-0", "device-3", pool="p-3"), node_selector=None)})
    assert_valid(one, {"claim-0": alloc(res("req-0", "device-4", pool="p-4"))})
    assert_broken(
        one, {"claim-0": alloc(res("req-0", "device-4", pool="p-4"), node_selector=None)}, "nodeSelector is None"
    )
    two_terms = {"nodeSelectorTerms": region["nodeSelectorTerms"] + planet["nodeSelectorTerms"]}
    odd = problem(
        [slice_("s-5", [dev("device-5")], pool="p-5", node=None, nodeSelector=two_terms)], [claim("claim-0", [req()])]
    )
    assert_broken(
        odd,
        {"claim-0": alloc(res("req-0", "device-5", pool="p-5"), node_selector=two_terms)},
        "unsupported ResourceSlice.NodeSelector with 2 terms",
    )
    stamped = AllocationResult.model_validate(
        {
            **alloc(res("req-0", "device-3", pool="p-3"), node_selector=None).to_api(),
            "allocationTimestamp": "2026-01-01T00:00:00Z",
        }
    )
    assert_valid(one, {"claim-0": stamped})  # kube-scheduler stamps it with the binding gates on (the default)
    gates_off = problem(one.slices, one.claims, DRADeviceBindingConditions=False)
    assert_broken(gates_off, {"claim-0": stamped}, "allocationTimestamp is set")


def test_config_from_class_and_claim() -> None:
    opaque = {"opaque": {"driver": "driver-a", "parameters": {"mode": "fast"}}}
    classes = [klass(config=[opaque])]
    fa = {
        "name": "req-1",
        "firstAvailable": [
            {"name": "sub-0", "deviceClassName": "class-a"},
            {"name": "sub-1", "deviceClassName": "class-a"},
        ],
    }
    claim_cfg = [{"requests": ["req-1/sub-0"], **opaque}, {"requests": ["req-1/sub-1"], **opaque}]
    prob = problem(ONE, [claim("claim-0", [req(), fa], config=claim_cfg)], classes=classes)
    results = [res("req-0", "device-1"), res("req-1/sub-0", "device-2")]
    good = [{"source": "FromClass", **opaque}, {"source": "FromClaim", "requests": ["req-1/sub-0"], **opaque}]
    assert_valid(prob, {"claim-0": alloc(*results, config=good)})
    assert_broken(prob, {"claim-0": alloc(*results)}, "devices.config is")
    extra = good + [{"source": "FromClaim", "requests": ["req-1/sub-1"], **opaque}]
    assert_broken(prob, {"claim-0": alloc(*results, config=extra)}, "devices.config is")


def test_check_or_raise() -> None:
    prob = problem(
        [slice_("slice-1", [dev("device-1")])],
        [claim("claim-0", [req()])],
        classes=[
            DeviceClass.model_validate({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "class-a"}})
        ],
    )
    check_or_raise(prob, {"claim-0": alloc(res("req-0", "device-1"))})
    with pytest.raises(AssertionError, match="is not visible"):
        check_or_raise(prob, {"claim-0": alloc(res("req-0", "device-1", pool="pool-x"))})


MIXED_SET = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: d.example.com
  nodeName: node-1
  pool: {name: p, generation: 1, resourceSliceCount: 2}
  sharedCounters: [{name: mem, counters: {gib: {value: "10"}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: devices}
spec:
  driver: d.example.com
  nodeName: node-1
  pool: {name: p, generation: 1, resourceSliceCount: 2}
  devices:
  - {name: plain, allowMultipleAllocations: true, consumesCounters: [{counterSet: mem, counters: {gib: {value: "1"}}}]}
  - {name: mig, allowMultipleAllocations: true,
     consumesCounters: [{counterSet: mem, counters: {gib: {value: "1"}}, compatibilityGroups: [mig]}]}
  - {name: mig-2, consumesCounters: [{counterSet: mem, counters: {gib: {value: "1"}}, compatibilityGroups: [mig]}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: any}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: already, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: any, count: 2}}]}}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: d.example.com, pool: p, device: plain, shareID: 11111111-1111-1111-1111-111111111111}
      - {request: r, driver: d.example.com, pool: p, device: mig, shareID: 22222222-2222-2222-2222-222222222222}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: new, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: any, count: 2}}]}}
"""


@pytest.mark.parametrize(
    "devices, broken",
    [
        (["plain", "mig"], False),  # later shares of devices in use draw no counters: the old mix is not this claim's
        (["plain", "mig-2"], True),  # mig-2 draws from a set whose users mix groups: this allocation breaks the rule
    ],
)
def test_compatibility_groups_judge_only_what_this_allocation_draws(devices: list[str], broken: bool) -> None:
    from drasat.models.loader import load_text
    from drasat.solver.allocation.problem import problem_from_objects

    problem = problem_from_objects(
        list(load_text(MIXED_SET)),
        node="node-1",
        claims=["new"],
        features=Features.parse("DRADeviceCompatibilityGroups=true"),
    )
    results = [{"request": "r", "driver": "d.example.com", "pool": "p", "device": d} for d in devices]
    for i, result in enumerate(results):
        if result["device"] != "mig-2":
            result["shareID"] = f"3333333{i}-3333-3333-3333-333333333333"
    allocation = AllocationResult.model_validate(
        {
            "devices": {"results": results},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        }
    )
    problems = verify(problem, {"default/new": allocation})
    assert len(problems) == broken and all("devices with and without compatibility groups" in p for p in problems), (
        problems
    )
