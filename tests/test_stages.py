"""Each engine stage on its own: capacity rounding, node selectors, constraint labels, inventory, classes."""

from __future__ import annotations

from fractions import Fraction

import pytest

from drasat.models.errors import AllocationError
from drasat.models.meta import NodeSelector
from drasat.models.quantity import Quantity
from drasat.models.resource import DeviceAttribute, DeviceCapacity, DeviceClass, ResourceClaim, ResourceSlice
from drasat.solver import Features, NodeInfo, Problem
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.constraints import distinct_holds, labels, match_holds
from drasat.solver.allocation.planning.equivalence import equivalence_classes
from drasat.solver.allocation.planning.inventory import build_inventory
from drasat.solver.allocation.planning.node_selectors import reaches, selector_matches
from drasat.solver.allocation.planning.pools import in_use_state
from drasat.solver.allocation.planning.rounding import consumed_amount, share_of, violates
from drasat.solver.allocation.rules.base import RuleContext
from drasat.solver.cel import SelectorEvaluator

RANGE = {"value": "10", "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}


def capacity(spec: dict) -> DeviceCapacity:
    return DeviceCapacity.model_validate(spec)


@pytest.mark.parametrize(
    "spec, asked, consumed, bad",
    [
        (RANGE, None, 2, False),
        (RANGE, "1", 2, False),
        (RANGE, "3", 4, False),
        (RANGE, "6", 6, True),
        ({"value": "4", "requestPolicy": {"default": "1", "validValues": ["1", "3"]}}, "2", 3, False),
        ({"value": "4", "requestPolicy": {"default": "1", "validValues": ["1", "2"]}}, "3", 3, True),
        ({"value": "2"}, None, 2, False),
        ({"value": "2"}, "1", 1, False),
        ({"value": "4", "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2"}}}, "500m", 2, False),
    ],
)
def test_capacity_rounding_follows_kubernetes(spec, asked, consumed, bad):
    cap = capacity(spec)
    amount = consumed_amount(None if asked is None else Quantity.parse(asked).value, cap)
    assert amount == consumed and violates(amount, cap) is bad


def test_unknown_capacity_in_request_makes_device_unusable():
    assert share_of({"bw": capacity({"value": "10"})}, {"other": Quantity.parse("1")}) is None
    assert share_of({"bw": capacity({"value": "10"})}, {"bw": Quantity.parse("1Ki")}) == {"bw": Fraction(1024)}


NODE = NodeInfo("node-1", {"region": "r1", "gpus": "8"})


@pytest.mark.parametrize(
    "selector, expected",
    [
        ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["r1"]}]}]}, True),
        (
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["r1"]}]}]},
            False,
        ),
        ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["4"]}]}]}, True),
        ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}]}, True),
        (
            {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]},
                    {"matchExpressions": [{"key": "region", "operator": "Exists"}]},
                ]
            },
            True,
        ),
        ({"nodeSelectorTerms": [{}]}, False),
    ],
)
def test_node_selectors(selector, expected):
    assert selector_matches(NODE, NodeSelector.model_validate(selector)) is expected


def test_node_selector_parse_error_is_an_allocation_error():
    from drasat.solver.allocation.planning.node_selectors import checked_reaches

    bad = NodeSelector.model_validate(
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": []}]}]}
    )
    with pytest.raises(AllocationError, match="failed to perform node selection for slice s"):
        checked_reaches(NODE, "slice s", None, None, bad)
    assert reaches(NODE, "node-1", None, None) and not reaches(NODE, None, None, None)


def attr(**value) -> DeviceAttribute:
    return DeviceAttribute.model_validate(value)


def test_match_labels_scalar_and_set_mode():
    a, b = labels(attr(string="x"), "match", False), labels(attr(string="x"), "match", False)
    assert match_holds([a, b]) and not match_holds([a, labels(attr(int=1), "match", False)])
    lone = labels(attr(strings=["x", "y"]), "match", False)
    assert match_holds([lone]) and not match_holds([lone, a])  # lists never match a second device
    s1, s2 = labels(attr(strings=["v1", "v2"]), "match", True), labels(attr(strings=["v2", "v3"]), "match", True)
    s3 = labels(attr(strings=["v3", "v1"]), "match", True)
    assert match_holds([s1, s2]) and not match_holds([s1, s2, s3])  # all must share one value
    assert labels(None, "match", True) is None


