"""Frozen dataclasses built without their generated ``__init__``, where the solver makes many per call.

A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__`` (the class forbids
plain assignment): several times the cost of a plain object's, and on small inputs the plan's and the
inventory's records were a sixth of an ``allocate`` call. :func:`maker` generates, once per class, a
function taking every field by position that writes the instance's dict as one literal (as
``dataclasses`` itself generates ``__init__``); :func:`built` is the same by keyword. The object is
the same (equal, frozen, hashed alike) as the constructor's; a missing or unknown field is the
interpreter's TypeError, as for the constructor.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_MAKERS: dict[type, Callable[..., Any]] = {}
_set = object.__setattr__
_new = object.__new__


def maker(cls: type[T]) -> Callable[..., T]:
    """``cls(*values)`` for a frozen dataclass without ``__post_init__`` or slots, every field given in order."""
    found = _MAKERS.get(cls)
    if found is None:
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        entries = ", ".join(f"{name!r}: {name}" for name in names)
        source = (f"def make({', '.join(names)}):\n"
                  "    obj = _new(cls)\n"
                  f"    _set(obj, '__dict__', {{{entries}}})\n"
                  "    return obj\n")
        namespace: dict[str, Any] = {"_new": _new, "_set": _set, "cls": cls}
        exec(compile(source, f"<record {cls.__name__}>", "exec"), namespace)  # noqa: S102 - our own source
        found = _MAKERS[cls] = namespace["make"]
    return found


def built(cls: type[T], **values: Any) -> T:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__`` or slots, every field given."""
    return maker(cls)(**values)
