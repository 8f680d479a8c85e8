"""drasat explain's funnel: every reason a device is not a candidate is named exactly (issue 12).

Each test builds the one situation by hand, asks for more GPUs than remain, and checks the
step that names the cause — which selector, node selection, pool, taint and rule, claim,
counter set with what is left, capacity, or feature gate.
"""

from __future__ import annotations

import pytest

from drasat.models.errors import AllocationError, Unschedulable
from drasat.solver import allocate
from drasat.solver.explanation.explain import Explanation, explain

from .explain_inputs import assert_choice_verifies, claim, gpus, held, problem, steps


def slice_(
    name: str, devices: str, pool: str, placement: str = "nodeName: node-1", extra: str = "", count: int = 1
) -> str:
    return (
        f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: {name}}}\n"
        f"spec: {{driver: gpu.example.com, {placement}, pool: {{name: {pool}, generation: 1, "
        f"resourceSliceCount: {count}}}, devices: [{devices}]{', ' + extra if extra else ''}}}\n"
    )


def short(found: Explanation) -> None:
    """The one request, of claim d/big, is named as the cause."""
    assert not found.feasible and found.short_requests == ["claim d/big, request gpu"], found.summary()


def test_class_selector_names_the_class_and_its_expression() -> None:
    found = explain(problem(claim("big", gpus(5))))
    short(found)
    assert steps(found) == {
        'not selected by class gpu, selector #0 (device.driver == "gpu.example.com")': ["nic.example.com/node-1/nic-0"]
    }


def test_request_selector_is_told_apart_from_the_class() -> None:
    found = explain(
        problem(
            claim(
                "big", gpus(3, extra="selectors: [{cel: {expression: 'device.attributes[\"example.com\"].numa == 0'}}]")
            )
        )
    )
    short(found)
    assert steps(found)['not selected by the request\'s selector #0 (device.attributes["example.com"].numa == 0)'] == [
        "gpu.example.com/node-1/gpu-2",
        "gpu.example.com/node-1/gpu-3",
    ]


def test_slice_node_selection_names_the_slice_and_selector() -> None:
    remote = slice_(
        "remote",
        "{name: gpu-9}",
        "rack-9",
        "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r9]}]}]}",
    )
    found = explain(problem(remote, claim("big", gpus(5))))
    short(found)
    assert steps(found)["in slice remote, whose nodeSelector (rack In r9) does not match node node-1"] == [
        "gpu.example.com/rack-9/gpu-9"
    ]
    assert found.funnel[0].offered == 6  # four GPUs, the NIC, the remote GPU


def test_device_node_selection_names_the_device_placement() -> None:
    per_device = slice_("spread", "{name: gpu-7, nodeName: node-2}", "spread", "perDeviceNodeSelection: true")
    found = explain(problem(per_device, claim("big", gpus(5))))
    short(found)
    assert steps(found)["not on this node: the device is on node node-2"] == ["gpu.example.com/spread/gpu-7"]


def test_incomplete_pool_names_the_pool_and_what_is_missing() -> None:
    found = explain(problem(slice_("half", "{name: gpu-h}", "half", count=2), claim("big", gpus(5))))
    short(found)
    assert steps(found)[
        "in pool gpu.example.com/half, incomplete: 1 slice(s) of generation 1 published, resourceSliceCount says 2"
    ] == ["gpu.example.com/half/gpu-h"]


def test_a_slice_of_an_older_generation_names_the_newer_one() -> None:
    old = slice_("old", "{name: gpu-o}", "moving")
    new = slice_("new", "{name: gpu-n}", "moving", count=2).replace("generation: 1", "generation: 2")
    found = explain(problem(old, new, claim("big", gpus(5))))
    short(found)
    assert steps(found)["in slice old, of generation 1 of pool gpu.example.com/moving: generation 2 replaces it"] == [
        "gpu.example.com/moving/gpu-o"
    ]
    assert steps(found)[
        "in pool gpu.example.com/moving, incomplete: 1 slice(s) of generation 2 published, resourceSliceCount says 2"
    ] == ["gpu.example.com/moving/gpu-n"]