def test_distinct_labels_are_pairwise():
    one, two = labels(attr(int=1), "distinct", False), labels(attr(int=2), "distinct", False)
    assert distinct_holds([one, two]) and not distinct_holds([one, two, labels(attr(int=1), "distinct", False)])
    assert distinct_holds([one, labels(attr(string="1"), "distinct", False)])  # types never collide
    s1, s3 = labels(attr(strings=["a", "b"]), "distinct", True), labels(attr(strings=["c"]), "distinct", True)
    assert distinct_holds([s1, s3]) and not distinct_holds([s1, labels(attr(string="b"), "distinct", True)])


def slice_(name: str, pool: str, devices: list[dict], count: int = 1, generation: int = 1, **spec) -> ResourceSlice:
    return ResourceSlice.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": "d",
                "nodeName": "node-1",
                "devices": devices,
                "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                **spec,
            },
        }
    )


def problem(slices, claims=(), allocated=(), **gates) -> Problem:
    cls = DeviceClass.model_validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}}
    )
    return Problem(NODE, slices, [cls], list(claims), list(allocated), features=Features.from_mapping(gates))


def test_inventory_order_pools_by_name_binding_conditions_last_slices_by_name():
    slices = [
        slice_("z", "pool-b", [{"name": "b1"}]),
        slice_("y", "pool-a", [{"name": "a1"}]),
        slice_("x", "pool-0", [{"name": "c1", "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]}]),
        slice_("s2", "pool-c", [{"name": "c-second"}], count=2),
        slice_("s1", "pool-c", [{"name": "c-first"}], count=2),
    ]
    inv = build_inventory(problem(slices))
    assert [d.name for d in inv.devices] == ["a1", "b1", "c-first", "c-second", "c1"]


def test_incomplete_obsolete_and_invalid_pools():
    slices = [
        slice_("a", "incomplete", [{"name": "x"}], count=2),
        slice_("b", "dup", [{"name": "same"}], count=2),
        slice_("c", "dup", [{"name": "same"}], count=2),
        slice_("d", "old", [{"name": "o"}], count=2, generation=1),
        slice_("e", "old", [{"name": "n"}], count=2, generation=2, nodeName="node-2"),
    ]
    inv = build_inventory(problem(slices))
    states = {p.key[1]: p.state for p in inv.pools}
    assert states == {"incomplete": "incomplete", "dup": "invalid"} and inv.devices == []


def claim(name: str, count: int = 1, constraint: dict | None = None, results: list | None = None) -> ResourceClaim:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {
            "devices": {
                "requests": [{"name": "r", "exactly": {"deviceClassName": "any", "count": count}}],
                "constraints": [constraint] if constraint else [],
            }
        },
    }
    if results is not None:
        body["status"] = {"allocation": {"devices": {"results": results}}}
    return ResourceClaim.model_validate(body)


def test_in_use_state_admin_shares_and_gate():
    held = claim(
        "held",
        results=[
            {"request": "r", "driver": "d", "pool": "p", "device": "a"},
            {"request": "r", "driver": "d", "pool": "p", "device": "b", "adminAccess": True},
            {
                "request": "r",
                "driver": "d",
                "pool": "p",
                "device": "c",
                "shareID": "123e4567-e89b-12d3-a456-426614174000",
                "consumedCapacity": {"bw": "2"},
            },
        ],
    )
    on = in_use_state([held], Features())
    assert on.exclusive == {("d", "p", "a")} and on.capacity == {("d", "p", "c"): {"bw": Fraction(2)}}
    off = in_use_state([held], Features.from_mapping({"DRAConsumableCapacity": False}))
    assert off.exclusive == {("d", "p", "a"), ("d", "p", "c")} and not off.capacity


def test_equivalence_classes_merge_interchangeable_devices_only():
    devices = [{"name": f"g{i}", "attributes": {"numa": {"int": i // 2}}} for i in range(4)]
    p = problem([slice_("s", "p", devices)], [claim("c", 2, {"matchAttribute": "d/numa"})])
    inv = build_inventory(p)
    plans = plan_claims(p, inv, SelectorEvaluator())
    groups, class_of = equivalence_classes(RuleContext(inv, plans))
    assert [g.devices for g in groups] == [[0, 1], [2, 3]] and class_of == {0: 0, 1: 0, 2: 1, 3: 1}


def test_verifier_node_matches_reads_the_spec_not_the_solver():
    """§3.1: an empty nodeName is not set, so allNodes decides (the verifier once read `is not None`)."""
    from drasat.solver.verification.pools import node_matches

    assert node_matches(NODE, "", True, None) and not node_matches(NODE, "", None, None)
    assert node_matches(NODE, "node-1", None, None) and not node_matches(NODE, "node-2", True, None)
