"""A device as the cel-expr engine reads it: whole, or only what an expression reads.

Most selectors touch two or three attributes, and converting values into cel-expr's
carriers is most of the cost of a cold evaluation, so :class:`CelExprDevice` projects
just the values a :class:`Plan` (an expression's :class:`~.analysis.Needs`) names,
looked up directly in the raw device, and builds the full map only when needed.
"""

from __future__ import annotations

from typing import Any

from .analysis import Needs
from .celexpr_values import PLAIN, encode
from .device import AMBIGUOUS, MISSING, CelDevice, DeviceData, convert, lookup


class CelExprDevice:
    """One device as the run environment sees it: the whole map (built once, on demand) or
    just the values an expression reads, looked up directly in the raw device (most
    selectors touch two or three attributes, and converting values into cel-expr is most
    of the cost of a cold evaluation)."""

    __slots__ = ("device", "_data", "_full", "_celpy")

    def __init__(self, device: CelDevice) -> None:
        self.device = device
        self._data: DeviceData | None = None
        self._full: dict[str, Any] | None = None
        self._celpy: Any = None

    def for_celpy(self, engine: Any) -> Any:
        """The device as the celpy engine sees it, for programs cel-cpp cannot run."""
        if self._celpy is None:
            self._celpy = engine.prepare(self.device)
        return self._celpy

    def grouped(self) -> DeviceData:
        data = self._data
        if data is None:
            data = self._data = convert(self.device)
        return data

    def full(self) -> dict[str, Any]:
        full = self._full
        if full is None:
            data = self.grouped()
            full = self._full = {
                "driver": data.driver,
                "allowMultipleAllocations": data.allow_multiple_allocations,
                "attributes": {d: _encoded(ids) for d, ids in data.attributes.items()},
                "capacity": {d: _encoded(ids) for d, ids in data.capacity.items()},
            }
        return full

    def project(self, plan: Plan) -> dict[str, Any]:
        device = self.device
        out: dict[str, Any] = {}
        if plan.driver:
            out["driver"] = device.driver
        if plan.multi:
            out["allowMultipleAllocations"] = bool(device.allow_multiple_allocations)
        for section, wanted in plan.sections:
            out[section] = self._section(section, wanted)
        return out

    def _section(self, section: str, wanted: Wanted) -> dict[str, Any]:
        if wanted is None:
            return self.full()[section]
        out: dict[str, dict[str, Any]] = {}
        for domain, ids in wanted:
            if ids is None:
                group = getattr(self.grouped(), section).get(domain)
                if group is not None:
                    out[domain] = _encoded(group)
                continue
            found = out[domain] = {}  # present or not, lookups of these ids behave alike
            for ident, key in ids:
                value = lookup(self.device, section, domain, ident, key)
                if value is MISSING:
                    continue
                if value is AMBIGUOUS:
                    value = getattr(self.grouped(), section)[domain][ident]
                found[ident] = value if value.__class__ in PLAIN else encode(value)
        return out


Wanted = tuple[tuple[str, tuple[tuple[str, str], ...] | None], ...] | None


class Plan:
    """:class:`Needs` prepared for projection: fields as flags, qualified keys formatted once."""

    __slots__ = ("driver", "multi", "sections")

    def __init__(self, needs: Needs) -> None:
        self.driver = "driver" in needs.fields
        self.multi = "allowMultipleAllocations" in needs.fields
        self.sections = tuple(
            (section, _wanted(wanted))
            for section, wanted in (("attributes", needs.attributes), ("capacity", needs.capacity))
            if section in needs.fields
        )


def _wanted(wanted: dict[str, frozenset[str] | None] | None) -> Wanted:
    if wanted is None:
        return None
    return tuple(
        (domain, None if ids is None else tuple((i, f"{domain}/{i}") for i in sorted(ids)))
        for domain, ids in wanted.items()
    )


def _encoded(values: dict[str, Any]) -> dict[str, Any]:
    return {i: encode(v) for i, v in values.items()}