def test_a_capacity_policy_refusal_names_the_policy() -> None:
    policy = SHARED.replace(
        "capacity: {memory: {value: 10Gi}}",
        "capacity: {memory: {value: 10Gi, requestPolicy: {default: 1Gi, validValues: [1Gi, 2Gi]}}}",
    )
    big = claim("big", gpus(5, extra="capacity: {requests: {memory: 3Gi}}"))
    found = explain(problem(policy, big))
    short(found)
    assert steps(found)[
        "capacity request memory=3Gi breaks the device's requestPolicy (default 1Gi; validValues 1Gi, 2Gi)"
    ] == ["gpu.example.com/shared/vgpu"]


def test_invalid_pool_is_kubernetes_error_in_explain_as_in_allocate_and_the_funnel_names_it() -> None:
    """Kubernetes refuses an invalid pool: explain answers as solve does (exit 2); the funnel alone
    (the library's explanation of the refusal) still names the pool and why."""
    from drasat.solver.allocation.planning.claims import plan_claims
    from drasat.solver.allocation.planning.inventory import build_inventory
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.explanation.explain import explain_funnel

    # two slices of one pool publish gpu-x: each slice alone is one the API server stores (one slice listing it
    # twice would not be, and solve refuses that with validate's message before any allocator sees it)
    twice = [slice_(f"twice-{part}", "{name: gpu-x}", "twice", count=2) for part in "ab"]
    p = problem(*twice, claim("big", gpus(5)))
    message = (
        "invalid resource pools were encountered: gpu.example.com/twice (device name gpu-x is not unique in the pool)"
    )
    for answer in (allocate, explain):
        with pytest.raises(AllocationError) as refused:
            answer(p)
        assert str(refused.value) == message
    inv = build_inventory(p)
    ev = SelectorEvaluator()
    found = explain_funnel(p, inv, plan_claims(p, inv, ev), ev)
    short(found)
    assert steps(found)["in pool gpu.example.com/twice, invalid: device name gpu-x is not unique in the pool"]


def test_taint_names_the_taint_and_the_rule() -> None:
    rule = (
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: drain-gpu-0}\n"
        "spec: {deviceSelector: {device: gpu-0}, taint: {key: maintenance, value: planned, effect: NoSchedule}}\n"
    )
    found = explain(problem(rule, claim("big", gpus(4))))
    short(found)
    assert steps(found)[
        "has taint maintenance=planned:NoSchedule that the request does not tolerate (from DeviceTaintRule drain-gpu-0)"
    ] == ["gpu.example.com/node-1/gpu-0"]


def test_in_use_names_the_claim_and_releasing_it_is_the_fix() -> None:
    found = explain(problem(held("trainer", "gpu-0", "gpu-1"), claim("big", gpus(3))))
    short(found)
    assert steps(found)["already allocated to claim d/trainer"] == [
        "gpu.example.com/node-1/gpu-0",
        "gpu.example.com/node-1/gpu-1",
    ]
    assert [f.text for f in found.fixes] == [
        "claim d/big, request gpu: count 2 fits (it asks 3)",
        "releasing claim d/trainer (deallocating it) makes them fit",
    ]


PARTITIONS = (
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: parts-counters}\n"
    "spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: big-gpu, generation: 1, "
    "resourceSliceCount: 2}, sharedCounters: [{name: memory, counters: {gib: {value: 40Gi}}}]}\n"
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: parts}\n"
    "spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: big-gpu, generation: 1, "
    "resourceSliceCount: 2}, devices: ["
    "{name: half-0, consumesCounters: [{counterSet: memory, counters: {gib: {value: 24Gi}}}]}, "
    "{name: half-1, consumesCounters: [{counterSet: memory, counters: {gib: {value: 24Gi}}}]}]}\n"
)


