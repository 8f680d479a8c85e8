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
        assert type(dev.cel) is CelDevice
        made = CelDevice(**{name: getattr(dev.cel, name) for name in _names(CelDevice)})
        assert made == CelDevice(key=("d", "pool", "s", dev.name), driver="d", attributes={"model": {"string": "x"}}
                                 if dev.name == "a" else {}, capacity={"memory": dev.device.capacity["memory"].value}
                                 if dev.name == "b" else {})
        assert dev.cel == made and set(vars(dev.cel)) == _names(CelDevice)  # once read, the source is dropped
        assert dev == InventoryDevice(**{name: getattr(dev, name) for name in _names(InventoryDevice)} | {"cel": made})


def test_inventory_cel_view_compares_replaces_and_copies_like_the_constructors_before_it_is_read():
    def fresh() -> CelDevice:
        inv = build_inventory(problem([slice_("s", "pool", [{"name": "a", "attributes": {"model": {"string": "x"}},
                                                              "capacity": {"memory": {"value": "1Gi"}}}])]))
        return inv.devices[0].cel

    made = CelDevice(("d", "pool", "s", "a"), "d", {"model": {"string": "x"}}, {"memory": fresh().capacity["memory"]})
    assert fresh() == made and made == fresh()
    moved = replace(fresh(), key=("d", "pool", "s", "b"))
    assert moved.attributes == {"model": {"string": "x"}} and moved.key[-1] == "b" and moved != made
    assert copy.deepcopy(fresh()) == made and pickle.loads(pickle.dumps(fresh())) == made


def test_alternatives_and_picks_have_every_field():
    prob = problem([slice_("s", "pool", [{"name": "a"}])], [claim("c")])
    inv = build_inventory(prob)
    alt = plan_claims(prob, inv, SelectorEvaluator())[0].requests[0].alternatives[0]
    assert set(vars(alt)) - {"id"} == _names(Alternative) and alt.candidates == (0,)
    pick = Pick.made(alt, 0, None)
    assert set(vars(pick)) == _names(Pick) and pick == Pick(alt, 0)
