"""Frozen dataclasses built without their generated ``__init__``, where the solver makes many per call.

A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__`` (the class forbids
plain assignment): several times the cost of a plain object's, and on small inputs the plan's and the
inventory's records were a sixth of an ``allocate`` call. :func:`maker` generates, once per class, a
function taking every field by position that writes the instance's dict as one literal (as
``dataclasses`` itself generates ``__init__``); :func:`built` is the same by keyword. The object is
the same (equal, frozen, hashed alike) as the constructor's, its dict written through the class's own
``__dict__`` descriptor (:func:`~drasat.models.trusted.dict_setter`); a missing or unknown field is the
interpreter's TypeError, as for the constructor. For a record of fields ``a`` and ``b`` the maker is::

    def make(a, b):
        __drasat_record = __drasat_new(__drasat_cls)
        __drasat_set_dict(__drasat_record, {'a': a, 'b': b})
        return __drasat_record

Its own names are reserved ones (as ``dataclasses`` reserves ``__dataclass_self__``), so a field may be
called anything a dataclass field may; its source is kept as the function's ``__source__``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from drasat.models.trusted import dict_setter

T = TypeVar("T")

_MAKERS: dict[type, Callable[..., Any]] = {}


def maker(cls: type[T]) -> Callable[..., T]:
    """``cls(*values)`` for a frozen dataclass without ``__post_init__`` or slots, every field given in order."""
    found = _MAKERS.get(cls)
    if found is None:
        found = _MAKERS[cls] = _generate(cls)
    return found


def _generate(cls: type[T]) -> Callable[..., T]:
    """The maker's source, checked against what it cannot do, then compiled."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or hasattr(cls, "__post_init__") or "__slots__" in vars(cls):
        raise TypeError(
            f"{cls.__name__}: a record maker is for frozen dataclasses without __post_init__ "
            "or slots (it writes the instance's dict and runs nothing else)"
        )
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    entries = ", ".join(f"{name!r}: {name}" for name in names)
    source = (
        f"def make({', '.join(names)}):\n"
        "    __drasat_record = __drasat_new(__drasat_cls)\n"
        f"    __drasat_set_dict(__drasat_record, {{{entries}}})\n"
        "    return __drasat_record\n"
    )
    namespace: dict[str, Any] = {
        "__drasat_new": object.__new__,
        "__drasat_set_dict": dict_setter(cls),
        "__drasat_cls": cls,
    }
    exec(compile(source, f"<record {cls.__name__}>", "exec"), namespace)  # noqa: S102 - our own source
    make: Callable[..., T] = namespace["make"]
    make.__source__ = source  # type: ignore[attr-defined]  # what a traceback through it cannot show
    return make


def built(cls: type[T], /, **values: Any) -> T:
    """``cls(**values)`` by keyword: the same record as :func:`maker`'s (tests build records by name)."""
    return maker(cls)(**values)
