"""Attribute values as constraints see them: lookup by qualified name, scalar keys, typed sets.

``matchAttribute`` and ``distinctAttribute`` compare typed values: an int 1 never
equals a string "1", versions compare as their exact text. Scalar mode (the
``DRAListTypeAttributes`` gate off) compares single values; set mode treats every
value as a set (a scalar is a one-element set) and asks for common or disjoint
elements.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from drasat.models.resource import DeviceAttribute

ScalarKey = tuple[str, Hashable]
TypedSet = tuple[str, frozenset[Hashable]]


def lookup(attributes: Mapping[str, DeviceAttribute], driver: str, name: str) -> DeviceAttribute | None:
    """The attribute a fully qualified constraint name refers to on a device of ``driver``.

    An exact key wins; otherwise ``<driver>/<id>`` finds the unqualified ``<id>``,
    because unqualified attributes belong to the driver's own domain.
    """
    if name in attributes:
        return attributes[name]
    domain, slash, ident = name.partition("/")
    if slash and domain == driver:
        return attributes.get(ident)
    return None


def scalar_key(attr: DeviceAttribute) -> ScalarKey | None:
    """The typed scalar of an attribute (string, int, bool, version in that order); None for list-only values."""
    if attr.string is not None:
        return ("string", attr.string)
    if attr.int_ is not None:
        return ("int", attr.int_)
    if attr.bool_ is not None:
        return ("bool", attr.bool_)
    if attr.version is not None:
        return ("version", attr.version)
    return None


def typed_set(attr: DeviceAttribute) -> TypedSet | None:
    """An attribute as a typed set: non-empty lists first (ints, bools, strings, versions), then scalars."""
    for kind, values in (
        ("int", attr.ints),
        ("bool", attr.bools),
        ("string", attr.strings),
        ("version", attr.versions),
    ):
        if values:
            return (kind, frozenset(values))
    for kind, value in (("int", attr.int_), ("bool", attr.bool_), ("string", attr.string), ("version", attr.version)):
        if value is not None:
            return (kind, frozenset([value]))
    return None


def derived_attribute(value: object) -> DeviceAttribute | None:
    """A derived attribute's CEL result as an attribute value (int, bool, string, version, or a list of those)."""
    from drasat.models.semver import Semver

    if isinstance(value, bool):
        return DeviceAttribute(bool_=value)
    if isinstance(value, int):
        return DeviceAttribute(int_=value)
    if isinstance(value, str):
        return DeviceAttribute(string=value)
    if isinstance(value, Semver):
        return DeviceAttribute(version=str(value))
    if isinstance(value, (list, tuple)) and value:
        first = value[0]
        for kind, field in ((bool, "bools"), (int, "ints"), (str, "strings"), (Semver, "versions")):
            if isinstance(first, kind) and all(
                isinstance(v, kind) and (kind is not int or not isinstance(v, bool)) for v in value
            ):
                items = [str(v) for v in value] if kind is Semver else list(value)
                return DeviceAttribute.model_validate({field: items})
    return None
