"""Records the solver builds without their dataclass ``__init__`` (the per-call hot path) are whole.

Inventory devices, their CEL view, alternatives and picks are filled field by field where a small
``allocate`` call makes them; a field added to the dataclass but not to that one place would leave
the record without it. Each is compared with the dataclass's own field list and with the object the
constructor makes from the same values.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import fields, replace

import pytest

from drasat.solver.allocation.depth_first.search_state import SearchState
from drasat.solver.allocation.planning.claims import plan_claims
from drasat.solver.allocation.planning.inventory import InventoryDevice, build_inventory
from drasat.solver.allocation.planning.plan import EMPTY_MAPPING, Alternative, Candidates, Pick
from drasat.solver.cel import SelectorEvaluator
from drasat.solver.cel.device import CelDevice

from .test_stages import claim, problem, slice_


def _names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def test_inventory_records_have_every_field_and_equal_the_constructors():
    inv = build_inventory(
        problem(
            [
                slice_(
                    "s",
                    "pool",
                    [
                        {"name": "a", "attributes": {"model": {"string": "x"}}},
                        {"name": "b", "capacity": {"memory": {"value": "1Gi"}}},
                    ],
                )
            ]
        )
    )
    assert [d.name for d in inv.devices] == ["a", "b"]
    for dev in inv.devices:
        assert set(vars(dev)) == _names(InventoryDevice)
        assert dev == InventoryDevice(**{name: getattr(dev, name) for name in _names(InventoryDevice)})
        # The CEL view converts attributes and capacities when first read; every field is there to read.
        assert type(dev.cel) is CelDevice
        made = CelDevice(**{name: getattr(dev.cel, name) for name in _names(CelDevice)})
        assert made == CelDevice(
            key=("d", "pool", "s", dev.name),
            driver="d",
            attributes={"model": {"string": "x"}} if dev.name == "a" else {},
            capacity={"memory": dev.device.capacity["memory"].value} if dev.name == "b" else {},
        )
        assert dev.cel == made and set(vars(dev.cel)) == _names(CelDevice)  # once read, the source is dropped
        assert dev == InventoryDevice(**{name: getattr(dev, name) for name in _names(InventoryDevice)} | {"cel": made})


def test_inventory_cel_view_compares_replaces_and_copies_like_the_constructors_before_it_is_read():
    def fresh() -> CelDevice:
        inv = build_inventory(
            problem(
                [
                    slice_(
                        "s",
                        "pool",
                        [
                            {
                                "name": "a",
                                "attributes": {"model": {"string": "x"}},
                                "capacity": {"memory": {"value": "1Gi"}},
                            }
                        ],
                    )
                ]
            )
        )
        return inv.devices[0].cel

    made = CelDevice(("d", "pool", "s", "a"), "d", {"model": {"string": "x"}}, {"memory": fresh().capacity["memory"]})
    assert fresh() == made and made == fresh()
    moved = replace(fresh(), key=("d", "pool", "s", "b"))
    assert moved.attributes == {"model": {"string": "x"}} and moved.key[-1] == "b" and moved != made
    assert copy.deepcopy(fresh()) == made and pickle.loads(pickle.dumps(fresh())) == made


def test_alternatives_and_picks_have_every_field():
    prob = problem([slice_("s", "pool", [{"name": "a"}])], [claim("c")])
    inv = build_inventory(prob)
    plans = plan_claims(prob, inv, SelectorEvaluator())
    alt = plans[0].requests[0].alternatives[0]
    assert set(vars(alt)) - {"id"} == _names(Alternative) and alt.candidates == (0,)
    pick = SearchState(inv, plans).try_add(0, alt, 0, False)
    assert pick is not None
    assert set(vars(pick)) == _names(Pick) and pick == Pick(alt, 0)


def _first_alternative() -> Alternative:
    prob = problem([slice_("s", "pool", [{"name": "a"}])], [claim("c")])
    return plan_claims(prob, build_inventory(prob), SelectorEvaluator())[0].requests[0].alternatives[0]


def _planned_fields(alt: Alternative) -> dict:
    return {
        name: getattr(alt, name)
        for name in _names(Alternative)
        - {"candidates", "share", "errors", "excluded", "blocked", "blocked_at", "derived"}
    }


def test_a_planned_alternative_refuses_missing_and_unknown_fields_as_the_constructor_does():
    with pytest.raises(TypeError, match="missing 10 required positional arguments"):
        Alternative.planned(claim=0, request=0, rank=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'derivd'"):
        Alternative.planned(**_planned_fields(_first_alternative()), derivd={})
    alt = Alternative.planned(**_planned_fields(_first_alternative()))
    assert set(vars(alt)) - {"id"} == _names(Alternative)
    unfilled = {name: vars(alt)[name] for name in ("candidates", "blocked", "blocked_at")}
    assert unfilled == {"candidates": (), "blocked": "", "blocked_at": -1}
    assert all(vars(alt)[name] is EMPTY_MAPPING for name in ("share", "errors", "excluded", "derived"))


def test_alternatives_of_two_calls_share_no_value_that_can_be_written():
    one, two = _first_alternative(), _first_alternative()
    for name in ("share", "errors", "excluded", "derived"):
        a, b = getattr(one, name), getattr(two, name)
        if a is b:  # shared across calls: only safe when nothing can write to it
            with pytest.raises(TypeError):
                a[0] = {}  # type: ignore[index]
            with pytest.raises(TypeError):
                a.setdefault(0, {})  # type: ignore[attr-defined]
            assert not a
    assert copy.deepcopy(one.derived) is one.derived and pickle.loads(pickle.dumps(one)).derived == {}


def test_an_alternative_is_filled_once():
    alt = _first_alternative()
    with pytest.raises(RuntimeError, match="filled already"):
        alt.fill(Candidates())
