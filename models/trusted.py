"""Models built from values that are valid by construction: the solver's own answers.

Validation exists for what users write. An allocation result the solver assembles from
an inventory it already validated needs none, and on small inputs validating the result
objects was a fifth of an ``allocate`` call. pydantic's own ``model_construct`` is the
well-kept way to skip it, but it inspects every default factory's signature on every
call (pydantic 2.14: about 600 µs per object, a hundred times the validation it saves),
so this module does the same few steps.

Each (class, fields given) gets a builder function of its own, generated once, as
``dataclasses`` generates ``__init__``: the instance's dict written as one literal, with
the defaults in place and fresh empty lists and dicts for the models' list and map fields.
A small ``allocate`` call builds six result objects, and the generic loop (a template copied,
each factory called, field names checked) cost 1-1.5 µs each, twice the builder's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .meta import empty_dict, empty_list

M = TypeVar("M", bound=BaseModel)


def dict_setter(cls: type) -> Callable[[Any, dict[str, Any]], None]:
    """The function that replaces a ``cls`` instance's ``__dict__``: its class's own ``__dict__`` descriptor's
    ``__set__``. Called directly, it skips what ``object.__setattr__(obj, "__dict__", d)`` does first (look the
    name up through the class, then find the descriptor): about 45 ns less a record, and a small ``allocate``
    call writes a dozen records' dicts whole (results, plans, inventory devices, picks)."""
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get("__dict__")
        if descriptor is not None:
            setter: Callable[[Any, dict[str, Any]], None] = descriptor.__set__
            return setter
    raise TypeError(f"{cls.__name__} instances have no __dict__ to write")


# BaseModel's own slots, set through their descriptors: object.__setattr__ would look each up by name.
_set_dict = dict_setter(BaseModel)
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_new = BaseModel.__new__  # object's: pydantic defines none, and the look-up through each class costs
_LITERALS: dict[Any, str] = {empty_list: "[]", empty_dict: "{}"}
"""Default factories whose value a literal makes afresh (the models' own, for list and map fields)."""

_BUILDERS: dict[tuple[Any, ...], Callable[..., Any]] = {}


def builder(cls: type[M], *names: str) -> Callable[..., M]:
    """A function taking the values of ``names`` (Python field names) by position and returning ``cls``
    with them set, the other fields at their defaults, nothing validated. For the solver's hot paths, which
    build the same shape of result on every call; :func:`trusted` is the same by keyword."""
    key = (cls, *names)
    found = _BUILDERS.get(key)
    if found is None:
        found = _BUILDERS[key] = _generate(cls, names)
    return found


def trusted(cls: type[M], **fields: Any) -> M:
    """``cls`` with ``fields`` (by Python name) as given, the others at their defaults, nothing validated.

    As with ``model_construct``, only ``fields`` count as set, so ``to_api()`` prints what a
    validated object built from the same fields would print.
    """
    build = _BUILDERS.get((cls, *fields)) or builder(cls, *fields)
    return build(*fields.values())


def _generate(cls: type[M], names: tuple[str, ...]) -> Callable[..., M]:
    """The builder's source, compiled: one dict literal in field order, one set literal of ``names``."""
    fields = cls.model_fields
    unknown = sorted(set(names) - fields.keys())
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {unknown[0]}")
    given = {name: f"v{i}" for i, name in enumerate(names)}
    namespace: dict[str, Any] = {
        "_new": _new,
        "_set_dict": _set_dict,
        "_set_fields": _set_fields,
        "_set_extra": _set_extra,
        "_set_private": _set_private,
        "cls": cls,
    }
    entries = []
    for i, (name, info) in enumerate(fields.items()):
        if name in given:
            value = given[name]
        elif info.default_factory is not None:
            value = _LITERALS.get(info.default_factory) or f"f{i}()"
            namespace[f"f{i}"] = info.default_factory
        else:
            namespace[f"d{i}"], value = info.default, f"d{i}"
        entries.append(f"{name!r}: {value}")
    names_set = "{" + ", ".join(repr(n) for n in names) + "}" if names else "set()"
    source = (
        f"def build({', '.join(given.values())}):\n"
        "    obj = _new(cls)\n"
        f"    _set_dict(obj, {{{', '.join(entries)}}})\n"
        f"    _set_fields(obj, {names_set})\n"
        "    _set_extra(obj, None)\n"
        "    _set_private(obj, None)\n"
        "    return obj\n"
    )
    exec(compile(source, f"<trusted {cls.__name__}>", "exec"), namespace)  # noqa: S102 - our own source
    build: Callable[..., M] = namespace["build"]
    return build
