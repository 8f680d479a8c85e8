"""The device as a selector sees it, and its one-time conversion to plain values.

Kubernetes' allocator groups attributes and capacities by domain (split at the first
``/``; an unqualified name belongs to the driver's domain) and converts every attribute
before evaluating anything, so a malformed attribute fails *every* selector on that
device. ``DeviceData`` holds that conversion, done once per device and shared by both
engines; each engine then builds its own cheap carriers from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from drasat.models.quantity import Quantity
from drasat.models.semver import Semver, SemverError

if TYPE_CHECKING:
    from drasat.models.resource import Device

Scalar = int | bool | str | Semver
AttributeValue = Scalar | list[Scalar]

# Kubernetes' order: list fields first, then scalars; the first one that is set wins.
_LIST_FIELDS = (("ints", int), ("bools", bool), ("strings", str), ("versions", Semver))
_SCALAR_FIELDS = (("int", int), ("bool", bool), ("string", str), ("version", Semver))


@dataclass(frozen=True)
class CelDevice:
    """One device, in the raw shape the API gives (attribute objects, capacity quantities)."""

    key: tuple[str, ...]
    driver: str
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, Quantity]
    allow_multiple_allocations: bool = False


class _FromSource:
    """A :class:`CelDevice` map an inventory record converts from its API device when first read.

    The inventory makes a ``CelDevice`` per device per call without ``__init__``: ``key``, ``driver`` and
    ``allow_multiple_allocations`` set, ``attributes`` and ``capacity`` left out and the API device kept as
    ``_source``. The evaluator remembers its verdicts by device key, so a warm call never reads the maps
    (converting every attribute of every device on every call was a few microseconds a device). A value
    read is stored in the instance under the field's own name, where it hides this (non-data) descriptor;
    once both maps are there the source is dropped, and the record is the one the constructor makes: equal
    to it, ``replace``-able, the same ``vars``. A ``CelDevice`` made by ``__init__`` never reaches this."""

    def __init__(self, name: str, convert: Callable[[Device], Mapping[str, Any]]) -> None:
        self.name, self.convert = name, convert

    def __get__(self, instance: CelDevice | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        values = instance.__dict__
        source = values.get("_source")
        if source is None:
            if self.name in values:  # another thread converted it and dropped the source meanwhile
                return values[self.name]
            raise AttributeError(f"CelDevice has no {self.name} and no API device to convert it from")
        found = values[self.name] = self.convert(source)
        if "attributes" in values and "capacity" in values:
            values.pop("_source", None)
        return found


# Installed after @dataclass, so the fields keep no default (the constructor still requires them).
CelDevice.attributes = _FromSource(  # type: ignore[assignment]
    "attributes", lambda device: {name: value.raw() for name, value in device.attributes.items()}
)
CelDevice.capacity = _FromSource(  # type: ignore[assignment]
    "capacity", lambda device: {name: value.value for name, value in device.capacity.items()}
)


@dataclass
class DeviceData:
    """A device converted once: grouped by domain, values typed, or the conversion error."""

    driver: str
    allow_multiple_allocations: bool
    attributes: dict[str, dict[str, AttributeValue]] = field(default_factory=dict)
    capacity: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    error: str | None = None


class _ConversionError(Exception):
    pass


#: :func:`lookup` found nothing / found both ``id`` and ``<driver>/id`` (use :func:`convert`).
MISSING, AMBIGUOUS = object(), object()


def split_qualified(name: str, driver: str) -> tuple[str, str]:
    """Kubernetes' ``parseQualifiedName``: domain and identifier, the driver being the default domain."""
    domain, slash, ident = name.partition("/")
    return (domain, ident) if slash else (driver, name)


def convert(device: CelDevice) -> DeviceData:
    """Group and type a device's attributes and capacities as Kubernetes' ``DeviceMatches`` does."""
    driver = device.driver
    data = DeviceData(driver, bool(device.allow_multiple_allocations))
    attributes = data.attributes
    for name, raw in device.attributes.items():
        value = _fast_value(raw)
        if value is None:
            try:
                value = attribute_value(raw)
            except _ConversionError as exc:
                data.error = f"attribute {name}: {exc}"
                return data
        domain, slash, ident = name.partition("/")
        if not slash:
            domain, ident = driver, name
        group = attributes.get(domain)
        if group is None:
            group = attributes[domain] = {}
        group[ident] = value
    for name, quantity in device.capacity.items():
        domain, ident = split_qualified(name, driver)
        if type(quantity) is not Quantity:
            quantity = Quantity.parse(quantity)  # type: ignore[arg-type]  # a subclass, or raw input
        data.capacity.setdefault(domain, {})[ident] = quantity
    return data


