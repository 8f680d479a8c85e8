"""Records the solver builds without their dataclass ``__init__`` (the per-call hot path) are whole.

Inventory devices, their CEL view, alternatives and picks are filled field by field where a small
``allocate`` call makes them; a field added to the dataclass but not to that one place would leave
the record without it. Each is compared with the dataclass's own field list and with the object the
constructor makes from the same values.
"""

from __future__ import annotations

from dataclasses import fields

from drasat.solver.cel import SelectorEvaluator
from drasat.solver.cel.device import CelDevice
from drasat.solver.claims import plan_claims
from drasat.solver.inventory import InventoryDevice, build_inventory
from drasat.solver.plan import Alternative, Pick

from .test_stages import claim, problem, slice_


def _names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def test_inventory_records_have_every_field_and_equal_the_constructors():
    inv = build_inventory(problem([slice_("s", "pool", [{"name": "a", "attributes": {"model": {"string": "x"}}},
                                                        {"name": "b", "capacity": {"memory": {"value": "1Gi"}}}])]))
    assert [d.name for d in inv.devices] == ["a", "b"]
    for dev in inv.devices:
        assert set(vars(dev)) == _names(InventoryDevice)
        assert dev == InventoryDevice(**{name: getattr(dev, name) for name in _names(InventoryDevice)})
        # The CEL view converts attributes and capacities when first read; every field is there to read.
        assert isinstance(dev.cel, CelDevice)
        assert {name: getattr(dev.cel, name) for name in _names(CelDevice)} == {
            "key": ("d", "pool", "s", dev.name), "driver": "d", "attributes": {"model": {"string": "x"}} if
            dev.name == "a" else {}, "capacity": {"memory": dev.device.capacity["memory"].value} if dev.name == "b"
            else {}, "allow_multiple_allocations": False}


def test_alternatives_and_picks_have_every_field():
    prob = problem([slice_("s", "pool", [{"name": "a"}])], [claim("c")])
    inv = build_inventory(prob)
    alt = plan_claims(prob, inv, SelectorEvaluator())[0].requests[0].alternatives[0]
    assert set(vars(alt)) - {"id"} == _names(Alternative) and alt.candidates == (0,)
    pick = Pick.made(alt, 0, None)
    assert set(vars(pick)) == _names(Pick) and pick == Pick(alt, 0)
