"""Frozen dataclasses built without their generated ``__init__``, where the solver makes many per call.

A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__`` (the class forbids
plain assignment): several times the cost of a plain object's, and on small inputs the plan's and the
inventory's records were a sixth of an ``allocate`` call. :func:`built` fills the instance's dict at
once; the object is the same (equal, frozen, hashed alike) as the constructor's. Every field is given:
a missing or unknown name is a TypeError, as for the constructor.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")

_NAMES: dict[type, frozenset[str]] = {}


def built(cls: type[T], **values: Any) -> T:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__`` or slots, every field given."""
    names = _NAMES.get(cls) or _names(cls)
    if values.keys() != names:
        raise TypeError(f"{cls.__name__}: fields {sorted(names ^ values.keys())} missing or unknown")
    obj = _new(cls)
    obj.__dict__.update(values)
    return obj


def _names(cls: type) -> frozenset[str]:
    names = _NAMES[cls] = frozenset(f.name for f in fields(cls))
    return names


_new = object.__new__