def validate(device: CelDevice) -> str | None:
    """The conversion error :func:`convert` would report, without building anything."""
    fast, lists = _FAST, _FAST_LISTS
    for name, raw in device.attributes.items():
        if raw.__class__ is dict and len(raw) == 1:
            ((key, value),) = raw.items()
            if fast.get(key) is value.__class__:  # the usual case: one plain scalar
                continue
            kind = lists.get(key)
            if kind is not None and value.__class__ is list and all(v.__class__ is kind for v in value):
                continue
            if key == "version" and value.__class__ is str and _is_version(value):
                continue
        try:
            attribute_value(raw)
        except _ConversionError as exc:
            return f"attribute {name}: {exc}"
    return None


def _is_version(text: str) -> bool:
    try:
        Semver.parse(text)  # cached by text
    except SemverError:
        return False
    return True


def lookup(device: CelDevice, section: str, domain: str, ident: str, key: str | None = None) -> Any:
    """One typed attribute or capacity value by domain and id, straight from the raw device.

    Returns :data:`MISSING` if absent and :data:`AMBIGUOUS` if both ``id`` and
    ``<driver>/id`` exist (only the grouped :func:`convert` decides that case). The
    device must have passed :func:`validate`. ``key`` is ``domain/ident``, if the caller has it.
    """
    values: Mapping[str, Any] = device.attributes if section == "attributes" else device.capacity
    qualified = values.get(key or f"{domain}/{ident}")
    if domain == device.driver:
        plain = values.get(ident)
        if plain is not None and qualified is not None:
            return AMBIGUOUS
        qualified = plain if plain is not None else qualified
    if qualified is None:
        return MISSING
    if section == "capacity":
        return qualified if type(qualified) is Quantity else Quantity.parse(qualified)
    value = _fast_value(qualified)
    return value if value is not None else attribute_value(qualified)


_FAST = {"string": str, "int": int, "bool": bool}
_FAST_LISTS = {"strings": str, "ints": int, "bools": bool}


def _fast_value(raw: Any) -> Any:
    """The usual shape, one field of a plain type, without the general path; else None."""
    if raw.__class__ is dict and len(raw) == 1:
        ((key, value),) = raw.items()
        kind = _FAST.get(key)
        if kind is not None:
            return value if value.__class__ is kind else None
        kind = _FAST_LISTS.get(key)
        if kind is not None and value.__class__ is list and all(v.__class__ is kind for v in value):
            return value
    return None


def attribute_value(raw: Mapping[str, Any]) -> AttributeValue:
    """The one value an API attribute object holds; lists win over scalars, as in Kubernetes."""
    if not isinstance(raw, Mapping):
        raw = getattr(raw, "raw", lambda: {})()
    for key, kind in _LIST_FIELDS:
        values = raw.get(key)
        if values is not None:
            if not isinstance(values, (list, tuple)):
                raise _ConversionError("unsupported attribute value")
            return [_typed(v, kind) for v in values]
    for key, kind in _SCALAR_FIELDS:
        value = raw.get(key)
        if value is not None:
            return _typed(value, kind)
    raise _ConversionError("unsupported attribute value")


def _typed(value: Any, kind: type) -> Scalar:
    """Check a JSON value against its field's type; versions are parsed strictly (no normalizing)."""
    if kind is Semver:
        if not isinstance(value, str):
            raise _ConversionError("unsupported attribute value")
        try:
            return Semver.parse(value)
        except SemverError as exc:
            raise _ConversionError(f"parse semantic version: {exc}") from None
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise _ConversionError("unsupported attribute value")
    if not isinstance(value, kind):
        raise _ConversionError("unsupported attribute value")
    return value  # type: ignore[return-value]  # isinstance(value, kind) for one of the scalar kinds