def test_counters_exhausted_name_the_set_and_what_is_left() -> None:
    found = explain(problem(PARTITIONS, held("first", "half-0", pool="big-gpu"), claim("big", gpus(5))))
    short(found)
    assert steps(found)[
        "counter set memory of pool gpu.example.com/big-gpu has 16Gi of gib left, the device needs 24Gi"
    ] == ["gpu.example.com/big-gpu/half-1"]


SHARED = (
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: shared}\n"
    "spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: shared, generation: 1, "
    "resourceSliceCount: 1}, devices: [{name: vgpu, allowMultipleAllocations: true, "
    "capacity: {memory: {value: 10Gi}}}]}\n"
)


def test_capacity_exhausted_names_the_capacity_and_what_is_free() -> None:
    first = (
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: first, namespace: d}\n"
        "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}\n"
        "status: {allocation: {devices: {results: [{request: g, driver: gpu.example.com, pool: shared, "
        "device: vgpu, shareID: 123e4567-e89b-12d3-a456-426614174000, consumedCapacity: {memory: 8Gi}}]}}}\n"
    )
    big = claim("big", gpus(5, extra="capacity: {requests: {memory: 4Gi}}"))
    found = explain(problem(SHARED, first, big))
    short(found)
    assert steps(found)["capacity memory exhausted: 2Gi of 10Gi free, the request takes 4Gi"] == [
        "gpu.example.com/shared/vgpu"
    ]


def test_a_gate_that_dropped_a_field_is_named_and_turning_it_on_is_the_fix() -> None:
    """derivedAttributes is dropped with DRADerivedAttributes off (its default): the constraint then sees
    the devices' own attribute, which two GPUs on different NUMA nodes do not share."""
    derived = "derivedAttributes: [{name: example.com/socket, expression: '\"one\"'}]"
    pair = claim("pair", f"{gpus(3, extra=derived)}", "{requests: [gpu], matchAttribute: example.com/socket}")
    p = problem(pair)
    try:
        allocate(p)
    except Unschedulable as exc:
        found = explain(p, proven=exc)
    else:
        raise AssertionError("without its derived attribute the constraint cannot hold")
    assert any("DRADerivedAttributes feature gate is disabled" in line for line in found.summary())
    assert not found.feasible and "DRADerivedAttributes" in found.funnel[0].notes[0]
    gate = [f for f in found.fixes if f.kind == "gate"]
    assert [f.data for f in gate] == [{"featureGate": "DRADerivedAttributes", "fits": True}]
    on = problem(pair, gates={"DRADerivedAttributes": True})
    assert_choice_verifies(on, explain(on))


def test_a_gate_that_dropped_a_slice_is_named() -> None:
    found = explain(problem(PARTITIONS, claim("big", gpus(6)), gates={"DRAPartitionableDevices": False}))
    short(found)
    step = next(s for f in found.funnel for s in f.steps if s.gate)
    assert step.gate == "DRAPartitionableDevices" and step.reason == (
        "consumes counters, but DRAPartitionableDevices is disabled"
    )
    assert step.devices == ["gpu.example.com/big-gpu/half-0", "gpu.example.com/big-gpu/half-1"]
    assert [f.data for f in found.fixes if f.kind == "gate"] == [
        {"featureGate": "DRAPartitionableDevices", "fits": False}
    ]


