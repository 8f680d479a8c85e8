"""The small values a fleet repeats hundreds of thousands of times, validated once and then shared.

A 1,000-node cluster of partitionable GPUs publishes 200,000 devices: 600,000 counters that are
almost all ``{value: "1"}``, 400,000 attributes such as ``{string: 1g}`` or ``{int: 0}``, and
200,000 counter consumptions that repeat from node to node. Built one by one, they were four
fifths of the model objects, of the time pydantic took to build them and of the memory they held.
Before a ResourceSlice is validated, each such raw value that is exactly one seen before is
replaced by the model built for it then (pydantic takes a model instance in its place as it is),
so a fleet holds a few hundred of them. Only plain, valid values are shared: anything else stays
raw and is validated (and its problems worded) where it stands. Shared models are never changed
after loading — as for every loaded object, solver stages copy what they change.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .resource import Counter, DeviceAttribute, DeviceCapacity, DeviceCounterConsumption

_SCALARS = {"int": int, "bool": bool, "string": str, "version": str}
_INVALID = object()


class Shared:
    """The models built so far, by the raw value they were built from (one per input read)."""

    def __init__(self) -> None:
        self._built: dict[tuple[Any, ...], Any] = {}

    def slice_leaves(self, data: dict[str, Any]) -> None:
        """Put shared models in place of a ResourceSlice's (raw, the loader's own) plain leaf values."""
        spec = data.get("spec")
        if not isinstance(spec, dict):
            return
        for counter_set in _dicts(spec.get("sharedCounters")):
            self._counters(counter_set.get("counters"))
        for device in _dicts(spec.get("devices")):
            attributes, capacity = device.get("attributes"), device.get("capacity")
            if isinstance(attributes, dict):
                for name, value in attributes.items():
                    attributes[name] = self._attribute(value)
            if isinstance(capacity, dict):
                for name, value in capacity.items():
                    capacity[name] = self._amount(DeviceCapacity, value)
            consumes = device.get("consumesCounters")
            if isinstance(consumes, list):
                consumes[:] = [self._consumption(item) for item in consumes]

    def _counters(self, counters: Any) -> None:
        if isinstance(counters, dict):
            for name, value in counters.items():
                counters[name] = self._amount(Counter, value)

    def _amount(self, model: type[Counter] | type[DeviceCapacity], value: Any) -> Any:
        if type(value) is not dict or len(value) != 1 or type(value.get("value")) is not str:
            return value
        return self._model(model, (model, value["value"]), value)

    def _attribute(self, value: Any) -> Any:
        if type(value) is not dict or len(value) != 1:
            return value
        ((kind, item),) = value.items()
        if _SCALARS.get(kind) is not type(item):
            return value
        return self._model(DeviceAttribute, (DeviceAttribute, kind, item), value)

    def _consumption(self, value: Any) -> Any:
        if type(value) is not dict or len(value) != 2:
            return value
        counter_set, counters = value.get("counterSet"), value.get("counters")
        if type(counter_set) is not str or type(counters) is not dict:
            return value
        # Keyed by its raw amounts (a repeated one costs no look-up per counter), gathered in one loop: a
        # comprehension and a generator over the same counters were each a call, 112,000 times per fleet.
        key: list[Any] = [DeviceCounterConsumption, counter_set]
        for name, counter in counters.items():
            if type(counter) is not dict or len(counter) != 1 or type(amount := counter.get("value")) is not str:
                return value
            key += (name, amount)
        return self._model(DeviceCounterConsumption, tuple(key), value)

    def _model(self, model: type[Any], key: tuple[Any, ...], value: dict[str, Any]) -> Any:
        built = self._built.get(key)
        if built is None:
            try:
                built = model.model_validate(value, by_alias=True, by_name=False)
            except ValidationError:
                built = _INVALID  # left raw: validated, and worded, within its slice
            self._built[key] = built
        return value if built is _INVALID else built


def _dicts(items: Any) -> list[dict[str, Any]]:
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
