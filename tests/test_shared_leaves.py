"""A fleet's repeated small values (counters, attributes, counter consumptions) are built once and shared,
without changing what is read, dumped or refused."""

from __future__ import annotations

import copy

import yaml

from drasat.models.bundle import Bundle
from drasat.models.loader import add_data, load_text


def _slice(node: str, memory: object = "1") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [{"name": "gpu-0", "counters": {"s0": {"value": "1"}, "s1": {"value": "1"}}}],
            "devices": [
                {
                    "name": f"gpu-0-{p}",
                    "attributes": {"profile": {"string": p}, "numa": {"int": 0}, "on": {"bool": True}},
                    "capacity": {"memory": {"value": memory}},
                    "consumesCounters": [{"counterSet": "gpu-0", "counters": {"s0": {"value": "1"}}}],
                }
                for p in ("1g", "2g")
            ],
        },
    }


def test_repeated_values_are_one_object_each() -> None:
    bundle = load_text(yaml.safe_dump_all([_slice("a"), _slice("b")]), "fleet.yaml")
    assert bundle.ok
    a, b = (loaded.obj.spec for loaded in bundle.objects)
    assert a.devices[0].consumes_counters[0] is b.devices[1].consumes_counters[0]
    assert a.devices[0].attributes["numa"] is b.devices[1].attributes["numa"]
    assert a.devices[0].attributes["profile"] is not a.devices[1].attributes["profile"]  # 1g, 2g
    assert a.shared_counters[0].counters["s0"] is b.shared_counters[0].counters["s1"]
    assert a.devices[0].attributes["on"].bool_ is True and a.devices[0].attributes["numa"].int_ == 0


def test_what_is_read_and_dumped_is_unchanged() -> None:
    raw = [_slice("a"), _slice("b")]
    bundle = load_text(yaml.safe_dump_all(raw), "fleet.yaml")
    assert [loaded.obj.to_api() for loaded in bundle.objects] == raw


def test_a_bad_value_is_refused_where_it_stands() -> None:
    raw = [_slice("a"), _slice("b", memory="lots"), _slice("c", memory=5)]
    bundle = load_text(yaml.safe_dump_all(raw), "fleet.yaml")
    assert [(p.location.document, p.location.path) for p in bundle.problems] == [
        (1, 'spec.devices[0].capacity["memory"].value'),
        (1, 'spec.devices[1].capacity["memory"].value'),
    ]
    unshared = Bundle()  # the caller's objects are not shared: the same problems, word for word
    for index, item in enumerate(raw):
        add_data(unshared, item, "fleet.yaml", index)
    assert [str(p) for p in bundle.problems] == [str(p) for p in unshared.problems]


def test_objects_given_by_the_caller_are_not_changed() -> None:
    raw = _slice("a")
    kept = copy.deepcopy(raw)
    bundle = Bundle()
    add_data(bundle, raw, "<objects>")
    assert bundle.ok and raw == kept


def test_odd_counter_consumptions_are_read_as_unshared_ones() -> None:
    """A consumption shared only when every counter is exactly ``{value: <text>}``; any other is read where it
    stands, with the same objects and the same problems as without sharing."""
    odd = [
        {"s0": {"value": "1"}, "s1": {"value": "2"}},
        {"s0": {"value": "2"}, "s1": {"value": "1"}},  # the same amounts, other counters: not the one above
        {"s0": ["value", "1"]},
        {"s0": {"value": 1}},
        {"s0": {"value": ["1"]}},
        {"s0": {"value": "1", "extra": "x"}},
        {"s0": {"amount": "1"}},
        {"s0": "1"},
        {"s0": None},
        {},
    ]
    raw = []
    for node in ("a", "b"):  # the second node's consumptions may take the first one's models
        for index, counters in enumerate(copy.deepcopy(odd)):
            item = _slice(f"{node}{index}")
            item["spec"]["devices"][0]["consumesCounters"] = [{"counterSet": "gpu-0", "counters": counters}]
            raw.append(item)
    bundle = load_text(yaml.safe_dump_all(raw), "fleet.yaml")
    unshared = Bundle()
    for index, item in enumerate(raw):
        add_data(unshared, item, "fleet.yaml", index)
    assert [str(p) for p in bundle.problems] == [str(p) for p in unshared.problems]
    assert len(bundle.problems) > 5 and not any("internal error" in str(p) for p in bundle.problems)
    assert [loaded.obj.to_api() for loaded in bundle.objects] == [loaded.obj.to_api() for loaded in unshared.objects]
    first, second = (bundle.objects[i].obj.spec.devices[0].consumes_counters[0] for i in (0, 1))
    assert first is not second and first.counters["s1"].value != second.counters["s1"].value