def test_a_shared_device_held_while_consumable_capacity_is_off_names_the_gate() -> None:
    first = held("first", "vgpu", pool="shared").replace(
        "device: vgpu}", "device: vgpu, shareID: 123e4567-e89b-12d3-a456-426614174000}"
    )
    found = explain(problem(SHARED, first, claim("big", gpus(5)), gates={"DRAConsumableCapacity": False}))
    short(found)
    (step,) = [s for s in found.funnel[0].steps if s.gate]
    assert step.gate == "DRAConsumableCapacity" and step.reason == (
        "already allocated to claim d/first (the device allows multiple allocations, but DRAConsumableCapacity is "
        "disabled)"
    )
    assert [f.data for f in found.fixes if f.kind == "gate"] == [{"featureGate": "DRAConsumableCapacity", "fits": True}]
    assert "releasing claim d/first (deallocating it) makes them fit" in [f.text for f in found.fixes]


def test_list_valued_attributes_with_their_gate_off_are_named_in_the_conflict() -> None:
    lists = (
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: lists}\n"
        "spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: lists, generation: 1, resourceSliceCount: 1}, "
        "devices: [{name: l-0, attributes: {example.com/roots: {ints: [1, 2]}}}, "
        "{name: l-1, attributes: {example.com/roots: {ints: [2, 3]}}}]}\n"
    )
    only = 'selectors: [{cel: {expression: \'"roots" in device.attributes["example.com"]\'}}]'
    pair = claim("pair", gpus(2, extra=only), "{requests: [gpu], matchAttribute: example.com/roots}")
    found = explain(problem(lists, pair))
    assert not found.feasible and not found.short_requests, found.summary()
    assert found.conflict[0].endswith(
        "some candidates' values are lists, which constraints compare only with DRAListTypeAttributes (disabled)"
    )
    assert [f.data for f in found.fixes if f.kind == "gate"] == [{"featureGate": "DRAListTypeAttributes", "fits": True}]


def test_placement_is_checked_before_the_gate_that_drops_a_slice() -> None:
    """A slice on another node is not here whatever the gate: the gate is neither the cause nor a fix."""
    per_device = slice_("spread", "{name: gpu-7, nodeName: node-2}", "spread", "perDeviceNodeSelection: true")
    remote = slice_(
        "remote-parts",
        "{name: part-9}",
        "rack-9",
        "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r9]}]}]}",
    )
    found = explain(problem(per_device, remote, claim("big", gpus(5)), gates={"DRAPartitionableDevices": False}))
    short(found)
    assert steps(found)["not on this node: the device is on node node-2"] == ["gpu.example.com/spread/gpu-7"]
    assert steps(found)["in slice remote-parts, whose nodeSelector (rack In r9) does not match node node-1"] == [
        "gpu.example.com/rack-9/part-9"
    ]
    assert not [s for f in found.funnel for s in f.steps if s.gate and "spread" in s.reason + "".join(s.devices)]
    assert "DRAPartitionableDevices" not in [f.data.get("featureGate") for f in found.fixes]


def _step(found: Explanation, start: str) -> dict[str, object]:
    return next(s.to_data() for s in found.funnel[0].steps if s.reason.startswith(start))


def test_funnel_steps_carry_what_they_name_as_fields_and_short_requests_are_data() -> None:
    """-o json and the fixes read the holder, the counter set and the taint rule as fields, not sentences."""
    rule = (
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: drain}\n"
        "spec: {deviceSelector: {device: gpu-3}, taint: {key: maintenance, effect: NoSchedule}}\n"
    )
    found = explain(
        problem(
            PARTITIONS, rule, held("first", "half-0", pool="big-gpu"), held("trainer", "gpu-0"), claim("big", gpus(5))
        )
    )
    short(found)
    assert found.to_data()["shortRequests"] == [{"claim": "d/big", "request": "gpu"}]
    assert _step(found, "already allocated to claim d/trainer")["claim"] == "d/trainer"
    assert _step(found, "counter set memory")["counterSet"] == "gpu.example.com/big-gpu/memory"
    taint = _step(found, "has taint")
    assert (taint["taint"], taint["taintRule"]) == ("maintenance:NoSchedule", "drain")  # as kubectl prints it
    assert str(taint["reason"]).startswith("has taint maintenance:NoSchedule that the request does not tolerate")
