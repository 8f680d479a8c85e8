"""Models built from values that are valid by construction: the solver's own answers.

Validation exists for what users write. An allocation result the solver assembles from
an inventory it already validated needs none, and on small inputs validating the result
objects was a fifth of an ``allocate`` call. pydantic's own ``model_construct`` is the
well-kept way to skip it, but it inspects every default factory's signature on every
call (pydantic 2.14: about 600 µs per object, a hundred times the validation it saves),
so this module does the same few steps with the defaults looked up once per class.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_Defaults = tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]
_DEFAULTS: dict[type, _Defaults] = {}
_set = object.__setattr__
# BaseModel's own slots, set through their descriptors: object.__setattr__ would look each up by name.
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_new = BaseModel.__new__  # object's: pydantic defines none, and the look-up through each class costs


def _defaults(cls: type[BaseModel]) -> _Defaults:
    """Every field in order with its plain default (None where a factory makes it), and the factories."""
    fields = cls.model_fields
    template = {name: None if info.default_factory is not None else info.default for name, info in fields.items()}
    factories = tuple((name, info.default_factory) for name, info in fields.items()
                      if info.default_factory is not None)
    found: _Defaults = (template, factories)  # type: ignore[assignment]  # no field's factory takes data
    _DEFAULTS[cls] = found
    return found


def trusted(cls: type[M], **fields: Any) -> M:
    """``cls`` with ``fields`` (by Python name) as given, the others at their defaults, nothing validated.

    As with ``model_construct``, only ``fields`` count as set, so ``to_api()`` prints what a
    validated object built from the same fields would print.
    """
    template, factories = _DEFAULTS.get(cls) or _defaults(cls)
    values = template.copy()
    values.update(fields)
    if len(values) != len(template):
        raise TypeError(f"{cls.__name__} has no field {sorted(fields.keys() - template.keys())[0]}")
    for name, factory in factories:
        if name not in fields:
            values[name] = factory()
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set_fields(obj, set(fields))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj
