"""models.trusted builds result objects without validation: they must equal validated ones."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from drasat.models.meta import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from drasat.models.quantity import Quantity
from drasat.models.resource import AllocationResult, DeviceAllocationResult, DeviceRequestAllocationResult
from drasat.models.trusted import trusted

CASES = [
    (DeviceRequestAllocationResult, {"request": "gpu", "driver": "d.example.com", "pool": "p", "device": "g-0"}),
    (
        DeviceRequestAllocationResult,
        {
            "request": "gpu/one",
            "driver": "d",
            "pool": "p",
            "device": "g-1",
            "admin_access": True,
            "share_id": "abc",
            "consumed_capacity": {"memory": Quantity.parse("1Gi")},
        },
    ),
    (NodeSelectorRequirement, {"key": "zone", "operator": "Exists"}),
    (NodeSelectorRequirement, {"key": "metadata.name", "operator": "In", "values": ["node-1"]}),
]


@pytest.mark.parametrize("cls, fields", CASES)
def test_trusted_equals_validated(cls, fields):
    built, validated = trusted(cls, **fields), cls(**fields)
    assert built == validated
    assert built.to_api() == validated.to_api()
    assert built.model_fields_set == validated.model_fields_set


def test_nested_and_defaults_fresh():
    term = trusted(NodeSelectorTerm, match_fields=[trusted(NodeSelectorRequirement, key="k", operator="Exists")])
    first = trusted(
        AllocationResult,
        devices=trusted(DeviceAllocationResult),
        node_selector=trusted(NodeSelector, node_selector_terms=[term]),
    )
    second = trusted(AllocationResult)
    assert first.to_api() == AllocationResult.model_validate(first.to_api()).to_api()
    assert first.devices.results is not second.devices.results  # mutable defaults are never shared


def test_unknown_field_refused():
    with pytest.raises(TypeError, match="no field colour"):
        trusted(NodeSelectorRequirement, key="k", operator="Exists", colour="red")


def test_frozen_records_built_at_once_equal_the_constructors():
    from dataclasses import FrozenInstanceError

    from drasat.solver.allocation.frozen import built
    from drasat.solver.allocation.planning.plan import RequestPlan

    fields = {"index": 2, "name": "gpu", "alternatives": (), "first_available": False}
    made = built(RequestPlan, **fields)
    assert made == RequestPlan(**fields) and hash(made) == hash(RequestPlan(**fields))
    with pytest.raises(FrozenInstanceError):
        made.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing"):
        built(RequestPlan, index=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        built(RequestPlan, **fields, bogus=1)


@dataclass(frozen=True)
class _OddNames:
    """Field names a generated maker could take for its own locals and globals (they are reserved ones)."""

    obj: int
    _new: int
    _set: int
    cls: int
    make: int


def test_record_makers_take_any_field_name():
    from drasat.solver.allocation.frozen import built, maker

    made = built(_OddNames, obj=1, _new=2, _set=3, cls=4, make=5)
    assert made == _OddNames(1, 2, 3, 4, 5) and vars(made) == {"obj": 1, "_new": 2, "_set": 3, "cls": 4, "make": 5}
    assert maker(_OddNames)(1, 2, 3, 4, 5) == made
    assert "def make(obj, _new, _set, cls, make):" in maker(_OddNames).__source__  # type: ignore[attr-defined]


@dataclass
class _Mutable:
    a: int


@dataclass(frozen=True)
class _Checked:
    a: int

    def __post_init__(self) -> None:
        raise AssertionError("not to be skipped silently")


@pytest.mark.parametrize("cls", [_Mutable, _Checked])
def test_record_makers_refuse_what_they_cannot_build(cls: type) -> None:
    from drasat.solver.allocation.frozen import maker

    with pytest.raises(TypeError, match="frozen dataclasses without __post_init__"):
        maker(cls)


class _Plain:
    pass


class _PlainChild(_Plain):
    pass


class _Slotted:
    __slots__ = ("a",)


def test_dict_setter_writes_an_instance_dict_through_its_class_descriptor():
    from drasat.models.trusted import dict_setter

    child = object.__new__(_PlainChild)
    dict_setter(_PlainChild)(child, {"a": 1})  # the descriptor is found on the base that made the dict
    assert vars(child) == {"a": 1} and child.a == 1
    selector = object.__new__(NodeSelectorTerm)
    dict_setter(NodeSelectorTerm)(selector, {"match_expressions": []})
    assert selector.__dict__ == {"match_expressions": []}
    with pytest.raises(TypeError, match="_Slotted instances have no __dict__"):
        dict_setter(_Slotted)
